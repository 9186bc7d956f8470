/* SPDX-License-Identifier: Apache-2.0 */
/* options.c -- the command-line conventions (options.h). */
#define _DEFAULT_SOURCE
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

/* A non-negative decimal integer that fills [s, end): 0, or 1. */
static int parse_index(const char *s, const char *end, long *v)
{
    if (s == end || end - s > 9) return 1;
    long x = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return 1;
        x = x * 10 + (*p - '0');
    }
    *v = x;
    return 0;
}

int rg_cli_parse_ranges(const char *opt, const char *s, int **out, size_t *n, char *err, size_t errlen)
{
    enum { MAX_INDICES = 100000 };
    *out = NULL;
    *n = 0;
    if (!s || !*s) {
        snprintf(err, errlen, "%s: empty list", opt);
        return 1;
    }
    int *v = NULL;
    size_t k = 0, cap = 0;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *dash = memchr(p, '-', (size_t)(end - p));
        long lo, hi;
        int bad = dash ? parse_index(p, dash, &lo) || parse_index(dash + 1, end, &hi) : parse_index(p, end, &lo);
        if (!dash) hi = lo;
        if (bad || lo > hi) {
            snprintf(err, errlen, "%s: '%.*s' is not an index or a range N-M with N <= M (in '%.200s')", opt,
                     (int)(end - p > 40 ? 40 : end - p), p, s);
            free(v);
            return 1;
        }
        if ((size_t)(hi - lo) + 1 > MAX_INDICES - k) {
            snprintf(err, errlen, "%s: more than %d workload indices", opt, MAX_INDICES);
            free(v);
            return 1;
        }
        size_t need = k + (size_t)(hi - lo) + 1;
        if (need > cap) {
            cap = need * 2;
            int *nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                free(v);
                snprintf(err, errlen, "out of memory");
                return 1;
            }
            v = nv;
        }
        for (long i = lo; i <= hi; i++) v[k++] = (int)i;
        if (!comma) break;
        p = comma + 1;
    }
    *out = v;
    *n = k;
    return 0;
}

int rg_cli_parse_ll(const char *s, long long lo, long long hi, long long *v)
{
    if (!s || !*s || !v) return 1;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || x < lo || x > hi) return 1;
    *v = x;
    return 0;
}

int rg_cli_check_output_path(const char *opt, const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if (!*path || strlen(path) >= sizeof dir) {
        snprintf(err, errlen, "%s: invalid path '%.200s'", opt, path);
        return 1;
    }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %.200s: directory '%.200s' does not exist", opt, path, dir);
        return 1;
    }
    if (access(dir, W_OK) != 0) {
        snprintf(err, errlen, "%s %.200s: directory '%.200s' is not writable", opt, path, dir);
        return 1;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %.200s: is a directory", opt, path);
        return 1;
    }
    return 0;
}

int rg_cli_is_stdout(const char *path) { return path && !strcmp(path, "-"); }

int rg_cli_write_output(const char *path, const char *text, size_t n, char *err, size_t errlen)
{
    if (rg_cli_is_stdout(path)) {
        if (fwrite(text, 1, n, stdout) != n || fflush(stdout) != 0) {
            snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
            return 2;
        }
        return 0;
    }
    return rg_write_file_atomic(path, text, n, err, errlen) ? 2 : 0;
}

int rg_cli_load(double *load1, int *cpus, int *busy)
{
    double l[1];
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    *cpus = c > 0 ? (int)c : 1;
    *busy = 0;
    if (getloadavg(l, 1) != 1) {
        *load1 = -1;
        return 1;
    }
    *load1 = l[0];
    *busy = l[0] >= 0.5 * *cpus;
    return 0;
}
