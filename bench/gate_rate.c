/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gate_rate.c -- how often the regression gate cries wolf, and how often it
 * catches a real slowdown (bench/gate_false_alarms.sh makes the runs).
 *
 *   gate_rate DB ID...
 *
 * For each run ID (runs of the same code, recorded one after another): the
 * verdict `runs check ID` gives it (the history rule of src/record/gate.h,
 * the busy-machine rule included), and the verdict the same rule gives a copy
 * of it 10% slower (its primary figure x 1.10 against the same history).
 * Prints one markdown row per run and the totals, quiet and busy apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "rank.h"

#define SLOWER 1.10

typedef struct tally {
    int checks, slow, copies, caught, short_history;
} tally;

static rg_verdict gated(rg_verdict v, int busy) { return v == RG_VERDICT_SLOW && busy ? RG_VERDICT_UNCLEAR : v; }

static int one(rg_registry *g, int64_t id, tally *t)
{
    char err[RG_ERRLEN], why[64] = "";
    rg_gate_history h;
    rg_run_row row;
    rg_manifest m;
    if (rg_gate_history_check(g, id, RG_GATE_Z, RG_STATS_THRESHOLD, &h, err, sizeof err) ||
        rg_registry_get(g, id, &row, &m, err, sizeof err)) {
        fprintf(stderr, "gate_rate: run #%lld: %s\n", (long long)id, err);
        return 2;
    }
    int busy = rg_manifest_busy(&m, why, sizeof why);
    rg_manifest_free(&m);
    t += busy;
    t->checks++;
    if (h.n < RG_GATE_MIN_HISTORY) {
        t->short_history++;
        printf("| %lld | %s | %zu | - | - | too little history | - |\n", (long long)id, busy ? why : "quiet", h.n);
        return 0;
    }
    double mean, sd, z;
    rg_verdict same = gated(h.verdict, busy);
    rg_verdict copy = gated(rg_gate_judge(h.hist, h.n, SLOWER * h.x, RG_GATE_Z, RG_STATS_THRESHOLD, &mean, &sd, &z), busy);
    t->slow += same == RG_VERDICT_SLOW;
    t->copies++;
    t->caught += copy == RG_VERDICT_SLOW;
    printf("| %lld | %s | %zu | %.4f | %.2f | %s | %s |\n", (long long)id, busy ? why : "quiet", h.n, h.x / h.mean, h.z,
           rg_verdict_name(same), rg_verdict_name(copy));
    return 0;
}

static void total(const char *what, const tally *t)
{
    printf("- %s: %d same-code checks, %d SLOW (false alarms); %d with too little history; "
           "10%% slower copies caught: %d of %d\n",
           what, t->checks, t->slow, t->short_history, t->caught, t->copies);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gate_rate DB ID...\n");
        return 2;
    }
    rg_registry *g;
    char err[RG_ERRLEN];
    if (rg_registry_open(argv[1], 0, &g, err, sizeof err)) {
        fprintf(stderr, "gate_rate: %s\n", err);
        return 2;
    }
    tally t[2] = {{0}};   /* quiet, busy */
    printf("| run | machine | history | run / history mean | z | verdict | 10%% slower copy |\n|---|---|---|---|---|---|---|\n");
    int rc = 0;
    for (int i = 2; i < argc && !rc; i++) {
        char *end;
        long long id = strtoll(argv[i], &end, 10);
        if (*end || id <= 0) {
            fprintf(stderr, "gate_rate: not a run id: %s\n", argv[i]);
            rc = 2;
            break;
        }
        rc = one(g, id, t);
    }
    rg_registry_close(g);
    if (rc) return rc;
    printf("\n");
    total("quiet", &t[0]);
    total("busy (load average >= half the CPUs)", &t[1]);
    printf("- z threshold %g, minimum effect %g%%, history: the latest %d earlier credible runs (at least %d)\n",
           RG_GATE_Z, 100 * RG_STATS_THRESHOLD, RG_GATE_LOOKBACK, RG_GATE_MIN_HISTORY);
    return 0;
}
