/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_untimed.c -- a run with nothing timed is a record (issue 24
 * point 13, issue 25's GPU fault), built from fixture run results through
 * the record code:
 *   - every workload failed (a plugin's GPU fault: the first workload's
 *     reason the CUDA error, the rest "not run"): the manifest builds with a
 *     null primary latency and verifies; the registry stores primary NULL;
 *     it ranks last in its group (after the timed runs), its page and API
 *     say "failed: <reason>", the problem page lists it after the ranked
 *     runs, and `runs replicate` refuses it with one line;
 *   - a `check` run (iterations 0) that passed: recorded as passed, never
 *     ranked ("correctness only"), no #1 in its group;
 *   - verify: a primary latency may be absent only for a failed run or an
 *     untimed protocol; an untimed protocol states none; B's rule still
 *     refuses a zero, negative or non-finite latency where one is present. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "rank.h"
#include "render.h"
#include "rg_util.h"
#include "test_record_fixture.h"

/* replicate runs through the harness, as the CLI's `runs replicate` does. */
static const rg_replicate_runner harness = {rg_suite_load, rg_run_suite};

#define GPU "NVIDIA H200"
#define FAULT "CUDA error: an illegal memory access was encountered (cudaErrorIllegalAddress)"
#define DEF "014_rotary_embedding_with_attention_scaling_backward"

/* A fixture run's manifest; fail_reason/untimed as fx_run_untimed, or timed
 * when untimed is 0. */
static cJSON *build(int untimed, const char *fail_reason, double scale, int stamp)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, GPU, 1, scale, stamp);
    if (untimed) fx_run_untimed(&r, fail_reason);
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!m) fail_msg("build: %s", err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return m;
}

static const cJSON *run_spec(const cJSON *m)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(m, "run"), "spec");
}

static const cJSON *latency(const cJSON *m, const char *stat)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(run_spec(m), "timing"), "latencyNs"), stat);
}

/* An untimed fixture run's manifest (fx_run_untimed): it verifies, with
 * status `status` and a null primary latency. */
static cJSON *untimed_verified(const char *fail_reason, int stamp, const char *status)
{
    char msg[RG_ERRLEN];
    cJSON *m = build(1, fail_reason, 1.0, stamp);
    if (rg_manifest_verify(m, msg, sizeof msg)) fail_msg("verify: %s", msg);
    assert_string_equal(cJSON_GetObjectItem(run_spec(m), "status")->valuestring, status);
    assert_true(cJSON_IsNull(latency(m, "geomean")));
    return m;
}

static rg_registry *fresh(const char *name)
{
    rg_registry *g = fx_fresh_registry(name);
    if (!g) fail_msg("cannot open a fresh registry %s", name);
    return g;
}

static int64_t store(rg_registry *g, cJSON *m)
{
    int64_t id;
    int existed;
    char err[RG_ERRLEN];
    if (rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, &id, &existed, err, sizeof err)) fail_msg("store: %s", err);
    cJSON_Delete(m);
    return id;
}

static char *page(rg_registry *g, int64_t id, int api)
{
    char err[RG_ERRLEN];
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    rg_run_view v;
    if (rg_model_run(g, id, &v, err, sizeof err)) fail_msg("model: %s", err);
    char *out = api ? rg_api_run(&v, err, sizeof err) : rg_render_run(&ctx, &v, err, sizeof err);
    rg_model_run_free(&v);
    if (!out) fail_msg("render: %s", err);
    return out;
}

/* Run id's page (api 0) or API answer (api 1) holds a and, unless NULL, b. */
static void page_has(rg_registry *g, int64_t id, int api, const char *a, const char *b)
{
    char *text = page(g, id, api);
    if (!strstr(text, a) || (b && !strstr(text, b)))
        fail_msg("run #%lld's %s lacks '%s' or '%s':\n%s", (long long)id, api ? "API answer" : "page", a,
                 b ? b : "", text);
    free(text);
}

/* The problem page of the fixture's definition. */
static char *problem_page(rg_registry *g)
{
    char err[RG_ERRLEN];
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    rg_problem_view pv;
    if (rg_model_problem(g, DEF, &pv, err, sizeof err)) fail_msg("model: %s", err);
    char *html = rg_render_problem(&ctx, &pv, err, sizeof err);
    rg_model_problem_free(&pv);
    if (!html) fail_msg("render: %s", err);
    return html;
}

static void test_all_failed_run(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    cJSON *m = untimed_verified(FAULT, 3, "failed");
    rg_registry *g = fresh("untimed-failed.db");
    int64_t slow = store(g, build(0, NULL, 1.3, 1));
    int64_t fast = store(g, build(0, NULL, 1.0, 2));
    int64_t bad = store(g, m);

    rg_run_row row;
    assert_int_equal(rg_registry_get(g, bad, &row, NULL, err, sizeof err), 0);
    assert_true(isnan(row.primary_ns));
    assert_string_equal(row.status, "failed");
    /* Ranked last: after both timed runs, with no rank. */
    rg_ranked *e;
    size_t n;
    assert_int_equal(rg_registry_rank_group(g, row.comparison_key, NULL, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(e[0].row.id, fast);
    assert_int_equal(e[1].row.id, slow);
    assert_int_equal(e[2].row.id, bad);
    assert_int_equal(e[2].rank, 0);
    free(e);
    int rank, size;
    int64_t first;
    assert_int_equal(rg_registry_rank_of(g, bad, &rank, &size, &first, err, sizeof err), 0);
    assert_int_equal(rank, 0);
    assert_int_equal(size, 2);
    assert_int_equal(first, fast);

    page_has(g, bad, 0, "id=\"not-timed\">Not timed: failed: CUDA error: an illegal memory access",
             "Not ranked (it did not pass correctness, and nothing was timed)");
    page_has(g, bad, 1, "\"notTimed\":\"failed: CUDA error", "\"primaryNs\":null");
    page_has(g, bad, 1, "\"rank\":null", NULL);
    page_has(g, fast, 1, "\"notTimed\":null", "\"rank\":1");

    /* The problem page: the ranked runs first, then the failed one. */
    char *html = problem_page(g);
    char a1[32], a3[32];
    snprintf(a1, sizeof a1, ">#%lld</a>", (long long)fast);
    snprintf(a3, sizeof a3, ">#%lld</a>", (long long)bad);
    const char *p1 = strstr(html, a1), *p3 = strstr(html, a3), *pf = strstr(html, "<tr><td>failed</td>");
    assert_non_null(p1);
    assert_non_null(p3);
    assert_non_null(pf);
    assert_true(p1 < pf && pf < p3);
    free(html);

    /* Nothing to replicate: one line, before any suite is read. */
    int64_t replica;
    int agreed;
    FILE *out = tmpfile();
    assert_non_null(out);
    assert_int_equal(rg_record_replicate(g, bad, NULL, &harness, 0, out, &replica, &agreed, err, sizeof err), 2);
    assert_non_null(strstr(err, "timed nothing (failed: CUDA error"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(ftell(out), 0);
    fclose(out);
    rg_registry_close(g);
}

static void test_check_run(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    cJSON *m = untimed_verified(NULL, 4, "passed");
    rg_registry *g = fresh("untimed-check.db");
    int64_t id = store(g, m);
    int64_t id2 = store(g, build(1, NULL, 1.0, 5));
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, id, &row, NULL, err, sizeof err), 0);
    assert_string_equal(row.status, "passed");
    assert_true(isnan(row.primary_ns));
    /* Passed, yet never ranked: no rank, no #1 in its group. */
    int rank, size;
    int64_t first;
    assert_int_equal(rg_registry_rank_of(g, id2, &rank, &size, &first, err, sizeof err), 0);
    assert_int_equal(rank, 0);
    assert_int_equal(size, 0);
    assert_int_equal(first, 0);
    rg_ranked *e;
    size_t n;
    assert_int_equal(rg_registry_rank_group(g, row.comparison_key, NULL, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(e[0].rank, 0);
    assert_int_equal(e[1].rank, 0);
    free(e);
    page_has(g, id, 0, "Not timed: correctness only (not timed)", "Not ranked: correctness only");
    page_has(g, id, 1, "\"notTimed\":\"correctness only (not timed)\"", NULL);
    char *html = problem_page(g);
    assert_non_null(strstr(html, "<tr><td>correctness only</td>"));
    assert_null(strstr(html, "<td class=\"rank\">"));
    free(html);
    /* Not replicable either. */
    int64_t replica;
    int agreed;
    assert_int_equal(rg_record_replicate(g, id, NULL, &harness, 0, stderr, &replica, &agreed, err, sizeof err), 2);
    assert_non_null(strstr(err, "timed nothing (correctness only"));
    rg_registry_close(g);
}

/* doc's run.spec.timing.latencyNs.geomean and .mean set to v (NAN: null),
 * and sourceNative.metrics.latency_ms to match. */
static void set_latency(cJSON *doc, double v)
{
    cJSON *lat = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "run"), "spec"),
                                                         "timing"),
                                     "latencyNs");
    cJSON *mt = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "run"), "spec"),
                                                "sourceNative"),
                            "metrics"),
        "latency_ms");
    assert_non_null(lat);
    assert_non_null(mt);
    const char *k[2] = {"geomean", "mean"};
    for (int i = 0; i < 2; i++)
        cJSON_ReplaceItemInObject(lat, k[i], isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "run"),
                                                                                         "spec"),
                                                                     "sourceNative"),
                                                 "metrics"),
                              "latency_ms", isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v / 1e6));
}

static void test_verify_rules(void **state)
{
    (void)state;
    char msg[RG_ERRLEN];
    /* A passed, timed run with its primary latency taken out. */
    cJSON *m = build(0, NULL, 1.0, 6);
    set_latency(m, NAN);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "latencyNs.geomean is absent: only a failed run or an untimed protocol"));
    cJSON_Delete(m);
    /* An untimed protocol that states a latency. */
    m = build(1, NULL, 1.0, 7);
    set_latency(m, 5000);
    assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "iterations is 0 (nothing timed), yet the run states a latency"));
    cJSON_Delete(m);
    /* B's rule where numbers are present: zero and negative still refused. */
    const double bad[2] = {0, -5};
    for (int i = 0; i < 2; i++) {
        m = build(1, FAULT, 1.0, 8 + i);
        set_latency(m, bad[i]);
        assert_int_equal(rg_manifest_verify(m, msg, sizeof msg), 1);
        assert_non_null(strstr(msg, "latencies must be finite and positive"));
        cJSON_Delete(m);
    }
    /* A timed run's passing workload without its timing is still not built. */
    rg_suite s;
    rg_run_result r;
    fx_suite(&s);
    fx_run(&r, &s, GPU, 1, 1.0, 10);
    r.workloads[1].timed = 0;
    assert_null(rg_manifest_build(&r, &s, NULL, msg, sizeof msg));
    assert_non_null(strstr(msg, "workload 1 passed but was not timed"));
    fx_run_free(&r);
    fx_suite_free(&s);
}

/* The label itself: bad input, a timed run, each kind of untimed run. */
static void test_untimed_label(void **state)
{
    (void)state;
    char b[64];
    assert_int_equal(rg_untimed_label(NULL, NAN, "", b, sizeof b), 2);
    assert_int_equal(rg_untimed_label("passed", NAN, "", NULL, 4), 2);
    assert_int_equal(rg_untimed_label("passed", 12.5, "", b, sizeof b), 1);
    assert_string_equal(b, "");
    assert_int_equal(rg_untimed_label("passed", NAN, "", b, sizeof b), 0);
    assert_string_equal(b, "correctness only (not timed)");
    assert_int_equal(rg_untimed_label("failed", NAN, NULL, b, sizeof b), 0);
    assert_string_equal(b, "failed, not timed");
    assert_int_equal(rg_untimed_label("failed", NAN, "timed out", b, sizeof b), 0);
    assert_string_equal(b, "failed: timed out");
}

int main(void)
{
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_failed_run),
        cmocka_unit_test(test_check_run),
        cmocka_unit_test(test_verify_rules),
        cmocka_unit_test(test_untimed_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
