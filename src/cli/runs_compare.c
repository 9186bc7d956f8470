/* SPDX-License-Identifier: Apache-2.0 */
/* runs_compare.c -- `ropegrad runs compare ID [ID2]`: per workload side by side. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rank.h"
#include "runs.h"
#include "runs_format.h"

/* One id: the run against #1 of its group (#1 on the left, *ida; the run on
 * the right, *idb). -1 to go on, else the exit code (0 when there is nothing
 * to compare with: no #1, or the run is #1). */
static int against_first(runs_ctx *x, int64_t *ida, int64_t *idb)
{
    int rank, size;
    int64_t first;
    if (rg_registry_rank_of(x->g, *ida, &rank, &size, &first, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
        return 2;
    }
    if (!first) {
        tprintf("run #%lld: its comparison group has no #1 (no passed, verified, non-suspect run) to compare "
               "with\n", (long long)*ida);
        return 0;
    }
    if (first == *ida) {
        tprintf("run #%lld is #1 of its comparison group (%d ranked run%s)\n", (long long)*ida, size,
               size == 1 ? "" : "s");
        return 0;
    }
    *idb = *ida;
    *ida = first;   /* #1 on the left, the run in question on the right */
    return -1;
}

/* Which runs A and B are, what makes their ratios less than a ranking, and
 * their primary figures. */
static void print_runs(const rg_run_row *ra, const rg_run_row *rb, const rg_manifest *ma, const rg_manifest *mb)
{
    char la[96], lb[96], s1[32], s2[32];
    tprintf("A = run #%lld: %s on %s, %s, %s\n", (long long)ra->id, rg_cli_impl_label(la, sizeof la, ra), ra->device, ra->status,
           ra->evidence);
    tprintf("B = run #%lld: %s on %s, %s, %s\n", (long long)rb->id, rg_cli_impl_label(lb, sizeof lb, rb), rb->device, rb->status,
           rb->evidence);
    if (strcmp(ra->comparison_key, rb->comparison_key))
        tprintf("note: different comparison keys (workloads, device or protocol differ): ratios are not a ranking\n");
    char why[200];
    if (rg_manifest_suspect(ma, why, sizeof why)) tprintf("note: A is SUSPECT: %s\n", why);
    if (rg_manifest_suspect(mb, why, sizeof why)) tprintf("note: B is SUSPECT: %s\n", why);
    rg_sol_check sa, sb;
    if (!rg_manifest_sol_check(ma, &sa, NULL, why, sizeof why) && sa.state == RG_SOL_UNVERIFIABLE)
        tprintf("note: A is UNVERIFIABLE: %s\n", sa.basis);
    if (!rg_manifest_sol_check(mb, &sb, NULL, why, sizeof why) && sb.state == RG_SOL_UNVERIFIABLE)
        tprintf("note: B is UNVERIFIABLE: %s\n", sb.basis);
    tprintf("\n  primary: A %s %s, B %s %s\n", rg_cli_time(s1, sizeof s1, ra->primary_ns), ra->primary_statistic,
           rg_cli_time(s2, sizeof s2, rb->primary_ns), rb->primary_statistic);
}

/* One workload's row: B / A with its interval, p and verdict when both have
 * samples. 1 when the workload was timed in both (it counts for the geomean). */
static int print_workload(const rg_mf_workload *a, const rg_mf_workload *b)
{
    char s1[32], s2[32];
    rg_cli_time(s1, sizeof s1, a->median);
    rg_cli_time(s2, sizeof s2, b ? b->median : NAN);
    if (!b) {
        tprintf("  %4d  %*s  %12s  %8s\n", a->index, rg_cli_w(s1, 12), s1, "-", "-");
        return 0;
    }
    if (!isfinite(a->median) || !isfinite(b->median)) {   /* failed, or a `check` run: nothing to compare */
        tprintf("  %4d  %*s  %*s  not timed in %s\n", a->index, rg_cli_w(s1, 12), s1, rg_cli_w(s2, 12), s2,
                isfinite(a->median) ? "B" : isfinite(b->median) ? "A" : "A or B");
        return 0;
    }
    rg_shift sh;
    char ratio[64], p[16], v[16];
    if (a->n_samples && b->n_samples && a->n_samples < 1000000 && b->n_samples < 1000000 &&
        !rg_shift_estimate(a->samples, (int)a->n_samples, b->samples, (int)b->n_samples, RG_STATS_CONF, &sh)) {
        snprintf(ratio, sizeof ratio, "%.3fx [%.3f, %.3f]", sh.ratio, sh.lo, sh.hi);
        snprintf(p, sizeof p, "%.3g", sh.p);
        snprintf(v, sizeof v, "%s", rg_verdict_name(rg_shift_verdict(&sh, RG_STATS_ALPHA, RG_STATS_THRESHOLD)));
    } else {
        snprintf(ratio, sizeof ratio, "%.3fx [no samples]", b->median / a->median);
        snprintf(p, sizeof p, "-");
        snprintf(v, sizeof v, "UNCLEAR");
    }
    tprintf("  %4d  %*s  %*s  %-28s  %9s  %-8s  %s\n", a->index, rg_cli_w(s1, 12), s1, rg_cli_w(s2, 12), s2, ratio, p, v,
           b->median < a->median ? "B faster" : b->median > a->median ? "A faster" : "");
    return 1;
}

/* Per workload side by side, the geomean over the shared ones, the method. */
static void print_workloads(const rg_manifest *ma, const rg_manifest *mb)
{
    char s1[32], s2[32];
    tprintf("\n  %4s  %12s  %12s  %-28s  %9s  %-8s  %s\n", "#", "A median", "B median",
           "B / A [95% interval]", "p", "verdict", "");
    int shared = 0;
    double lsa = 0, lsb = 0;
    for (size_t i = 0; i < ma->n_workloads; i++) {
        const rg_mf_workload *a = &ma->workloads[i], *b = rg_manifest_find_workload(mb, a, i);
        if (!print_workload(a, b)) continue;
        shared++;
        lsa += log(a->median);
        lsb += log(b->median);
    }
    if (shared) {
        double ga = exp(lsa / shared), gb = exp(lsb / shared);
        rg_cli_time(s1, sizeof s1, ga), rg_cli_time(s2, sizeof s2, gb);
        tprintf("  %4s  %*s  %*s  %7.3fx  geomean over %d shared workload%s\n", "all", rg_cli_w(s1, 12), s1,
               rg_cli_w(s2, 12), s2, gb / ga, shared, shared == 1 ? "" : "s");
    } else {
        tprintf("  no workloads in common\n");
    }
    tprintf("\n  B / A: Hodges-Lehmann ratio of the samples, %.0f%% distribution-free interval, Mann-Whitney U p;\n"
           "  verdict (SLOW = B slower) at alpha %g and a %.0f%% minimum effect, as `runs check`\n",
           100 * RG_STATS_CONF, RG_STATS_ALPHA, 100 * RG_STATS_THRESHOLD);
}

int rg_runs_compare(runs_ctx *x, int64_t ida, int64_t idb)
{
    int rc;
    if (!idb && (rc = against_first(x, &ida, &idb)) >= 0) return rc;
    rg_run_row ra, rb;
    rg_manifest ma, mb;
    if (rg_registry_get(x->g, ida, &ra, &ma, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
        return 2;
    }
    if (rg_registry_get(x->g, idb, &rb, &mb, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
        rg_manifest_free(&ma);
        return 2;
    }
    print_runs(&ra, &rb, &ma, &mb);
    if (!ma.n_workloads || !mb.n_workloads) tprintf("  no per-workload figures in %s\n", !ma.n_workloads ? "A" : "B");
    else print_workloads(&ma, &mb);
    rg_manifest_free(&ma);
    rg_manifest_free(&mb);
    return 0;
}
