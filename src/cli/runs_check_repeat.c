/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runs_check_repeat.c -- `ropegrad runs check B1,B2,... --against A1,A2,...`:
 * the repeated pairwise rule. n runs of the code under test recorded
 * interleaved with m runs of the baseline (A1 B1 A2 B2 ...): the ratio of the
 * geometric means of their primary figures against the machine's run-to-run
 * noise, whose band narrows as exp(k sqrt(1/n + 1/m) sigma); per workload the
 * same rule on the geometric means of the runs' medians. On a machine whose
 * noise hides a slowdown from one pair (UNCLEAR), more pairs decide it.
 *
 * Exit: 0 SAME or FAST, 1 SLOW, 3 UNCLEAR, 2 bad usage or input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "rank.h"
#include "record.h"
#include "runs_check.h"
#include "runs_format.h"

typedef struct repeat_row {
    int index;
    char uuid[64];
    double base_ns, run_ns, ratio;   /* geometric means of the medians, run / baseline */
    rg_verdict verdict;
} repeat_row;

typedef struct repeat_check {
    const int64_t *runs, *bases;
    size_t n_runs, n_bases;
    rg_manifest *mr, *mb;            /* n_runs, n_bases manifests */
    rg_gate_noise noise;
    double band, band_w;
    double run_ns, base_ns, ratio;   /* geometric means of the primary figures */
    rg_verdict primary, overall;
    int busy, mixed_keys;
    int loaded_runs, loaded_bases;   /* every manifest of that side loaded (to free) */
    char busy_why[96];
    repeat_row *rows;
    size_t n;
    int count[4];
} repeat_check;

static int positive(double v) { return isfinite(v) && v > 0; }

/* The geometric mean of the n runs' primary figures, NAN unless all are positive. */
static double geomean_primary(const rg_manifest *m, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        if (!positive(m[i].primary_ns)) return NAN;
        s += log(m[i].primary_ns);
    }
    return exp(s / (double)n);
}

/* The geometric mean of workload w's median over the n manifests, NAN when one lacks it. */
static double geomean_median(const rg_manifest *m, size_t n, const rg_mf_workload *w, size_t hint)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        const rg_mf_workload *v = rg_manifest_find_workload(&m[i], w, hint);
        if (!v || !positive(v->median)) return NAN;
        s += log(v->median);
    }
    return exp(s / (double)n);
}

static int load_all(rg_registry *g, const int64_t *ids, size_t n, rg_manifest *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        rg_run_row row;
        if (rg_registry_get(g, ids[i], &row, &out[i], err, errlen)) {
            while (i-- > 0) rg_manifest_free(&out[i]);
            return 2;
        }
    }
    return 0;
}

/* Busy when any run of either side was recorded on a busy machine; the first one's reason. */
static void find_busy(repeat_check *c)
{
    char why[64];
    for (size_t i = 0; i < c->n_runs + c->n_bases && !c->busy; i++) {
        int is_run = i < c->n_runs;
        const rg_manifest *m = is_run ? &c->mr[i] : &c->mb[i - c->n_runs];
        if (rg_manifest_busy(m, why, sizeof why)) {
            c->busy = 1;
            snprintf(c->busy_why, sizeof c->busy_why, "run #%lld: %s",
                     (long long)(is_run ? c->runs[i] : c->bases[i - c->n_runs]), why);
        }
    }
}

static void judge(repeat_check *c, double threshold)
{
    c->band = rg_noise_band_n(c->noise.sigma, c->noise.df, c->n_runs, c->n_bases);
    c->band_w = rg_noise_band_n(c->noise.sigma_w, c->noise.df_w, c->n_runs, c->n_bases);
    for (size_t i = 0; i < c->n; i++) {
        repeat_row *r = &c->rows[i];
        r->verdict = c->busy ? RG_VERDICT_UNCLEAR : rg_noise_verdict(r->ratio, threshold, c->band_w);
        c->count[r->verdict]++;
    }
    c->run_ns = geomean_primary(c->mr, c->n_runs);
    c->base_ns = geomean_primary(c->mb, c->n_bases);
    c->ratio = c->run_ns / c->base_ns;
    c->primary = c->busy ? RG_VERDICT_UNCLEAR : rg_noise_verdict(c->ratio, threshold, c->band);
    c->overall = c->count[RG_VERDICT_SLOW] || c->primary == RG_VERDICT_SLOW ? RG_VERDICT_SLOW : c->primary;
}

/* The workloads of the first run that every run of both sides timed. */
static int build_rows(repeat_check *c, char *err, size_t errlen)
{
    const rg_manifest *first = &c->mr[0];
    c->rows = calloc(first->n_workloads ? first->n_workloads : 1, sizeof *c->rows);
    if (!c->rows) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < first->n_workloads; i++) {
        const rg_mf_workload *w = &first->workloads[i];
        double b = geomean_median(c->mb, c->n_bases, w, i), r = geomean_median(c->mr, c->n_runs, w, i);
        if (!positive(b) || !positive(r)) continue;
        repeat_row *row = &c->rows[c->n++];
        row->index = w->index;
        snprintf(row->uuid, sizeof row->uuid, "%s", w->uuid);
        row->base_ns = b, row->run_ns = r, row->ratio = r / b;
    }
    if (!c->n) {
        snprintf(err, errlen, "no workload was timed by every run of both sides");
        return 2;
    }
    return 0;
}

static int64_t smallest_id(const repeat_check *c)
{
    int64_t m = c->runs[0];
    for (size_t i = 0; i < c->n_runs; i++) m = c->runs[i] < m ? c->runs[i] : m;
    for (size_t i = 0; i < c->n_bases; i++) m = c->bases[i] < m ? c->bases[i] : m;
    return m;
}

static int same_keys(const repeat_check *c)
{
    const char *k = c->mr[0].comparison_key;
    for (size_t i = 1; i < c->n_runs; i++)
        if (strcmp(c->mr[i].comparison_key, k)) return 0;
    for (size_t i = 0; i < c->n_bases; i++)
        if (strcmp(c->mb[i].comparison_key, k)) return 0;
    return 1;
}

static void id_list(const int64_t *ids, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s#%lld", i ? ", " : "", (long long)ids[i]);
}

static void print_repeat(const repeat_check *c, double threshold)
{
    char runs[400], bases[400], a[32], b[32];
    id_list(c->runs, c->n_runs, runs, sizeof runs);
    id_list(c->bases, c->n_bases, bases, sizeof bases);
    tprintf("check: %zu runs (%s) against %zu baseline runs (%s)\n", c->n_runs, runs, c->n_bases, bases);
    if (c->mixed_keys) tprintf("note: different comparison keys (workloads, device or protocol differ)\n");
    tprintf("noise of %s: sigma %.2f%% (primary), %.2f%% (a workload), from %s (%d)\n", c->noise.machine,
            100 * c->noise.sigma, 100 * c->noise.sigma_w, c->noise.source, c->noise.n);
    tprintf("method: %s\n", RG_NOISE_REPEAT_METHOD);
    tprintf("threshold %.3g%%, noise band %.1f%% (primary), %.1f%% (a workload)\n\n", 100 * threshold,
            100 * (c->band - 1), 100 * (c->band_w - 1));
    tprintf("  primary (%s, geometric mean of the runs): baseline %s, run %s, ratio %.4f: %s\n\n",
            c->mr[0].primary_statistic, rg_cli_time(a, sizeof a, c->base_ns), rg_cli_time(b, sizeof b, c->run_ns),
            c->ratio, rg_verdict_name(c->primary));
    tprintf("  %4s  %12s  %12s  %8s  %s\n", "#", "baseline", "run", "ratio", "verdict");
    for (size_t i = 0; i < c->n; i++) {
        const repeat_row *r = &c->rows[i];
        rg_cli_time(a, sizeof a, r->base_ns);
        rg_cli_time(b, sizeof b, r->run_ns);
        tprintf("  %4d  %*s  %*s  %8.4f  %s\n", r->index, rg_cli_w(a, 12), a, rg_cli_w(b, 12), b, r->ratio,
                rg_verdict_name(r->verdict));
    }
    if (c->busy) tprintf("note: recorded on a busy machine (%s): UNCLEAR, never SLOW\n", c->busy_why);
    tprintf("\n%d SLOW, %d FAST, %d SAME, %d UNCLEAR; primary %s: %s\n", c->count[RG_VERDICT_SLOW],
            c->count[RG_VERDICT_FAST], c->count[RG_VERDICT_SAME], c->count[RG_VERDICT_UNCLEAR],
            rg_verdict_name(c->primary), rg_check_conclusion(c->overall));
}

static int add_ids(cJSON *doc, const char *key, const int64_t *ids, size_t n)
{
    cJSON *a = cJSON_AddArrayToObject(doc, key);
    for (size_t i = 0; a && i < n; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateNumber((double)ids[i]))) return 1;
    return !a;
}

static int add_noise(cJSON *doc, const repeat_check *c)
{
    cJSON *o = cJSON_AddObjectToObject(doc, "noise");
    if (!o) return 1;
    int oom = rg_check_str(o, "machine", c->noise.machine) | rg_check_str(o, "source", c->noise.source);
    oom |= rg_check_num(o, "sigma", c->noise.sigma) | rg_check_num(o, "df", c->noise.df);
    oom |= rg_check_num(o, "sigma_workload", c->noise.sigma_w) | rg_check_num(o, "df_workload", c->noise.df_w);
    oom |= rg_check_num(o, "band", c->band) | rg_check_num(o, "band_workload", c->band_w);
    return oom | rg_check_num(o, "n", c->noise.n);
}

static int add_rows(cJSON *doc, const repeat_check *c)
{
    cJSON *ws = cJSON_AddArrayToObject(doc, "workloads");
    int oom = !ws;
    for (size_t i = 0; i < c->n && !oom; i++) {
        const repeat_row *r = &c->rows[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(ws, o)) {
            cJSON_Delete(o);
            return 1;
        }
        oom |= rg_check_num(o, "index", r->index) | rg_check_str(o, "uuid", r->uuid);
        oom |= rg_check_num(o, "baseline_ns", r->base_ns) | rg_check_num(o, "run_ns", r->run_ns);
        oom |= rg_check_num(o, "ratio", r->ratio) | rg_check_str(o, "verdict", rg_verdict_name(r->verdict));
    }
    return oom;
}

static int json_repeat(const repeat_check *c, double threshold)
{
    int oom;
    cJSON *doc = rg_check_doc(c->runs[0], "repeated pairwise", &oom), *prim = NULL;
    if (doc) {
        oom |= add_ids(doc, "runs", c->runs, c->n_runs) | add_ids(doc, "baselines", c->bases, c->n_bases);
        oom |= rg_check_str(doc, "verdict", rg_verdict_name(c->overall)) | rg_check_num(doc, "exit", rg_check_exit(c->overall));
        oom |= !cJSON_AddBoolToObject(doc, "busy", c->busy);
        oom |= rg_check_str(doc, "busy_reason", c->busy ? c->busy_why : NULL);
        oom |= !cJSON_AddBoolToObject(doc, "mixed_comparison_keys", c->mixed_keys);
        oom |= rg_check_num(doc, "threshold", threshold) | rg_check_str(doc, "method", RG_NOISE_REPEAT_METHOD);
        oom |= add_noise(doc, c);
        oom |= !(prim = cJSON_AddObjectToObject(doc, "primary"));
    }
    if (prim) {
        oom |= rg_check_str(prim, "statistic", c->mr[0].primary_statistic);
        oom |= rg_check_num(prim, "baseline_ns", c->base_ns) | rg_check_num(prim, "run_ns", c->run_ns);
        oom |= rg_check_num(prim, "ratio", c->ratio) | rg_check_str(prim, "verdict", rg_verdict_name(c->primary));
        oom |= add_rows(doc, c);
    }
    return rg_check_emit(doc, oom);
}

/* Loads both sides, the rows and the noise: 0, or 2 with a message. */
static int prepare(rg_registry *g, repeat_check *c, char *err, size_t errlen)
{
    if (load_all(g, c->runs, c->n_runs, c->mr, err, errlen)) return 2;
    c->loaded_runs = 1;
    if (load_all(g, c->bases, c->n_bases, c->mb, err, errlen)) return 2;
    c->loaded_bases = 1;
    if (build_rows(c, err, errlen) || rg_gate_noise_for(g, &c->mr[0], smallest_id(c), &c->noise, err, errlen))
        return 2;
    c->mixed_keys = !same_keys(c);
    find_busy(c);
    return 0;
}

int rg_check_repeated(rg_registry *g, const int64_t *runs, size_t n_runs, const int64_t *bases, size_t n_bases,
                      double threshold, int json)
{
    char err[RG_ERRLEN] = "out of memory";
    repeat_check c;
    memset(&c, 0, sizeof c);
    c.runs = runs, c.bases = bases, c.n_runs = n_runs, c.n_bases = n_bases;
    c.mr = calloc(n_runs ? n_runs : 1, sizeof *c.mr);
    c.mb = calloc(n_bases ? n_bases : 1, sizeof *c.mb);
    int rc = 2;
    if (!c.mr || !c.mb || !n_runs || !n_bases || prepare(g, &c, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
    } else {
        judge(&c, threshold);
        if (json) rc = json_repeat(&c, threshold) ? 2 : rg_check_exit(c.overall);
        else {
            print_repeat(&c, threshold);
            rc = rg_check_exit(c.overall);
        }
    }
    for (size_t i = 0; c.loaded_runs && i < n_runs; i++) rg_manifest_free(&c.mr[i]);
    for (size_t i = 0; c.loaded_bases && i < n_bases; i++) rg_manifest_free(&c.mb[i]);
    free(c.mr), free(c.mb), free(c.rows);
    return rc;
}
