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
 * T_b even though the baseline file itself is not kept. */
static int baseline_from_original(const cJSON *run, rg_baseline *b)
{
    const cJSON *sn = rg_json_get(run, "sourceNative"), *src = rg_json_get(sn, "source");
    const cJSON *per = rg_json_get(sn, "perWorkload");
    const cJSON *kind = rg_json_get(src, "baseline");
    if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "file") || !cJSON_IsArray(per)) return 0;
    memset(b, 0, sizeof *b);
    int n = cJSON_GetArraySize(per);
    b->index = calloc((size_t)n + 1, sizeof *b->index);
    b->time_ns = calloc((size_t)n + 1, sizeof *b->time_ns);
    if (!b->index || !b->time_ns) {
        rg_baseline_free(b);
        return 0;
    }
    for (const cJSON *p = per->child; p; p = p->next) {
        double t = rg_json_num(p, "t_b_ns"), i = rg_json_num(p, "index");
        if (isfinite(t) && isfinite(i)) {
            b->index[b->n] = (int)i;
            b->time_ns[b->n++] = t;
        }
    }
    const cJSON *bf = rg_json_get(src, "baselineFile");
    const cJSON *name = rg_json_get(bf, "name"), *file = rg_json_get(bf, "file"), *dg = rg_json_get(bf, "digest");
    snprintf(b->name, sizeof b->name, "%s", cJSON_IsString(name) ? name->valuestring : "original's baseline");
    snprintf(b->file, sizeof b->file, "%s", cJSON_IsString(file) ? file->valuestring : "");
    snprintf(b->format, sizeof b->format, "from-original-record");
    snprintf(b->digest, sizeof b->digest, "%s", cJSON_IsString(dg) ? dg->valuestring : "");
    return 1;
}

int rg_record_replicate(rg_registry *g, int64_t id, int verbose, FILE *out, int64_t *replica_id, int *agreed_out,
                        char *err, size_t errlen)
{
    *replica_id = 0;
    *agreed_out = 0;
    rg_run_row orow;
    cJSON *om = NULL;
    int rc = rg_registry_get(g, id, &orow, &om, err, errlen);
    if (rc) return 2;
    rg_recorded_protocol p;
    if (rg_protocol_from_manifest(om, &p, err, errlen)) {
        cJSON_Delete(om);
        return 2;
    }
    p.opts.verbose = verbose;
    rg_suite s;
    memset(&s, 0, sizeof s);
    if (rg_suite_load(p.suite_dir, &s, err, errlen)) {
        rg_recorded_protocol_free(&p);
        cJSON_Delete(om);
        return 2;
    }
    rg_run_result res;
    memset(&res, 0, sizeof res);
    if (rg_run_suite(&s, p.indices, p.n_indices, &p.opts, &res, err, errlen)) {
        rg_suite_free(&s);
        rg_recorded_protocol_free(&p);
        cJSON_Delete(om);
        return 2;
    }
    const cJSON *orun = rg_manifest_spec(om, "BenchmarkRun");
    rg_baseline base;
    int have_b = baseline_from_original(orun, &base);
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
    const cJSON *ow = rg_json_get(rg_json_get(orun, "timing"), "workloads");
    int within = 0, total = 0;
    fprintf(out, "replication of run #%lld as run #%lld (%s, %s, %d iterations)\n", (long long)id,
            (long long)*replica_id, res.backend, res.device, res.iterations);
    fprintf(out, "  %4s  %12s  %12s  %25s  %8s  %s\n", "#", "orig med us", "replica us", "orig [min, max] us", "ratio",
            "verdict");
    for (size_t i = 0; i < res.n_workloads; i++) {
        const rg_workload_result *w = &res.workloads[i];
        const cJSON *o = NULL;
        for (const cJSON *x = cJSON_IsArray(ow) ? ow->child : NULL; x; x = x->next)
            if (rg_json_num(x, "index") == w->index) o = x;
        total++;
        if (!o) {
            fprintf(out, "  %4d  (not in the original)\n", w->index);
            continue;
        }
        double med = rg_json_num(o, "median"), lo = rg_json_num(o, "min"), hi = rg_json_num(o, "max");
        double sd = rg_json_num(o, "stddev");
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
    const cJSON *rspec = rg_manifest_spec(m, "BenchmarkRun");
    const char *rkey = cJSON_GetStringValue(rg_json_get(rspec, "comparisonKey"));
    if (upgraded)
        fprintf(out, "; run #%lld is now 'replicated'\n", (long long)id);
    else if (agreed && (strcmp(orow.implementation_digest, rg_implementation_digest()) || !rkey ||
                        strcmp(orow.comparison_key, rkey)))
        fprintf(out, "; evidence of run #%lld stays '%s': a different implementation digest or comparison key\n",
                (long long)id, level);
    else
        fprintf(out, "; evidence of run #%lld: '%s'\n", (long long)id, level);
done:
    cJSON_Delete(m);
    rg_run_result_free(&res);
    rg_suite_free(&s);
    rg_recorded_protocol_free(&p);
    cJSON_Delete(om);
    return rc;
}
