/* SPDX-License-Identifier: Apache-2.0 */
/* test_protocol_parity.c -- the CUDA timing switches (--restage, --span,
 * --sync, --settle; src/result/protocol.c) where no GPU is needed: their words and
 * meanings, the CLI's refusals (one line, exit 2), the record a CPU run makes
 * (no switches: the CPU has none), and a CUDA manifest read back: one
 * recorded before the switches (tests/data/old-format/h200-cuda-014-before-switches.manifest.json,
 * the H200 record of 014 of 2026-12-01) says
 * on its run page and in `runs show` what the harness did then, and is
 * replicated with the old behaviour; the same manifest with the switches
 * recorded shows and replicates them (a manifest without "settle": off, as
 * the harness did before it); an unknown word is refused. The GPU side is
 * test_gpu_reward_hack. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model.h"
#include "record.h"
#include "test_util.h"

#define OLD_CUDA RG_SOURCE_DIR "/tests/data/old-format/h200-cuda-014-before-switches.manifest.json"
#define FEW "--backend cpu --workloads 2 --warmup 0 --iterations 2 --rounds 2 --quiet"

static tu_scratch sc;
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(sc.dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    (void)state;
    return tu_scratch_open(&sc, "rg_parity");
}

static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(sc.dir);
}

static cJSON *load_json(const char *path)
{
    char *text = tu_slurp(path, NULL);
    if (!text) fail_msg("cannot read %s", path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* The run page's Protocol row key, NULL when absent. */
static const char *protocol_row(const rg_run_view *v, const char *key)
{
    for (size_t i = 0; i < v->protocol.n; i++)
        if (!strcmp(v->protocol.items[i].key, key)) return v->protocol.items[i].value;
    return NULL;
}

static void test_words(void **state)
{
    (void)state;
    rg_restage r = RG_RESTAGE_ON;
    rg_span s = RG_SPAN_ALL;
    rg_sync y = RG_SYNC_ITERATION;
    rg_settle z = RG_SETTLE_OFF;
    assert_int_equal(rg_restage_parse("off", &r), 0);
    assert_int_equal(r, RG_RESTAGE_OFF);
    assert_int_equal(rg_span_parse("kernels", &s), 0);
    assert_int_equal(s, RG_SPAN_KERNELS);
    assert_int_equal(rg_sync_parse("end", &y), 0);
    assert_int_equal(y, RG_SYNC_END);
    static const char *const settle_words[2] = {"off", "on"};   /* RG_SETTLE_OFF, RG_SETTLE_ON */
    for (int k = 1; k >= 0; k--) {
        assert_string_equal(rg_settle_name((rg_settle)k), settle_words[k]);
        assert_int_equal(rg_settle_parse(settle_words[k], &z), 0);
        assert_int_equal(z, (rg_settle)k);
        assert_int_equal(rg_settle_parse("yes", &z), 1);   /* a bad word leaves it alone */
        assert_int_equal(z, (rg_settle)k);
    }
    assert_string_equal(rg_restage_name(RG_RESTAGE_ON), "on");
    assert_string_equal(rg_span_name(RG_SPAN_ALL), "all");
    assert_string_equal(rg_sync_name(RG_SYNC_ITERATION), "iteration");
    /* Bad words leave the value alone. */
    assert_int_equal(rg_restage_parse("yes", &r), 1);
    assert_int_equal(rg_span_parse(NULL, &s), 1);
    assert_int_equal(rg_sync_parse("", &y), 1);
    assert_int_equal(rg_sync_parse("end", NULL), 1);
    assert_int_equal(r, RG_RESTAGE_OFF);
    /* The defaults are the official evaluator's (settle: its calls start after the flush). */
    rg_run_options o;
    rg_run_options_default(&o);
    assert_int_equal(o.restage, RG_RESTAGE_ON);
    assert_int_equal(o.span, RG_SPAN_ALL);
    assert_int_equal(o.sync, RG_SYNC_ITERATION);
    assert_int_equal(o.settle, RG_SETTLE_ON);
    assert_int_equal(o.rounds, 10);
    /* Each word's meaning, and the record before the switch. */
    assert_non_null(strstr(rg_restage_text("on"), "256 B"));
    assert_non_null(strstr(rg_span_text("kernels"), "kernels"));
    assert_non_null(strstr(rg_sync_text(""), "not recorded"));
    assert_non_null(strstr(rg_span_text(NULL), "not recorded"));
    assert_non_null(strstr(rg_restage_text("maybe"), "unknown"));
    assert_non_null(strstr(rg_settle_text("on"), "cudaStreamSynchronize"));
    assert_non_null(strstr(rg_settle_text(""), "not recorded (a run made before the switch): off"));
}

static void test_cli_refusals(void **state)
{
    (void)state;
    TU_EXPECT_ONE_LINE_ERROR(rg("bench " FEW " --restage maybe"), err_text, "--restage: unknown 'maybe' (expected on or off)");
    TU_EXPECT_ONE_LINE_ERROR(rg("bench " FEW " --span gpu"), err_text, "--span: unknown 'gpu' (expected all or kernels)");
    TU_EXPECT_ONE_LINE_ERROR(rg("bench " FEW " --sync"), err_text, "--sync");   /* no value */
    TU_EXPECT_ONE_LINE_ERROR(rg("bench " FEW " --sync never"), err_text, "--sync: unknown 'never' (expected iteration or end)");
    TU_EXPECT_ONE_LINE_ERROR(rg("bench " FEW " --settle yes"), err_text, "--settle: unknown 'yes' (expected off or on)");
    TU_EXPECT_ONE_LINE_ERROR(rg("bench " FEW " --settle"), err_text, "--settle");   /* no value */
    TU_EXPECT_ONE_LINE_ERROR(rg("check --backend cpu --workloads 2 --settle on"), err_text, "unknown option '--settle'");
    /* check times nothing: the timing switches are not its options. */
    TU_EXPECT_ONE_LINE_ERROR(rg("check --backend cpu --workloads 2 --restage off"), err_text, "unknown option '--restage'");
    TU_EXPECT_OK(rg("bench --help"), err_text);
    assert_non_null(strstr(out_text, "--restage on|off"));
    assert_non_null(strstr(out_text, "--span all|kernels"));
    assert_non_null(strstr(out_text, "--sync iteration|end"));
    assert_non_null(strstr(out_text, "--settle on|off"));
}

/* A CPU run takes the switches (nothing to switch) and records none of them. */
static void test_cpu_run_records_none(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("bench " FEW " --restage off --span kernels --sync end --settle on --json r.json --manifest m.json"),
                 err_text);
    assert_null(strstr(out_text, "restage"));
    assert_null(strstr(out_text, "flush gap"));
    cJSON *j = load_json(tu_path_in(sc.dir, "r.json"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "restage"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "settle"));
    const cJSON *w0 = cJSON_GetArrayItem(tu_get(j, "workloads"), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(w0, "span_activities"));
    assert_null(cJSON_GetObjectItemCaseSensitive(w0, "flush_gap_us"));   /* no GPU flush on the CPU */
    cJSON_Delete(j);
    cJSON *doc = load_json(tu_path_in(sc.dir, "m.json"));
    const cJSON *spec = tu_get(tu_get(doc, "protocol"), "spec");
    assert_null(cJSON_GetObjectItemCaseSensitive(tu_get(spec, "measurement"), "span"));
    assert_null(cJSON_GetObjectItemCaseSensitive(tu_get(spec, "measurement"), "settle"));
    assert_non_null(strstr(tu_get(tu_get(spec, "correctness"), "rewardHackChecks")->valuestring, "writes into an input"));
    cJSON_Delete(doc);
}

/* A CPU run's result relabelled as a CUDA one timed with CUPTI (no GPU
 * here): its JSON, table and manifest carry settle, and the workloads'
 * flush gaps (one without: null). */
static void test_cuda_result_records_settle_and_gap(void **state)
{
    (void)state;
    rg_suite s;
    rg_run_result r;
    rg_run_options o;
    char err[RG_ERRLEN];
    if (rg_suite_load(RG_SOURCE_DIR "/suites/011-rope_forward", &s, err, sizeof err)) fail_msg("suite: %s", err);
    rg_run_options_default(&o);
    o.backend = "cpu", o.threads = 1, o.warmup = 0, o.iterations = 2, o.rounds = 1, o.verbose = -1;
    const int idx[2] = {0, 1};
    if (rg_run_suite(&s, idx, 2, &o, &r, err, sizeof err)) fail_msg("run: %s", err);
    snprintf(r.backend, sizeof r.backend, "cuda");
    r.settle = RG_SETTLE_ON;
    r.workloads[0].span_kernels = r.workloads[1].span_kernels = 1;
    r.workloads[0].flush_gap_us = 0.25;   /* workload 1: no gap (NAN) */
    FILE *f = fopen(tu_path_in(sc.dir, "table.txt"), "w");
    assert_non_null(f);
    rg_run_print_table(&r, f);
    fclose(f);
    char *table = tu_slurp(tu_path_in(sc.dir, "table.txt"), NULL);
    assert_non_null(strstr(table, "sync iteration, settle on;"));
    assert_non_null(strstr(table, "flush gap (GPU idle between the flush and the call, median per workload): median "
                                  "0.250 us, min 0.250, max 0.250 over 1 workloads"));
    free(table);
    if (rg_run_write_json(&r, tu_path_in(sc.dir, "r.json"), err, sizeof err)) fail_msg("json: %s", err);
    cJSON *j = load_json(tu_path_in(sc.dir, "r.json"));
    assert_string_equal(tu_get(j, "settle")->valuestring, "on");
    assert_true(tu_get(cJSON_GetArrayItem(tu_get(j, "workloads"), 0), "flush_gap_us")->valuedouble == 0.25);
    assert_true(cJSON_IsNull(tu_get(cJSON_GetArrayItem(tu_get(j, "workloads"), 1), "flush_gap_us")));
    cJSON_Delete(j);
    cJSON *doc = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!doc) fail_msg("manifest: %s", err);
    assert_string_equal(tu_get(tu_get(tu_get(tu_get(doc, "protocol"), "spec"), "measurement"), "settle")->valuestring,
                        "on");
    cJSON_Delete(doc);
    rg_run_result_free(&r);
    rg_suite_free(&s);
}

/* The old CUDA manifest, or the same with the switches written in. */
static void read_cuda_manifest_settled(const char *restage, const char *span, const char *sync, const char *settle,
                                      rg_manifest *m)
{
    cJSON *doc = load_json(OLD_CUDA);
    cJSON *ms = (cJSON *)tu_get(tu_get(tu_get(doc, "protocol"), "spec"), "measurement");
    if (restage) cJSON_AddStringToObject(ms, "restage", restage);
    if (span) cJSON_AddStringToObject(ms, "span", span);
    if (sync) cJSON_AddStringToObject(ms, "sync", sync);
    if (settle) cJSON_AddStringToObject(ms, "settle", settle);
    if (restage) cJSON_AddStringToObject(ms, "sameKernelsCheck", "checked: every timed iteration launched the same");
    char err[RG_ERRLEN];
    if (rg_manifest_read(doc, m, err, sizeof err)) fail_msg("read: %s", err);
    cJSON_Delete(doc);
}

static void read_cuda_manifest(const char *restage, const char *span, const char *sync, rg_manifest *m)
{
    read_cuda_manifest_settled(restage, span, sync, NULL, m);
}

static void run_view(const rg_manifest *m, rg_run_view *v)
{
    rg_run_row row;
    char err[RG_ERRLEN];
    memset(&row, 0, sizeof row);
    row.id = 3;
    if (rg_model_run_from_manifest(m, &row, v, err, sizeof err)) fail_msg("model: %s", err);
}

/* m replicated: the switches it is run again with. */
static void expect_replicated_settle(const rg_manifest *m, rg_restage restage, rg_span span, rg_sync sync,
                                     rg_settle settle)
{
    rg_recorded_protocol p;
    char err[RG_ERRLEN];
    if (rg_protocol_from_manifest(m, &p, err, sizeof err)) fail_msg("protocol: %s", err);
    assert_int_equal(p.opts.restage, restage);
    assert_int_equal(p.opts.span, span);
    assert_int_equal(p.opts.sync, sync);
    assert_int_equal(p.opts.settle, settle);
    rg_recorded_protocol_free(&p);
}

static void expect_replicated(const rg_manifest *m, rg_restage restage, rg_span span, rg_sync sync)
{
    expect_replicated_settle(m, restage, span, sync, RG_SETTLE_OFF);
}

static void test_old_cuda_manifest(void **state)
{
    (void)state;
    rg_manifest m;
    rg_run_view v;
    read_cuda_manifest(NULL, NULL, NULL, &m);
    assert_string_equal(m.restage, "");
    run_view(&m, &v);
    assert_non_null(strstr(protocol_row(&v, "input restage"), "not recorded (a run made before the switch): the same"));
    assert_non_null(strstr(protocol_row(&v, "timed span"), "not recorded (a run made before the switch): kernels only"));
    assert_non_null(strstr(protocol_row(&v, "host sync"), "not recorded (a run made before the switch): every"));
    assert_non_null(strstr(protocol_row(&v, "same-kernels check"), "not recorded"));
    rg_model_run_free(&v);
    expect_replicated(&m, RG_RESTAGE_OFF, RG_SPAN_KERNELS, RG_SYNC_END);
    rg_manifest_free(&m);
    /* `runs show` says the same. */
    TU_EXPECT_OK(rg("runs import %s --db r.db", OLD_CUDA), err_text);
    TU_EXPECT_OK(rg("runs show 1 --db r.db"), err_text);
    assert_non_null(strstr(out_text, "restage     not recorded"));
    assert_non_null(strstr(out_text, "kernel set  not recorded"));
    assert_non_null(strstr(out_text, "settle      not recorded (a run made before the switch): off"));
}

static void test_recorded_switches(void **state)
{
    (void)state;
    rg_manifest m;
    rg_run_view v;
    read_cuda_manifest("on", "all", "end", &m);
    run_view(&m, &v);
    assert_non_null(strstr(protocol_row(&v, "input restage"), "on: before every warmup and timed iteration"));
    assert_non_null(strstr(protocol_row(&v, "timed span"), "all: one sample is max(end) - min(start)"));
    assert_non_null(strstr(protocol_row(&v, "host sync"), "end: every iteration enqueued back to back"));
    assert_non_null(strstr(protocol_row(&v, "same-kernels check"), "checked"));
    rg_model_run_free(&v);
    expect_replicated(&m, RG_RESTAGE_ON, RG_SPAN_ALL, RG_SYNC_END);
    rg_manifest_free(&m);
    /* A word this harness does not know is not replicated. */
    rg_recorded_protocol p;
    char err[RG_ERRLEN];
    read_cuda_manifest("on", "gpu-time", "end", &m);
    assert_int_equal(rg_protocol_from_manifest(&m, &p, err, sizeof err), 2);
    assert_non_null(strstr(err, "span \"gpu-time\""));
    rg_manifest_free(&m);
}

/* "settle" recorded: read and replicated; an unknown word refused. (The run
 * page has no row for it: its screenshots would go stale; `runs show` has.) */
static void test_recorded_settle(void **state)
{
    (void)state;
    rg_manifest m;
    read_cuda_manifest_settled("on", "all", "iteration", "on", &m);
    assert_string_equal(m.settle, "on");
    expect_replicated_settle(&m, RG_RESTAGE_ON, RG_SPAN_ALL, RG_SYNC_ITERATION, RG_SETTLE_ON);
    rg_manifest_free(&m);
    rg_recorded_protocol p;
    char err[RG_ERRLEN];
    read_cuda_manifest_settled("on", "all", "iteration", "sometimes", &m);
    assert_int_equal(rg_protocol_from_manifest(&m, &p, err, sizeof err), 2);
    assert_non_null(strstr(err, "settle \"sometimes\""));
    rg_manifest_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words),
        cmocka_unit_test_setup_teardown(test_cli_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_run_records_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cuda_result_records_settle_and_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_cuda_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recorded_switches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recorded_settle, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
