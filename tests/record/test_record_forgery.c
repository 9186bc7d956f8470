/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_forgery.c -- issue 24 points 1, 2 and 6 ("#1"), through the
 * binary and the index's pages and API: a forged t_sol_ns (tiny, null,
 * negative) does not hide a run faster than the memory allows; a run without
 * per-workload detail or on a GPU not in the datasheet table is unverifiable,
 * ranks after the verified runs and is never #1; a comparisonKey borrowed
 * from another group is refused (with or without the workload object); a
 * record without its workload object gets the rule's key, "derived by rule".
 * Uses only functions main 4331c1d has, so it builds (and fails) there. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "rank.h"
#include "render.h"
#include "test_record_fixture.h"
#include "test_util.h"

#define DEF "014_rotary_embedding_with_attention_scaling_backward"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "forgery");
    return tu_fresh_dir(dir);
}

static int teardown(void **state) { return tu_rm_rf(dir); }

static cJSON *member(cJSON *o, const char *k)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!it) fail_msg("missing JSON member '%s'", k);
    return it;
}

static cJSON *run_spec(cJSON *doc) { return member(member(doc, "run"), "spec"); }

/* Every workload's t_sol_ns replaced by v (NULL: JSON null). The scores
 * stay null (no baseline), so every digest and figure still verifies. */
static cJSON *forge_t_sol(cJSON *doc, const double *v)
{
    cJSON *rows = member(member(run_spec(doc), "ropegrad"), "workloads");
    for (cJSON *w = rows->child; w; w = w->next)
        cJSON_ReplaceItemInObjectCaseSensitive(w, "t_sol_ns", v ? cJSON_CreateNumber(*v) : cJSON_CreateNull());
    return doc;
}

/* The run's per-workload detail dropped and its primary figure claimed as
 * 1 ns: nothing left to check the figure against. */
static cJSON *strip_detail(cJSON *doc)
{
    cJSON *spec = run_spec(doc);
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "ropegrad");
    cJSON *lat = member(member(spec, "timing"), "latencyNs");
    cJSON_ReplaceItemInObjectCaseSensitive(lat, "geomean", cJSON_CreateNumber(1.0));
    cJSON_ReplaceItemInObjectCaseSensitive(lat, "mean", cJSON_CreateNumber(1.0));
    cJSON_DeleteItemFromObjectCaseSensitive(member(member(spec, "sourceNative"), "metrics"), "latency_ms");
    return doc;
}

static const char *key_of(cJSON *doc) { return member(run_spec(doc), "comparisonKey")->valuestring; }

static void write_doc(const char *name, cJSON *doc) { assert_int_equal(fx_write_doc(dir, name, doc), 0); }

/* `runs import NAME` into t.db; the new run's id (from runs list --json). */
static int64_t import(const char *name)
{
    int rc = rg("runs import %s --db t.db", name);
    if (rc) fail_msg("import %s exited %d: %s", name, rc, err_text);
    assert_int_equal(rg("runs list --json --db t.db"), 0);
    cJSON *arr = cJSON_Parse(out_text);
    assert_non_null(arr);
    int64_t id = (int64_t)tu_get(cJSON_GetArrayItem(arr, cJSON_GetArraySize(arr) - 1), "id")->valuedouble;
    cJSON_Delete(arr);
    return id;
}

static rg_registry *open_db(void)
{
    rg_registry *g;
    char err[RG_ERRLEN];
    if (rg_registry_open(tu_path_in(dir, "t.db"), 0, &g, err, sizeof err)) fail_msg("open: %s", err);
    return g;
}

/* The line of `text` that starts with "  RANK  ID " (runs rank's table). */
static const char *rank_line(const char *text, int64_t id)
{
    static char line[1024];
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        char rk[16];
        long long got;
        if (sscanf(line, " %15s %lld", rk, &got) == 2 && got == id) return line;
        p = e ? e + 1 : NULL;
    }
    fail_msg("run #%lld not in runs rank:\n%s", (long long)id, text);
    return NULL;
}

/* Point 1: T_SOL is the index's figure. A run at a hundredth of the honest
 * time on an H200 is faster than its bytes at 4.8 TB/s allow, whatever its
 * manifest says its T_SOL is (tiny, null, negative). */
static void test_forged_t_sol_is_suspect(void **state)
{
    double tiny = 1e-3, neg = -5;
    write_doc("tiny.json", forge_t_sol(fx_manifest("NVIDIA H200", 2, 0.01, 2), &tiny));
    write_doc("null.json", forge_t_sol(fx_manifest("NVIDIA H200", 3, 0.01, 3), NULL));
    write_doc("neg.json", forge_t_sol(fx_manifest("NVIDIA H200", 4, 0.01, 4), &neg));
    const char *names[] = {"tiny.json", "null.json", "neg.json"};
    for (int i = 0; i < 3; i++) {
        TU_EXPECT_OK(rg("verify %s", names[i]), err_text);   /* self-consistent: the digests prove nothing here */
        char err[RG_ERRLEN], why[200];
        cJSON *doc = rg_json_read_file(tu_path_in(dir, names[i]), err, sizeof err);
        assert_non_null(doc);
        rg_manifest m;
        assert_int_equal(rg_manifest_read(doc, &m, err, sizeof err), 0);
        if (!rg_manifest_suspect(&m, why, sizeof why)) fail_msg("%s: a forged T_SOL hid a run below the index's", names[i]);
        assert_non_null(strstr(why, "T_SOL"));
        rg_manifest_free(&m);
        cJSON_Delete(doc);
    }
}

/* Points 1 and 6 through the CLI, the pages and the API: forged runs never
 * become #1 of the honest run's group. */
static void test_forged_runs_never_first(void **state)
{
    double tiny = 1e-3;
    write_doc("honest.json", fx_manifest_whole("NVIDIA H200", 1, 1.0, 1));
    write_doc("tiny.json", forge_t_sol(fx_manifest_whole("NVIDIA H200", 2, 0.01, 2), &tiny));
    write_doc("bare.json", strip_detail(fx_manifest_whole("NVIDIA H200", 3, 1.0, 5)));
    write_doc("unknown.json", fx_manifest_whole("Forged GPU X9000", 1, 0.01, 6));
    int64_t honest = import("honest.json"), tiny_id = import("tiny.json"), bare = import("bare.json"),
            unknown = import("unknown.json");

    /* runs rank: the honest run is #1; the forged ones follow, flagged. */
    assert_int_equal(rg("runs rank --db t.db"), 0);
    assert_non_null(strstr(rank_line(out_text, honest), "1.000x"));
    assert_non_null(strstr(rank_line(out_text, tiny_id), "SUSPECT"));
    assert_non_null(strstr(rank_line(out_text, bare), "UNVERIFIABLE"));
    assert_non_null(strstr(rank_line(out_text, unknown), "UNVERIFIABLE"));
    assert_true(strstr(out_text, rank_line(out_text, honest)) < strstr(out_text, rank_line(out_text, bare)));
    /* runs list and show say so too; list --json carries it. */
    assert_int_equal(rg("runs list --db t.db"), 0);
    assert_non_null(strstr(out_text, "UNVERIFIABLE: GPU \"Forged GPU X9000\" is not in"));
    assert_int_equal(rg("runs list --json --db t.db"), 0);
    cJSON *arr = cJSON_Parse(out_text);
    assert_non_null(arr);
    for (const cJSON *o = arr->child; o; o = o->next) {
        const cJSON *ver = cJSON_GetObjectItemCaseSensitive(o, "verification");
        int64_t id = (int64_t)tu_get(o, "id")->valuedouble;
        assert_true(cJSON_IsString(ver));
        assert_string_equal(ver->valuestring, id == unknown || id == bare ? "unverifiable" : "verified");
    }
    cJSON_Delete(arr);
    assert_int_equal(rg("runs show %lld --db t.db", (long long)bare), 0);
    assert_non_null(strstr(out_text, "T_SOL check          unverifiable"));
    /* runs compare ID: against #1, the honest run. */
    for (int64_t id = tiny_id; id <= bare; id++) {
        assert_int_equal(rg("runs compare %lld --db t.db", (long long)id), 0);
        char want[64];
        snprintf(want, sizeof want, "A = run #%lld:", (long long)honest);
        if (!strstr(out_text, want)) fail_msg("compare %lld is not against #1 (#%lld):\n%s", (long long)id, (long long)honest, out_text);
    }
    assert_int_equal(rg("runs compare %lld --db t.db", (long long)unknown), 0);
    assert_non_null(strstr(out_text, "has no #1"));

    /* The index: the front page's #1, the run pages' "Compare with #1", the API. */
    char err[RG_ERRLEN];
    rg_registry *g = open_db();
    rg_problem_row *pr;
    size_t np;
    assert_int_equal(rg_registry_problems(g, DEF, &pr, &np, err, sizeof err), 0);
    assert_int_equal(np, 2);
    for (size_t i = 0; i < np; i++) {
        int h200 = !strcmp(pr[i].device, "NVIDIA H200");
        assert_int_equal(pr[i].runs, h200 ? 3 : 1);   /* the group label is the runs' own product */
        assert_int_equal(pr[i].best_id, h200 ? honest : 0);
    }
    free(pr);
    int rank, size;
    int64_t first;
    assert_int_equal(rg_registry_rank_of(g, tiny_id, &rank, &size, &first, err, sizeof err), 0);
    assert_int_equal(first, honest);
    rg_ranked *e;
    size_t n;
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, honest, &row, NULL, err, sizeof err), 0);
    assert_int_equal(rg_registry_rank_group(g, row.comparison_key, NULL, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(e[0].row.id, honest);
    assert_int_equal(e[1].row.id, bare);   /* unverifiable after verified, suspect after them */
    assert_int_equal(e[2].row.id, tiny_id);
    free(e);

    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    rg_run_view v;
    assert_int_equal(rg_model_run(g, bare, &v, err, sizeof err), 0);
    assert_int_equal(v.first_id, honest);
    char *html = rg_render_run(&ctx, &v, err, sizeof err), *json = rg_api_run(&v, err, sizeof err);
    assert_non_null(html);
    assert_non_null(json);
    assert_non_null(strstr(html, "id=\"unverifiable\""));
    assert_non_null(strstr(html, "Compare with #1"));
    assert_null(strstr(html, "This run is #1"));
    char want[64];
    snprintf(want, sizeof want, "\"first\":%lld", (long long)honest);
    assert_non_null(strstr(json, want));
    assert_non_null(strstr(json, "\"verification\":\"unverifiable\""));
    free(html);
    free(json);
    rg_model_run_free(&v);
    assert_int_equal(rg_model_run(g, unknown, &v, err, sizeof err), 0);
    json = rg_api_run(&v, err, sizeof err);
    assert_non_null(strstr(json, "\"first\":null"));
    free(json);
    rg_model_run_free(&v);
    assert_int_equal(rg_model_run(g, honest, &v, err, sizeof err), 0);
    html = rg_render_run(&ctx, &v, err, sizeof err);
    assert_non_null(strstr(html, "This run is #1"));
    free(html);
    rg_model_run_free(&v);
    rg_problem_view pv;
    assert_int_equal(rg_model_problem(g, DEF, &pv, err, sizeof err), 0);
    json = rg_api_problem(&pv, err, sizeof err);
    assert_non_null(strstr(json, "\"verification\":\"unverifiable\""));
    free(json);
    html = rg_render_problem(&ctx, &pv, err, sizeof err);
    assert_non_null(strstr(html, "badge unverifiable"));
    free(html);
    rg_model_problem_free(&pv);
    rg_registry_close(g);
}

/* Point 2: a key borrowed from another group is refused, with or without
 * the workload object; nothing is stored. */
static void test_borrowed_key_refused(void **state)
{
    cJSON *h200 = fx_manifest("NVIDIA H200", 1, 1.0, 1);
    char borrowed[RG_DIGEST_LEN];
    snprintf(borrowed, sizeof borrowed, "%s", key_of(h200));
    write_doc("honest.json", h200);
    import("honest.json");
    for (int bare = 0; bare < 2; bare++) {
        cJSON *doc = fx_manifest("NVIDIA H100 80GB HBM3", 1, 0.9, 8 + bare);
        cJSON_ReplaceItemInObjectCaseSensitive(run_spec(doc), "comparisonKey", cJSON_CreateString(borrowed));
        if (bare) cJSON_DeleteItemFromObjectCaseSensitive(doc, "workload");
        write_doc("borrowed.json", doc);
        int rc = rg("verify borrowed.json");
        if (rc != 1 || tu_count_lines(err_text) != 1 || !strstr(err_text, "comparisonKey"))
            fail_msg("verify (workload object %s): exit %d, '%s'", bare ? "absent" : "present", rc, err_text);
        rc = rg("runs import borrowed.json --db t.db");
        if (rc != 1 || tu_count_lines(err_text) != 1 || !strstr(err_text, "comparisonKey"))
            fail_msg("import (workload object %s): exit %d, '%s'", bare ? "absent" : "present", rc, err_text);
    }
    assert_int_equal(rg("runs list --json --db t.db"), 0);
    cJSON *arr = cJSON_Parse(out_text);
    assert_int_equal(cJSON_GetArraySize(arr), 1);
    cJSON_Delete(arr);
    /* The registry itself refuses it too (rg_registry_store: push and import store through it). */
    cJSON *doc = fx_manifest("NVIDIA H100 80GB HBM3", 1, 0.9, 12);
    cJSON_ReplaceItemInObjectCaseSensitive(run_spec(doc), "comparisonKey", cJSON_CreateString(borrowed));
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "workload");
    rg_registry *g;
    char err[RG_ERRLEN];
    assert_int_equal(rg_registry_open(tu_path_in(dir, "t.db"), 1, &g, err, sizeof err), 0);
    int64_t id = 0;
    int existed = 0;
    assert_int_not_equal(rg_registry_store(g, doc, RG_EVIDENCE_IMPORTED, 0, &id, &existed, err, sizeof err), 0);
    assert_non_null(strstr(err, "comparisonKey"));
    assert_null(strchr(err, '\n'));
    rg_registry_close(g);
    cJSON_Delete(doc);
}

/* Point 2: a record without its workload object gets the rule's key, and
 * its page says so; the public record still verifies. */
static void test_key_derived_by_rule(void **state)
{
    cJSON *doc = fx_manifest("NVIDIA H100 80GB HBM3", 1, 1.0, 20);
    cJSON_DeleteItemFromObjectCaseSensitive(run_spec(doc), "comparisonKey");
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "workload");
    rg_manifest m;
    char err[RG_ERRLEN], key[RG_DIGEST_LEN];
    assert_int_equal(rg_manifest_read(doc, &m, err, sizeof err), 0);
    assert_int_equal(rg_comparison_key(&m, key, err, sizeof err), 0);
    rg_manifest_free(&m);
    write_doc("nokey.json", doc);
    int64_t id = import("nokey.json");
    TU_EXPECT_OK(rg("verify %s/data/kernelindex/run-01a03529.manifest.json", RG_SOURCE_DIR "/tests"), err_text);
    int64_t pub = import(RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json");
    rg_registry *g = open_db();
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, id, &row, NULL, err, sizeof err), 0);
    assert_string_equal(row.comparison_key, key);
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    int64_t ids[2] = {id, pub};
    for (int i = 0; i < 2; i++) {
        rg_run_view v;
        assert_int_equal(rg_model_run(g, ids[i], &v, err, sizeof err), 0);
        char *html = rg_render_run(&ctx, &v, err, sizeof err);
        assert_non_null(html);
        assert_non_null(strstr(html, "derived by rule"));
        free(html);
        rg_model_run_free(&v);
    }
    rg_registry_close(g);
}

/* Point 6 in a group too large to read every interval (ranked by the
 * primary figure alone): the forged fastest run is neither #1 nor ranked
 * first; the front page, the run pages and the API name the honest #1. */
static void test_first_in_large_group(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *g;
    assert_int_equal(rg_registry_open(tu_path_in(dir, "big.db"), 1, &g, err, sizeof err), 0);
    int64_t id, forged = 0, best = 0;
    int existed;
    for (int i = 0; i <= RG_INTERVAL_RANK_MAX + 1; i++) {
        double tiny = 1e-3;
        cJSON *doc = i == 7 ? forge_t_sol(fx_manifest_whole("NVIDIA H200", 2, 0.01, 7), &tiny)
                            : fx_manifest_whole("NVIDIA H200", 1, 1.0 + 0.001 * i, 1000 + i);
        if (rg_registry_store(g, doc, RG_EVIDENCE_IMPORTED, 0, &id, &existed, err, sizeof err)) fail_msg("store: %s", err);
        cJSON_Delete(doc);
        if (i == 7) forged = id;
        if (i == 0) best = id;
    }
    rg_run_view v;
    assert_int_equal(rg_model_run(g, forged, &v, err, sizeof err), 0);
    assert_int_equal(v.interval_ranked, 0);
    assert_int_equal(v.first_id, best);
    assert_int_not_equal(v.rank, 1);
    rg_model_run_free(&v);
    assert_int_equal(rg_model_run(g, best, &v, err, sizeof err), 0);
    assert_int_equal(v.first_id, best);
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *html = rg_render_run(&ctx, &v, err, sizeof err);
    assert_non_null(strstr(html, "This run is #1"));
    free(html);
    rg_model_run_free(&v);
    rg_index_view iv;
    assert_int_equal(rg_model_index(g, &iv, err, sizeof err), 0);
    assert_int_equal(iv.n, 1);
    assert_int_equal(iv.rows[0].best_id, best);
    rg_model_index_free(&iv);
    rg_registry_close(g);
}

int main(void)
{
    rg_sol_set_suites(rg_suite_bundled);   /* the bundled suites, as the CLI registers them (main.c) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_forged_t_sol_is_suspect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_runs_never_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_borrowed_key_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_derived_by_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_in_large_group, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
