/* SPDX-License-Identifier: Apache-2.0 */
/* gate.c -- the regression gate's history and busy-machine rules (gate.h). */
#include "gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"

int rg_manifest_busy(const rg_manifest *m, char *why, size_t whylen)
{
    if (why && whylen) why[0] = 0;
    if (!m || strcmp(m->backend, "cpu") || !isfinite(m->load_avg_1m) || m->online_cpus <= 0) return 0;
    if (m->load_avg_1m < m->online_cpus / 2.0) return 0;
    if (why && whylen)
        snprintf(why, whylen, "load average %.2f on %d CPUs", m->load_avg_1m, m->online_cpus);
    return 1;
}

static int positive(double v) { return isfinite(v) && v > 0; }

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
    *z = s > 0 ? (x - m) / s : 0;
    int beyond_up = s > 0 ? *z > z_threshold : 1, beyond_down = s > 0 ? *z < -z_threshold : 1;
    if (x > m * (1 + threshold) && beyond_up) return RG_VERDICT_SLOW;
    if (x < m / (1 + threshold) && beyond_down) return RG_VERDICT_FAST;
    return RG_VERDICT_SAME;
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
