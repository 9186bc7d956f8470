/* SPDX-License-Identifier: Apache-2.0 */
/* bundled.c -- the bundled suites, each loaded once per process (harness.h,
 * rg_suite_bundled): what the index computes its own T_SOL from. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Never freed: the server reads them from every worker thread. */
static rg_suite bundled[8];
static int bundled_state[8];   /* 0 not tried, 1 loaded, -1 not found */
static pthread_mutex_t bundled_mu = PTHREAD_MUTEX_INITIALIZER;

/* An installed CLI's share/ropegrad/suites beside bin/, else the source
 * tree's suites/ this library was built from. */
static int load_bundled(const rg_op *op, rg_suite *s)
{
    char roots[2][PATH_MAX + 64], exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = len > 0 ? (exe[len] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) *slash = '\0';
    snprintf(roots[0], sizeof roots[0], "%s/../share/ropegrad/suites", slash ? exe : "/nonexistent");
    snprintf(roots[1], sizeof roots[1], "%s", RG_HARNESS_SUITES_DIR);
    for (int i = 0; i < 2; i++) {
        char dir[PATH_MAX + 160], err[RG_ERRLEN];
        rg_op_suite_dir(op, roots[i], dir, sizeof dir);
        if (!rg_suite_load(dir, s, err, sizeof err)) {
            if (s->op == op) return 0;
            rg_suite_free(s);
        }
    }
    return -1;
}

const rg_suite *rg_suite_bundled(const char *definition)
{
    const rg_op *op = rg_op_find(definition);
    if (!op) return NULL;
    size_t k = 0;
    while (rg_ops[k] && rg_ops[k] != op) k++;
    if (k >= sizeof bundled / sizeof bundled[0]) return NULL;
    pthread_mutex_lock(&bundled_mu);
    if (!bundled_state[k]) bundled_state[k] = load_bundled(op, &bundled[k]) ? -1 : 1;
    const rg_suite *s = bundled_state[k] > 0 ? &bundled[k] : NULL;
    pthread_mutex_unlock(&bundled_mu);
    return s;
}
