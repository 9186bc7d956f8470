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
    snprintf(repl, sizeof repl, "%.17g", v == 0 ? 1.0 : v * 1.25 + 1);
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

static void test_fresh_manifest_verifies(void **state)
{
    const char *gpus[3] = {"", "NVIDIA H200", "NVIDIA B200"};
    for (int g = 0; g < 3; g++) {
        cJSON *m = fx_manifest(gpus[g], 1, 1.0, 1);
        assert_non_null(m);
        char msg[512];
        int rc = rg_manifest_verify(m, msg, sizeof msg);
        if (rc) fail_msg("%s: %s", gpus[g], msg);
        /* Its structure: three items, KernelIndex apiVersion, digests. */
        assert_string_equal(cJSON_GetObjectItem(m, "apiVersion")->valuestring, RG_API_VERSION);
        for (int k = 0; k < 3; k++) {
            const char *kinds[3] = {"BenchmarkRun", "BenchmarkProtocol", "ExecutionEnvironment"};
            const cJSON *it = rg_manifest_item(m, kinds[k]);
            assert_non_null(it);
            assert_true(rg_digest_valid(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "metadata"), "digest")->valuestring));
        }
        const cJSON *run = rg_manifest_spec(m, "BenchmarkRun");
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "timing"), "primaryStatistic")->valuestring,
                            "median");
        assert_string_equal(cJSON_GetObjectItem(run, "implementationDigest")->valuestring, rg_implementation_digest());
        /* Through text and back: still verifies. */
        char err[256];
        char *t = rg_json_print(m, 1, err, sizeof err);
        assert_int_equal(verify_text(t, msg, sizeof msg), 0);
        free(t);
        cJSON_Delete(m);
    }
}

/* Changing any one figure in the text makes verify fail with 1 and name it. */
static void test_tamper_any_figure(void **state)
{
    char *text = fx_text("NVIDIA H200");
    const struct {
        const char *anchor, *key, *expect;
    } edits[] = {
        {"\"kind\": \"BenchmarkRun\"", "median", "BenchmarkRun"},
        {"\"kind\": \"BenchmarkRun\"", "samples_ns\": [\n", NULL},   /* placeholder, skipped */
        {"\"geomean_of_medians\"", "geomean_of_medians", "BenchmarkRun"},
        {"\"kind\": \"BenchmarkRun\"", "max_abs_err", "BenchmarkRun"},
        {"\"kind\": \"BenchmarkRun\"", "batch_size", "BenchmarkRun"},
        {"\"kind\": \"BenchmarkRun\"", "t_sol_ns", "BenchmarkRun"},
        {"\"kind\": \"BenchmarkRun\"", "fast_1_total", "BenchmarkRun"},
        {"\"kind\": \"BenchmarkRun\"", "max_atol", "BenchmarkRun"},
        {"\"kind\": \"BenchmarkProtocol\"", "warmup", "BenchmarkProtocol"},
        {"\"kind\": \"BenchmarkProtocol\"", "iterations", "BenchmarkProtocol"},
        {"\"kind\": \"BenchmarkProtocol\"", "seed", "BenchmarkProtocol"},
        {"\"kind\": \"ExecutionEnvironment\"", "threads", "ExecutionEnvironment"},
        {"\"kind\": \"ExecutionEnvironment\"", "smCount", "ExecutionEnvironment"},
        {"\"kind\": \"ExecutionEnvironment\"", "l2Bytes", "ExecutionEnvironment"},
        {"\"kind\": \"ExecutionEnvironment\"", "smStart", "ExecutionEnvironment"},
    };
    char msg[512];
    assert_int_equal(verify_text(text, msg, sizeof msg), 0);
    int tried = 0;
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        if (!edits[i].expect) continue;
        char *bad = edit_number(text, edits[i].anchor, edits[i].key);
        if (!bad) fail_msg("fixture has no %s after %s", edits[i].key, edits[i].anchor);
        int rc = verify_text(bad, msg, sizeof msg);
        if (rc != 1) fail_msg("editing %s: verify returned %d (%s)", edits[i].key, rc, msg);
        assert_non_null(strstr(msg, edits[i].expect));
        assert_non_null(strstr(msg, "mismatch"));
        free(bad);
        tried++;
    }
    assert_true(tried >= 14);
    /* A string figure too: the time it was observed. */
    char *bad = strdup(text);
    char *p = strstr(bad, "2026-01-");
    assert_non_null(p);
    p[5] = '1';   /* 2026-01 -> 2026-11 */
    assert_int_equal(verify_text(bad, msg, sizeof msg), 1);
    free(bad);
    free(text);
}

/* Re-hashing an edited protocol (its own digest updated) still fails: the
 * run names the protocol by digest. Likewise a re-hashed run whose figures
 * no longer follow from its samples. */
static void test_cross_references(void **state)
{
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 2);
    char msg[512], err[256], d[RG_DIGEST_LEN];
    cJSON *proto = (cJSON *)rg_manifest_item(m, "BenchmarkProtocol");
    cJSON *spec = cJSON_GetObjectItem(proto, "spec");
    cJSON_SetNumberValue(cJSON_GetObjectItem(spec, "iterations"), 7);
    rg_digest_json(spec, d, err, sizeof err);
    cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetObjectItem(proto, "metadata"), "digest"), d);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "protocolDigest mismatch"));
    cJSON_Delete(m);

    m = fx_manifest("NVIDIA H200", 1, 1.0, 2);
    cJSON *run = (cJSON *)rg_manifest_item(m, "BenchmarkRun");
    spec = cJSON_GetObjectItem(run, "spec");
    cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "timing"), "workloads"), 0);
    cJSON_SetNumberValue(cJSON_GetObjectItem(t0, "median"), 1.0);
    rg_digest_json(spec, d, err, sizeof err);
    cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "metadata"), "digest"), d);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "median"));
    cJSON_Delete(m);

    /* The workload list re-hashed into the run but not into workloadDigest. */
    m = fx_manifest("", 1, 1.0, 2);
    run = (cJSON *)rg_manifest_item(m, "BenchmarkRun");
    spec = cJSON_GetObjectItem(run, "spec");
    cJSON *w0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "workload"), "workloads"), 0);
    cJSON_SetValuestring(cJSON_GetObjectItem(w0, "uuid"), "00000000-0000-0000-0000-000000000000");
    rg_digest_json(spec, d, err, sizeof err);
    cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "metadata"), "digest"), d);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "workloadDigest mismatch"));
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
    const cJSON *sn = cJSON_GetObjectItem(rg_manifest_spec(m, "BenchmarkRun"), "sourceNative");
    return cJSON_GetArrayItem(cJSON_GetObjectItem(sn, "perWorkload"), i);
}
static double sn_num(const cJSON *m, const char *k)
{
    const cJSON *sn = cJSON_GetObjectItem(rg_manifest_spec(m, "BenchmarkRun"), "sourceNative");
    const cJSON *v = cJSON_GetObjectItem(sn, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *sn_source(const cJSON *m, const char *k)
{
    const cJSON *sn = cJSON_GetObjectItem(rg_manifest_spec(m, "BenchmarkRun"), "sourceNative");
    return cJSON_GetObjectItem(cJSON_GetObjectItem(sn, "source"), k)->valuestring;
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
    assert_float_equal(sn_num(m, "fast_1_total"), 0, 0);
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
    assert_string_equal(cJSON_GetObjectItem(rg_manifest_spec(m, "BenchmarkRun"), "status")->valuestring, "failed");
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
    const char *ka = cJSON_GetObjectItem(rg_manifest_spec(a, "BenchmarkRun"), "comparisonKey")->valuestring;
    const char *kb = cJSON_GetObjectItem(rg_manifest_spec(b, "BenchmarkRun"), "comparisonKey")->valuestring;
    const char *kc = cJSON_GetObjectItem(rg_manifest_spec(c, "BenchmarkRun"), "comparisonKey")->valuestring;
    assert_string_equal(ka, kb);
    assert_string_not_equal(ka, kc);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

static void test_protocol_and_spread(void **state)
{
    cJSON *m = fx_manifest("", 3, 1.0, 1);
    rg_recorded_protocol p;
    char err[256];
    assert_int_equal(rg_protocol_from_manifest(m, &p, err, sizeof err), 0);
    assert_string_equal(p.backend, "cpu");
    assert_int_equal(p.opts.kernel, 3);
    assert_int_equal(p.opts.warmup, 2);
    assert_int_equal(p.opts.iterations, FX_SAMPLES);
    assert_int_equal(p.opts.seed, 200);
    assert_int_equal(p.opts.threads, 4);
    assert_int_equal(p.opts.inputs, RG_INPUTS_NORMAL);
    assert_int_equal(p.n_indices, FX_N);
    assert_int_equal(p.indices[2], 2);
    assert_non_null(strstr(p.suite_dir, "sol-execbench-014"));
    rg_recorded_protocol_free(&p);
    cJSON_Delete(m);
    /* Within [min, max], within 3 sigma, within 5%; and not. */
    assert_true(rg_within_spread(105, 100, 90, 110, 1));
    assert_true(rg_within_spread(120, 100, 99, 101, 7));
    assert_true(rg_within_spread(104, 100, 99, 101, 0.1));
    assert_false(rg_within_spread(120, 100, 99, 101, 1));
    assert_false(rg_within_spread(80, 100, 99, 101, 1));
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
