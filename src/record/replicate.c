/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replicate.c -- `ropegrad runs replicate ID`: run a recorded protocol again
 * here and say whether the times agree.
 *
 * The protocol comes from the original's manifest (suite dir, backend,
 * kernel, warmup, iterations, seed, inputs, CPU threads, the workload
 * selection), the run goes through the harness like any `bench`, and the
 * result is stored as a run of its own that names the original. Agreement
 * is judged per workload with rg_within_spread; when every workload agrees,
 * the replica passed, and it ran the same implementation digest under the
 * same comparison key, the original's evidence becomes 'replicated'.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "rg_util.h"

int rg_within_spread(double replica_median, double orig_median, double orig_min, double orig_max,
                     double orig_stddev)
{
    if (!(replica_median > 0) || !(orig_median > 0)) return 0;
    if (replica_median >= orig_min && replica_median <= orig_max) return 1;
    double d = fabs(replica_median - orig_median);
    if (isfinite(orig_stddev) && d <= 3 * orig_stddev) return 1;
    return d <= 0.05 * orig_median;
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

int rg_record_replicate(rg_registry *g, int64_t id, const char *suite_dir, int verbose, FILE *out,
                        int64_t *replica_id, int *agreed_out, char *err, size_t errlen)
{
    *replica_id = 0;
    *agreed_out = 0;
    rg_run_row orow;
    rg_manifest om;
    int rc = rg_registry_get(g, id, &orow, &om, err, errlen);
    if (rc) return 2;
    rg_recorded_protocol p;
    if (rg_protocol_from_manifest(&om, &p, err, errlen)) {
        rg_manifest_free(&om);
        return 2;
    }
    if (strcmp(om.impl_name, "ropegrad")) {   /* a plugin (bench --impl): this would time ropegrad's kernel instead */
        snprintf(err, errlen, "replicate: run #%lld measured %.60s %.60s, not ropegrad's kernel: replicate it with "
                 "ropegrad bench --impl", (long long)id, om.impl_name, om.impl_version);
        rg_recorded_protocol_free(&p);
        rg_manifest_free(&om);
        return 2;
    }
    p.opts.verbose = verbose;
    rg_suite s;
    memset(&s, 0, sizeof s);
    if (!suite_dir || rg_suite_load(suite_dir, &s, err, errlen)) {
        if (!suite_dir) snprintf(err, errlen, "replicate: no suite folder given");
        rg_recorded_protocol_free(&p);
        rg_manifest_free(&om);
        return 2;
    }
    if (strcmp(s.name, p.definition)) {
        snprintf(err, errlen, "replicate: %s holds definition %.200s, the run measured %.200s (give --suite DIR)",
                 suite_dir, s.name, p.definition);
        rg_suite_free(&s);
        rg_recorded_protocol_free(&p);
        rg_manifest_free(&om);
        return 2;
    }
    rg_run_result res;
    memset(&res, 0, sizeof res);
    if (rg_run_suite(&s, p.indices, p.n_indices, &p.opts, &res, err, errlen)) {
        rg_suite_free(&s);
        rg_recorded_protocol_free(&p);
        rg_manifest_free(&om);
        return 2;
    }
    rg_baseline base;
    int have_b = baseline_from_original(&om, &base);
    cJSON *m = rg_manifest_build(&res, &s, have_b ? &base : NULL, err, errlen);
    if (have_b) rg_baseline_free(&base);
    char msg[RG_ERRLEN];
    int existed = 0;
    rc = 2;
    if (m && rg_manifest_verify(m, msg, sizeof msg)) {
        snprintf(err, errlen, "replicate: the replica's manifest does not verify: %s", msg);
    } else if (m && !rg_registry_store(g, m, RG_EVIDENCE_MEASURED, id, replica_id, &existed, err, errlen)) {
        rc = 0;
    }
    if (rc) goto done;

    /* Per workload: the replica's median against the original's spread. */
    int within = 0, total = 0;
    fprintf(out, "replication of run #%lld as run #%lld (%s, %s, %d iterations)\n", (long long)id,
            (long long)*replica_id, res.backend, res.device, res.iterations);
    fprintf(out, "  %4s  %12s  %12s  %25s  %8s  %s\n", "#", "orig med us", "replica us", "orig [min, max] us", "ratio",
            "verdict");
    for (size_t i = 0; i < res.n_workloads; i++) {
        const rg_workload_result *w = &res.workloads[i];
        const rg_mf_workload *o = NULL;
        for (size_t k = 0; k < om.n_workloads; k++)
            if (om.workloads[k].index == w->index) o = &om.workloads[k];
        total++;
        if (!o) {
            fprintf(out, "  %4d  (not in the original)\n", w->index);
            continue;
        }
        double med = o->median, lo = o->min, hi = o->max, sd = o->stddev;
        int ok = rg_within_spread(w->time_ns.median, med, lo, hi, sd) && w->check.pass;
        within += ok;
        char range[64];
        snprintf(range, sizeof range, "[%.3f, %.3f]", lo / 1e3, hi / 1e3);
        fprintf(out, "  %4d  %12.3f  %12.3f  %25s  %8.3f  %s\n", w->index, med / 1e3, w->time_ns.median / 1e3, range,
                w->time_ns.median / med,
                !w->check.pass ? "FAILED correctness" : ok ? "within spread" : "OUTSIDE spread");
    }
    int agreed = within == total && total > 0 && res.passed == res.total;
    int upgraded = 0;
    if (rg_registry_link_replication(g, id, *replica_id, agreed, within, total, &upgraded, err, errlen)) {
        rc = 2;
        goto done;
    }
    *agreed_out = agreed;
    fprintf(out, "%s: %d of %d workloads within the original's spread", agreed ? "agreed" : "did not agree", within,
            total);
    rg_run_row now;
    const char *level = rg_registry_get(g, id, &now, NULL, msg, sizeof msg) ? "?" : now.evidence;
    rg_run_row rrow;
    int have_r = !rg_registry_get(g, *replica_id, &rrow, NULL, msg, sizeof msg);
    if (upgraded)
        fprintf(out, "; run #%lld is now 'replicated'\n", (long long)id);
    else if (agreed && (!have_r || strcmp(orow.implementation_digest, rrow.implementation_digest) ||
                        strcmp(orow.comparison_key, rrow.comparison_key)))
        fprintf(out, "; evidence of run #%lld stays '%s': a different implementation digest or comparison key\n",
                (long long)id, level);
    else
        fprintf(out, "; evidence of run #%lld: '%s'\n", (long long)id, level);
done:
    cJSON_Delete(m);
    rg_run_result_free(&res);
    rg_suite_free(&s);
    rg_recorded_protocol_free(&p);
    rg_manifest_free(&om);
    return rc;
}
