/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_manifest.c -- manifests, verify, the SOL score, baselines. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_record_fixture.h"

static int verify_text(const char *text, char *msg, size_t n)
{
    cJSON *m = cJSON_Parse(text);
    if (!m) {
        snprintf(msg, n, "unparsable");
        return 2;
    }
    int rc = rg_manifest_verify(m, msg, n);
    cJSON_Delete(m);
    return rc;
}

/* Replaces, in a copy of text, the number after the first "key": that
 * follows anchor with another value. NULL when not found. */
static char *edit_number(const char *text, const char *anchor, const char *key)
{
    const char *a = strstr(text, anchor);
    if (!a) return NULL;
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *k = strstr(a, pat);
    if (!k) return NULL;
    const char *num = k + strlen(pat);
    char *end;
    double v = strtod(num, &end);
    if (end == num) return NULL;
    char repl[64];
    /* Whole numbers stay whole (counts must read back as counts). */
    snprintf(repl, sizeof repl, "%.17g", v == floor(v) ? v * 2 + 1 : v * 1.25 + 1);
    size_t pre = (size_t)(num - text), n = strlen(text);
    char *out = malloc(n + 64);
    memcpy(out, text, pre);
    strcpy(out + pre, repl);
    strcat(out, end);
    return out;
}

static char *fx_text(const char *gpu)
{
    cJSON *m = fx_manifest(gpu, 1, 1.0, 7);
    assert_non_null(m);
    char err[256];
    char *t = rg_json_print(m, 1, err, sizeof err);
    assert_non_null(t);
    cJSON_Delete(m);
    return t;
}

/* An object's spec by role ("run", "protocol", ...). */
static cJSON *spec_of(const cJSON *m, const char *role)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(m, role), "spec");
}

static void test_fresh_manifest_verifies(void **state)
{
    const char *gpus[3] = {"", "NVIDIA H200", "NVIDIA B200"};
    for (int g = 0; g < 3; g++) {
        cJSON *m = fx_manifest(gpus[g], 1, 1.0, 1);
        assert_non_null(m);
        char msg[512];
        int rc = rg_manifest_verify(m, msg, sizeof msg);
        if (rc) fail_msg("%s: %s", gpus[g], msg);
        /* Its structure: the public record's envelope, five objects by role,
         * each {apiVersion, kind, metadata, spec}; the run names the other
         * four by the digest of the object without metadata. */
        assert_int_equal(cJSON_GetArraySize(m), RG_N_ROLES);
        const cJSON *run = spec_of(m, "run");
        const char *refs[RG_N_ROLES] = {NULL, "protocolDigest", "environmentDigest", "workloadDigest",
                                        "implementationDigest"};
        for (int k = 0; k < RG_N_ROLES; k++) {
            const cJSON *o = cJSON_GetObjectItem(m, rg_role_name(k));
            assert_non_null(o);
            assert_string_equal(cJSON_GetObjectItem(o, "apiVersion")->valuestring, RG_API_VERSION);
            assert_string_equal(cJSON_GetObjectItem(o, "kind")->valuestring, rg_role_kind(k));
            assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "title"));
            if (!k) continue;
            char d[RG_DIGEST_LEN], e[256];
            assert_int_equal(rg_object_digest(o, d, e, sizeof e), 0);
            assert_string_equal(cJSON_GetObjectItem(run, refs[k])->valuestring, d);
        }
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "timing"), "primaryStatistic")->valuestring,
                            "geomean");
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "sourceNative"), "source")->valuestring,
                            "ropegrad");
        assert_string_equal(cJSON_GetObjectItem(spec_of(m, "implementation"), "sources")->valuestring,
                            rg_implementation_digest());
        /* No machine paths in any spec. */
        char e2[256];
        char *all = rg_json_print(m, 0, e2, sizeof e2);
        assert_null(strstr(all, RG_SOURCE_DIR));
        free(all);
        /* Through text and back: still verifies. */
        char err[256];
        char *t = rg_json_print(m, 1, err, sizeof err);
        assert_int_equal(verify_text(t, msg, sizeof msg), 0);
        free(t);
        cJSON_Delete(m);
    }
}

/* Changing any one figure in the text makes verify fail with 1 and name it:
 * an object the run names by digest (protocol, environment, workload,
 * implementation) by its digest; the run's own figures by the figures they
 * follow from. */
static void test_tamper_any_figure(void **state)
{
    char *text = fx_text("NVIDIA H200");
    const struct {
        const char *anchor, *key, *expect;
    } edits[] = {
        {"\"kind\": \"BenchmarkRun\"", "median", "does not follow"},
        {"\"latencyNs\"", "geomean", "does not follow"},
        {"\"latencyNs\"", "mean", "does not follow"},
        {"\"metrics\"", "latency_ms", "latency_ms"},
        {"\"kind\": \"BenchmarkRun\"", "max_abs_err", NULL},   /* not derived: covered by signatures only */
        {"\"kind\": \"BenchmarkRun\"", "t_sol_ns", NULL},   /* no baseline here: no score follows from it */
        {"\"kind\": \"BenchmarkRun\"", "stddev", NULL},
        {"\"kind\": \"Workload\"", "batch_size", "workload digest mismatch"},
        {"\"kind\": \"Workload\"", "max_atol", "workload digest mismatch"},
        {"\"kind\": \"BenchmarkProtocol\"", "warmup", "protocol digest mismatch"},
        {"\"kind\": \"BenchmarkProtocol\"", "iterations", "protocol digest mismatch"},
        {"\"kind\": \"ExecutionEnvironment\"", "threads", "environment digest mismatch"},
        {"\"kind\": \"ExecutionEnvironment\"", "smCount", "environment digest mismatch"},
        {"\"kind\": \"ExecutionEnvironment\"", "l2Bytes", "environment digest mismatch"},
        {"\"kind\": \"ExecutionEnvironment\"", "smStart", "environment digest mismatch"},
        {"\"kind\": \"Implementation\"", "kernel", "implementation digest mismatch"},
    };
    char msg[512], err[256];
    assert_int_equal(verify_text(text, msg, sizeof msg), 0);
    cJSON *orig = cJSON_Parse(text);
    rg_manifest om;
    assert_int_equal(rg_manifest_read(orig, &om, err, sizeof err), 0);
    int tried = 0;
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *bad = edit_number(text, edits[i].anchor, edits[i].key);
        if (!bad) fail_msg("fixture has no %s after %s", edits[i].key, edits[i].anchor);
        /* An edit of the run itself changes the run digest, whatever verify
         * says; an edit elsewhere breaks the digest the run names. */
        cJSON *bm = cJSON_Parse(bad);
        rg_manifest m;
        assert_int_equal(rg_manifest_read(bm, &m, err, sizeof err), 0);
        if (!edits[i].expect || !strstr(edits[i].expect, "digest mismatch"))
            assert_string_not_equal(m.obj[RG_ROLE_RUN].digest, om.obj[RG_ROLE_RUN].digest);
        rg_manifest_free(&m);
        cJSON_Delete(bm);
        if (edits[i].expect) {
            int rc = verify_text(bad, msg, sizeof msg);
            if (rc != 1) fail_msg("editing %s: verify returned %d (%s)", edits[i].key, rc, msg);
            if (!strstr(msg, edits[i].expect)) fail_msg("editing %s: %s", edits[i].key, msg);
            tried++;
        }
        free(bad);
    }
    assert_true(tried >= 13);
    /* A string too: the time it was observed changes the run digest. */
    char *bad = strdup(text);
    char *p = strstr(bad, "2026-01-");
    assert_non_null(p);
    p[5] = '1';   /* 2026-01 -> 2026-11 */
    cJSON *bm = cJSON_Parse(bad);
    rg_manifest m;
    assert_int_equal(rg_manifest_read(bm, &m, err, sizeof err), 0);
    assert_string_not_equal(m.obj[RG_ROLE_RUN].digest, om.obj[RG_ROLE_RUN].digest);
    rg_manifest_free(&m);
    cJSON_Delete(bm);
    /* metadata is not hashed: a changed title changes no digest. */
    free(bad);
    bad = strdup(text);
    p = strstr(bad, "\"title\": \"ropegrad");
    assert_non_null(p);
    p[10] = 'R';
    assert_int_equal(verify_text(bad, msg, sizeof msg), 0);
    bm = cJSON_Parse(bad);
    assert_int_equal(rg_manifest_read(bm, &m, err, sizeof err), 0);
    assert_string_equal(m.obj[RG_ROLE_RUN].digest, om.obj[RG_ROLE_RUN].digest);
    rg_manifest_free(&m);
    cJSON_Delete(bm);
    free(bad);
    rg_manifest_free(&om);
    cJSON_Delete(orig);
    free(text);
}

/* Re-hashing an edited protocol (the run's reference updated too) still
 * fails: the comparison key follows the protocol. A re-hashed run whose
 * figures no longer follow from its samples fails on the figures. */
static void test_cross_references(void **state)
{
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 2);
    char msg[512], err[256], d[RG_DIGEST_LEN];
    cJSON *spec = spec_of(m, "protocol");
    cJSON *meas = cJSON_GetObjectItem(spec, "measurement");
    cJSON_SetValuestring(cJSON_GetObjectItem(meas, "timer"), "wall-clock");
    rg_object_digest(cJSON_GetObjectItem(m, "protocol"), d, err, sizeof err);
    cJSON_SetValuestring(cJSON_GetObjectItem(spec_of(m, "run"), "protocolDigest"), d);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "comparisonKey mismatch"));
    cJSON_Delete(m);

    m = fx_manifest("NVIDIA H200", 1, 1.0, 2);
    cJSON *w0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(m, "run"), "ropegrad"), "workloads"), 0);
    cJSON_SetNumberValue(cJSON_GetObjectItem(w0, "median"), 1.0);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "median"));
    cJSON_Delete(m);

    /* The workload list changed but not workloadDigest. */
    m = fx_manifest("", 1, 1.0, 2);
    w0 = cJSON_GetArrayItem(cJSON_GetObjectItem(spec_of(m, "workload"), "workloads"), 0);
    cJSON_SetValuestring(cJSON_GetObjectItem(w0, "uuid"), "00000000-0000-0000-0000-000000000000");
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "workload digest mismatch"));
    cJSON_Delete(m);
}

static void test_malformed(void **state)
{
    char msg[256];
    assert_int_equal(verify_text("[1,2]", msg, sizeof msg), 2);
    assert_int_equal(verify_text("{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"ManifestBundle\",\"items\":[]}",
                                 msg, sizeof msg),
                     2);
    assert_int_equal(verify_text("{\"apiVersion\":\"x\",\"kind\":\"ManifestBundle\",\"items\":[]}", msg, sizeof msg), 2);
    /* A file that is not JSON. */
    char path[512], err[256];
    fx_path(path, sizeof path, "notjson.json");
    FILE *f = fopen(path, "w");
    fputs("{\"apiVersion\": ", f);
    fclose(f);
    assert_null(rg_json_read_file(path, err, sizeof err));
    unlink(path);
    assert_null(rg_json_read_file("/nonexistent/m.json", err, sizeof err));
}

static void test_sol_formula(void **state)
{
    /* Normal case: T_b > T_SOL. At the baseline S = 1/2, at SOL S = 1. */
    assert_float_equal(rg_sol_score(50, 10, 50), 0.5, 1e-12);
    assert_float_equal(rg_sol_score(10, 10, 50), 1.0, 1e-12);
    assert_float_equal(rg_sol_score(20, 10, 50), 1.0 / (1.0 + 10.0 / 40.0), 1e-12);
    assert_float_equal(rg_sol_score(90, 10, 50), 1.0 / 3.0, 1e-12);   /* slower than baseline: below 1/2 */
    assert_true(rg_sol_score(5, 10, 50) > 1.0);                        /* beyond the SOL estimate */
    /* Baseline at or below SOL: 1 if the kernel is too, else 0. */
    assert_float_equal(rg_sol_score(8, 10, 10), 1.0, 0);
    assert_float_equal(rg_sol_score(10, 10, 9), 1.0, 0);
    assert_float_equal(rg_sol_score(11, 10, 10), 0.0, 0);
    assert_float_equal(rg_sol_score(11, 10, 5), 0.0, 0);
    /* Unknown inputs. */
    assert_true(isnan(rg_sol_score(10, NAN, 50)));
    assert_true(isnan(rg_sol_score(10, 1, NAN)));
    assert_true(isnan(rg_sol_score(-1, 1, 5)));
}

static void test_datasheet(void **state)
{
    const char *p;
    assert_float_equal(rg_datasheet_bandwidth_tbps("NVIDIA H200", &p), 4.8, 0);
    assert_float_equal(rg_datasheet_bandwidth_tbps("NVIDIA H100 80GB HBM3", &p), 3.35, 0);
    assert_string_equal(p, "H100 SXM");
    assert_float_equal(rg_datasheet_bandwidth_tbps("NVIDIA H100 PCIe", &p), 2.0, 0);
    assert_float_equal(rg_datasheet_bandwidth_tbps("NVIDIA B200", &p), 8.0, 0);
    assert_float_equal(rg_datasheet_bandwidth_tbps("NVIDIA GH200 480GB", &p), 4.0, 0);
    assert_float_equal(rg_datasheet_bandwidth_tbps("NVIDIA A100-SXM4-80GB", &p), 2.039, 0);
    assert_float_equal(rg_datasheet_bandwidth_tbps("Some Other GPU", &p), 0, 0);
    assert_null(p);
    assert_float_equal(rg_datasheet_bandwidth_tbps("", &p), 0, 0);
}

static const cJSON *per_workload(const cJSON *m, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(m, "run"), "ropegrad"), "workloads"), i);
}
/* sourceNative.metrics.k; NAN when left out (a metric that does not exist is not written). */
static double sn_num(const cJSON *m, const char *k)
{
    const cJSON *mt = cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(m, "run"), "sourceNative"), "metrics");
    const cJSON *v = cJSON_GetObjectItem(mt, k);
    assert_false(cJSON_IsNull(v));
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *sn_source(const cJSON *m, const char *k)
{
    const cJSON *sol = cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(m, "run"), "ropegrad"), "sol");
    return cJSON_GetObjectItem(sol, k)->valuestring;
}

/* Where T_SOL and T_b come from, per GPU, and the figures that follow. */
static void test_sol_sources(void **state)
{
    rg_suite s;
    rg_run_result r;
    char err[256];
    fx_suite(&s);

    /* B200: the suite's figures file for both. */
    fx_run(&r, &s, "NVIDIA B200", 1, 1.0, 3);
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    assert_string_equal(sn_source(m, "tSol"), "suite-figures");
    assert_string_equal(sn_source(m, "baseline"), "suite-figures");
    double sum = 0, sp = 0;
    int fast = 0;
    for (int i = 0; i < FX_N; i++) {
        const cJSON *p = per_workload(m, i);
        double t_k = r.workloads[i].time_ns.median, t_sol = s.workloads[i].sol_ms * 1e6, t_b = s.workloads[i].baseline_ms * 1e6;
        assert_float_equal(cJSON_GetObjectItem(p, "t_sol_ns")->valuedouble, t_sol, 1e-9);
        assert_float_equal(cJSON_GetObjectItem(p, "t_b_ns")->valuedouble, t_b, 1e-9);
        double sc = 1.0 / (1.0 + (t_k - t_sol) / (t_b - t_sol));
        assert_float_equal(cJSON_GetObjectItem(p, "sol_score")->valuedouble, sc, 1e-12);
        sum += sc;
        sp += t_b / t_k;
        fast += t_k < t_b;
    }
    assert_float_equal(sn_num(m, "sol_score"), sum / FX_N, 1e-12);
    assert_float_equal(sn_num(m, "avg_speedup"), sp / FX_N, 1e-12);
    assert_float_equal(sn_num(m, "fast_1_count"), fast, 0);
    assert_float_equal(sn_num(m, "fast_1_total"), FX_N, 0);
    cJSON_Delete(m);
    fx_run_free(&r);

    /* H200: T_SOL = bytes / 4.8 TB/s; no baseline -> no score. */
    fx_run(&r, &s, "NVIDIA H200", 1, 1.0, 4);
    m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    assert_string_equal(sn_source(m, "tSol"), "datasheet");
    assert_string_equal(sn_source(m, "baseline"), "none");
    assert_float_equal(cJSON_GetObjectItem(per_workload(m, 0), "t_sol_ns")->valuedouble, r.workloads[0].bytes / 4.8e3, 1e-9);
    assert_true(isnan(sn_num(m, "sol_score")));
    assert_true(isnan(sn_num(m, "fast_1_total")));
    assert_true(isnan(sn_num(m, "avg_speedup")));
    assert_false(isnan(sn_num(m, "latency_ms")));
    cJSON_Delete(m);

    /* ... with a baseline file in each accepted format. */
    char path[512];
    fx_path(path, sizeof path, "baseline.json");
    const char *formats[2] = {
        "{\"name\": \"torch eager\", \"per_workload\": [{\"index\": 0, \"time_ns\": 96260}, {\"index\": 1, \"time_ns\": "
        "99040}, {\"index\": 2, \"time_ns\": 2000}]}",
        "{\"suite\": \"x\", \"workloads\": [{\"index\": 0, \"time_ns\": {\"median\": 96260}}, {\"index\": 1, "
        "\"time_ns\": {\"median\": 99040}}, {\"index\": 2, \"time_ns\": {\"median\": 2000}}]}"};
    const char *fmt_names[2] = {"per-workload", "bench-json"};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(path, "w");
        fputs(formats[k], f);
        fclose(f);
        rg_baseline b;
        assert_int_equal(rg_baseline_load(path, &b, err, sizeof err), 0);
        assert_string_equal(b.format, fmt_names[k]);
        assert_float_equal(rg_baseline_lookup(&b, 1), 99040, 0);
        assert_true(isnan(rg_baseline_lookup(&b, 9)));
        m = rg_manifest_build(&r, &s, &b, err, sizeof err);
        assert_non_null(m);
        assert_string_equal(sn_source(m, "baseline"), "file");
        /* workload 2 (3 us) is slower than its 2 us baseline: 2 of 3 faster. */
        assert_float_equal(sn_num(m, "fast_1_count"), 2, 0);
        assert_float_equal(sn_num(m, "fast_1_total"), 3, 0);
        double t_k = r.workloads[0].time_ns.median, t_sol = r.workloads[0].bytes / 4.8e3;
        assert_float_equal(cJSON_GetObjectItem(per_workload(m, 0), "sol_score")->valuedouble,
                           1.0 / (1.0 + (t_k - t_sol) / (96260 - t_sol)), 1e-12);
        char msg[256];
        assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 0);
        cJSON_Delete(m);
        rg_baseline_free(&b);
    }
    /* Bad baseline files are refused with a message. */
    FILE *f = fopen(path, "w");
    fputs("{\"per_workload\": [{\"index\": 0}]}", f);
    fclose(f);
    rg_baseline b;
    assert_int_not_equal(rg_baseline_load(path, &b, err, sizeof err), 0);
    assert_non_null(strstr(err, "time"));
    unlink(path);
    fx_run_free(&r);

    /* CPU: no SOL at all. A failed workload scores 0 and is not "faster". */
    fx_run(&r, &s, "", 1, 1.0, 5);
    m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    assert_string_equal(sn_source(m, "tSol"), "none");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(per_workload(m, 0), "sol_score")));
    cJSON_Delete(m);
    fx_run_free(&r);
    fx_run(&r, &s, "NVIDIA B200", 1, 1.0, 6);
    r.workloads[1].check.pass = 0;
    r.passed = FX_N - 1;
    m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    assert_float_equal(cJSON_GetObjectItem(per_workload(m, 1), "sol_score")->valuedouble, 0, 0);
    assert_float_equal(sn_num(m, "fast_1_count"), FX_N - 1, 0);
    assert_string_equal(cJSON_GetObjectItem(spec_of(m, "run"), "status")->valuestring, "failed");
    char msg[256];
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 0);
    cJSON_Delete(m);
    fx_run_free(&r);
    fx_suite_free(&s);
}

static void test_comparison_key(void **state)
{
    /* Same device, workloads, protocol -> same key, whatever the kernel. */
    cJSON *a = fx_manifest("NVIDIA H200", 1, 1.0, 1), *b = fx_manifest("NVIDIA H200", 2, 0.5, 2);
    cJSON *c = fx_manifest("NVIDIA H100 80GB HBM3", 1, 1.0, 3);
    const char *ka = cJSON_GetObjectItem(spec_of(a, "run"), "comparisonKey")->valuestring;
    const char *kb = cJSON_GetObjectItem(spec_of(b, "run"), "comparisonKey")->valuestring;
    const char *kc = cJSON_GetObjectItem(spec_of(c, "run"), "comparisonKey")->valuestring;
    assert_string_equal(ka, kb);
    assert_string_not_equal(ka, kc);
    /* The written rule (README), recomputed here from its six inputs. */
    cJSON *k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "definition", "014_rotary_embedding_with_attention_scaling_backward");
    cJSON_AddStringToObject(k, "workloadDigest", cJSON_GetObjectItem(spec_of(a, "run"), "workloadDigest")->valuestring);
    cJSON_AddStringToObject(k, "family", "ropegrad_sol_execbench");
    cJSON_AddStringToObject(k, "timer", "cupti");
    cJSON_AddStringToObject(k, "statistic", "geomean");
    cJSON_AddStringToObject(k, "product", "NVIDIA H200");
    char d[RG_DIGEST_LEN], e[256];
    assert_int_equal(rg_digest_json(k, d, e, sizeof e), 0);
    assert_string_equal(d, ka);
    cJSON_Delete(k);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

static void test_protocol_and_spread(void **state)
{
    cJSON *m = fx_manifest("", 3, 1.0, 1);
    rg_recorded_protocol p;
    rg_manifest tm;
    char err[256];
    assert_int_equal(rg_manifest_read(m, &tm, err, sizeof err), 0);
    assert_int_equal(rg_protocol_from_manifest(&tm, &p, err, sizeof err), 0);
    rg_manifest_free(&tm);
    assert_string_equal(p.backend, "cpu");
    assert_int_equal(p.opts.kernel, 3);
    assert_int_equal(p.opts.warmup, 2);
    assert_int_equal(p.opts.iterations, FX_SAMPLES);
    assert_int_equal(p.opts.seed, 200);
    assert_int_equal(p.opts.threads, 4);
    assert_int_equal(p.opts.inputs, RG_INPUTS_NORMAL);
    assert_int_equal(p.n_indices, FX_N);
    assert_int_equal(p.indices[2], 2);
    assert_string_equal(p.definition, "014_rotary_embedding_with_attention_scaling_backward");
    rg_recorded_protocol_free(&p);
    cJSON_Delete(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_manifest_verifies), cmocka_unit_test(test_tamper_any_figure),
        cmocka_unit_test(test_cross_references),        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_sol_formula),             cmocka_unit_test(test_datasheet),
        cmocka_unit_test(test_sol_sources),             cmocka_unit_test(test_comparison_key),
        cmocka_unit_test(test_protocol_and_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
