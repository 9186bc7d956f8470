/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replicate.c -- `ropegrad runs replicate ID`: run a recorded protocol again
 * here and say whether the times agree.
 *
 * The protocol comes from the original's manifest (suite dir, backend,
 * kernel, warmup, iterations, seed, inputs, CPU threads, the workload
 * selection), the run goes through the harness like any `bench`, and the
 * result is stored as a run of its own that names the original. Agreement
 * is judged per workload from the samples alone (rg_samples_agree: the
 * replica's against the original's); when every workload agrees, the replica
 * passed, and it ran the same implementation digest under the same
 * comparison key, the original's evidence becomes 'replicated'. An original
 * without samples can only be "reproduced within X%" (X: the largest
 * difference of the replica's median from the original's), never replicated:
 * its evidence stays what it was.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "rg_util.h"

int rg_samples_agree(const double *orig, size_t n_orig, const double *replica, size_t n_replica, double threshold,
                     rg_shift *s)
{
    rg_shift local;
    if (!s) s = &local;
    memset(s, 0, sizeof *s);
    if (!orig || !replica || !n_orig || !n_replica || n_orig > 1000000 || n_replica > 1000000 || !(threshold >= 0))
        return -1;
    if (rg_shift_estimate(orig, (int)n_orig, replica, (int)n_replica, RG_STATS_CONF, s)) return -1;
    return s->lo >= 1 / (1 + threshold) && s->hi <= 1 + threshold;
}

/* The original's workload of the replica's index, NULL when none. */
static const rg_mf_workload *original_workload(const rg_manifest *om, int index)
{
    for (size_t k = 0; k < om->n_workloads; k++)
        if (om->workloads[k].index == index) return &om->workloads[k];
    return NULL;
}

static int original_has_samples(const rg_manifest *om)
{
    for (size_t k = 0; k < om->n_workloads; k++)
        if (!om->workloads[k].n_samples) return 0;
    return om->n_workloads > 0;
}

/* One workload's line; 1 when it agrees. pct_off gets |replica / original - 1| of the medians. */
static int judge_workload(FILE *out, const rg_workload_result *w, const rg_mf_workload *o, int by_samples,
                          double *pct_off)
{
    if (!o) {
        fprintf(out, "  %4d  (not in the original)\n", w->index);
        *pct_off = INFINITY;
        return 0;
    }
    double ratio = w->time_ns.median / o->median;
    *pct_off = 100 * fabs(ratio - 1);
    rg_shift s;
    int agree = by_samples ? rg_samples_agree(o->samples, o->n_samples, w->samples_ns, (size_t)w->n_samples,
                                              RG_REPLICATE_THRESHOLD, &s)
                           : -1;
    char iv[64] = "(no samples)";
    if (agree >= 0) snprintf(iv, sizeof iv, "%.3f [%.3f, %.3f]", s.ratio, s.lo, s.hi);
    const char *verdict = !w->check.pass ? "FAILED correctness"
                          : agree > 0    ? "agrees"
                          : agree == 0   ? "DIFFERS"
                                         : "not judged (no samples)";
    fprintf(out, "  %4d  %12.3f  %12.3f  %27s  %s\n", w->index, o->median / 1e3, w->time_ns.median / 1e3, iv, verdict);
    return agree > 0 && w->check.pass;
}

/* The original's baseline times, so the replica's SOL figures use the same
 * reference (a file baseline only; suite figures come from the suite). */
static int baseline_from_original(const rg_manifest *m, rg_baseline *b)
{
    if (strcmp(m->baseline_mode, "file") || !m->n_workloads) return 0;
    memset(b, 0, sizeof *b);
    b->index = calloc(m->n_workloads, sizeof *b->index);
    b->time_ns = calloc(m->n_workloads, sizeof *b->time_ns);
    if (!b->index || !b->time_ns) {
        rg_baseline_free(b);
        return 0;
    }
    for (size_t i = 0; i < m->n_workloads; i++) {
        if (isfinite(m->workloads[i].t_b_ns)) {
            b->index[b->n] = m->workloads[i].index;
            b->time_ns[b->n++] = m->workloads[i].t_b_ns;
        }
    }
    snprintf(b->name, sizeof b->name, "%s", m->baseline_name[0] ? m->baseline_name : "original's baseline");
    snprintf(b->file, sizeof b->file, "%s", m->baseline_file);
    snprintf(b->format, sizeof b->format, "from-original-record");
    snprintf(b->digest, sizeof b->digest, "%s", m->baseline_digest);
    return 1;
}

/* The original's protocol, refused when it timed nothing or measured a
 * plugin (bench --impl: this would time ropegrad's kernel instead). 0 with
 * *p to free, or 2 with err (nothing to free). */
static int replicable_protocol(int64_t id, const rg_run_row *orow, const rg_manifest *om, rg_recorded_protocol *p,
                               char *err, size_t errlen)
{
    char untimed[320];
    if (!rg_untimed_label(orow->status, om->primary_ns, rg_manifest_first_failure(om), untimed, sizeof untimed)) {
        snprintf(err, errlen, "replicate: run #%lld timed nothing (%.280s): there are no times to replicate",
                 (long long)id, untimed);
        return 2;
    }
    if (rg_protocol_from_manifest(om, p, err, errlen)) return 2;
    if (strcmp(om->impl_name, "ropegrad")) {   /* a plugin (bench --impl): this would time ropegrad's kernel instead */
        snprintf(err, errlen, "replicate: run #%lld measured %.60s %.60s, not ropegrad's kernel: replicate it with "
                 "ropegrad bench --impl", (long long)id, om->impl_name, om->impl_version);
        rg_recorded_protocol_free(p);
        return 2;
    }
    return 0;
}

/* The suite at suite_dir, refused when it is not the definition the run
 * measured. 0 with *s loaded, or 2 with err (*s empty or freed). */
static int load_matching_suite(const rg_replicate_runner *runner, const char *suite_dir, const rg_recorded_protocol *p,
                               rg_suite *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!suite_dir || !runner || runner->load(suite_dir, s, err, errlen)) {
        if (!suite_dir) snprintf(err, errlen, "replicate: no suite folder given");
        else if (!runner) snprintf(err, errlen, "replicate: no runner given");
        return 2;
    }
    if (strcmp(s->name, p->definition)) {
        snprintf(err, errlen, "replicate: %s holds definition %.200s, the run measured %.200s (give --suite DIR)",
                 suite_dir, s->name, p->definition);
        rg_suite_free(s);
        memset(s, 0, sizeof *s);
        return 2;
    }
    return 0;
}

/* The replica's manifest (*m, the caller deletes it), verified and stored as
 * a replication of run id. 0 with *replica_id, or 2 with err. */
static int store_replica(rg_registry *g, int64_t id, const rg_run_result *res, const rg_suite *s, const rg_manifest *om,
                         cJSON **m, int64_t *replica_id, char *err, size_t errlen)
{
    rg_baseline base;
    int have_b = baseline_from_original(om, &base);
    *m = rg_manifest_build(res, s, have_b ? &base : NULL, err, errlen);
    if (have_b) rg_baseline_free(&base);
    char msg[RG_ERRLEN];
    int existed = 0;
    if (*m && rg_manifest_verify(*m, msg, sizeof msg)) {
        snprintf(err, errlen, "replicate: the replica's manifest does not verify: %s", msg);
        return 2;
    }
    if (*m && !rg_registry_store(g, *m, RG_EVIDENCE_MEASURED, id, replica_id, &existed, err, errlen)) return 0;
    return 2;
}

/* The closing line: whether they agreed, and the original's evidence level now. */
static void print_outcome(FILE *out, rg_registry *g, int64_t id, int64_t replica_id, const rg_run_row *orow,
                          int by_samples, int agreed, int upgraded, int within, int total, double worst)
{
    char msg[RG_ERRLEN];
    if (by_samples)
        fprintf(out, "%s: %d of %d workloads agree by their samples (95%% interval of the ratio within %.0f%%)",
                agreed ? "agreed" : "did not agree", within, total, 100 * RG_REPLICATE_THRESHOLD);
    else
        fprintf(out, "reproduced within %.1f%% (the largest difference of a workload's median); the original has no "
                     "samples, so it cannot be replicated",
                worst);
    rg_run_row now;
    const char *level = rg_registry_get(g, id, &now, NULL, msg, sizeof msg) ? "?" : now.evidence;
    rg_run_row rrow;
    int have_r = !rg_registry_get(g, replica_id, &rrow, NULL, msg, sizeof msg);
    if (upgraded)
        fprintf(out, "; run #%lld is now 'replicated'\n", (long long)id);
    else if (agreed && (!have_r || strcmp(orow->implementation_digest, rrow.implementation_digest) ||
                        strcmp(orow->comparison_key, rrow.comparison_key)))
        fprintf(out, "; evidence of run #%lld stays '%s': a different implementation digest or comparison key\n",
                (long long)id, level);
    else
        fprintf(out, "; evidence of run #%lld: '%s'\n", (long long)id, level);
}

/* Per workload, the replica's samples against the original's; the
 * replication linked in the registry, the outcome printed. 0 with
 * *agreed_out, or 2 with err. */
static int judge_replica(FILE *out, rg_registry *g, int64_t id, int64_t replica_id, const rg_run_row *orow,
                         const rg_manifest *om, const rg_run_result *res, int *agreed_out, char *err, size_t errlen)
{
    int by_samples = original_has_samples(om), within = 0, total = 0;
    double worst = 0;
    fprintf(out, "replication of run #%lld as run #%lld (%s, %s, %d iterations)\n", (long long)id,
            (long long)replica_id, res->backend, res->device, res->iterations);
    fprintf(out, "  %4s  %12s  %12s  %27s  %s\n", "#", "orig med us", "replica us", "ratio [95% interval]", "verdict");
    for (size_t i = 0; i < res->n_workloads; i++) {
        double off;
        total++;
        within += judge_workload(out, &res->workloads[i], original_workload(om, res->workloads[i].index), by_samples,
                                 &off);
        if (!(off <= worst)) worst = off;
    }
    int agreed = by_samples && within == total && total > 0 && res->passed == res->total;
    int upgraded = 0;
    if (rg_registry_link_replication(g, id, replica_id, agreed, within, total, &upgraded, err, errlen)) return 2;
    *agreed_out = agreed;
    print_outcome(out, g, id, replica_id, orow, by_samples, agreed, upgraded, within, total, worst);
    return 0;
}

int rg_record_replicate(rg_registry *g, int64_t id, const char *suite_dir, const rg_replicate_runner *runner,
                        int verbose, FILE *out, int64_t *replica_id, int *agreed_out, char *err, size_t errlen)
{
    *replica_id = 0;
    *agreed_out = 0;
    rg_run_row orow;
    rg_manifest om;
    if (rg_registry_get(g, id, &orow, &om, err, errlen)) return 2;
    rg_recorded_protocol p;
    if (replicable_protocol(id, &orow, &om, &p, err, errlen)) {
        rg_manifest_free(&om);
        return 2;
    }
    p.opts.verbose = verbose;
    rg_suite s;
    rg_run_result res;
    memset(&res, 0, sizeof res);
    cJSON *m = NULL;
    int rc = 2;
    if (!load_matching_suite(runner, suite_dir, &p, &s, err, errlen) &&
        !runner->run(&s, p.indices, p.n_indices, &p.opts, &res, err, errlen) &&
        !store_replica(g, id, &res, &s, &om, &m, replica_id, err, errlen))
        rc = judge_replica(out, g, id, *replica_id, &orow, &om, &res, agreed_out, err, errlen);
    cJSON_Delete(m);
    rg_run_result_free(&res);
    rg_suite_free(&s);
    rg_recorded_protocol_free(&p);
    rg_manifest_free(&om);
    return rc;
}
