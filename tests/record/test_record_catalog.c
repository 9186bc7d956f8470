/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_catalog.c -- `runs import-catalog` of KernelIndex's catalog
 * export: the rows of the five RoPE problems (a copy of
 * ../shared/kernelindex/catalog-2026-08-16-rope.jsonl in tests/data/kernelindex)
 * import with their names, publication dates and source ranks; the 014
 * page's B200 group lists doubleAI, ac4k, Recursive in that order with
 * their figures; a second import changes nothing; a bad line is one line
 * naming the file, line and field, and stores nothing; a run whose digest
 * does not hold stores nothing; unknown tables are skipped and counted; the
 * whole export (.zst, when ../shared is beside the checkout) imports in
 * seconds; and the display names of ropegrad, reference and plugin runs. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model.h"
#include "names.h"
#include "render.h"
#include "test_record_fixture.h"
#include "test_util.h"

#define ROPE RG_SOURCE_DIR "/tests/data/kernelindex/catalog-2026-08-16-rope.jsonl"
#define FULL RG_SOURCE_DIR "/../shared/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst"
#define DEF014 "014_rotary_embedding_with_attention_scaling_backward"
#define PUBLIC RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json"

static char dir[512];
static char out_text[1 << 17], err_text[1 << 14];
#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "catalog");
    return tu_fresh_dir(dir);
}
static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(dir);
}

static char *slurp(const char *path)
{
    size_t n;
    char *t = tu_slurp(path, &n);
    assert_non_null(t);
    return t;
}

/* A page the `site` command wrote under dir/site (rel: "runs/4.html"), malloc'd. */
static char *site_page(const char *rel)
{
    char path[700];
    snprintf(path, sizeof path, "%s/site/%s", dir, rel);
    return slurp(path);
}

static void put(const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A copy of the catalog with line `line` (1-based) edited: the first `from`
 * in it replaced by `to` (from NULL: the whole line replaced by to). */
static char *edit_line(const char *text, int line, const char *from, const char *to)
{
    const char *p = text;
    for (int i = 1; i < line; i++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    const char *end = strchr(p, '\n');
    assert_non_null(end);
    const char *at = from ? strstr(p, from) : p;
    assert_non_null(at);
    assert_true(at < end);
    const char *after = from ? at + strlen(from) : end;
    size_t n = strlen(text);
    char *out = malloc(n + strlen(to) + 1);
    assert_non_null(out);
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), to);
    strcat(out, after);
    return out;
}

/* The number of the first line of the file that holds needle. */
static int line_of(const char *text, const char *needle)
{
    const char *hit = strstr(text, needle);
    assert_non_null(hit);
    int line = 1;
    for (const char *p = text; p < hit; p++) line += *p == '\n';
    return line;
}

static void no_runs_stored(void)
{
    /* Nothing stored: the registry lists no run (or was never made). */
    int rc = rg("runs list --db k.db");
    if (rc == 0) assert_null(strstr(out_text, "L1/"));
}

static void test_import_and_again(void **state)
{
    (void)state;
    assert_int_equal(rg("runs import-catalog %s --db k.db", ROPE), 0);
    assert_non_null(strstr(out_text, "156 lines: 1 sources, 7 projects, 5 operations, 15 implementations, 15 benchmark runs"));
    assert_non_null(strstr(out_text, "15 runs of 5 operations verified: 15 imported, 0 already"));
    assert_int_equal(rg("runs list --json --db k.db"), 0);
    char *before = strdup(out_text);
    /* Again: nothing new, nothing changed. */
    assert_int_equal(rg("runs import-catalog %s --db k.db --json", ROPE), 0);
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "imported")->valueint, 0);
    assert_int_equal(cJSON_GetObjectItem(j, "already")->valueint, 15);
    assert_int_equal(cJSON_GetObjectItem(j, "updated")->valueint, 0);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tables"), "benchmark_runs")->valueint, 15);
    cJSON_Delete(j);
    assert_int_equal(rg("runs list --json --db k.db"), 0);
    assert_string_equal(out_text, before);
    free(before);
    /* The catalog says something new of a stored run (a later publication
     * date): the run is not stored again, its facts follow. */
    char *text = slurp(ROPE);
    char *later = edit_line(text, line_of(text, "\"externalId\":\"19887\""), "\"publishedAt\":\"2026-08-15",
                            "\"publishedAt\":\"2026-09-01");
    put("later.jsonl", later);
    free(later);
    free(text);
    assert_int_equal(rg("runs import-catalog later.jsonl --db k.db"), 0);
    assert_non_null(strstr(out_text, "0 imported, 15 already in the registry (1 with changed source facts)"));
    assert_int_equal(rg("runs import-catalog later.jsonl --db k.db"), 0);
    assert_non_null(strstr(out_text, "(0 with changed source facts)"));
        /* One operation by its alias, into another registry: its three runs. */
    assert_int_equal(rg("runs import-catalog %s --operation " DEF014 " --db one.db", ROPE), 0);
    assert_non_null(strstr(out_text, "3 runs of 1 operations verified: 3 imported"));
    assert_int_equal(rg("runs import-catalog %s --operation no_such_op --db one.db", ROPE), 2);
    assert_non_null(strstr(err_text, "no operation named 'no_such_op'"));
    assert_int_equal(tu_count_lines(err_text), 1);
}

/* The rows of one table of a page: from the group's heading on. */
static void test_names_on_pages(void **state)
{
    (void)state;
    assert_int_equal(rg("runs import-catalog %s --db k.db", ROPE), 0);
    assert_int_equal(rg("site --out site --db k.db"), 0);
    char *p = site_page("problems/" DEF014 ".html");
    /* The B200 group: doubleAI, ac4k, Recursive in that order, each with its figure. */
    const char *b200 = strstr(p, "B200");
    assert_non_null(b200);
    const struct {
        const char *name, *fig4, *fig3;
    } want[] = {{"doubleAI · submission 19887", "4.933 µs", "4.93 µs"},
                {"ac4k · submission 20187", "5.116 µs", "5.12 µs"},
                {"Recursive · submission 19532", "5.336 µs", "5.34 µs"}};
    const char *prev = b200;
    for (size_t i = 0; i < 3; i++) {
        const char *at = strstr(b200, want[i].name);
        if (!at) fail_msg("the 014 page lacks \"%s\"", want[i].name);
        if (at < prev) fail_msg("\"%s\" is not after the row before it", want[i].name);
        const char *row_end = strstr(at, "</tr>");
        assert_non_null(row_end);
        const char *f = strstr(at, want[i].fig4);
        if (!f || f > row_end) f = strstr(at, want[i].fig3);
        if (!f || f > row_end) fail_msg("the row of \"%s\" lacks its figure %s", want[i].name, want[i].fig4);
        prev = row_end;
    }
    assert_null(strstr(p, "sol-execbench #"));
    assert_null(strstr(p, "NVIDIA SOL-ExecBench submission/"));
    free(p);
    /* The run page: the source's publication date and rank, its trust columns. */
    p = site_page("runs/4.html");
    const char *has[] = {"doubleAI · submission 19887 · " DEF014,
                         "<tr><th>published</th><td>2026-08-15 · NVIDIA SOL-ExecBench</td></tr>",
                         "<tr><th>source rank</th><td>1 of 3 in its comparison group on NVIDIA SOL-ExecBench</td></tr>",
                         "<tr><th>KernelIndex trust</th><td>reported by the source · not reproduced by KernelIndex · "
                         "0 independent replications</td></tr>",
                         "<tr><th>source run id</th><td>01a0032e-"};
    for (size_t i = 0; i < sizeof has / sizeof has[0]; i++)
        if (!strstr(p, has[i])) fail_msg("run page lacks \"%s\"", has[i]);
    assert_null(strstr(p, "(in this index)"));
    free(p);
    /* The search page finds runs by who made them. */
    char err[RG_ERRLEN], db[700];
    snprintf(db, sizeof db, "%s/k.db", dir);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    rg_search_view sv;
    assert_int_equal(rg_model_search(g, "DOUBLEai", &sv, err, sizeof err), 0);
    assert_int_equal(sv.n, 3);   /* 014, 088, 068 */
    rg_registry_close(g);
    /* 011: ranked by the figure (the file lists 2369 before 2301). */
    assert_int_equal(rg("runs show 11 --db k.db"), 0);
    p = site_page("runs/11.html");
    assert_non_null(strstr(p, "<tr><th>source rank</th><td>3 of 3 "));
    free(p);
}

/* A retraction and a supersession the catalog records: kept, shown, and
 * neither run counts in the source's rank. */
static void test_retracted(void **state)
{
    (void)state;
    char *text = slurp(ROPE);
    char *a = edit_line(text, line_of(text, "\"externalId\":\"20187\""), "\"retractedAt\":null,\"retractionReason\":null",
                        "\"retractedAt\":\"2026-08-20T00:00:00Z\",\"retractionReason\":\"wrong outputs on a late case\"");
    /* 011's SF Tensor run supersedes Geometric's */
    char *b = edit_line(a, line_of(a, "\"externalId\":\"34901\""), "\"supersedesId\":null",
                        "\"supersedesId\":\"01a0032f-7d6b-73be-92a0-2a6e6a09caa3\"");
    free(a);
    free(text);
    put("retracted.jsonl", b);
    free(b);
    assert_int_equal(rg("runs import-catalog retracted.jsonl --db r.db"), 0);
    if (!strstr(out_text, "1 retracted, 1 superseded")) fail_msg("%s", out_text);
    assert_int_equal(rg("site --out site --db r.db"), 0);
    char *p = site_page("problems/" DEF014 ".html");
    const char *row = strstr(p, "ac4k · submission 20187");
    assert_non_null(row);
    const char *badge = strstr(row, "retracted by its source");
    assert_true(badge && badge < strstr(row, "</tr>"));
    free(p);
    p = site_page("runs/5.html");
    assert_non_null(strstr(p, "<tr><th>retracted</th><td>2026-08-20T00:00:00Z: wrong outputs on a late case</td></tr>"));
    assert_null(strstr(p, "<tr><th>source rank</th>"));   /* a retracted run does not rank */
    free(p);
    p = site_page("runs/6.html");   /* Recursive: now 2nd of 2 */
    assert_non_null(strstr(p, "<tr><th>source rank</th><td>2 of 2 in its comparison group"));
    free(p);
    p = site_page("runs/11.html");   /* Geometric's 011 run, superseded */
    assert_non_null(strstr(p, "<tr><th>superseded by (source id)</th><td>01a0032f-7dd7-7430-9d3a-72dd225221f9</td></tr>"));
    assert_null(strstr(p, "<tr><th>source rank</th>"));
    free(p);
    p = site_page("runs/12.html");
    assert_non_null(strstr(p, "<tr><th>supersedes (source id)</th><td>01a0032f-7d6b-73be-92a0-2a6e6a09caa3</td></tr>"));
    assert_non_null(strstr(p, "<tr><th>source rank</th><td>2 of 2 in its comparison group"));
    free(p);
}

static void test_bad_lines(void **state)
{
    (void)state;
    char *text = slurp(ROPE);
    int run014 = line_of(text, "\"externalId\":\"20187\"");
    const struct {
        int line;
        const char *from, *to, *needle;
        int rc;
    } edits[] = {
        {run014, "\"status\":\"passed\",", "\"status\":\"passed\",\"extra\":1,",
         "benchmark_runs.extra: a field this reader does not know", 2},
        {run014, "\"primaryValue\":5116", "\"primaryValue\":\"5116\"", "benchmark_runs.primaryValue: expected a number or null", 2},
        {run014, "\"reported\":true,", "", "benchmark_runs.reported: missing", 2},
        {run014, "\"reported\":true", "\"reported\":1", "benchmark_runs.reported: expected true or false", 2},
        {2, "\"name\":\"Geometric\"", "\"name\":7", "projects.name: expected a string", 2},
        {3, NULL, "{\"table\":\"projects\",\"row\":{}", "catalog-edited.jsonl:3", 2},
        {3, NULL, "{\"table\":\"projects\"}", "expected {\"table\": NAME, \"row\": {...}}", 2},
        {3, NULL, "", "catalog-edited.jsonl:3: an empty line", 2},
        /* Who made it must read as it is. */
        {2, "\"name\":\"Geometric\"", "\"name\":\"Geo\\u202emetric\"", "the run's projects.name: U+202E", 2},
        /* The run's spec changed: its digest no longer holds; nothing stored. */
        {run014, "\"mean\":5116}", "\"mean\":5016}", "benchmark_runs.runDigest", 1},
        /* A row's digest that is not its manifest's. */
        {run014, "\"protocolKey\":\"sha256:", "\"protocolKey\":\"sha256:0", "benchmark_runs.protocolKey", 1},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *bad = edit_line(text, edits[i].line, edits[i].from, edits[i].to);
        put("catalog-edited.jsonl", bad);
        free(bad);
        char db[700];
        snprintf(db, sizeof db, "%s/k.db", dir);
        tu_unlink_db(db);
        int rc = rg("runs import-catalog catalog-edited.jsonl --db k.db");
        if (rc != edits[i].rc) fail_msg("edit %zu: exit %d, not %d: %s", i, rc, edits[i].rc, err_text);
        if (!strstr(err_text, edits[i].needle)) fail_msg("edit %zu: %s", i, err_text);
        assert_int_equal(tu_count_lines(err_text), 1);
        no_runs_stored();
    }
    /* A long name in two-byte characters is cut whole, never inside one. */
    char longname[700] = "\"name\":\"";
    for (int k = 0; k < 150; k++) strcat(longname, "é");
    strcat(longname, "\"");
    char *lng = edit_line(text, 2, "\"name\":\"Geometric\"", longname);
    put("catalog-long.jsonl", lng);
    free(lng);
    assert_int_equal(rg("runs import-catalog catalog-long.jsonl --db long.db"), 0);
    /* A table this reader does not know: skipped and counted. */
    char *more = malloc(strlen(text) + 200);
    strcpy(more, text);
    strcat(more, "{\"table\":\"serving_runs\",\"row\":{\"id\":\"x\"}}\n");
    put("catalog-more.jsonl", more);
    free(more);
    assert_int_equal(rg("runs import-catalog catalog-more.jsonl --db more.db"), 0);
    assert_non_null(strstr(out_text, "skipped 1 rows of 1 tables this reader does not know (serving_runs 1)"));
    free(text);
    /* Not a regular file, no file. */
    assert_int_equal(rg("runs import-catalog . --db k.db"), 2);
    assert_non_null(strstr(err_text, "not a regular file"));
    assert_int_equal(rg("runs import-catalog nothing.jsonl --db k.db"), 2);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The whole export as published (40,795 lines, zstd): in seconds, the same 15 runs. */
static void test_full_export(void **state)
{
    (void)state;
    if (access(FULL, R_OK) != 0) {
        print_message("skip: %s not present (../shared beside the checkout)\n", FULL);
        return;
    }
    double t0 = now_s();
    int rc = rg("runs import-catalog %s --db full.db", FULL);
    double secs = now_s() - t0;
    if (rc) fail_msg("%s", err_text);
    assert_non_null(strstr(out_text, "40795 lines: 4 sources, 615 projects, 449 operations, 4250 implementations, "
                                     "7857 benchmark runs, 13853 measurements, 2948 record events, 3074 artifacts"));
    assert_non_null(strstr(out_text, "skipped 1668 rows of 6 tables"));
    assert_non_null(strstr(out_text, "15 runs of 5 operations verified: 15 imported"));
    print_message("full export: %.2f s\n", secs);
    assert_true(secs < 30);
    /* The rope file's runs are the same runs: nothing new. */
    assert_int_equal(rg("runs import-catalog %s --db full.db", ROPE), 0);
    assert_non_null(strstr(out_text, "0 imported, 15 already"));
    /* A cut copy of the compressed file: one line, nothing stored. */
    size_t n;
    char *z = tu_slurp(FULL, &n);
    assert_non_null(z);
    char path[700];
    snprintf(path, sizeof path, "%s/cut.jsonl.zst", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(z, 1, n / 2, f);
    fclose(f);
    free(z);
    assert_int_equal(rg("runs import-catalog cut.jsonl.zst --db cut.db"), 2);
    assert_int_equal(tu_count_lines(err_text), 1);
}

/* The public record imported alone: its page keeps the date its source
 * published it and its rank there, given at import; the JSON API names it. */
static void test_public_record(void **state)
{
    (void)state;
    assert_int_equal(rg("runs import %s --published-at 2026-13-01 --db p.db", PUBLIC), 2);
    assert_non_null(strstr(err_text, "--published-at '2026-13-01'"));
    assert_int_equal(rg("runs import %s --source-rank 6/5 --db p.db", PUBLIC), 2);
    assert_int_equal(rg("runs list --db p.db"), 2);   /* nothing was made */
    assert_int_equal(rg("runs import %s --published-at 2026-08-24 --source-rank 5 --db p.db", PUBLIC), 0);
    assert_int_equal(rg("runs import %s --db p.db", PUBLIC), 0);   /* again, without them: they stay */
    assert_int_equal(rg("site --out site --db p.db"), 0);
    char *p = site_page("runs/1.html");
    const char *has[] = {"<tr><th>published</th><td>2026-08-24 · NVIDIA SOL-ExecBench</td></tr>",
                         "<tr><th>source rank</th><td>5 in its comparison group on NVIDIA SOL-ExecBench</td></tr>",
                         ("Recursive · submission 6579 · " DEF014)};
    for (size_t i = 0; i < sizeof has / sizeof has[0]; i++)
        if (!strstr(p, has[i])) fail_msg("run page lacks \"%s\"", has[i]);
    free(p);
    /* The JSON API: the name, the publication date, the source's rank. */
    char err[RG_ERRLEN], db[700];
    snprintf(db, sizeof db, "%s/p.db", dir);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    rg_run_view v;
    if (rg_model_run(g, 1, &v, err, sizeof err)) fail_msg("%s", err);
    char *j = rg_api_run(&v, err, sizeof err);
    assert_non_null(j);
    cJSON *o = cJSON_Parse(j);
    assert_string_equal(cJSON_GetObjectItem(o, "name")->valuestring, "Recursive · submission 6579");
    assert_string_equal(cJSON_GetObjectItem(o, "publishedAt")->valuestring, "2026-08-24");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "sourceRank"), "rank")->valueint, 5);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "sourceRank"), "of")));
    cJSON_Delete(o);
    free(j);
    rg_model_run_free(&v);
    rg_problem_view pv;
    if (rg_model_problem(g, DEF014, &pv, err, sizeof err)) fail_msg("%s", err);
    j = rg_api_problem(&pv, err, sizeof err);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"name\":\"Recursive · submission 6579\""));
    free(j);
    rg_model_problem_free(&pv);
    rg_registry_close(g);
}

static void test_display_names(void **state)
{
    (void)state;
    char s[200];
    rg_impl_name_parts cuda = {"ropegrad", "0.1.0", "cuda", 0, "default", "", "", "", ""};
    assert_string_equal(rg_impl_display_name(&cuda, s, sizeof s), "ropegrad 0.1.0 · CUDA kernel 0");
    rg_impl_name_parts cpu = {"ropegrad", "0.2.0", "cpu", 0, "cpu-avx2", "", "", "", ""};
    assert_string_equal(rg_impl_display_name(&cpu, s, sizeof s), "ropegrad 0.2.0 · CPU avx2");
    rg_impl_name_parts tc = {"reference (torch.compile)", "torch 2.11.0+cu128", "cuda", 0, "", "", "", "", ""};
    assert_string_equal(rg_impl_display_name(&tc, s, sizeof s), "torch.compile 2.11 · reference");
    rg_impl_name_parts te = {"reference (torch eager)", "torch 2.11.0", "cuda", 0, "", "", "", "", ""};
    assert_string_equal(rg_impl_display_name(&te, s, sizeof s), "torch eager 2.11 · reference");
    rg_impl_name_parts plug = {"plain014", "1.0", "cuda", 0, "plain014 1.0", "", "", "", ""};
    assert_string_equal(rg_impl_display_name(&plug, s, sizeof s), "plain014 1.0");
    rg_impl_name_parts imp = {"", "", "", -1, "", "doubleAI", "", "sol-execbench", "19887"};
    assert_string_equal(rg_impl_display_name(&imp, s, sizeof s), "doubleAI · submission 19887");
    rg_impl_name_parts pub = {"", "", "", -1, "", "", "Recursive · " DEF014 " · B200", "sol-execbench", "6579"};
    assert_string_equal(rg_impl_display_name(&pub, s, sizeof s), "Recursive · submission 6579");
    rg_impl_name_parts bare = {"", "", "", -1, "", "", "", "sol-execbench", "6579"};
    assert_string_equal(rg_impl_display_name(&bare, s, sizeof s), "NVIDIA SOL-ExecBench · submission 6579");
    char tiny[8];
    rg_impl_display_name(&imp, tiny, sizeof tiny);
    assert_int_equal(strlen(tiny), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_import_and_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_on_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retracted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_export, setup, teardown),
        cmocka_unit_test_setup_teardown(test_public_record, setup, teardown),
        cmocka_unit_test(test_display_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
