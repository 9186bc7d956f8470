/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runs_json.c -- `--json` of `runs show`, `cite`, `rank` and `compare`: one
 * JSON document each on stdout (docs/record.md lists the keys). Times in
 * nanoseconds, null when unknown; strings that came from a record pass
 * through rg_term first.
 */
#define _POSIX_C_SOURCE 200809L   /* gmtime_r */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rank.h"
#include "runs.h"
#include "runs_format.h"

static int num(cJSON *o, const char *k, double v)
{
    return !(isfinite(v) ? cJSON_AddNumberToObject(o, k, v) : cJSON_AddNullToObject(o, k));
}

static int str(cJSON *o, const char *k, const char *v)
{
    return !(v ? cJSON_AddStringToObject(o, k, rg_term(v)) : cJSON_AddNullToObject(o, k));
}

/* A new object added to parent under key (an array when key is NULL); NULL when out of memory. */
static cJSON *child(cJSON *parent, const char *key, int array)
{
    cJSON *c = array ? cJSON_CreateArray() : cJSON_CreateObject();
    if (!c) return NULL;
    if (!(key ? cJSON_AddItemToObject(parent, key, c) : cJSON_AddItemToArray(parent, c))) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

static int workload_json(cJSON *arr, const rg_mf_workload *w)
{
    cJSON *o = child(arr, NULL, 0);
    if (!o) return 1;
    int oom = num(o, "index", w->index) | str(o, "uuid", w->uuid) | num(o, "median_ns", w->median);
    oom |= num(o, "min_ns", w->min) | num(o, "max_ns", w->max) | num(o, "mean_ns", w->mean);
    oom |= num(o, "samples", (double)w->n_samples) | num(o, "bytes", w->bytes) | num(o, "t_sol_ns", w->t_sol_ns);
    oom |= num(o, "t_b_ns", w->t_b_ns) | num(o, "sol_score", w->sol_score) | num(o, "speedup", w->speedup);
    oom |= !cJSON_AddBoolToObject(o, "pass", w->pass);
    oom |= str(o, "reason", w->reason[0] ? w->reason : NULL);
    double lo, hi;
    int known = w->n_samples && w->n_samples < 1000000 &&
                !rg_median_interval(w->samples, (int)w->n_samples, RG_STATS_CONF, &lo, &hi);
    oom |= num(o, "median_lo_ns", known ? lo : NAN) | num(o, "median_hi_ns", known ? hi : NAN);
    return oom;
}

int rg_runs_show_json(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    rg_manifest m;
    if (rg_registry_get(x->g, id, &r, &m, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs show: %s\n", x->err);
        return 2;
    }
    cJSON *doc = cJSON_CreateObject(), *run = doc ? child(doc, "run", 0) : NULL, *ws = doc ? child(doc, "workloads", 1)
                                                                                          : NULL;
    int oom = !doc || !run || !ws || rg_runs_row_json(x, &r, run);
    rg_ranked e;
    int ranked;
    if (!oom && !rg_registry_rank_run(x->g, id, &e, &ranked, x->err, sizeof x->err)) {
        cJSON *rk = child(doc, "rank", 0);
        char lab[16];
        oom |= !rk || num(rk, "rank", e.rank ? e.rank : NAN) | str(rk, "label", rg_rank_label(&e, lab, sizeof lab));
        oom |= !rk || num(rk, "ranked_in_group", ranked) | !cJSON_AddBoolToObject(rk, "tied", e.tied);
        oom |= !rk || num(rk, "estimate_ns", e.iv.est) | num(rk, "lo_ns", e.iv.known ? e.iv.lo : NAN) |
               num(rk, "hi_ns", e.iv.known ? e.iv.hi : NAN) | str(rk, "revision", e.revision);
    }
    oom |= str(doc, "harness", m.harness_name) | str(doc, "harness_version", m.harness_version);
    oom |= str(doc, "implementation", m.impl_name) | str(doc, "implementation_version", m.impl_version);
    oom |= str(doc, "hostname", m.hostname) | str(doc, "cpu_model", m.cpu_model) | str(doc, "product", m.product);
    oom |= num(doc, "warmup", m.warmup >= 0 ? m.warmup : NAN) | num(doc, "iterations", m.iterations >= 0 ? m.iterations : NAN);
    oom |= str(doc, "timer", m.timer);
    for (size_t i = 0; i < m.n_workloads && !oom; i++) oom |= workload_json(ws, &m.workloads[i]);
    rg_note *notes;
    size_t nn;
    cJSON *na = oom ? NULL : child(doc, "notes", 1);
    oom |= !na;
    if (!oom && !rg_registry_notes(x->g, id, &notes, &nn, x->err, sizeof x->err)) {
        for (size_t i = 0; i < nn && !oom; i++) {
            cJSON *o = child(na, NULL, 0);
            oom |= !o || str(o, "created_at", notes[i].created_at) | str(o, "text", notes[i].text);
        }
        rg_notes_free(notes, nn);
    }
    rg_manifest_free(&m);
    return rg_runs_emit_json("show", doc, oom);
}

int rg_runs_cite_json(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    char today[16], k[96];
    if (rg_runs_cite_row(x, id, &r, today, sizeof today)) return 2;
    cJSON *doc = cJSON_CreateObject();
    int oom = !doc || num(doc, "run", (double)r.id) | str(doc, "definition", r.definition);
    oom |= !doc || str(doc, "implementation", rg_cli_impl_label(k, sizeof k, &r)) | str(doc, "device", r.device);
    oom |= !doc || str(doc, "evidence", r.evidence) | str(doc, "run_digest", r.run_digest);
    oom |= !doc || str(doc, "observed_at", r.observed_at) | str(doc, "accessed", today);
    return rg_runs_emit_json("cite", doc, oom);
}

/* One group's ranked runs into arr. */
static int group_json(runs_ctx *x, cJSON *arr, const rg_run_row *first)
{
    rg_ranked *e;
    size_t ne;
    if (rg_registry_rank_group(x->g, first->comparison_key, x->evidence, &e, &ne, x->err, sizeof x->err)) return 2;
    cJSON *g = child(arr, NULL, 0), *runs = g ? child(g, "runs", 1) : NULL;
    int oom = !g || !runs || str(g, "comparison_key", first->comparison_key) | str(g, "definition", first->definition);
    oom |= !g || str(g, "device", first->device) | str(g, "family", first->family) |
           str(g, "primary_statistic", first->primary_statistic);
    double best = NAN;
    for (size_t k = 0; k < ne && isnan(best); k++)
        if (rg_ranked_may_be_first(&e[k])) best = e[k].iv.est;
    for (size_t k = 0; k < ne && !oom; k++) {
        const rg_ranked *r = &e[k];
        cJSON *o = child(runs, NULL, 0);
        char lab[16], impl[96];
        oom |= !o || num(o, "id", (double)r->row.id) | num(o, "rank", r->rank ? r->rank : NAN);
        oom |= !o || str(o, "label", rg_rank_label(r, lab, sizeof lab)) | !cJSON_AddBoolToObject(o, "tied", r->tied);
        oom |= !o || num(o, "estimate_ns", r->iv.est) | num(o, "lo_ns", r->iv.known ? r->iv.lo : NAN) |
               num(o, "hi_ns", r->iv.known ? r->iv.hi : NAN);
        oom |= !o || num(o, "vs_first", r->rank && isfinite(best) ? r->iv.est / best : NAN);
        oom |= !o || str(o, "implementation", rg_cli_impl_label(impl, sizeof impl, &r->row)) |
               str(o, "evidence", r->row.evidence) | str(o, "status", r->row.status) | str(o, "revision", r->revision);
        oom |= !o || !cJSON_AddBoolToObject(o, "suspect", r->suspect);
        oom |= !o || !cJSON_AddBoolToObject(o, "confirmed", r->confirmed);
        oom |= !o || str(o, "suspect_reason", r->suspect ? r->suspect_why : NULL);
        oom |= !o || str(o, "verification", rg_sol_state_name(r->sol.state)) | str(o, "verification_basis", r->sol.basis);
    }
    free(e);
    return oom;
}

static int cmp_key(const void *pa, const void *pb)
{
    const rg_run_row *a = pa, *b = pb;
    int c = strcmp(a->comparison_key, b->comparison_key);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

int rg_runs_rank_json(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n, m = 0;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs rank: %s\n", x->err);
        return 2;
    }
    for (size_t i = 0; i < n; i++)
        if (!x->evidence || !strcmp(rows[i].evidence, x->evidence)) rows[m++] = rows[i];
    qsort(rows, m, sizeof *rows, cmp_key);
    cJSON *doc = cJSON_CreateObject(), *groups = doc ? child(doc, "groups", 1) : NULL;
    int rc = !doc || !groups || str(doc, "method", RG_RANK_METHOD) | str(doc, "evidence", x->evidence);
    for (size_t i = 0; i < m && !rc;) {
        size_t j = i;
        while (j < m && !strcmp(rows[j].comparison_key, rows[i].comparison_key)) j++;
        rc = group_json(x, groups, &rows[i]);
        i = j;
    }
    free(rows);
    if (rc == 2) {
        cJSON_Delete(doc);
        rg_term_printf(stderr, "ropegrad runs rank: %s\n", x->err);
        return 2;
    }
    return rg_runs_emit_json("rank", doc, rc);
}

/* Per workload of a and b: medians, the Hodges-Lehmann ratio B/A, its interval, p and the verdict. */
static int compare_workloads(cJSON *ws, const rg_manifest *ma, const rg_manifest *mb)
{
    int oom = 0;
    for (size_t i = 0; i < ma->n_workloads && !oom; i++) {
        const rg_mf_workload *a = &ma->workloads[i], *b = rg_manifest_find_workload(mb, a, i);
        cJSON *o = child(ws, NULL, 0);
        oom |= !o || num(o, "index", a->index) | str(o, "uuid", a->uuid) | num(o, "a_median_ns", a->median) |
               num(o, "b_median_ns", b ? b->median : NAN);
        rg_shift sh;
        int have = b && isfinite(a->median) && isfinite(b->median) && a->n_samples && b->n_samples &&
                   a->n_samples < 1000000 && b->n_samples < 1000000 &&
                   !rg_shift_estimate(a->samples, (int)a->n_samples, b->samples, (int)b->n_samples, RG_STATS_CONF, &sh);
        oom |= !o || num(o, "ratio", have ? sh.ratio : b ? b->median / a->median : NAN);
        oom |= !o || num(o, "lo", have ? sh.lo : NAN) | num(o, "hi", have ? sh.hi : NAN) | num(o, "p", have ? sh.p : NAN);
        oom |= !o || str(o, "verdict", have ? rg_verdict_name(rg_shift_verdict(&sh, RG_STATS_ALPHA, RG_STATS_THRESHOLD))
                                            : b ? "UNCLEAR" : NULL);
    }
    return oom;
}

int rg_runs_compare_json(runs_ctx *x, int64_t ida, int64_t idb)
{
    cJSON *doc = cJSON_CreateObject();
    int oom = !doc;
    if (!idb) {   /* against #1 of its group: #1 is A */
        int rank, size;
        int64_t first;
        if (rg_registry_rank_of(x->g, ida, &rank, &size, &first, x->err, sizeof x->err)) {
            cJSON_Delete(doc);
            rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
            return 2;
        }
        if (!first || first == ida) {
            oom |= num(doc, "a", (double)ida) | !cJSON_AddNullToObject(doc, "b");
            oom |= str(doc, "reason", !first ? "its comparison group has no #1" : "it is #1 of its comparison group");
            return rg_runs_emit_json("compare", doc, oom);
        }
        idb = ida;
        ida = first;
    }
    rg_run_row ra, rb;
    rg_manifest ma, mb;
    if (rg_registry_get(x->g, ida, &ra, &ma, x->err, sizeof x->err)) {
        cJSON_Delete(doc);
        rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
        return 2;
    }
    if (rg_registry_get(x->g, idb, &rb, &mb, x->err, sizeof x->err)) {
        cJSON_Delete(doc);
        rg_manifest_free(&ma);
        rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
        return 2;
    }
    cJSON *a = oom ? NULL : child(doc, "a", 0), *b = oom ? NULL : child(doc, "b", 0);
    cJSON *ws = oom ? NULL : child(doc, "workloads", 1);
    oom |= !a || !b || !ws || rg_runs_row_json(x, &ra, a) | rg_runs_row_json(x, &rb, b);
    oom |= oom || num(doc, "primary_ratio", rb.primary_ns / ra.primary_ns) |
           !cJSON_AddBoolToObject(doc, "same_comparison_key", !strcmp(ra.comparison_key, rb.comparison_key));
    oom |= oom || str(doc, "method", RG_CHECK_METHOD) | num(doc, "alpha", RG_STATS_ALPHA) |
           num(doc, "threshold", RG_STATS_THRESHOLD);
    if (!oom) oom |= compare_workloads(ws, &ma, &mb);
    rg_manifest_free(&ma);
    rg_manifest_free(&mb);
    return rg_runs_emit_json("compare", doc, oom);
}

int rg_history_line_json(rg_registry *g, const rg_ranked *e, size_t n, cJSON *lines)
{
    const rg_run_row *r0 = &e[0].row;
    char impl[96];
    cJSON *l = child(lines, NULL, 0), *runs = l ? child(l, "runs", 1) : NULL, *ws = l ? child(l, "workloads", 1) : NULL;
    int oom = !l || !runs || !ws || str(l, "implementation", rg_cli_impl_label(impl, sizeof impl, r0)) |
              str(l, "comparison_key", r0->comparison_key) | str(l, "definition", r0->definition) |
              str(l, "device", r0->device) | str(l, "primary_statistic", r0->primary_statistic);
    for (size_t i = 0; i < n && !oom; i++) {
        cJSON *o = child(runs, NULL, 0);
        oom |= !o || num(o, "id", (double)e[i].row.id) | str(o, "observed_at", e[i].row.observed_at) |
               str(o, "revision", e[i].revision) | str(o, "evidence", e[i].row.evidence) |
               str(o, "status", e[i].row.status) | num(o, "estimate_ns", e[i].iv.est) |
               num(o, "lo_ns", e[i].iv.known ? e[i].iv.lo : NAN) | num(o, "hi_ns", e[i].iv.known ? e[i].iv.hi : NAN) |
               !cJSON_AddBoolToObject(o, "suspect", e[i].suspect) | str(o, "suspect_reason", e[i].suspect ? e[i].suspect_why : NULL);
    }
    /* Per workload of the newest run: each run's median and its interval. */
    char err[RG_ERRLEN];
    rg_manifest *m = oom ? NULL : calloc(n, sizeof *m);
    size_t got = 0;
    if (!m) return 1;
    while (got < n && !rg_registry_get(g, e[got].row.id, NULL, &m[got], err, sizeof err)) got++;
    int rc = got < n ? 2 : 0;
    for (size_t w = 0; !rc && !oom && w < m[n - 1].n_workloads; w++) {
        const rg_mf_workload *ref = &m[n - 1].workloads[w];
        cJSON *o = child(ws, NULL, 0), *per = o ? child(o, "runs", 1) : NULL;
        oom |= !o || !per || num(o, "index", ref->index) | str(o, "uuid", ref->uuid);
        for (size_t i = 0; i < n && !oom; i++) {
            const rg_mf_workload *x = rg_manifest_find_workload(&m[i], ref, w);
            double lo, hi;
            int known = x && x->n_samples && x->n_samples < 1000000 &&
                        !rg_median_interval(x->samples, (int)x->n_samples, RG_STATS_CONF, &lo, &hi);
            cJSON *q = child(per, NULL, 0);
            oom |= !q || num(q, "id", (double)e[i].row.id) | num(q, "median_ns", x ? x->median : NAN) |
                   num(q, "lo_ns", known ? lo : NAN) | num(q, "hi_ns", known ? hi : NAN);
        }
    }
    for (size_t i = 0; i < got; i++) rg_manifest_free(&m[i]);
    free(m);
    return rc ? rc : oom;
}
