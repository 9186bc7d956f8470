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
