/* SPDX-License-Identifier: Apache-2.0 */
/* gate.c -- the regression gate's history and busy-machine rules (gate.h). */
#include "gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"

static int positive(double v) { return isfinite(v) && v > 0; }

/* x against a centre and a spread s: z written; SLOW/FAST only beyond both
 * the z threshold (any change when s = 0) and the minimum effect. */
static rg_verdict beyond(double x, double centre, double s, double z_threshold, double threshold, double *z)
{
    *z = s > 0 ? (x - centre) / s : 0;
    int up = s > 0 ? *z > z_threshold : 1, down = s > 0 ? *z < -z_threshold : 1;
    if (x > centre * (1 + threshold) && up) return RG_VERDICT_SLOW;
    if (x < centre / (1 + threshold) && down) return RG_VERDICT_FAST;
    return RG_VERDICT_SAME;
}

rg_verdict rg_gate_judge(const double *hist, size_t n, double x, double z_threshold, double threshold, double *mean,
                         double *sd, double *z)
{
    *mean = *sd = *z = NAN;
    if (!hist || n < RG_GATE_MIN_HISTORY || !positive(x) || !positive(z_threshold) || !(threshold >= 0))
        return RG_VERDICT_UNCLEAR;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!positive(hist[i])) return RG_VERDICT_UNCLEAR;
        sum += hist[i];
    }
    double m = sum / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++) ss += (hist[i] - m) * (hist[i] - m);
    double s = sqrt(ss / (double)(n - 1));
    *mean = m, *sd = s;
    return beyond(x, m, s, z_threshold, threshold, z);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

rg_verdict rg_gate_judge_robust(const double *hist, size_t n, double x, double z_threshold, double threshold,
                                double *median, double *smad, double *z)
{
    *median = *smad = *z = NAN;
    if (!hist || n < RG_GATE_MIN_HISTORY || n > RG_GATE_LOOKBACK || !positive(x) || !positive(z_threshold) ||
        !(threshold >= 0))
        return RG_VERDICT_UNCLEAR;
    double v[RG_GATE_LOOKBACK];
    for (size_t i = 0; i < n; i++) {
        if (!positive(hist[i])) return RG_VERDICT_UNCLEAR;
        v[i] = hist[i];
    }
    double med = median_of(v, n);
    for (size_t i = 0; i < n; i++) v[i] = fabs(v[i] - med);
    double s = 1.4826 * median_of(v, n);   /* the MAD scaled to a normal's standard deviation */
    *median = med, *smad = s;
    return beyond(x, med, s, z_threshold, threshold, z);
}

/* An earlier run that may stand in a history: passed, not suspect, not busy. */
static int credible(rg_registry *g, const rg_ranked *e, char *err, size_t errlen, int *ok)
{
    *ok = 0;
    if (strcmp(e->row.status, "passed") || (e->suspect && !e->confirmed) || !positive(e->iv.est)) return 0;
    rg_run_row row;
    rg_manifest m;
    if (rg_registry_get(g, e->row.id, &row, &m, err, errlen)) return 2;
    *ok = !rg_manifest_busy(&m, NULL, 0);
    rg_manifest_free(&m);
    return 0;
}

int rg_gate_history_check(rg_registry *g, int64_t id, double z_threshold, double threshold, rg_gate_history *out,
                          char *err, size_t errlen)
{
    if (!g || !out) {
        snprintf(err, errlen, "check: no registry or output");
        return 2;
    }
    memset(out, 0, sizeof *out);
    out->verdict = RG_VERDICT_UNCLEAR;
    rg_ranked *e;
    size_t n, me;
    if (rg_registry_line(g, id, &e, &n, err, errlen)) return 2;
    for (me = 0; me < n && e[me].row.id != id; me++) {}
    double *hist = out->hist;
    int rc = 0;
    /* The latest RG_GATE_LOOKBACK credible runs before this one, newest first. */
    for (size_t i = me; i-- > 0 && out->n < RG_GATE_LOOKBACK;) {
        int ok;
        if ((rc = credible(g, &e[i], err, errlen, &ok))) break;
        if (!ok) {
            out->skipped++;
            continue;
        }
        if (!out->n) out->last_id = e[i].row.id;
        out->first_id = e[i].row.id;
        hist[out->n++] = e[i].iv.est;
    }
    if (!rc && me < n) {
        out->x = e[me].iv.est;
        out->verdict = rg_gate_judge(hist, out->n, out->x, z_threshold, threshold, &out->mean, &out->sd, &out->z);
    }
    free(e);
    return rc;
}

/* ---- the machine's run-to-run noise ------------------------------------------------ */

int rg_machine_key(const rg_manifest *m, char *out, size_t n)
{
    if (!m || !m->hostname[0]) {
        snprintf(out, n, "unknown");
        return 2;
    }
    snprintf(out, n, "%.120s \xC2\xB7 %.200s \xC2\xB7 %.15s", m->hostname, m->product[0] ? m->product : m->cpu_model,
             m->backend[0] ? m->backend : "-");
    return 0;
}

double rg_noise_k(int df)
{
    /* Student's t, one-sided 99.9% (upper 0.001) quantiles for 1..30 degrees of freedom. */
    static const double t[30] = {318.309, 22.327, 10.215, 7.173, 5.893, 5.208, 4.785, 4.501, 4.297, 4.144,
                                 4.025,   3.930,  3.852,  3.787, 3.733, 3.686, 3.646, 3.610, 3.579, 3.552,
                                 3.527,   3.505,  3.485,  3.467, 3.450, 3.435, 3.421, 3.408, 3.396, 3.385};
    static const struct { int df; double t; } far[] = {{30, 3.385}, {40, 3.307}, {60, 3.232}, {120, 3.160}};
    if (df <= 0) return 3.090;
    if (df <= 30) return t[df - 1];
    /* Beyond the table: linear in 1/df between the tabulated points, and to 3.090 at infinity. */
    for (size_t i = 0; i + 1 < sizeof far / sizeof far[0]; i++)
        if (df <= far[i + 1].df) {
            double a = 1.0 / far[i].df, b = 1.0 / far[i + 1].df, x = 1.0 / df;
            return far[i + 1].t + (far[i].t - far[i + 1].t) * (x - b) / (a - b);
        }
    return 3.090 + (3.160 - 3.090) * 120.0 / df;
}

double rg_noise_band(double sigma, int df) { return rg_noise_band_n(sigma, df, 1, 1); }

double rg_noise_band_n(double sigma, int df, size_t n_run, size_t n_base)
{
    if (!(isfinite(sigma) && sigma >= 0) || !n_run || !n_base) return INFINITY;
    return exp(rg_noise_k(df) * sqrt(1.0 / (double)n_run + 1.0 / (double)n_base) * sigma);
}

rg_verdict rg_noise_verdict(double ratio, double threshold, double band)
{
    if (!positive(ratio) || !(threshold >= 0) || !(band >= 1)) return RG_VERDICT_UNCLEAR;
    if (ratio <= 1 + threshold && ratio >= 1 / (1 + threshold)) return RG_VERDICT_SAME;
    if (ratio > 1 + threshold && ratio > band) return RG_VERDICT_SLOW;
    if (ratio < 1 / (1 + threshold) && ratio < 1 / band) return RG_VERDICT_FAST;
    return RG_VERDICT_UNCLEAR;
}

/* Same code: one comparison key, implementation, backend and kernel. */
static int same_code(const rg_run_row *a, const rg_run_row *b)
{
    return !strcmp(a->comparison_key, b->comparison_key) && !strcmp(a->implementation_digest, b->implementation_digest) &&
           !strcmp(a->backend, b->backend) && a->kernel == b->kernel;
}

static int by_code_then_id(const void *x, const void *y)
{
    const rg_run_row *a = x, *b = y;
    int c = strcmp(a->comparison_key, b->comparison_key);
    if (!c) c = strcmp(a->implementation_digest, b->implementation_digest);
    if (!c) c = strcmp(a->backend, b->backend);
    if (!c) c = (a->kernel > b->kernel) - (a->kernel < b->kernel);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

typedef struct noise_sums {
    double p, w;   /* sums of squared log-ratios: primary figures, workload medians */
    int np, nw;
} noise_sums;

/* The log-ratios of one same-code pair (b after a) into s. */
static void add_pair(const rg_manifest *a, const rg_manifest *b, noise_sums *s)
{
    if (positive(a->primary_ns) && positive(b->primary_ns)) {
        double d = log(b->primary_ns / a->primary_ns);
        s->p += d * d, s->np++;
    }
    for (size_t i = 0; i < b->n_workloads; i++) {
        const rg_mf_workload *w = &b->workloads[i], *v = rg_manifest_find_workload(a, w, i);
        if (!v || !positive(w->median) || !positive(v->median)) continue;
        double d = log(w->median / v->median);
        s->w += d * d, s->nw++;
    }
}

/* A stored run that may stand in the machine's history: passed, timed, on
 * machine, not busy, not suspect. 1 with *m to free, 0 not, 2 error. */
static int history_run(rg_registry *g, const rg_run_row *r, const char *machine, rg_manifest *m, char *err,
                       size_t errlen)
{
    rg_run_row row;
    if (rg_registry_get(g, r->id, &row, m, err, errlen)) return 2;
    char key[sizeof ((rg_gate_noise *)0)->machine];
    int ok = !rg_machine_key(m, key, sizeof key) && !strcmp(key, machine) && !rg_manifest_busy(m, NULL, 0) &&
             !rg_manifest_suspect(m, NULL, 0);
    if (!ok) rg_manifest_free(m);
    return ok;
}

/* The machine's same-code pairs among the runs stored before id (0: all). */
static int history_sums(rg_registry *g, const rg_manifest *run, const char *machine, int64_t id, noise_sums *s,
                        char *err, size_t errlen)
{
    rg_run_row *rows;
    size_t n, k = 0;
    if (rg_registry_list(g, &rows, &n, err, errlen)) return 2;
    /* The latest RG_NOISE_MAX_RUNS passed, timed runs of the same backend before id (rows come by id). */
    for (size_t i = 0; i < n; i++)
        if ((!id || rows[i].id < id) && !strcmp(rows[i].status, "passed") && positive(rows[i].primary_ns) &&
            !strcmp(rows[i].backend, run->backend) && !strcmp(rows[i].evidence, RG_EVIDENCE_MEASURED))
            rows[k++] = rows[i];
    size_t from = k > RG_NOISE_MAX_RUNS ? k - RG_NOISE_MAX_RUNS : 0;
    if (k > from) qsort(rows + from, k - from, sizeof *rows, by_code_then_id);   /* rows may be NULL when empty */
    rg_manifest prev, cur;
    int have_prev = 0, rc = 0;
    size_t prev_at = 0;
    for (size_t i = from; i < k && !rc; i++) {
        int ok = history_run(g, &rows[i], machine, &cur, err, errlen);
        if (ok == 2) rc = 2;
        if (ok != 1) continue;
        if (have_prev && same_code(&rows[prev_at], &rows[i])) add_pair(&prev, &cur, s);
        if (have_prev) rg_manifest_free(&prev);
        prev = cur, have_prev = 1, prev_at = i;
    }
    if (have_prev) rg_manifest_free(&prev);
    free(rows);
    return rc;
}

int rg_gate_noise_for(rg_registry *g, const rg_manifest *run, int64_t id, rg_gate_noise *out, char *err,
                      size_t errlen)
{
    if (!g || !run || !out) {
        snprintf(err, errlen, "noise: no registry, run or output");
        return 2;
    }
    memset(out, 0, sizeof *out);
    rg_machine_key(run, out->machine, sizeof out->machine);
    noise_sums s = {0};
    if (run->hostname[0] && history_sums(g, run, out->machine, id, &s, err, errlen)) return 2;
    if (s.np >= RG_NOISE_MIN_PAIRS) {
        snprintf(out->source, sizeof out->source, "history");
        out->sigma = sqrt(s.p / (2.0 * s.np)), out->df = s.np, out->n = s.np;
        out->sigma_w = s.nw ? sqrt(s.w / (2.0 * s.nw)) : out->sigma;
        out->df_w = s.nw ? s.nw : s.np;
        return 0;
    }
    if (run->hostname[0]) {
        char machine[sizeof out->machine];
        snprintf(machine, sizeof machine, "%s", out->machine);
        int rc = rg_registry_noise_get(g, machine, out, err, errlen);
        if (rc == 2) return 2;
        if (rc == 0) return 0;
        snprintf(out->machine, sizeof out->machine, "%s", machine);
    }
    snprintf(out->source, sizeof out->source, "default");
    out->sigma = out->sigma_w = RG_NOISE_DEFAULT;
    out->df = out->df_w = 0;
    return 0;
}
