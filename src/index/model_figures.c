/* SPDX-License-Identifier: Apache-2.0 */
/* model_figures.c -- SOL, x reference and cases faster, one definition for
 * every page (model.h rg_model_ref_figures).
 *
 * x reference is SOL-ExecBench's avg_speedup: the mean over the workloads
 * of the reference's time over the run's, the reference timed on the run's
 * own GPU. The reference times come from, in order: the group's reference
 * run (model.h RG_REFERENCE_RUN_NAME, measured here under the same
 * comparison key), else the record's own per-workload reference times when
 * they are of its GPU (the evaluator timed the reference in the same call,
 * the suite's figures are of that GPU, or a baseline file was given with
 * the run: `bench --baseline`, timed apart). Cases faster counts the
 * workloads whose ratio is above 1; the SOL score is the mean of
 * rg_sol_score over the workloads with the index's own T_SOL
 * (sol_check.h). A record without per-workload figures keeps its source's
 * own figures (the official evaluator's avg_speedup, SOL score and cases,
 * measured against the reference on its GPU). Where a figure cannot be
 * had, the reason says why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hardware.h"
#include "model.h"

static void why(char *dst, size_t n, const char *s) { snprintf(dst, n, "%s", s); }

/* The record's own reference times (t_b_ns) and where they come from, when
 * they are of its GPU: the reference timed by the evaluator in the same
 * call, the suite's figures on their GPU, or a baseline file given with the
 * run (timed apart, by the one who gave it); NULL when none of these. */
static const char *own_reference(const rg_manifest *m)
{
    if (!strcmp(m->baseline_mode, "reference-same-call")) return "the reference timed in the same call on this GPU";
    if (!strcmp(m->baseline_mode, "suite-figures") && m->figures_gpu[0] &&
        rg_contains_word_ci(m->product, m->figures_gpu))
        return "the suite's figures of this GPU";
    if (!strcmp(m->baseline_mode, "file")) return "the baseline file given with the run";
    return NULL;
}

static void source_figures(const rg_manifest *m, rg_ref_figures *out)
{
    out->x_ref = isfinite(m->avg_speedup) && m->avg_speedup > 0 ? m->avg_speedup : NAN;
    out->sol = isfinite(m->sol_score) && m->sol_score >= 0 ? m->sol_score : NAN;
    if (m->fast_1_total > 0 && isfinite(m->fast_1_count))
        out->fast_count = m->fast_1_count, out->fast_total = m->fast_1_total;
    const char *none = "the record has no per-workload figures and its source gives none";
    if (isnan(out->x_ref)) why(out->x_ref_why, sizeof out->x_ref_why, none);
    if (isnan(out->sol)) why(out->sol_why, sizeof out->sol_why, none);
    if (isnan(out->fast_total)) why(out->fast_why, sizeof out->fast_why, none);
}

void rg_model_ref_figures(const rg_manifest *m, const rg_manifest *ref, int64_t ref_id, rg_ref_figures *out)
{
    memset(out, 0, sizeof *out);
    out->x_ref = out->sol = out->fast_count = out->fast_total = NAN;
    int timed = m && m->primary_ns > 0 && isfinite(m->primary_ns);
    if (!timed || strcmp(m->status, "passed")) {
        const char *s = !timed ? "nothing timed" : "it failed correctness: its times are no figure";
        why(out->x_ref_why, sizeof out->x_ref_why, s);
        why(out->sol_why, sizeof out->sol_why, s);
        why(out->fast_why, sizeof out->fast_why, s);
        return;
    }
    if (!m->n_workloads) {
        source_figures(m, out);
        return;
    }
    size_t n = m->n_workloads;
    double *tb = calloc(n, sizeof *tb), *t_sol = calloc(n, sizeof *t_sol);
    if (!tb || !t_sol) {
        free(tb), free(t_sol);
        why(out->x_ref_why, sizeof out->x_ref_why, "out of memory");
        return;
    }
    const char *own_src = own_reference(m);
    int own = own_src != NULL, have_ref = 0;
    for (size_t i = 0; i < n; i++) {
        const rg_mf_workload *w = &m->workloads[i], *r = ref ? rg_manifest_find_workload(ref, w, i) : NULL;
        tb[i] = ref ? (r ? r->median : NAN) : own ? w->t_b_ns : NAN;
        have_ref |= tb[i] > 0 && isfinite(tb[i]);
    }
    if (!have_ref) {
        const char *s = ref ? "the group's reference run shares no workload with this run"
                            : "no reference timed on this GPU: no reference run in this group (python3 -m ropegrad "
                              "bench --impl reference records one), and the record's reference times are not of "
                              "this GPU (no baseline file, or the suite's figures of another GPU)";
        why(out->x_ref_why, sizeof out->x_ref_why, s);
        why(out->sol_why, sizeof out->sol_why, s);
        why(out->fast_why, sizeof out->fast_why, s);
        free(tb), free(t_sol);
        return;
    }
    rg_sol_check c;
    char err[160];
    int verified = !rg_manifest_sol_check(m, &c, t_sol, err, sizeof err) && c.state == RG_SOL_VERIFIED;
    double sum_r = 0, sum_s = 0;
    int k = 0, ks = 0, faster = 0;
    for (size_t i = 0; i < n; i++) {
        double t = m->workloads[i].median;
        if (!(t > 0) || !isfinite(t) || !(tb[i] > 0) || !isfinite(tb[i])) continue;
        sum_r += tb[i] / t;
        faster += tb[i] > t;
        k++;
        double s = verified ? rg_sol_score(t, t_sol[i], tb[i]) : NAN;
        if (isfinite(s)) sum_s += s, ks++;
    }
    free(tb), free(t_sol);
    if (!k) {
        why(out->x_ref_why, sizeof out->x_ref_why, "no workload has both its own and the reference's time");
        why(out->fast_why, sizeof out->fast_why, "no workload has both its own and the reference's time");
    } else {
        out->x_ref = sum_r / k;
        out->fast_count = faster;
        out->fast_total = k;
    }
    if (ks) out->sol = sum_s / ks;
    else if (!strcmp(m->vendor, "cpu")) why(out->sol_why, sizeof out->sol_why, RG_NO_SOL_ON_CPU);
    else why(out->sol_why, sizeof out->sol_why, verified ? "no workload has a SOL score" : c.basis);
    if (ref_id > 0 && k) snprintf(out->source, sizeof out->source, "reference run #%lld, measured in this group",
                                  (long long)ref_id);
    else if (k) why(out->source, sizeof out->source, own_src);
}
