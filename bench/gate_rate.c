/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gate_rate.c -- how often the regression gate cries wolf, and how often it
 * catches a real slowdown (bench/gate_false_alarms.sh makes the runs).
 *
 *   gate_rate DB ID[+]...
 *
 * For each run ID (runs of the same code, recorded one after another; "+"
 * after it: another process was kept busy during it): the CPU share other
 * processes and steal took over the run, whether the gate calls the machine
 * busy (src/record/gate.h), the verdict `runs check ID` gives it (the history
 * rule, the busy rule included) and the one the same rule gives a copy of it
 * 10% slower (its primary figure x 1.10 against the same history); beside
 * them, the same two verdicts under the robust rule (median and MAD,
 * rg_gate_judge_robust). Prints one markdown row per run and the totals,
 * without and with the busy process apart.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "rank.h"

#define SLOWER 1.10

typedef struct tally {
    int checks, flagged, short_history, judged;
    int slow, caught;                /* the mean/sd rule: same-code SLOW, 10% slower copies SLOW */
    int robust_slow, robust_caught;  /* the median/MAD rule */
} tally;

static rg_verdict gated(rg_verdict v, int busy) { return busy ? RG_VERDICT_UNCLEAR : v; }

static const char *figure(char *buf, size_t n, double v)
{
    if (isfinite(v)) snprintf(buf, n, "%.2f", v);
    else snprintf(buf, n, "-");
    return buf;
}

static int one(rg_registry *g, int64_t id, int loop, tally *t)
{
    char err[RG_ERRLEN], why[96] = "", other[16], steal[16];
    rg_gate_history h;
    rg_run_row row;
    rg_manifest m;
    if (rg_gate_history_check(g, id, RG_GATE_Z, RG_STATS_THRESHOLD, &h, err, sizeof err) ||
        rg_registry_get(g, id, &row, &m, err, sizeof err)) {
        fprintf(stderr, "gate_rate: run #%lld: %s\n", (long long)id, err);
        return 2;
    }
    int busy = rg_manifest_busy(&m, why, sizeof why);
    printf("| %lld | %s | %s | %s | %s | %zu |", (long long)id, loop ? "yes" : "no", figure(other, sizeof other, m.other_cpus),
           figure(steal, sizeof steal, m.steal_cpus), busy ? why : "quiet", h.n);
    rg_manifest_free(&m);
    t += loop;
    t->checks++;
    t->flagged += busy;
    if (h.n < RG_GATE_MIN_HISTORY) {
        t->short_history++;
        printf(" - | - | too little history | - | - | - | - |\n");
        return 0;
    }
    double c, s, z, rz;
    rg_verdict same = gated(h.verdict, busy);
    rg_verdict copy = gated(rg_gate_judge(h.hist, h.n, SLOWER * h.x, RG_GATE_Z, RG_STATS_THRESHOLD, &c, &s, &z), busy);
    rg_verdict rsame = gated(rg_gate_judge_robust(h.hist, h.n, h.x, RG_GATE_Z, RG_STATS_THRESHOLD, &c, &s, &rz), busy);
    rg_verdict rcopy =
        gated(rg_gate_judge_robust(h.hist, h.n, SLOWER * h.x, RG_GATE_Z, RG_STATS_THRESHOLD, &c, &s, &z), busy);
    t->judged += !busy;
    t->slow += same == RG_VERDICT_SLOW;
    t->caught += copy == RG_VERDICT_SLOW;
    t->robust_slow += rsame == RG_VERDICT_SLOW;
    t->robust_caught += rcopy == RG_VERDICT_SLOW;
    printf(" %.4f | %.2f | %s | %s | %.2f | %s | %s |\n", h.x / h.mean, h.z, rg_verdict_name(same), rg_verdict_name(copy),
           rz, rg_verdict_name(rsame), rg_verdict_name(rcopy));
    return 0;
}

static void total(const char *what, const tally *t)
{
    printf("- %s: %d same-code checks, %d called busy (UNCLEAR); %d with too little history; of the %d judged: "
           "SLOW (false alarms) %d, 10%% slower copies caught %d (robust rule: %d and %d)\n",
           what, t->checks, t->flagged, t->short_history, t->judged, t->slow, t->caught, t->robust_slow,
           t->robust_caught);
}

static int parse_id(const char *arg, long long *id, int *loop)
{
    char *end;
    *id = strtoll(arg, &end, 10);
    *loop = *end == '+';
    return !(end != arg && *id > 0 && !end[*loop]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gate_rate DB ID[+]...\n");
        return 2;
    }
    rg_registry *g;
    char err[RG_ERRLEN];
    if (rg_registry_open(argv[1], 0, &g, err, sizeof err)) {
        fprintf(stderr, "gate_rate: %s\n", err);
        return 2;
    }
    tally t[2] = {{0}};   /* without, with the busy process */
    printf("| run | busy process | other CPUs | steal CPUs | machine (the gate) | history | run / history mean | z | "
           "verdict | 10%% slower copy | robust z | robust verdict | robust: 10%% slower copy |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int rc = 0;
    for (int i = 2; i < argc && !rc; i++) {
        long long id;
        int loop;
        if (parse_id(argv[i], &id, &loop)) {
            fprintf(stderr, "gate_rate: not a run id: %s\n", argv[i]);
            rc = 2;
            break;
        }
        rc = one(g, id, loop, t);
    }
    rg_registry_close(g);
    if (rc) return rc;
    printf("\n");
    total("no busy process", &t[0]);
    total("a busy process", &t[1]);
    printf("- busy: other processes >= %g%% of the online CPUs or steal >= %g%% over the run; z threshold %g, minimum "
           "effect %g%%, history: the latest %d earlier credible runs (at least %d); robust rule: median and "
           "1.4826 x MAD in place of mean and sd\n",
           100 * RG_GATE_BUSY_OTHER, 100 * RG_GATE_BUSY_STEAL, RG_GATE_Z, 100 * RG_STATS_THRESHOLD, RG_GATE_LOOKBACK,
           RG_GATE_MIN_HISTORY);
    return 0;
}
