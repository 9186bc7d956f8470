/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runs_check.c -- `ropegrad runs check ID [--against REF] [--json]`: the
 * regression gate (src/record/stats/gate.h), as text or one JSON document.
 *
 *   history rule   no --against and RG_GATE_MIN_HISTORY earlier credible runs
 *                  in the run's line: its primary figure against theirs.
 *   pairwise rule  against one baseline (--against, else the previous
 *                  revision of its line): the ratio of the primary figures
 *                  against the machine's run-to-run noise (history, a
 *                  calibration, or the default), and per workload the
 *                  Hodges-Lehmann ratio of the samples, SLOW only beyond the
 *                  same noise.
 *
 * Exit: 0 SAME or FAST, 1 SLOW (or a failed run), 3 UNCLEAR, 2 bad usage or input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gate.h"
#include "rank.h"
#include "record.h"
#include "runs_check.h"
#include "runs_format.h"

int rg_check_exit(rg_verdict v) { return v == RG_VERDICT_SLOW ? 1 : v == RG_VERDICT_UNCLEAR ? 3 : 0; }

const char *rg_check_conclusion(rg_verdict v)
{
    return v == RG_VERDICT_SLOW ? "regression" : v == RG_VERDICT_UNCLEAR ? "unclear (exit 3)" : "no regression";
}

/* A number, or null when it is not finite. */
int rg_check_num(cJSON *o, const char *k, double v)
{
    return !(isfinite(v) ? cJSON_AddNumberToObject(o, k, v) : cJSON_AddNullToObject(o, k));
}

int rg_check_str(cJSON *o, const char *k, const char *v)
{
    return !(v ? cJSON_AddStringToObject(o, k, rg_term(v)) : cJSON_AddNullToObject(o, k));
}

/* Prints doc (one document, then a newline) and deletes it: 0, or 2 when it could not be made. */
int rg_check_emit(cJSON *doc, int oom)
{
    char *text = oom || !doc ? NULL : cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) {
        rg_term_printf(stderr, "ropegrad runs check: out of memory\n");
        return 2;
    }
    fputs(text, stdout);
    fputs("\n", stdout);
    free(text);
    return 0;
}

cJSON *rg_check_doc(int64_t id, const char *rule, int *oom)
{
    cJSON *doc = cJSON_CreateObject();
    *oom = !doc;
    if (doc) {
        *oom |= rg_check_num(doc, "run", (double)id);
        *oom |= rg_check_str(doc, "rule", rule);
    }
    return doc;
}

/* ---- nothing to check ------------------------------------------------------------ */

/* A run that timed nothing: a failed run fails the check (1), a `check` run passes it (0). */
int rg_check_untimed(int64_t id, const char *label, int failed, int json)
{
    if (!json) {
        tprintf("run #%lld timed nothing (%s): no times to check%s\n", (long long)id, label,
                failed ? "; a failed run fails the check" : "");
        return failed;
    }
    int oom;
    cJSON *doc = rg_check_doc(id, "none", &oom);
    if (doc) {
        oom |= rg_check_str(doc, "verdict", failed ? "FAILED" : "UNTIMED");
        oom |= rg_check_str(doc, "reason", label);
        oom |= rg_check_num(doc, "exit", failed);
    }
    return rg_check_emit(doc, oom) ? 2 : failed;
}

int rg_check_no_baseline(int64_t id, int json)
{
    if (!json) {
        tprintf("run #%lld: no earlier revision in its line to check against (use --against ID); nothing to check\n",
                (long long)id);
        return 0;
    }
    int oom;
    cJSON *doc = rg_check_doc(id, "none", &oom);
    if (doc) {
        oom |= !cJSON_AddNullToObject(doc, "verdict");
        oom |= rg_check_str(doc, "reason", "no earlier revision in its line to check against (use --against ID)");
        oom |= rg_check_num(doc, "exit", 0);
    }
    return rg_check_emit(doc, oom);
}

/* ---- the history rule ------------------------------------------------------------ */

int rg_check_history_rule(rg_registry *g, int64_t id, double z_threshold, double threshold, int json)
{
    char err[RG_ERRLEN], busy_why[64], a[32], b[32], c[32];
    rg_gate_history h;
    if (rg_gate_history_check(g, id, z_threshold, threshold, &h, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
        return 2;
    }
    if (h.n < RG_GATE_MIN_HISTORY) return -1;
    rg_run_row row;
    rg_manifest m;
    if (rg_registry_get(g, id, &row, &m, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
        return 2;
    }
    int busy = rg_manifest_busy(&m, busy_why, sizeof busy_why);
    rg_manifest_free(&m);
    rg_verdict v = busy ? RG_VERDICT_UNCLEAR : h.verdict;   /* gate.h: a busy CPU run says nothing either way */
    if (json) {
        int oom;
        cJSON *doc = rg_check_doc(id, "history", &oom), *hist = cJSON_CreateObject();
        if (!doc || !hist || !cJSON_AddItemToObject(doc, "history", hist)) {
            cJSON_Delete(hist);
            oom = 1;
        } else {
            oom |= rg_check_str(doc, "verdict", rg_verdict_name(v));
            oom |= rg_check_num(doc, "exit", rg_check_exit(v));
            oom |= !cJSON_AddBoolToObject(doc, "busy", busy);
            oom |= rg_check_str(doc, "busy_reason", busy ? busy_why : NULL);
            oom |= rg_check_num(doc, "threshold", threshold) | rg_check_num(doc, "z_threshold", z_threshold);
            oom |= rg_check_str(doc, "method", RG_GATE_HISTORY_METHOD);
            oom |= rg_check_num(hist, "runs", (double)h.n) | rg_check_num(hist, "skipped", (double)h.skipped);
            oom |= rg_check_num(hist, "first_id", (double)h.first_id) | rg_check_num(hist, "last_id", (double)h.last_id);
            oom |= rg_check_num(hist, "run_ns", h.x) | rg_check_num(hist, "mean_ns", h.mean) | rg_check_num(hist, "sd_ns", h.sd);
            oom |= rg_check_num(hist, "ratio", h.x / h.mean) | rg_check_num(hist, "z", h.z);
        }
        return rg_check_emit(doc, oom) ? 2 : rg_check_exit(v);
    }
    tprintf("check: run #%lld against the history of its line: %zu earlier credible runs (#%lld to #%lld)", (long long)id,
            h.n, (long long)h.first_id, (long long)h.last_id);
    if (h.skipped) tprintf(", %zu left out (failed, suspect or busy)", h.skipped);
    tprintf("\nmethod: %s\nz threshold %.3g, threshold %.3g%%\n\n", RG_GATE_HISTORY_METHOD, z_threshold, 100 * threshold);
    tprintf("  primary: run %s, history mean %s, sd %s, ratio %.4f, z %.2f: %s\n", rg_cli_time(a, sizeof a, h.x),
            rg_cli_time(b, sizeof b, h.mean), rg_cli_time(c, sizeof c, h.sd), h.x / h.mean, h.z, rg_verdict_name(v));
    if (busy) tprintf("  recorded on a busy machine (%s): UNCLEAR, never SLOW (or SAME, or FAST)\n", busy_why);
    tprintf("\n%s\n", rg_check_conclusion(v));
    return rg_check_exit(v);
}

/* ---- the pairwise rule ----------------------------------------------------------- */

typedef struct pair_check {
    int64_t id, base;
    int named;                       /* the baseline came from --against */
    rg_run_row rr, rb;
    rg_manifest mr, mb;
    rg_gate_noise noise;
    double band, band_w;
    double ratio;                    /* primary figures, run / baseline */
    rg_verdict primary, overall;
    int busy;
    char busy_why[64];
    rg_check_row *rows;
    size_t n;
    int count[4];
} pair_check;

/* The verdicts: each workload's within the noise band, the primary figure's, the whole check's. */
static void judge(pair_check *c, double threshold)
{
    c->band = rg_noise_band(c->noise.sigma, c->noise.df);
    c->band_w = rg_noise_band(c->noise.sigma_w, c->noise.df_w);
    for (size_t i = 0; i < c->n; i++) {
        rg_check_row *r = &c->rows[i];
        if (!r->have) continue;
        int beyond = r->verdict == RG_VERDICT_SLOW ? r->shift.lo > c->band_w
                     : r->verdict == RG_VERDICT_FAST ? r->shift.hi < 1 / c->band_w
                                                    : 1;
        if (!beyond) {
            r->verdict = RG_VERDICT_UNCLEAR;
            snprintf(r->why, sizeof r->why, "within the machine's run-to-run noise (band %.1f%%)",
                     100 * (c->band_w - 1));
        }
    }
    for (size_t i = 0; i < c->n; i++) c->count[c->rows[i].verdict]++;
    c->ratio = c->mr.primary_ns / c->mb.primary_ns;
    c->primary = rg_noise_verdict(c->ratio, threshold, c->band);
    if (c->busy) c->primary = RG_VERDICT_UNCLEAR;   /* gate.h: a busy CPU run says nothing either way */
    c->overall = c->count[RG_VERDICT_SLOW] || c->primary == RG_VERDICT_SLOW ? RG_VERDICT_SLOW : c->primary;
}

static void noise_source_text(const rg_gate_noise *n, char *buf, size_t len)
{
    if (!strcmp(n->source, "history"))
        snprintf(buf, len, "history: %d same-code pairs on this machine", n->n);
    else if (!strcmp(n->source, "calibration"))
        snprintf(buf, len, "calibration of %s, %d runs (%s)", n->created_at, n->n, n->detail);
    else
        snprintf(buf, len, "the default %.0f%%: no history or calibration of this machine (ropegrad runs calibrate)",
                 100 * RG_NOISE_DEFAULT);
}

static void print_pair(const pair_check *c, double threshold, double alpha)
{
    char rv1[48], rv2[48], why[200], a[32], b[32], src[400];
    rg_revision_label(&c->mr, rv1, sizeof rv1);
    rg_revision_label(&c->mb, rv2, sizeof rv2);
    tprintf("check: run #%lld (%s) against run #%lld (%s, %s)\n", (long long)c->id, rv1, (long long)c->base, rv2,
            c->named ? "named with --against" : "the previous revision of its line");
    if (strcmp(c->rb.comparison_key, c->rr.comparison_key))
        tprintf("note: different comparison keys (workloads, device or protocol differ)\n");
    if (rg_manifest_suspect(&c->mr, why, sizeof why)) tprintf("note: run #%lld is SUSPECT: %s\n", (long long)c->id, why);
    if (rg_manifest_suspect(&c->mb, why, sizeof why))
        tprintf("note: the baseline #%lld is SUSPECT: %s\n", (long long)c->base, why);
    noise_source_text(&c->noise, src, sizeof src);
    tprintf("noise of %s: sigma %.2f%% (primary), %.2f%% (a workload), from %s\n", c->noise.machine,
            100 * c->noise.sigma, 100 * c->noise.sigma_w, src);
    tprintf("method: %s; per workload: %s\n", RG_NOISE_METHOD, RG_CHECK_METHOD);
    tprintf("threshold %.3g%%, alpha %.3g, noise band %.1f%% (primary), %.1f%% (a workload)\n\n", 100 * threshold,
            alpha, 100 * (c->band - 1), 100 * (c->band_w - 1));
    tprintf("  primary (%s): baseline %s, run %s, ratio %.4f: %s\n\n", c->mr.primary_statistic,
            rg_cli_time(a, sizeof a, c->mb.primary_ns), rg_cli_time(b, sizeof b, c->mr.primary_ns), c->ratio,
            rg_verdict_name(c->primary));
    tprintf("  %4s  %12s  %12s  %-28s  %10s  %s\n", "#", "baseline", "run", "ratio [95% interval]", "p", "verdict");
    for (size_t i = 0; i < c->n; i++) {
        const rg_check_row *r = &c->rows[i];
        rg_cli_time(a, sizeof a, r->base_median);
        rg_cli_time(b, sizeof b, r->run_median);
        char iv[96] = "-", p[32] = "-";
        if (r->have) {
            snprintf(iv, sizeof iv, "%.4f [%.4f, %.4f]", r->shift.ratio, r->shift.lo, r->shift.hi);
            snprintf(p, sizeof p, "%.3g", r->shift.p);
        }
        tprintf("  %4d  %*s  %*s  %-28s  %10s  %s%s%s%s\n", r->index, rg_cli_w(a, 12), a, rg_cli_w(b, 12), b, iv, p,
                rg_verdict_name(r->verdict), r->why[0] ? " (" : "", r->why, r->why[0] ? ")" : "");
    }
    if (c->busy)
        tprintf("note: run #%lld was recorded on a busy machine (%s): UNCLEAR, never SLOW\n", (long long)c->id,
                c->busy_why);
    tprintf("\n%d SLOW, %d FAST, %d SAME, %d UNCLEAR; primary %s: %s\n", c->count[RG_VERDICT_SLOW],
            c->count[RG_VERDICT_FAST], c->count[RG_VERDICT_SAME], c->count[RG_VERDICT_UNCLEAR],
            rg_verdict_name(c->primary), rg_check_conclusion(c->overall));
}

static int json_pair(const pair_check *c, double threshold, double alpha)
{
    int oom;
    cJSON *doc = rg_check_doc(c->id, "pairwise", &oom), *noise = cJSON_CreateObject(), *prim = cJSON_CreateObject(),
          *ws = cJSON_CreateArray();
    if (!doc || !noise || !prim || !ws) {
        cJSON_Delete(noise), cJSON_Delete(prim), cJSON_Delete(ws);
        return rg_check_emit(doc, 1);
    }
    cJSON_AddItemToObject(doc, "noise", noise);
    cJSON_AddItemToObject(doc, "primary", prim);
    oom |= rg_check_num(doc, "baseline", (double)c->base);
    oom |= rg_check_str(doc, "baseline_from", c->named ? "against" : "previous revision");
    oom |= rg_check_str(doc, "verdict", rg_verdict_name(c->overall));
    oom |= rg_check_num(doc, "exit", rg_check_exit(c->overall));
    oom |= !cJSON_AddBoolToObject(doc, "busy", c->busy);
    oom |= rg_check_str(doc, "busy_reason", c->busy ? c->busy_why : NULL);
    oom |= rg_check_num(doc, "threshold", threshold) | rg_check_num(doc, "alpha", alpha);
    oom |= rg_check_str(doc, "method", RG_NOISE_METHOD);
    oom |= rg_check_str(doc, "workload_method", RG_CHECK_METHOD);
    oom |= rg_check_str(noise, "machine", c->noise.machine) | rg_check_str(noise, "source", c->noise.source);
    oom |= rg_check_num(noise, "sigma", c->noise.sigma) | rg_check_num(noise, "df", c->noise.df);
    oom |= rg_check_num(noise, "sigma_workload", c->noise.sigma_w) | rg_check_num(noise, "df_workload", c->noise.df_w);
    oom |= rg_check_num(noise, "band", c->band) | rg_check_num(noise, "band_workload", c->band_w);
    oom |= rg_check_num(noise, "n", c->noise.n);
    oom |= rg_check_str(prim, "statistic", c->mr.primary_statistic);
    oom |= rg_check_num(prim, "baseline_ns", c->mb.primary_ns) | rg_check_num(prim, "run_ns", c->mr.primary_ns);
    oom |= rg_check_num(prim, "ratio", c->ratio) | rg_check_str(prim, "verdict", rg_verdict_name(c->primary));
    oom |= !cJSON_AddItemToObject(doc, "workloads", ws);
    for (size_t i = 0; i < c->n && !oom; i++) {
        const rg_check_row *r = &c->rows[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(ws, o)) {
            cJSON_Delete(o);
            oom = 1;
            break;
        }
        oom |= rg_check_num(o, "index", r->index) | rg_check_str(o, "uuid", r->uuid);
        oom |= rg_check_num(o, "baseline_ns", r->base_median) | rg_check_num(o, "run_ns", r->run_median);
        oom |= rg_check_num(o, "ratio", r->have ? r->shift.ratio : NAN) | rg_check_num(o, "lo", r->have ? r->shift.lo : NAN);
        oom |= rg_check_num(o, "hi", r->have ? r->shift.hi : NAN) | rg_check_num(o, "p", r->have ? r->shift.p : NAN);
        oom |= rg_check_str(o, "verdict", rg_verdict_name(r->verdict)) | rg_check_str(o, "why", r->why[0] ? r->why : NULL);
    }
    return rg_check_emit(doc, oom);
}

int rg_check_pair(rg_registry *g, int64_t id, int64_t base, int named, double threshold, double alpha, int json)
{
    char err[RG_ERRLEN];
    pair_check c;
    memset(&c, 0, sizeof c);
    c.id = id, c.base = base, c.named = named;
    if (rg_registry_get(g, base, &c.rb, &c.mb, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
        return 2;
    }
    int rc = 2;
    if (rg_registry_get(g, id, &c.rr, &c.mr, err, sizeof err)) {
        rg_manifest_free(&c.mb);
        rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
        return 2;
    }
    if (rg_check_runs(&c.mb, &c.mr, alpha, threshold, &c.rows, &c.n, err, sizeof err) ||
        rg_gate_noise_for(g, &c.mr, id, &c.noise, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
    } else {
        c.busy = rg_manifest_busy(&c.mr, c.busy_why, sizeof c.busy_why);
        judge(&c, threshold);
        if (json) rc = json_pair(&c, threshold, alpha) ? 2 : rg_check_exit(c.overall);
        else {
            print_pair(&c, threshold, alpha);
            rc = rg_check_exit(c.overall);
        }
    }
    free(c.rows);
    rg_manifest_free(&c.mb);
    rg_manifest_free(&c.mr);
    return rc;
}
