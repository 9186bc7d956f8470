/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest.c -- the typed reader (manifest.h), verify, and reading a
 * recorded protocol back for replication. The envelope it shares with the
 * builder (roles, kinds, the digest rule) is manifest_envelope.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"
#include "rg_util.h"
#include "strict_json.h"

/* ---- reading ------------------------------------------------------------------------- */

typedef struct rd {
    char *err;
    size_t errlen;
    int bad;
} rd;

static void rd_fail(rd *x, const char *where, const char *k, const char *why)
{
    if (!x->bad) snprintf(x->err, x->errlen, "%s.%s: %s", where, k, why);
    x->bad = 1;
}

static const cJSON *rd_obj(rd *x, const cJSON *o, const char *k, const char *where)
{
    const cJSON *v = o ? rg_json_get(o, k) : NULL;
    if (!v || cJSON_IsNull(v)) return NULL;
    if (!cJSON_IsObject(v)) rd_fail(x, where, k, "not an object");
    return cJSON_IsObject(v) ? v : NULL;
}

static void rd_str(rd *x, const cJSON *o, const char *k, char *dst, size_t n, const char *where)
{
    dst[0] = 0;
    const cJSON *v = o ? rg_json_get(o, k) : NULL;
    if (!v || cJSON_IsNull(v)) return;
    if (!cJSON_IsString(v) || !v->valuestring) {
        rd_fail(x, where, k, "not a string");
        return;
    }
    if (strlen(v->valuestring) >= n) {
        rd_fail(x, where, k, "too long");
        return;
    }
    memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
}

static double rd_num(rd *x, const cJSON *o, const char *k, const char *where)
{
    const cJSON *v = o ? rg_json_get(o, k) : NULL;
    if (!v || cJSON_IsNull(v)) return NAN;
    if (!cJSON_IsNumber(v)) {
        rd_fail(x, where, k, "not a number");
        return NAN;
    }
    return v->valuedouble;
}

/* A count: an integer in [0, 1e9], -1 when absent. */
static int rd_int(rd *x, const cJSON *o, const char *k, const char *where)
{
    double v = rd_num(x, o, k, where);
    if (isnan(v)) return -1;
    if (!(v >= 0 && v <= 1e9) || v != floor(v)) {
        rd_fail(x, where, k, "not a whole number in [0, 1e9]");
        return -1;
    }
    return (int)v;
}

static void rd_kv(rd *x, const cJSON *o, rg_kv *kv, size_t *n, const char *where)
{
    *n = 0;
    for (const cJSON *c = o ? o->child : NULL; c && *n < RG_MF_MAX_KV; c = c->next) {
        if (!cJSON_IsString(c) || strlen(c->string) >= sizeof kv->key || strlen(c->valuestring) >= sizeof kv->value) {
            rd_fail(x, where, c->string, "not a short string");
            return;
        }
        snprintf(kv[*n].key, sizeof kv->key, "%s", c->string);
        snprintf(kv[*n].value, sizeof kv->value, "%s", c->valuestring);
        (*n)++;
    }
}

static void rd_stats(rd *x, const cJSON *o, rg_named_value *nv, size_t cap, size_t *n, const char *where)
{
    *n = 0;
    for (const cJSON *c = o ? o->child : NULL; c; c = c->next) {
        if (cJSON_IsNull(c)) continue;   /* not measured (a run with nothing timed): absent, NAN */
        if (!cJSON_IsNumber(c) || strlen(c->string) >= sizeof nv->name || *n == cap) {
            rd_fail(x, where, c->string, "not a number (or too many members)");
            return;
        }
        snprintf(nv[*n].name, sizeof nv->name, "%s", c->string);
        nv[(*n)++].value = c->valuedouble;
    }
}

static void read_workload_rows(rd *x, rg_manifest *m, const cJSON *rows, const cJSON *wl)
{
    size_t n = (size_t)cJSON_GetArraySize(rows ? rows : wl);
    if (!n) return;
    m->workloads = calloc(n, sizeof *m->workloads);
    if (!m->workloads) {
        rd_fail(x, "run", "workloads", "out of memory");
        return;
    }
    m->n_workloads = n;
    const cJSON *r = rows ? rows->child : NULL, *w = wl ? wl->child : NULL;
    for (size_t i = 0; i < n && !x->bad; i++) {
        rg_mf_workload *o = &m->workloads[i];
        char where[64];
        snprintf(where, sizeof where, "run.spec.ropegrad.workloads[%zu]", i);
        const cJSON *src = r ? r : w;
        if (!cJSON_IsObject(src)) {
            rd_fail(x, where, "", "not an object");
            return;
        }
        o->index = rd_int(x, src, "index", where);
        rd_str(x, src, "uuid", o->uuid, sizeof o->uuid, where);
        o->median = rd_num(x, r, "median", where);
        o->min = rd_num(x, r, "min", where);
        o->max = rd_num(x, r, "max", where);
        o->mean = rd_num(x, r, "mean", where);
        o->stddev = rd_num(x, r, "stddev", where);
        o->bytes = rd_num(x, r, "bytes", where);
        o->gbps = rd_num(x, r, "gbps", where);
        o->t_sol_ns = rd_num(x, r, "t_sol_ns", where);
        o->t_b_ns = rd_num(x, r, "t_b_ns", where);
        o->sol_score = rd_num(x, r, "sol_score", where);
        o->speedup = rd_num(x, r, "speedup", where);
        o->pass = r && cJSON_IsTrue(rg_json_get(r, "pass"));
        o->max_abs_err = rd_num(x, r, "max_abs_err", where);
        o->max_rel_err = rd_num(x, r, "max_rel_err", where);
        o->matched_ratio = rd_num(x, r, "matched_ratio", where);
        o->n = rd_num(x, r, "n", where);
        o->n_matched = rd_num(x, r, "n_matched", where);
        o->n_nonfinite = rd_num(x, r, "n_nonfinite", where);
        rd_str(x, r, "reason", o->reason, sizeof o->reason, where);
        const cJSON *smp = r ? rg_json_get(r, "samples_ns") : NULL;
        if (cJSON_IsArray(smp) && cJSON_GetArraySize(smp) > 0) {
            o->samples = malloc((size_t)cJSON_GetArraySize(smp) * sizeof *o->samples);
            if (!o->samples) {
                rd_fail(x, where, "samples_ns", "out of memory");
                return;
            }
            for (const cJSON *s = smp->child; s; s = s->next) o->samples[o->n_samples++] = cJSON_IsNumber(s) ? s->valuedouble : NAN;
        }
        /* The workload object's row of the same position, when present. */
        const cJSON *wi = w;
        if (wi) {
            if (rd_int(x, wi, "index", "workload.spec.workloads[]") != o->index) {
                rd_fail(x, where, "index", "differs from the workload object's row at this position");
                return;
            }
            rd_stats(x, rd_obj(x, wi, "axes", "workload.spec.workloads[]"), o->axes, 8, &o->n_axes,
                     "workload.spec.workloads[].axes");
            o->attention_scaling = rd_num(x, wi, "attention_scaling", "workload.spec.workloads[]");
            const cJSON *t = rd_obj(x, wi, "tolerance", "workload.spec.workloads[]");
            o->max_atol = rd_num(x, t, "max_atol", "tolerance");
            o->max_rtol = rd_num(x, t, "max_rtol", "tolerance");
            o->required_matched_ratio = rd_num(x, t, "required_matched_ratio", "tolerance");
            o->max_error_cap = rd_num(x, t, "max_error_cap", "tolerance");
        } else {
            o->attention_scaling = o->max_atol = o->max_rtol = o->required_matched_ratio = o->max_error_cap = NAN;
        }
        if (r) r = r->next;
        if (w) w = w->next;
    }
}

void rg_manifest_free(rg_manifest *m)
{
    if (!m) return;
    for (size_t i = 0; m->workloads && i < m->n_workloads; i++) free(m->workloads[i].samples);
    free(m->workloads);
    m->workloads = NULL;
    m->n_workloads = 0;
}

int rg_manifest_read(const cJSON *doc, rg_manifest *m, char *err, size_t errlen)
{
    return rg_manifest_read_opts(doc, m, 0, err, errlen);
}

/* The objects by role, each checked as {apiVersion, kind, metadata, spec}:
 * spec[role] set, the metadata and (unless RG_MF_NO_DIGESTS) the digest read
 * into m->obj[role]. Returns 0, or 2 with err set. */
static int read_objects(rd *x, const cJSON *doc, rg_manifest *m, int flags, const cJSON *spec[RG_N_ROLES])
{
    char *err = x->err;
    size_t errlen = x->errlen;
    for (const cJSON *c = doc->child; c; c = c->next) {
        int role = -1;
        for (int k = 0; k < RG_N_ROLES; k++)
            if (!strcmp(c->string, rg_role_name(k))) role = k;
        if (role < 0 && !strcmp(c->string, "signatures")) continue;
        if (role < 0) {
            snprintf(err, errlen, "unknown member \"%.64s\" in the manifest (roles: run, protocol, environment, "
                                  "workload, implementation; and signatures)", c->string);
            return 2;
        }
        const char *av = rg_json_str(c, "apiVersion"), *kind = rg_json_str(c, "kind");
        const cJSON *md = rg_json_get(c, "metadata");
        spec[role] = rg_json_get(c, "spec");
        if (!cJSON_IsObject(c) || !av || strcmp(av, RG_API_VERSION) || !kind || strcmp(kind, rg_role_kind(role)) ||
            !cJSON_IsObject(spec[role]) || (md && !cJSON_IsObject(md))) {
            snprintf(err, errlen, "%s: not a %s object {apiVersion: %s, kind, metadata, spec}", rg_role_name(role),
                     rg_role_kind(role), RG_API_VERSION);
            return 2;
        }
        for (const cJSON *e = c->child; e; e = e->next)
            if (strcmp(e->string, "apiVersion") && strcmp(e->string, "kind") && strcmp(e->string, "metadata") &&
                strcmp(e->string, "spec")) {
                snprintf(err, errlen, "%s: unknown member \"%.64s\"", rg_role_name(role), e->string);
                return 2;
            }
        rg_mf_object *o = &m->obj[role];
        o->present = 1;
        rd_str(x, md, "name", o->name, sizeof o->name, rg_role_name(role));
        rd_str(x, md, "title", o->title, sizeof o->title, rg_role_name(role));
        rd_kv(x, rd_obj(x, md, "labels", rg_role_name(role)), o->labels, &o->n_labels, "metadata.labels");
        if (x->bad) return 2;
        if (!(flags & RG_MF_NO_DIGESTS) && rg_object_digest(c, o->digest, err, errlen)) return 2;
    }
    for (int k = 0; k < 3; k++)
        if (!spec[k]) {
            snprintf(err, errlen, "the manifest has no %s object (%s)", rg_role_name(k), rg_role_kind(k));
            return 2;
        }
    return 0;
}

/* run.spec; returns its ropegrad detail object (NULL when absent). */
static const cJSON *read_run(rd *x, rg_manifest *m, const cJSON *run)
{
    rd_str(x, run, "status", m->status, sizeof m->status, "run.spec");
    const cJSON *tm = rd_obj(x, run, "timing", "run.spec");
    rd_stats(x, rd_obj(x, tm, "latencyNs", "run.spec.timing"), m->latency_ns, 8, &m->n_latency,
             "run.spec.timing.latencyNs");
    rd_str(x, tm, "primaryStatistic", m->primary_statistic, sizeof m->primary_statistic, "run.spec.timing");
    m->primary_ns = NAN;
    for (size_t i = 0; i < m->n_latency; i++)
        if (!strcmp(m->latency_ns[i].name, m->primary_statistic)) m->primary_ns = m->latency_ns[i].value;
    rd_str(x, run, "observedAt", m->observed_at, sizeof m->observed_at, "run.spec");
    const cJSON *sn = rd_obj(x, run, "sourceNative", "run.spec");
    rd_str(x, sn, "source", m->source, sizeof m->source, "run.spec.sourceNative");
    rd_str(x, sn, "benchmark", m->benchmark, sizeof m->benchmark, "run.spec.sourceNative");
    rd_str(x, sn, "externalId", m->external_id, sizeof m->external_id, "run.spec.sourceNative");
    const cJSON *mt = rd_obj(x, sn, "metrics", "run.spec.sourceNative");
    m->sol_score = rd_num(x, mt, "sol_score", "metrics");
    m->latency_ms = rd_num(x, mt, "latency_ms", "metrics");
    m->avg_speedup = rd_num(x, mt, "avg_speedup", "metrics");
    m->fast_1_count = rd_num(x, mt, "fast_1_count", "metrics");
    m->fast_1_total = rd_num(x, mt, "fast_1_total", "metrics");
    rd_str(x, run, "protocolDigest", m->protocol_digest, sizeof m->protocol_digest, "run.spec");
    rd_str(x, run, "workloadDigest", m->workload_digest, sizeof m->workload_digest, "run.spec");
    rd_str(x, run, "environmentDigest", m->environment_digest, sizeof m->environment_digest, "run.spec");
    rd_str(x, run, "implementationDigest", m->implementation_digest, sizeof m->implementation_digest, "run.spec");
    rd_str(x, run, "comparisonKey", m->comparison_key, sizeof m->comparison_key, "run.spec");
    m->comparison_key_recorded = m->comparison_key[0] != 0;
    const cJSON *d = rd_obj(x, run, "ropegrad", "run.spec");
    m->have_detail = d != NULL;
    const cJSON *corr = rd_obj(x, d, "correctness", "run.spec.ropegrad");
    m->passed = rd_int(x, corr, "passed", "run.spec.ropegrad.correctness");
    m->total = rd_int(x, corr, "total", "run.spec.ropegrad.correctness");
    const cJSON *sol = rd_obj(x, d, "sol", "run.spec.ropegrad");
    rd_str(x, sol, "tSol", m->t_sol_mode, sizeof m->t_sol_mode, "sol");
    rd_str(x, sol, "tSolDetail", m->t_sol_detail, sizeof m->t_sol_detail, "sol");
    rd_str(x, sol, "baseline", m->baseline_mode, sizeof m->baseline_mode, "sol");
    rd_str(x, sol, "figuresFile", m->figures_file, sizeof m->figures_file, "sol");
    rd_str(x, sol, "figuresGpu", m->figures_gpu, sizeof m->figures_gpu, "sol");
    const cJSON *bf = rd_obj(x, sol, "baselineFile", "sol");
    rd_str(x, bf, "name", m->baseline_name, sizeof m->baseline_name, "baselineFile");
    rd_str(x, bf, "file", m->baseline_file, sizeof m->baseline_file, "baselineFile");
    rd_str(x, bf, "format", m->baseline_format, sizeof m->baseline_format, "baselineFile");
    rd_str(x, bf, "digest", m->baseline_digest, sizeof m->baseline_digest, "baselineFile");
    m->suite_geomean_ns = m->suite_mean_ns = NAN;
    for (size_t i = 0; i < m->n_latency; i++) {
        if (!strcmp(m->latency_ns[i].name, "geomean")) m->suite_geomean_ns = m->latency_ns[i].value;
        if (!strcmp(m->latency_ns[i].name, "mean")) m->suite_mean_ns = m->latency_ns[i].value;
    }
    return d;
}

static void read_protocol(rd *x, rg_manifest *m, const cJSON *p)
{
    const cJSON *h = rd_obj(x, p, "harness", "protocol.spec");
    rd_str(x, h, "name", m->harness_name, sizeof m->harness_name, "protocol.spec.harness");
    rd_str(x, h, "version", m->harness_version, sizeof m->harness_version, "protocol.spec.harness");
    const cJSON *c = rd_obj(x, p, "correctness", "protocol.spec");
    rd_str(x, c, "reference", m->correctness_reference, sizeof m->correctness_reference, "correctness");
    rd_str(x, c, "comparator", m->correctness_comparator, sizeof m->correctness_comparator, "correctness");
    rd_str(x, c, "element", m->correctness_element, sizeof m->correctness_element, "correctness");
    m->rounds = rd_int(x, c, "rounds", "correctness");
    rd_str(x, c, "groundTruth", m->ground_truth, sizeof m->ground_truth, "correctness");
    const cJSON *ms = rd_obj(x, p, "measurement", "protocol.spec");
    rd_str(x, ms, "timer", m->timer, sizeof m->timer, "measurement");
    rd_str(x, ms, "primaryStatistic", m->measurement_statistic, sizeof m->measurement_statistic, "measurement");
    m->warmup = rd_int(x, ms, "warmup", "measurement");
    m->iterations = rd_int(x, ms, "iterations", "measurement");
    rd_str(x, ms, "seed", m->seed, sizeof m->seed, "measurement");
    rd_str(x, ms, "inputs", m->inputs, sizeof m->inputs, "measurement");
    rd_str(x, ms, "coldL2", m->cold_l2, sizeof m->cold_l2, "measurement");
    rd_str(x, ms, "restage", m->restage, sizeof m->restage, "measurement");
    rd_str(x, ms, "span", m->span, sizeof m->span, "measurement");
    rd_str(x, ms, "sync", m->sync, sizeof m->sync, "measurement");
    rd_str(x, ms, "settle", m->settle, sizeof m->settle, "measurement");
    rd_str(x, ms, "sameKernelsCheck", m->same_kernels, sizeof m->same_kernels, "measurement");
    const cJSON *cm = rd_obj(x, p, "comparability", "protocol.spec");
    rd_str(x, cm, "family", m->family, sizeof m->family, "comparability");
    rd_str(x, cm, "notes", m->family_notes, sizeof m->family_notes, "comparability");
    snprintf(m->definition, sizeof m->definition, "%s", m->benchmark);
}

static void read_environment(rd *x, rg_manifest *m, const cJSON *e)
{
    const cJSON *hw = rd_obj(x, e, "hardware", "environment.spec");
    rd_str(x, hw, "vendor", m->vendor, sizeof m->vendor, "hardware");
    rd_str(x, hw, "product", m->product, sizeof m->product, "hardware");
    rd_str(x, hw, "architecture", m->architecture, sizeof m->architecture, "hardware");
    m->gpu_sm_count = rd_int(x, hw, "smCount", "hardware");
    const cJSON *ck = rd_obj(x, hw, "clocksMHz", "hardware");
    m->sm_clock_start = rd_num(x, ck, "smStart", "clocksMHz");
    m->sm_clock_end = rd_num(x, ck, "smEnd", "clocksMHz");
    m->mem_clock_start = rd_num(x, ck, "memStart", "clocksMHz");
    m->mem_clock_end = rd_num(x, ck, "memEnd", "clocksMHz");
    const cJSON *cpu = rd_obj(x, hw, "cpu", "hardware");
    rd_str(x, cpu, "model", m->cpu_model, sizeof m->cpu_model, "cpu");
    rd_str(x, cpu, "isa", m->cpu_isa, sizeof m->cpu_isa, "cpu");
    m->cpu_threads = rd_int(x, cpu, "threads", "cpu");
    m->load_avg_1m = rd_num(x, cpu, "loadAverage1m", "cpu");
    m->online_cpus = rd_int(x, cpu, "onlineCpus", "cpu");
    m->other_cpus = rd_num(x, cpu, "otherCpus", "cpu");
    m->steal_cpus = rd_num(x, cpu, "stealCpus", "cpu");
    m->share_seconds = rd_num(x, cpu, "shareSeconds", "cpu");
    const cJSON *sw = rd_obj(x, e, "software", "environment.spec");
    rd_kv(x, rd_obj(x, sw, "libraries", "software"), m->libraries, &m->n_libraries, "software.libraries");
    rd_str(x, sw, "os", m->os, sizeof m->os, "software");
    rd_str(x, rd_obj(x, e, "host", "environment.spec"), "hostname", m->hostname, sizeof m->hostname, "host");
}

static void read_implementation(rd *x, rg_manifest *m, const cJSON *im)
{
    rd_str(x, im, "name", m->impl_name, sizeof m->impl_name, "implementation.spec");
    rd_str(x, im, "version", m->impl_version, sizeof m->impl_version, "implementation.spec");
    rd_str(x, im, "backend", m->backend, sizeof m->backend, "implementation.spec");
    rd_str(x, im, "kernelName", m->kernel_name, sizeof m->kernel_name, "implementation.spec");
    rd_str(x, im, "sources", m->sources_digest, sizeof m->sources_digest, "implementation.spec");
    rd_str(x, im, "buildFlags", m->build_flags, sizeof m->build_flags, "implementation.spec");
    m->kernel = rd_int(x, im, "kernel", "implementation.spec");
    const cJSON *rev = rd_obj(x, im, "revision", "implementation.spec");
    rd_str(x, rev, "commit", m->git_commit, sizeof m->git_commit, "implementation.spec.revision");
    const cJSON *dirty = rev ? rg_json_get(rev, "dirty") : NULL;
    m->git_dirty = cJSON_IsBool(dirty) ? cJSON_IsTrue(dirty) : -1;
    if (dirty && !cJSON_IsBool(dirty)) rd_fail(x, "implementation.spec.revision", "dirty", "not true or false");
}

/* The per-workload rows (d: run.spec.ropegrad) against the workload object's list. */
static void read_workloads(rd *x, rg_manifest *m, const cJSON *d, const cJSON *workload)
{
    const cJSON *rows = d ? rg_json_get(d, "workloads") : NULL;
    const cJSON *wl = workload ? rg_json_get(workload, "workloads") : NULL;
    if ((rows && !cJSON_IsArray(rows)) || (wl && !cJSON_IsArray(wl)) ||
        (rows && wl && cJSON_GetArraySize(rows) != cJSON_GetArraySize(wl))) {
        rd_fail(x, "run.spec.ropegrad", "workloads", "not a list of the workload object's length");
    }
    if (!x->bad) read_workload_rows(x, m, rows, wl);
}

static void read_signatures(rd *x, rg_manifest *m, const cJSON *doc)
{
    const cJSON *sg = rg_json_get(doc, "signatures");
    if (sg && !cJSON_IsArray(sg)) rd_fail(x, "$", "signatures", "not a list");
    for (const cJSON *s = sg ? sg->child : NULL; s && !x->bad; s = s->next) {
        if (m->n_signatures == sizeof m->signatures / sizeof m->signatures[0]) {
            rd_fail(x, "$", "signatures", "more than 8");
            break;
        }
        rg_mf_signature *g = &m->signatures[m->n_signatures++];
        rd_str(x, s, "keyId", g->key_id, sizeof g->key_id, "signatures[]");
        rd_str(x, s, "algorithm", g->algorithm, sizeof g->algorithm, "signatures[]");
        rd_str(x, s, "publicKey", g->public_key, sizeof g->public_key, "signatures[]");
        rd_str(x, s, "value", g->value, sizeof g->value, "signatures[]");
    }
}

int rg_manifest_read_opts(const cJSON *doc, rg_manifest *m, int flags, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    rd x = {err, errlen, 0};
    if (!cJSON_IsObject(doc)) {
        snprintf(err, errlen, "not a JSON object");
        return 2;
    }
    if (rg_manifest_is_legacy(doc)) {
        snprintf(err, errlen, "an old ropegrad manifest (ManifestBundle): convert it with `ropegrad migrate FILE`");
        return 2;
    }
    const cJSON *spec[RG_N_ROLES] = {0};
    if (read_objects(&x, doc, m, flags, spec)) return 2;
    const cJSON *d = read_run(&x, m, spec[RG_ROLE_RUN]);
    read_protocol(&x, m, spec[RG_ROLE_PROTOCOL]);
    read_environment(&x, m, spec[RG_ROLE_ENVIRONMENT]);
    read_implementation(&x, m, spec[RG_ROLE_IMPLEMENTATION]);
    read_workloads(&x, m, d, spec[RG_ROLE_WORKLOAD]);
    read_signatures(&x, m, doc);
    if (x.bad) {
        rg_manifest_free(m);
        return 2;
    }
    return 0;
}

int rg_comparison_key(const rg_manifest *m, char out[RG_DIGEST_LEN], char *err, size_t errlen)
{
    cJSON *k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "definition", m->benchmark);
    cJSON_AddStringToObject(k, "workloadDigest", m->workload_digest);
    cJSON_AddStringToObject(k, "family", m->family);
    cJSON_AddStringToObject(k, "timer", m->timer);
    cJSON_AddStringToObject(k, "statistic", m->measurement_statistic);
    cJSON_AddStringToObject(k, "product", m->product);
    int rc = rg_digest_json(k, out, err, errlen);
    cJSON_Delete(k);
    return rc ? 2 : 0;
}

/* ---- verify ------------------------------------------------------------------------------- */

/* a and b agree to 1e-9 relative (figures recomputed in another order of
 * floating-point operations), or are both absent. */
static int same_figure(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300;
}

static int fig_mismatch(char *msg, size_t msglen, const char *what, double recorded, double computed)
{
    snprintf(msg, msglen, "run %s does not follow from the figures it derives from: recorded %.17g, computed %.17g",
             what, recorded, computed);
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ropegrad's detail: figures that follow from others, recomputed. */
/* A workload that carries no timing figure at all: one that failed its check
 * (as in SOL-ExecBench, not timed), or any workload of an untimed protocol
 * (`check`: measurement.iterations 0). */
static int untimed_row(const rg_manifest *m, const rg_mf_workload *w)
{
    return (!w->pass || m->iterations == 0) && w->index >= 0 && isnan(w->median) && isnan(w->min) &&
           isnan(w->max) && isnan(w->mean) && isnan(w->gbps) && isnan(w->sol_score) && isnan(w->speedup) &&
           !w->n_samples;
}

/* The primary latency is absent (null) only where nothing was meant to be
 * or could be timed: a failed run (run.spec.status) or an untimed protocol
 * (protocol.spec.measurement.iterations 0); and an untimed protocol states
 * none. */
static int primary_presence_check(const rg_manifest *m, char *msg, size_t msglen)
{
    int untimed = m->iterations == 0, absent = isnan(m->primary_ns);
    if (absent && !untimed && strcmp(m->status, "failed")) {
        snprintf(msg, msglen, "run.spec.timing.latencyNs.%.31s is absent: only a failed run or an untimed protocol "
                              "(measurement.iterations 0) records no primary latency", m->primary_statistic);
        return 1;
    }
    if (untimed && (m->n_latency || isfinite(m->latency_ms))) {
        snprintf(msg, msglen, "protocol.spec.measurement.iterations is 0 (nothing timed), yet the run states a latency");
        return 1;
    }
    return 0;
}

/* Each workload once: a repeated index would be two measurements of one workload.
 * 0, or 2 with msg. */
static int unique_indices(const rg_manifest *m, char *msg, size_t msglen)
{
    size_t n = m->n_workloads;
    double *idx = malloc(n * sizeof *idx);
    if (!idx) {
        snprintf(msg, msglen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < n; i++) idx[i] = m->workloads[i].index;
    qsort(idx, n, sizeof *idx, cmp_double);
    for (size_t i = 1; i < n; i++)
        if (idx[i] == idx[i - 1]) {
            snprintf(msg, msglen, "run workloads: index %.0f appears more than once", idx[i]);
            free(idx);
            return 2;
        }
    free(idx);
    return 0;
}

/* What the timed workloads add up to, for the run's own figures. */
typedef struct figure_sums {
    double sum, lsum, sol_sum, sp_sum;
    int n_sol, n_b, fast, passed, n_timed;
} figure_sums;

/* Workload i's median, min, max and mean against its samples (*buf: scratch,
 * grown as needed; the caller frees it). 0, or the mismatch's code with msg. */
static int check_sample_stats(const rg_mf_workload *w, size_t i, double **buf, char *msg, size_t msglen)
{
    if (!w->n_samples) return 0;
    double *v = realloc(*buf, w->n_samples * sizeof *v);
    if (!v) {
        snprintf(msg, msglen, "out of memory");
        return 2;
    }
    *buf = v;
    memcpy(v, w->samples, w->n_samples * sizeof *v);
    size_t ns = w->n_samples;
    qsort(v, ns, sizeof *v, cmp_double);
    double s = 0;
    for (size_t k = 0; k < ns; k++) s += v[k];
    const char *names[4] = {"median", "min", "max", "mean"};
    double rec[4] = {w->median, w->min, w->max, w->mean};
    double got[4] = {(ns & 1) ? v[ns / 2] : 0.5 * (v[ns / 2 - 1] + v[ns / 2]), v[0], v[ns - 1], s / (double)ns};
    char what[128];
    for (int k = 0; k < 4; k++)
        if (!same_figure(rec[k], got[k])) {
            snprintf(what, sizeof what, "workloads[%zu].%s", i, names[k]);
            return fig_mismatch(msg, msglen, what, rec[k], got[k]);
        }
    return 0;
}

/* A timed workload's figures (its statistics, GB/s, SOL score, speedup),
 * added into *t. 0, or non-zero with msg. */
static int check_workload(const rg_mf_workload *w, size_t i, double **buf, figure_sums *t, char *msg, size_t msglen)
{
    double med = w->median;
    char what[128];
    if (!(med > 0) || w->index < 0) {
        snprintf(msg, msglen, "run workloads[%zu] has no index or no positive median", i);
        return 2;
    }
    int rc = check_sample_stats(w, i, buf, msg, msglen);
    if (rc) return rc;
    if (!same_figure(w->gbps, w->bytes / med)) {
        snprintf(what, sizeof what, "workloads[%zu].gbps", i);
        return fig_mismatch(msg, msglen, what, w->gbps, w->bytes / med);
    }
    t->sum += med;
    t->lsum += log(med);
    t->n_timed++;
    t->passed += w->pass;
    double score = rg_sol_score(med, w->t_sol_ns, w->t_b_ns);
    if (!isnan(score) && !w->pass) score = 0;
    double sp = isfinite(w->t_b_ns) ? w->t_b_ns / med : NAN;
    if (!same_figure(w->sol_score, score) || !same_figure(w->speedup, sp)) {
        snprintf(what, sizeof what, "workloads[%zu].sol_score/speedup", i);
        return fig_mismatch(msg, msglen, what, same_figure(w->sol_score, score) ? w->speedup : w->sol_score,
                            same_figure(w->sol_score, score) ? sp : score);
    }
    if (!isnan(score)) t->sol_sum += score, t->n_sol++;
    if (!isnan(sp)) {
        t->sp_sum += sp, t->n_b++;
        if (w->pass && med < w->t_b_ns) t->fast++;
    }
    return 0;
}

/* The run's own figures (geomean, mean, SOL, speedup, cases faster,
 * correctness, status) against what its workloads add up to. */
static int check_totals(const rg_manifest *m, const figure_sums *t, char *msg, size_t msglen)
{
    size_t n = m->n_workloads;
    int n_timed = t->n_timed, n_sol = t->n_sol, n_b = t->n_b, fast = t->fast, passed = t->passed;
    double geo = n_timed ? exp(t->lsum / n_timed) : NAN, mean = n_timed ? t->sum / n_timed : NAN;
    if (!same_figure(m->suite_geomean_ns, geo)) return fig_mismatch(msg, msglen, "timing.latencyNs.geomean", m->suite_geomean_ns, geo);
    if (!same_figure(m->suite_mean_ns, mean)) return fig_mismatch(msg, msglen, "timing.latencyNs.mean", m->suite_mean_ns, mean);
    double sol = n_sol ? t->sol_sum / n_sol : NAN, asp = n_b ? t->sp_sum / n_b : NAN;
    if (!same_figure(m->sol_score, sol)) return fig_mismatch(msg, msglen, "sourceNative.metrics.sol_score", m->sol_score, sol);
    if (!same_figure(m->avg_speedup, asp))
        return fig_mismatch(msg, msglen, "sourceNative.metrics.avg_speedup", m->avg_speedup, asp);
    if (!same_figure(m->fast_1_count, n_b ? fast : NAN))
        return fig_mismatch(msg, msglen, "sourceNative.metrics.fast_1_count", m->fast_1_count, n_b ? fast : NAN);
    if (!same_figure(m->fast_1_total, n_b ? n_b : NAN))
        return fig_mismatch(msg, msglen, "sourceNative.metrics.fast_1_total", m->fast_1_total, n_b ? n_b : NAN);
    if (m->passed != passed || m->total != (int)n)
        return fig_mismatch(msg, msglen, "ropegrad.correctness.passed/total", m->passed, passed);
    const char *want = passed == (int)n ? "passed" : "failed";
    if (strcmp(m->status, want)) {
        snprintf(msg, msglen, "run status \"%s\" does not follow from correctness (%d of %zu passed)", m->status,
                 passed, n);
        return 1;
    }
    return 0;
}

static int verify_figures(const rg_manifest *m, char *msg, size_t msglen)
{
    size_t n = m->n_workloads;
    if (!n || m->total < 0 || m->passed < 0) {
        snprintf(msg, msglen, "run.spec.ropegrad has no workloads or no correctness counts");
        return 2;
    }
    int rc = unique_indices(m, msg, msglen);
    if (rc) return rc;
    figure_sums t = {0};
    double *v = NULL;
    for (size_t i = 0; i < n; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        if (untimed_row(m, w)) {   /* not timed: no figures to check */
            t.passed += w->pass;
            continue;
        }
        if ((rc = check_workload(w, i, &v, &t, msg, msglen))) {
            free(v);
            return rc;
        }
    }
    free(v);
    return check_totals(m, &t, msg, msglen);
}

int rg_manifest_verify_typed(const rg_manifest *m, rg_verify_report *rep, char *msg, size_t msglen)
{
    rg_verify_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    if (rg_manifest_check_identifiers(m, msg, msglen)) return 2;
    const char *recorded[RG_N_ROLES] = {NULL, m->protocol_digest, m->environment_digest, m->workload_digest,
                                        m->implementation_digest};
    snprintf(rep->computed[0], RG_DIGEST_LEN, "%s", m->obj[0].digest);
    rep->state[0] = RG_DIGEST_MATCH;
    int rc = 0;
    for (int k = 1; k < RG_N_ROLES; k++) {
        snprintf(rep->recorded[k], RG_DIGEST_LEN, "%s", recorded[k]);
        if (!rg_digest_valid(recorded[k])) {
            snprintf(msg, msglen, "run.spec names no valid %sDigest", rg_role_name(k));
            return 2;
        }
        if (!m->obj[k].present) {
            rep->state[k] = RG_DIGEST_NOT_RECOMPUTABLE;
            continue;
        }
        snprintf(rep->computed[k], RG_DIGEST_LEN, "%s", m->obj[k].digest);
        if (strcmp(recorded[k], m->obj[k].digest)) {
            rep->state[k] = RG_DIGEST_MISMATCH;
            if (!rc) {
                snprintf(msg, msglen, "%s digest mismatch: the run names %.80s, the %s object hashes to %s",
                         rg_role_name(k), recorded[k], rg_role_name(k), m->obj[k].digest);
                rc = 1;
            }
        }
    }
    if (rc) {
        rep->state[0] = RG_DIGEST_MISMATCH;
        return rc;
    }
    if (rg_manifest_latencies_check(m, msg, msglen) || primary_presence_check(m, msg, msglen) ||
        rg_observed_at_check(m->observed_at, NAN, msg, msglen))
        return 1;
    /* Figures the run states twice. */
    if (isfinite(m->latency_ms) && isfinite(m->primary_ns) && !same_figure(m->latency_ms * 1e6, m->primary_ns) &&
        fabs(m->latency_ms * 1e6 - m->primary_ns) > 1e-6 * m->primary_ns)
        return fig_mismatch(msg, msglen, "sourceNative.metrics.latency_ms", m->latency_ms * 1e6, m->primary_ns);
    /* A run enters only the group its own fields derive: with or without
     * its workload object (the rule reads run.spec.workloadDigest). */
    if (m->comparison_key_recorded) {
        char key[RG_DIGEST_LEN];
        if (rg_comparison_key(m, key, msg, msglen)) return 2;
        if (strcmp(key, m->comparison_key)) {
            snprintf(msg, msglen, "comparisonKey mismatch: recorded %.80s, by the rule %s", m->comparison_key, key);
            return 1;
        }
    }
    if (m->have_detail) return verify_figures(m, msg, msglen);
    return 0;
}

int rg_manifest_verify(const cJSON *doc, char *msg, size_t msglen)
{
    rg_manifest m;
    if (rg_manifest_read(doc, &m, msg, msglen)) return 2;
    int rc = rg_manifest_verify_typed(&m, NULL, msg, msglen);
    rg_manifest_free(&m);
    return rc;
}

/* ---- the recorded protocol, for replication --------------------------------------- */

void rg_recorded_protocol_free(rg_recorded_protocol *p)
{
    if (!p) return;
    free(p->indices);
    p->indices = NULL;
    p->n_indices = 0;
}

/* The CUDA timing switches a run was measured with, into o: as recorded,
 * or, absent, what the harness did before they existed (the same buffers,
 * kernels only, one sync at the end, no settling). 0, or 2 with a message on
 * a word this harness does not know. */
static int recorded_switches(const rg_manifest *m, rg_run_options *o, char *err, size_t errlen)
{
    o->restage = RG_RESTAGE_OFF;
    o->span = RG_SPAN_KERNELS;
    o->sync = RG_SYNC_END;
    o->settle = RG_SETTLE_OFF;
    if ((m->restage[0] && rg_restage_parse(m->restage, &o->restage)) || (m->span[0] && rg_span_parse(m->span, &o->span)) ||
        (m->sync[0] && rg_sync_parse(m->sync, &o->sync)) || (m->settle[0] && rg_settle_parse(m->settle, &o->settle))) {
        snprintf(err, errlen, "manifest: restage \"%.15s\", span \"%.15s\", sync \"%.15s\" or settle \"%.15s\" is not "
                              "a word this harness knows", m->restage, m->span, m->sync, m->settle);
        return 2;
    }
    return 0;
}

int rg_protocol_from_manifest(const rg_manifest *m, rg_recorded_protocol *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (strcmp(m->harness_name, "ropegrad") || !m->have_detail || !m->n_workloads || !m->backend[0] ||
        m->kernel < 0 || m->warmup < 0 || m->iterations < 1 || !m->seed[0] || !m->inputs[0]) {
        snprintf(err, errlen, "the manifest is not a ropegrad run with the backend, kernel, warmup, iterations, seed, "
                              "inputs and workloads needed to run it again");
        return 2;
    }
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(m->seed, &end, 10);
    if (errno || *end || m->seed[0] == '-') {
        snprintf(err, errlen, "manifest: seed \"%.31s\" is not a whole number", m->seed);
        return 2;
    }
    snprintf(p->definition, sizeof p->definition, "%s", m->benchmark);
    snprintf(p->workload_digest, sizeof p->workload_digest, "%s", m->workload_digest);
    snprintf(p->backend, sizeof p->backend, "%s", m->backend);
    p->opts.backend = p->backend;
    p->opts.kernel = m->kernel;
    p->opts.warmup = m->warmup;
    p->opts.iterations = m->iterations;
    p->opts.seed = seed;
    p->opts.rounds = m->rounds > 0 ? m->rounds : 1;   /* a record made before rounds: one */
    if (m->ground_truth[0] && rg_ground_truth_parse(m->ground_truth, &p->opts.ground_truth)) {
        snprintf(err, errlen, "manifest: ground truth \"%.31s\" is not float64 or float32-reference", m->ground_truth);
        return 2;
    }
    if (recorded_switches(m, &p->opts, err, errlen)) return 2;
    if (!strcmp(m->inputs, "normal")) p->opts.inputs = RG_INPUTS_NORMAL;
    else if (!strcmp(m->inputs, "positions")) p->opts.inputs = RG_INPUTS_POSITIONS;
    else {
        snprintf(err, errlen, "manifest: unknown inputs \"%.31s\"", m->inputs);
        return 2;
    }
    p->opts.threads = !strcmp(m->backend, "cpu") && m->cpu_threads > 0 ? m->cpu_threads : 0;
    p->opts.timed = 1;
    p->indices = calloc(m->n_workloads, sizeof *p->indices);
    if (!p->indices) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < m->n_workloads; i++) p->indices[p->n_indices++] = m->workloads[i].index;
    return 0;
}
/* ---- files --------------------------------------------------------------------------- */

cJSON *rg_json_read_file(const char *path, char *err, size_t errlen)
{
    return rg_json_read_strict(path, RG_JSON_MAX_MANIFEST, err, errlen);
}

