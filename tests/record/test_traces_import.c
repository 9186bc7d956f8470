/* SPDX-License-Identifier: Apache-2.0 */
/* test_traces_import.c -- `ropegrad runs import traces.jsonl`: the official
 * SOL-ExecBench evaluator's trace file (fixtures in tests/data/official-traces,
 * written by make_traces.py with the evaluator's own models and CLI writer)
 * read strictly (rg_traces_parse), turned into a run (source sol-execbench,
 * evidence imported, the geomean of the official medians the primary figure,
 * INCORRECT_* or REWARD_HACK a failed run, T_SOL and T_b by the GPU's rule),
 * and bad input refused in one line with exit 2 and no registry row. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <unistd.h>

#include "record.h"
#include "test_util.h"
#include "traces.h"

#define FIXTURES RG_SOURCE_DIR "/tests/data/official-traces"

static tu_scratch sc;
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(sc.dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    (void)state;
    return tu_scratch_open(&sc, "rg_traces");
}

static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(sc.dir);
}

/* ---- the reader ---------------------------------------------------------------------- */

/* The first line of a fixture, for editing. */
static char *fixture_line(const char *name, int line)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", FIXTURES, name);
    char *text = tu_slurp(path, NULL);
    assert_non_null(text);
    char *p = text;
    for (int i = 1; i < line; i++) p = strchr(p, '\n') + 1;
    char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char *l = malloc(n + 1);
    memcpy(l, p, n);
    l[n] = 0;
    free(text);
    return l;
}

/* line with the first occurrence of from replaced by to. */
static char *edited(const char *line, const char *from, const char *to)
{
    const char *at = strstr(line, from);
    if (!at) fail_msg("'%s' not in the fixture line", from);
    size_t n = strlen(line) - strlen(from) + strlen(to);
    char *o = malloc(n + 1);
    snprintf(o, n + 1, "%.*s%s%s", (int)(at - line), line, to, at + strlen(from));
    return o;
}

static void expect_refused(const char *text, const char *needle)
{
    rg_traces t;
    char err[RG_ERRLEN] = "";
    int rc = rg_traces_parse(text, strlen(text), "t.jsonl", &t, err, sizeof err);
    if (rc != 2 || !strstr(err, needle)) fail_msg("rc %d, message '%s', expected 2 and '%s'", rc, err, needle);
    assert_null(strchr(err, '\n'));
    assert_int_equal(t.n, 0);
}

static void test_reader_fixtures(void **state)
{
    (void)state;
    rg_traces t;
    char err[RG_ERRLEN];
    assert_int_equal(rg_traces_read(FIXTURES "/traces-014-h200-failed.jsonl", &t, err, sizeof err), 0);
    assert_int_equal(t.n, 16);
    assert_string_equal(t.definition, "014_rotary_embedding_with_attention_scaling_backward");
    assert_string_equal(t.solution, "ropegrad-014-cuda");
    assert_string_equal(t.hardware, "NVIDIA H200");
    assert_string_equal(t.t[3].status, "INCORRECT_NUMERICAL");
    assert_true(t.t[3].has_correctness && !t.t[3].has_performance);
    assert_string_equal(t.t[7].status, "REWARD_HACK");
    assert_string_equal(t.t[7].log_line, "Reward hack detected: output is a view of an input tensor");
    assert_true(t.t[0].latency_ms > 0 && t.t[0].reference_latency_ms > t.t[0].latency_ms);
    assert_true(rg_trace_failed(&t.t[7]) && !rg_trace_failed(&t.t[0]));
    rg_traces_free(&t);
}

static void test_reader_refusals(void **state)
{
    (void)state;
    char *l = fixture_line("traces-014-h200-failed.jsonl", 1);   /* PASSED */
    char *l4 = fixture_line("traces-014-h200-failed.jsonl", 4);  /* INCORRECT_NUMERICAL */
    char *l8 = fixture_line("traces-014-h200-failed.jsonl", 8);  /* REWARD_HACK */
    struct {
        char *text;
        const char *needle;
    } cases[] = {
        {edited(l, "\"PASSED\"", "\"PASSED_MAYBE\""), "is not one of the evaluator's statuses"},
        {edited(l, "\"performance\": {", "\"performance\": null, \"x\": {"), "member \"x\""},
        {edited(l, "\"speedup_factor\": ", "\"speedup_factor\": 1"), "speedup_factor"},
        {edited(l, "\"latency_ms\": ", "\"latency_ms\": -"), "latency_ms is missing or not a non-negative number"},
        {edited(l, "\"latency_ms\": 0.", "\"latency_ms\": 0.0000000000000"), "is outside [1e-09, 1e+09] ms"},
        {edited(l4, "\"performance\": null", "\"performance\": {\"latency_ms\": 1, \"reference_latency_ms\": 1, "
                                              "\"speedup_factor\": 1}"),
         "performance must be null when status is INCORRECT_NUMERICAL"},
        {edited(l8, "\"correctness\": null", "\"correctness\": {\"max_relative_error\": 0, \"max_absolute_error\": 0}"),
         "correctness must be null when status is REWARD_HACK"},
        {edited(l, "\"NVIDIA H200\"", "\"\""), "hardware is missing or not a non-empty string"},
        {edited(l, "\"max_relative_error\": 3.1e-06", "\"max_relative_error\": NaN"), "line 1"},
        {edited(l, "\"definition\"", "\"definition\": \"x\", \"definition\""), "line 1"},
        {edited(l, "\"evaluation\": {", "\"evaluation\": null, \"y\": {"), "member \"y\""},
        {edited(l, "\"reference_latency_ms\"", "\"refer\\nce_latency_ms\""), "member \"refer?ce_latency_ms\""},
        {strdup(""), "no traces"},
        {strdup("\n\n"), "no traces"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_refused(cases[i].text, cases[i].needle);
        free(cases[i].text);
    }
    /* Across lines: the same uuid twice, another GPU, another solution, a workload-only trace. */
    char buf[1 << 14];
    snprintf(buf, sizeof buf, "%s\n%s\n", l, l);
    expect_refused(buf, "appears twice (also line 1)");
    char *h100 = edited(l4, "\"NVIDIA H200\"", "\"NVIDIA H100\"");
    snprintf(buf, sizeof buf, "%s\n%s\n", l, h100);
    expect_refused(buf, "line 2: evaluation.environment.hardware \"NVIDIA H100\" differs");
    char *other = edited(l4, "\"ropegrad-014-cuda\"", "\"peer\"");
    snprintf(buf, sizeof buf, "%s\n%s\n", l, other);
    expect_refused(buf, "line 2: definition/solution");
    const char *ev = strstr(l, ", \"evaluation\"");
    snprintf(buf, sizeof buf, "%.*s}\n", (int)(ev - l), l);
    expect_refused(buf, "workload-only trace");
    free(h100);
    free(other);
    free(l);
    free(l4);
    free(l8);
}

/* ---- the command --------------------------------------------------------------------- */

static cJSON *exported(int id)
{
    char args[128];
    snprintf(args, sizeof args, "runs export %d --db r.db", id);
    TU_EXPECT_OK(rg("%s", args), err_text);
    cJSON *m = cJSON_Parse(out_text);
    assert_non_null(m);
    return m;
}

static const cJSON *run_spec(const cJSON *m) { return tu_get(tu_get(m, "run"), "spec"); }

/* The geomean of the file's PASSED latencies in ns, computed here from the file. */
static double file_geomean_ns(const char *path, int *n_passed)
{
    char *text = tu_slurp(path, NULL);
    assert_non_null(text);
    double l = 0;
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *t = cJSON_Parse(line);
        const cJSON *e = tu_get(t, "evaluation");
        if (!strcmp(tu_get(e, "status")->valuestring, "PASSED")) {
            l += log(tu_get(tu_get(e, "performance"), "latency_ms")->valuedouble * 1e6);
            n++;
        }
        cJSON_Delete(t);
    }
    free(text);
    *n_passed = n;
    return exp(l / n);
}

static void test_import_passed_h200(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db", FIXTURES), err_text);
    assert_non_null(strstr(out_text, "16 traces of ropegrad-014-cuda on NVIDIA H200 (16/16 PASSED) imported as run #1"));
    cJSON *m = exported(1);
    const cJSON *rs = run_spec(m);
    assert_string_equal(tu_get(rs, "status")->valuestring, "passed");
    assert_string_equal(tu_get(tu_get(rs, "sourceNative"), "source")->valuestring, "sol-execbench");
    assert_string_equal(tu_get(tu_get(rs, "timing"), "primaryStatistic")->valuestring, "geomean");
    int n;
    double want = file_geomean_ns(FIXTURES "/traces-014-h200-passed.jsonl", &n);
    double got = tu_get(tu_get(tu_get(rs, "timing"), "latencyNs"), "geomean")->valuedouble;
    assert_int_equal(n, 16);
    assert_true(fabs(got - want) <= 1e-9 * want);
    const cJSON *env = tu_get(tu_get(m, "environment"), "spec");
    assert_string_equal(tu_get(tu_get(env, "hardware"), "product")->valuestring, "NVIDIA H200");
    /* H200: T_SOL from the datasheet, T_b the reference timed in the same call; never the B200 figures. */
    const cJSON *sol = tu_get(tu_get(rs, "ropegrad"), "sol");
    assert_string_equal(tu_get(sol, "tSol")->valuestring, "datasheet");
    assert_string_equal(tu_get(sol, "baseline")->valuestring, "reference-same-call");
    const cJSON *w0 = cJSON_GetArrayItem(tu_get(tu_get(rs, "ropegrad"), "workloads"), 0);
    double ref = tu_get(w0, "reference_latency_ns")->valuedouble;
    assert_true(ref > 0 && fabs(tu_get(w0, "t_b_ns")->valuedouble - ref) <= 1e-9 * ref);
    assert_true(fabs(tu_get(w0, "t_sol_ns")->valuedouble - tu_get(w0, "bytes")->valuedouble / 4.8e3) < 1e-9);
    cJSON_Delete(m);
    TU_EXPECT_OK(rg("runs list --db r.db"), err_text);
    assert_non_null(strstr(out_text, "imported"));
    /* The same file again: the same run, not a second one. */
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db", FIXTURES), err_text);
    assert_non_null(strstr(out_text, "already in the registry as run #1"));
}

static void test_import_failed_run(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-failed.jsonl --db r.db", FIXTURES), err_text);
    assert_non_null(strstr(out_text, "(14/16 PASSED)"));
    cJSON *m = exported(1);
    const cJSON *rs = run_spec(m);
    assert_string_equal(tu_get(rs, "status")->valuestring, "failed");
    const cJSON *rows = tu_get(tu_get(rs, "ropegrad"), "workloads");
    const cJSON *w3 = cJSON_GetArrayItem(rows, 3), *w7 = cJSON_GetArrayItem(rows, 7);
    assert_true(cJSON_IsFalse(tu_get(w3, "pass")) && cJSON_IsNull(tu_get(w3, "median")));
    assert_string_equal(tu_get(w3, "status")->valuestring, "INCORRECT_NUMERICAL");
    assert_string_equal(tu_get(w7, "reason")->valuestring,
                        "REWARD_HACK: Reward hack detected: output is a view of an input tensor");
    int n;
    double want = file_geomean_ns(FIXTURES "/traces-014-h200-failed.jsonl", &n);
    assert_int_equal(n, 14);
    assert_true(fabs(tu_get(tu_get(tu_get(rs, "timing"), "latencyNs"), "geomean")->valuedouble - want) <= 1e-9 * want);
    cJSON_Delete(m);
}

/* B200: T_SOL and T_b from the suite's b200-figures.json. */
static void test_import_b200_uses_figures(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("runs import %s/traces-014-b200-passed.jsonl --db r.db", FIXTURES), err_text);
    cJSON *m = exported(1);
    const cJSON *sol = tu_get(tu_get(run_spec(m), "ropegrad"), "sol");
    assert_string_equal(tu_get(sol, "tSol")->valuestring, "suite-figures");
    assert_string_equal(tu_get(sol, "baseline")->valuestring, "suite-figures");
    cJSON_Delete(m);
}

static void test_import_suite_options(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db --suite %s/suites/014-rope_backward",
                    FIXTURES, RG_SOURCE_DIR), err_text);
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-failed.jsonl --db r.db --definition "
                    "%s/suites/014-rope_backward/definition.json", FIXTURES, RG_SOURCE_DIR), err_text);
    assert_non_null(strstr(out_text, "imported as run #2"));
    TU_EXPECT_ONE_LINE_ERROR(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db --suite %s/suites/011-rope_forward",
                                FIXTURES, RG_SOURCE_DIR), err_text, "the suite in");
    TU_EXPECT_ONE_LINE_ERROR(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db --definition %s/README.md",
                                FIXTURES, RG_SOURCE_DIR), err_text, "not the definition.json of a problem folder");
    TU_EXPECT_ONE_LINE_ERROR(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db --suite a --definition b",
                                FIXTURES), err_text, "not both");
    TU_EXPECT_ONE_LINE_ERROR(rg("runs list --suite x --db r.db"), err_text, "--suite only applies to");
}

/* Bad input: one line, exit 2, and the registry unchanged (no row at all). */
static void test_import_bad_input_no_row(void **state)
{
    (void)state;
    char *l = fixture_line("traces-014-h200-passed.jsonl", 1);
    char *l2 = fixture_line("traces-014-h200-passed.jsonl", 2);
    char *bad_uuid = edited(l2, "\"uuid\": \"", "\"uuid\": \"f");
    char *bad_axes = edited(l2, "\"batch_size\": 2", "\"batch_size\": 3");
    char *bad_status = edited(l2, "\"PASSED\"", "\"SLOW\"");
    struct {
        char *second;
        const char *needle;
    } cases[] = {{bad_uuid, "is not in suite"}, {bad_axes, "has batch_size 3, the suite's has 2"},
                 {bad_status, "line 2: evaluation.status"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(tu_path_in(sc.dir, "bad.jsonl"), "w");
        fprintf(f, "%s\n%s\n", l, cases[i].second);
        fclose(f);
        TU_EXPECT_ONE_LINE_ERROR(rg("runs import bad.jsonl --db r.db"), err_text, cases[i].needle);
        assert_int_equal(access(tu_path_in(sc.dir, "r.db"), F_OK), -1);   /* not even created */
        free(cases[i].second);
    }
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db", FIXTURES), err_text);
    FILE *f = fopen(tu_path_in(sc.dir, "bad.jsonl"), "w");
    fprintf(f, "%s\n%s\n", l, bad_status = edited(l2, "\"PASSED\"", "\"TIMEOUT?\""));
    fclose(f);
    free(bad_status);
    TU_EXPECT_ONE_LINE_ERROR(rg("runs import bad.jsonl --db r.db"), err_text, "line 2");
    TU_EXPECT_OK(rg("runs list --json --db r.db"), err_text);
    cJSON *list = cJSON_Parse(out_text);
    assert_int_equal(cJSON_GetArraySize(list), 1);
    cJSON_Delete(list);
    TU_EXPECT_ONE_LINE_ERROR(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db --trusted-keys k.pub", FIXTURES),
                             err_text, "carries no signature");
    free(l);
    free(l2);
}

/* The run page says where T_SOL and T_b come from: on the H200 the datasheet
 * and the reference timed in the same call, on the B200 the suite's figures. */
static void test_run_page_sources(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db", FIXTURES), err_text);
    TU_EXPECT_OK(rg("runs import %s/traces-014-b200-passed.jsonl --db r.db", FIXTURES), err_text);
    TU_EXPECT_OK(rg("report 1 --html h200.html --db r.db"), err_text);
    TU_EXPECT_OK(rg("report 2 --html b200.html --db r.db"), err_text);
    char *h = tu_slurp(tu_path_in(sc.dir, "h200.html"), NULL), *b = tu_slurp(tu_path_in(sc.dir, "b200.html"), NULL);
    assert_non_null(h);
    assert_non_null(b);
    assert_non_null(strstr(h, "<th>T_SOL</th><td>bytes any kernel must move / H200 datasheet bandwidth 4.8 TB/s</td>"));
    assert_non_null(strstr(h, "<th>Baseline (T_b)</th><td>the definition&#39;s reference, timed by the evaluator in "
                              "the same call on this GPU</td>"));
    assert_null(strstr(h, "<th>T_SOL</th><td>B200 figures"));
    assert_null(strstr(h, "<th>Baseline (T_b)</th><td>the suite"));
    assert_non_null(strstr(b, "<th>T_SOL</th><td>B200 figures from b200-figures.json</td>"));
    assert_non_null(strstr(b, "<th>Baseline (T_b)</th><td>the suite&#39;s B200 figures (b200-figures.json)"));
    free(h);
    free(b);
}

/* The imported official run shows on the problem page next to ropegrad's own
 * measurement of the same problem on the same GPU (each in its own group). */
static void test_problem_page_beside_own_run(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("runs import %s/results/h200-cuda.manifest.json --db r.db", RG_SOURCE_DIR), err_text);
    TU_EXPECT_OK(rg("runs import %s/traces-014-h200-passed.jsonl --db r.db", FIXTURES), err_text);
    TU_EXPECT_OK(rg("site --out s --db r.db"), err_text);
    char *p = tu_slurp(tu_path_in(sc.dir, "s/problems/014_rotary_embedding_with_attention_scaling_backward.html"), NULL);
    assert_non_null(p);
    assert_non_null(strstr(p, "href=\"../runs/1.html\""));
    assert_non_null(strstr(p, "href=\"../runs/2.html\""));
    assert_non_null(strstr(p, ">ropegrad-014-cuda</a>"));              /* the solution the evaluator ran */
    assert_non_null(strstr(p, "SOL-ExecBench official evaluator"));   /* its group's harness */
    free(p);
    TU_EXPECT_OK(rg("runs list --db r.db"), err_text);
    assert_non_null(strstr(out_text, "sol-execbench: ropegrad-0"));   /* the column is cut at 26 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_fixtures),
        cmocka_unit_test(test_reader_refusals),
        cmocka_unit_test_setup_teardown(test_import_passed_h200, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_failed_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_b200_uses_figures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_suite_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_bad_input_no_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_page_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_problem_page_beside_own_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
