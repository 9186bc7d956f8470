/* SPDX-License-Identifier: Apache-2.0 */
/* runs_rank.c -- `ropegrad runs rank [--evidence E]`: runs grouped by comparison key, ranked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "runs.h"
#include "runs_format.h"

static int cmp_key(const void *pa, const void *pb)
{
    const rg_run_row *a = pa, *b = pb;
    int c = strcmp(a->comparison_key, b->comparison_key);
    if (c) return c;
    return a->id < b->id ? -1 : a->id > b->id;
}


int rg_runs_rank(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs rank: %s\n", x->err);
        return 2;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!x->evidence || !strcmp(rows[i].evidence, x->evidence)) rows[m++] = rows[i];
    if (m == 0) {
        tprintf("no %s%sruns in %s\n", x->evidence ? x->evidence : "", x->evidence ? " " : "", rg_registry_path(x->db));
        free(rows);
        return 0;
    }
    qsort(rows, m, sizeof *rows, cmp_key);
    tprintf("rank: %s; measured runs (samples held) by their intervals, unverifiable ones (no T_SOL the index\n"
           "can compute) after the verified ones; reported runs (no samples) ranked apart, from 1, by their figure;\n"
           "suspect (faster than max(T_SOL, the GPU's launch floor) or the CPU's memory ceiling, or an all-zero/NaN\n"
           "output), partial (fewer workloads than the suite), busy, damaged and failed runs are listed, not ranked;\n"
           "#1 is the best verified measured run (a group without one: the best verified reported run)\n\n",
           RG_RANK_METHOD);
    int rc = 0;
    for (size_t i = 0; i < m && !rc;) {
        size_t j = i;
        while (j < m && !strcmp(rows[j].comparison_key, rows[i].comparison_key)) j++;
        rg_ranked *e;
        size_t ne;
        if (rg_registry_rank_group(x->g, rows[i].comparison_key, x->evidence, &e, &ne, x->err, sizeof x->err)) {
            fprintf(stderr, "ropegrad runs rank: %s\n", x->err);
            rc = 2;
            break;
        }
        tprintf("group %s  %s  on %s  (%s, %s)\n", rg_cli_short_digest(rows[i].comparison_key), rows[i].definition,
               rows[i].device, rows[i].family, rows[i].primary_statistic);
        tprintf("  %4s  %5s  %-36s  %8s  ", "rank", "id", "primary [95% interval]", "vs #1");
        rg_cli_print_cols("SOL · x reference · faster", 44);
        tprintf("  %-28s  %-10s  %-22s  %s\n", "implementation", "evidence", "revision", "flags");
        double best = NAN;   /* #1's figure (rank.h: the first entry that may be #1) */
        for (size_t k = 0; k < ne && isnan(best); k++)
            if (rg_ranked_may_be_first(&e[k])) best = e[k].iv.est;
        for (size_t k = 0; k < ne; k++) {
            const rg_ranked *r = &e[k];
            char a[96], rk[16], kn[96], ratio[32], h[128];
            rg_rank_label(r, rk, sizeof rk);
            if (r->rank && isfinite(best)) snprintf(ratio, sizeof ratio, "%.3fx", r->iv.est / best);
            else if (r->rank || r->rank_class == RG_CLASS_FAILED)
                snprintf(ratio, sizeof ratio, r->rank ? "-" : strcmp(r->row.status, "passed") ? "failed" : "unranked");
            else snprintf(ratio, sizeof ratio, "%s", rg_rank_class_name(r->rank_class));   /* not ranked: its class */
            char untimed[64];
            if (!rg_untimed_label(r->row.status, r->row.primary_ns, NULL, untimed, sizeof untimed))
                snprintf(a, sizeof a, "%s", untimed);
            else rg_cli_interval(a, sizeof a, r->iv.est, r->iv.lo, r->iv.hi, r->iv.known);
            rg_cli_headline(h, sizeof h, r->row.sol_score, r->row.avg_speedup, r->row.fast_count, r->row.fast_total);
            tprintf("  %4s  %5lld  %-*s  %8s  ", rk, (long long)r->row.id, rg_cli_w(a, 36), a, ratio);
            rg_cli_print_cols(h, 44);
            int other = r->rank_class != RG_CLASS_MEASURED && r->rank_class != RG_CLASS_SUSPECT &&
                        r->rank_class != RG_CLASS_FAILED;   /* reported, partial, busy, damaged: its reason */
            tprintf("  %-28.28s  %-10s  %-22s  %s%s%s%s%s%s\n", rg_cli_impl_label(kn, sizeof kn, &r->row),
                   r->row.evidence, r->revision,
                   r->suspect ? (r->confirmed ? "SUSPECT (replicated): " : "SUSPECT: ") : "",
                   r->suspect ? r->suspect_why : "", r->sol.state == RG_SOL_UNVERIFIABLE ? "UNVERIFIABLE: " : "",
                   r->sol.state == RG_SOL_UNVERIFIABLE ? r->sol.basis : "", other ? "  " : "",
                   other ? r->rank_reason : "");
        }
        tprintf("\n");
        free(e);
        i = j;
    }
    free(rows);
    return rc;
}
