/* SPDX-License-Identifier: Apache-2.0 */
/*
 * credible.c -- what the index checks itself about a manifest's times:
 *
 *   latencies   every latency a manifest states (timing.latencyNs, each
 *               workload's median, min, max and mean, every sample) is a
 *               finite positive number: `verify`, `runs import` and the
 *               index's POST /api/runs refuse one that is not;
 *   observedAt  an RFC 3339 date-time (rfc3339.c) and, when a run arrives,
 *               not more than a day ahead of the index's own clock;
 *   order       history and alerts order runs by the observed time where
 *               it is credible, else by the index's receipt time.
 */
#include <math.h>
#include <stdio.h>

#include "record.h"

/* A day: the most an observed time may lie ahead of the clock that judges it. */
#define RG_CLOCK_SKEW_S 86400.0

/* Absent figures read as NAN (manifest.h) and are left to the rules that need
 * them; a figure that is present must be finite and above zero. */
static int bad_latency(double v) { return !isnan(v) && !(isfinite(v) && v > 0); }

static int refuse(char *msg, size_t msglen, const char *what, double v)
{
    snprintf(msg, msglen, "%s is %g: latencies must be finite and positive", what, v);
    return 1;
}

static int check_workload(const rg_mf_workload *w, size_t i, char *msg, size_t msglen)
{
    const char *names[4] = {"median", "min", "max", "mean"};
    const double v[4] = {w->median, w->min, w->max, w->mean};
    char what[96];
    for (size_t k = 0; k < w->n_samples; k++)   /* the samples first: the figures derive from them */
        if (!(isfinite(w->samples[k]) && w->samples[k] > 0)) {
            snprintf(what, sizeof what, "run workloads[%zu].samples_ns[%zu]", i, k);
            return refuse(msg, msglen, what, w->samples[k]);
        }
    for (int k = 0; k < 4; k++)
        if (bad_latency(v[k])) {
            snprintf(what, sizeof what, "run workloads[%zu].%s", i, names[k]);
            return refuse(msg, msglen, what, v[k]);
        }
    return 0;
}

int rg_manifest_latencies_check(const rg_manifest *m, char *msg, size_t msglen)
{
    if (!m) {
        snprintf(msg, msglen, "no manifest to check");
        return 2;
    }
    char what[96];
    for (size_t i = 0; i < m->n_latency; i++)
        if (!(isfinite(m->latency_ns[i].value) && m->latency_ns[i].value > 0)) {
            snprintf(what, sizeof what, "run.spec.timing.latencyNs.%s", m->latency_ns[i].name);
            return refuse(msg, msglen, what, m->latency_ns[i].value);
        }
    for (size_t i = 0; i < m->n_workloads; i++)
        if (check_workload(&m->workloads[i], i, msg, msglen)) return 1;
    return 0;
}

int rg_observed_at_check(const char *observed_at, double now_s, char *msg, size_t msglen)
{
    double t;
    if (!observed_at || rg_rfc3339_parse(observed_at, &t)) {
        snprintf(msg, msglen, "run.spec.observedAt \"%.40s\" is not an RFC 3339 date-time (e.g. 2026-12-01T10:00:00Z)",
                 observed_at ? observed_at : "");
        return 1;
    }
    if (isfinite(now_s) && t > now_s + RG_CLOCK_SKEW_S) {
        snprintf(msg, msglen, "run.spec.observedAt %.40s is more than a day ahead of this index's clock",
                 observed_at);
        return 1;
    }
    return 0;
}

double rg_run_time(const rg_run_row *r)
{
    double received = NAN, observed;
    if (!r) return NAN;
    if (rg_rfc3339_parse(r->created_at, &received)) received = NAN;
    int credible = !rg_rfc3339_parse(r->observed_at, &observed) &&
                   (isnan(received) || observed <= received + RG_CLOCK_SKEW_S);
    return credible ? observed : received;
}

int rg_run_cmp_time(const rg_run_row *a, const rg_run_row *b)
{
    double ta = rg_run_time(a), tb = rg_run_time(b);
    if (isnan(ta) != isnan(tb)) return isnan(ta) ? -1 : 1;
    if (ta != tb && !isnan(ta)) return ta < tb ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}
