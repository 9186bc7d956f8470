/* SPDX-License-Identifier: Apache-2.0 */
/* test_index_pages.c -- issue 28, "The pages": names, navigation, CPU runs
 * without empty SOL columns, the compare page's digits and summary, pretty
 * manifests, error pages that name no path, and a one-file report with no
 * dangling link. Over a registry holding the public KernelIndex record, two
 * GPU fixture runs and a CPU run recorded on a busy machine. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "render.h"
#include "serve.h"
#include "site.h"
#include "test_record_fixture.h"
#include "test_serve_fixture.h"

#define PUBLIC RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json"
#define DEF "014_rotary_embedding_with_attention_scaling_backward"
#define TOKEN "test-token-0123456789abcdef"

static tu_scratch sc;
static char db[400], tokfile[400];
static char out[1 << 14], errb[1 << 12];
static char *gpu_text;   /* run 2's manifest as imported */

/* A CPU run whose 1-minute load (3.0 on 4 CPUs) makes it busy (gate.h). */
static cJSON *busy_cpu_manifest(void)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, "", 1, 1.0, 9);
    r.env.load_known = 1;
    r.env.load_avg_1m = 3.0;
    r.env.load_cpus = 4;
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return m;
}

static int import_text(rg_registry *g, const char *text, int64_t want)
{
    char err[RG_ERRLEN];
    int64_t id;
    int existed;
    int rc = rg_registry_import(g, text, strlen(text), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err);
    if (rc || id != want) fprintf(stderr, "import: %s (id %lld)\n", err, (long long)id);
    return rc || id != want ? -1 : 0;
}

/* Runs: 1 the public record, 2 and 3 GPU fixtures (3 about 3.5% slower), 4 a busy CPU run. */
static int setup(void **state)
{
    if (tu_scratch_open(&sc, "rg_pages")) return -1;
    snprintf(db, sizeof db, "%s/runs.db", sc.dir);
    snprintf(tokfile, sizeof tokfile, "%s/token", sc.dir);
    char err[RG_ERRLEN];
    if (rg_write_file_atomic(tokfile, TOKEN "\n", strlen(TOKEN) + 1, err, sizeof err)) return -1;
    chmod(tokfile, 0600);
    size_t n;
    char *pub = tu_slurp(PUBLIC, &n);
    cJSON *m2 = fx_manifest("NVIDIA H200", 1, 1.0, 1), *m3 = fx_manifest("NVIDIA H200", 2, 1.035, 2);
    cJSON *m4 = busy_cpu_manifest();
    gpu_text = m2 ? rg_json_print(m2, 0, err, sizeof err) : NULL;
    char *t3 = m3 ? rg_json_print(m3, 0, err, sizeof err) : NULL, *t4 = m4 ? rg_json_print(m4, 0, err, sizeof err) : NULL;
    cJSON_Delete(m2);
    cJSON_Delete(m3);
    cJSON_Delete(m4);
    rg_registry *g;
    int rc = !pub || !gpu_text || !t3 || !t4 || rg_registry_open(db, 1, &g, err, sizeof err);
    if (!rc) {
        rc = import_text(g, pub, 1) || import_text(g, gpu_text, 2) || import_text(g, t3, 3) || import_text(g, t4, 4);
        rg_registry_close(g);
    }
    free(pub);
    free(t3);
    free(t4);
    return rc ? -1 : 0;
}

static int teardown(void **state)
{
    tu_rm_rf(sc.dir);
    free(gpu_text);
    return 0;
}

static rg_server *make(int writable) { return fx_serve(db, writable ? tokfile : NULL); }

/* The body of a request (malloc'd), its status checked. */
static char *page(rg_server *s, rg_request q, int status)
{
    if (!q.method) q.method = "GET";
    rg_response r;
    rg_serve_route(s, &q, &r);
    if (r.status != status) fail_msg("%s %s: %d, wanted %d: %.300s", q.method, q.path, r.status, status, r.body);
    assert_non_null(r.body);
    return r.body;
}

static void has(const char *body, const char *needle)
{
    if (!strstr(body, needle)) fail_msg("'%s' is not on the page", needle);
}

static void lacks(const char *body, const char *needle)
{
    if (strstr(body, needle)) fail_msg("'%s' is on the page", needle);
}

static void test_names(void **state)
{
    char t[200], e[64];
    assert_int_equal(rg_problem_title(DEF, t, sizeof t, e, sizeof e), 0);
    assert_string_equal(t, "L1/014 · Rotary embedding with attention scaling backward");
    assert_int_equal(rg_problem_short(DEF, t, sizeof t, e, sizeof e), 0);
    assert_string_equal(t, "L1/014");
    assert_int_equal(rg_problem_title("my-op", t, sizeof t, e, sizeof e), 0);
    assert_string_equal(t, "my-op");   /* no number: as recorded */
    assert_int_equal(rg_problem_title(DEF, t, 10, e, sizeof e), -1);
    assert_int_equal(rg_short_key("sha256:e650657a1f2502fe0123", t, sizeof t, e, sizeof e), 0);
    assert_string_equal(t, "e650657a1f25…");

    rg_server *s = make(0);
    char *p = page(s, (rg_request){.path = "/problems/" DEF}, 200);
    has(p, "<h1 id=\"problem-title\">L1/014 · Rotary embedding with attention scaling backward</h1>");
    free(p);
    p = page(s, (rg_request){.path = "/"}, 200);
    /* the problem named once however many groups it has; keys short, whole on hover */
    const char *first = strstr(p, ">L1/014 · Rotary");
    assert_non_null(first);
    assert_null(strstr(first + 1, ">L1/014 · Rotary"));
    lacks(p, DEF "</a>");
    has(p, "title=\"sha256:");
    has(p, "…</code>");
    has(p, "<td class=\"nowrap\"><a class=\"nowrap\" href=\"/runs/");
    /* the busy CPU run: no #1 of its group, no headline (rank.h), marked busy in the latest runs */
    lacks(p, "Test CPU Model · 3 workloads");
    has(p, "<td>passed <span class=\"badge busy\" title=\"busy machine: load average 3.00 on 4 CPUs\">busy</span>");
    free(p);
    /* The public record, field by field as its KernelIndex page shows it. */
    p = page(s, (rg_request){.path = "/runs/1"}, 200);
    has(p, "<tr><th>implementation</th><td>Recursive</td></tr>");
    has(p, "<tr><th>source</th><td>NVIDIA SOL-ExecBench</td></tr>");
    has(p, "<tr><th>external id</th><td>submission/6579</td></tr>");
    has(p, "<tr><th>published</th><td>");
    has(p, "source-native comparison");
    lacks(p, "ropegrad comparison");
    has(p, "<tr><th>description</th><td>Correctness must pass on every case in the SOL evaluation stack.</td></tr>");
    has(p, "<th>latency · mean</th><td class=\"num\">5.41 µs</td>");
    free(p);
    rg_serve_destroy(s);
}

static void test_navigation(void **state)
{
    rg_server *s = make(0);
    const char *paths[] = {"/", "/runs/2", ("/problems/" DEF), "/compare/2/3", "/history/2", "/search?q=x", "/nope"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "%s", paths[i]);
        char *q = strchr(path, '?');
        if (q) *q = 0;
        char *p = page(s, (rg_request){.path = path, .query = q ? q + 3 : NULL}, i == 6 ? 404 : 200);
        const char *links[] = {"href=\"/#problems\">problems", "href=\"/#gpus\">GPUs", "href=\"/#latest\">latest runs",
                               "href=\"/#regressions\">regressions", "href=\"/search\">search"};
        for (size_t k = 0; k < sizeof links / sizeof links[0]; k++) has(p, links[k]);
        has(p, "<nav class=\"crumbs\" id=\"crumbs\"><a href=\"/\">Index</a>");
        free(p);
    }
    char *p = page(s, (rg_request){.path = "/runs/2"}, 200);
    has(p, "<a href=\"/\">Index</a> › <a href=\"/problems/" DEF "\">L1/014</a> › run #2</nav>");
    free(p);
    p = page(s, (rg_request){.path = "/"}, 200);
    has(p, "id=\"gpus\"");
    has(p, "id=\"headlines\"");
    has(p, "id=\"latest-table\"");
    free(p);
    /* search: escaped, bounded, by implementation name */
    p = page(s, (rg_request){.path = "/search", .query = "VARIANT-2"}, 200);
    has(p, "cuda variant-2");
    lacks(p, "cuda variant-1");
    free(p);
    p = page(s, (rg_request){.path = "/search", .query = "<script>"}, 200);
    has(p, "value=\"&lt;script&gt;\"");
    lacks(p, "<script>");
    free(p);
    char longq[RG_SEARCH_QUERY_MAX + 2];
    memset(longq, 'a', sizeof longq - 1);
    longq[sizeof longq - 1] = 0;
    free(page(s, (rg_request){.path = "/search", .query = longq}, 400));
    rg_serve_destroy(s);
}

static void test_cpu_runs(void **state)
{
    rg_server *s = make(0);
    char *p = page(s, (rg_request){.path = "/runs/4"}, 200);
    has(p, "id=\"no-sol\"");
    has(p, RG_NO_SOL_ON_CPU);
    lacks(p, "<th>T_SOL</th><th>reference</th><th>SOL score</th>");
    has(p, "<tr><th>T_SOL</th><td>" RG_NO_SOL_ON_CPU "</td></tr>");   /* said once, in the Workload section */
    lacks(p, "<tr><th>figures</th>");
    lacks(p, "<section id=\"artifacts\"><h2>Artifacts</h2>\n<table>\n<tr><th>T_SOL");
    has(p, "<tr><th>load average (1 min)</th><td>3.00 on 4 online CPUs · busy");
    has(p, "<tr><th>revision</th><td>git ");   /* the revision label, as in the header */
    has(p, "<p id=\"rank-class\">Trust: <span class=\"badge busy\">busy</span> busy machine: load average 3.00");
    has(p, "Not ranked: busy");
    free(p);
    p = page(s, (rg_request){.path = "/api/runs/4"}, 200);
    has(p, "\"rank_class\":\"busy\"");
    has(p, "\"rank\":null");
    free(p);
    p = page(s, (rg_request){.path = "/problems/" DEF}, 200);
    /* an empty SOL cell says why on hover */
    has(p, "<td class=\"num why\" title=\"no reference timed on this GPU: ");
    has(p, "<tr><td>busy</td>");   /* listed, not ranked */
    free(p);
    rg_serve_destroy(s);
}

/* Two figures of one compare row: 3 digits when the ratio is 1.000, more
 * when the ratio says they differ. */
static char *compare_with(double a, double b, double ratio)
{
    rg_compare_view v;
    memset(&v, 0, sizeof v);
    v.a.id = 1;
    v.b.id = 2;
    rg_compare_row row = {.index = 0, .a = a, .b = b, .ratio = ratio, .lo = NAN, .hi = NAN};
    v.rows = &row;
    v.n = 1;
    v.n_shared = 1;
    v.geo_a = a;
    v.geo_b = b;
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char err[128];
    char *h = rg_render_compare(&ctx, &v, err, sizeof err);
    assert_non_null(h);
    return h;
}

static void test_compare(void **state)
{
    char *h = compare_with(13200, 13240, 1.035);
    lacks(h, "13.2 µs</td><td class=\"num\">13.2 µs");
    has(h, "13.24 µs");
    has(h, "<code>runs check</code>");
    lacks(h, "`");
    has(h, "id=\"summary-row\"");
    free(h);
    h = compare_with(13200, 13201, 1.0);
    has(h, "13.2 µs</td><td class=\"num\">13.2 µs");
    free(h);
    /* Against the imported B200 record (a mean) from an H200 run (a geomean):
     * a warning at the top, both names, and the primary figures not divided. */
    rg_server *s = make(0);
    char *p = page(s, (rg_request){.path = "/compare/1/2"}, 200);
    has(p, "id=\"primary-row\"");
    const char *warn = strstr(p, "<p class=\"unlike\" id=\"unlike\">These runs were measured on different GPUs "
                                 "(NVIDIA B200 and NVIDIA H200) and report different statistics");
    assert_non_null(warn);
    assert_true(warn < strstr(p, "<h1"));   /* at the top, before the heading */
    has(p, "Recursive · submission 6579");
    const char *row = strstr(p, "id=\"primary-row\"");
    lacks(row, "<td class=\"num\">0.");
    has(row, "not divided: the GPUs or the statistics differ");
    free(p);
    p = page(s, (rg_request){.path = "/compare/2/3"}, 200);
    has(p, "geomean over 3 shared workloads");
    free(p);
    rg_serve_destroy(s);
}

static void test_manifest_pretty(void **state)
{
    rg_server *s = make(0);
    char *p = page(s, (rg_request){.path = "/runs/2"}, 200);
    has(p, "<pre class=\"manifest\" id=\"manifest-bytes\">{\n  &quot;");
    free(p);
    rg_response r;
    rg_serve_route(s, &(rg_request){.method = "GET", .path = "/runs/2.json"}, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, strlen(gpu_text));   /* the stored bytes, one line as imported */
    assert_memory_equal(r.body, gpu_text, r.len);
    free(r.body);
    rg_serve_destroy(s);
}

static void test_errors(void **state)
{
    rg_server *s = make(1);
    const char *paths[] = {"/nope", "/api/runs/999", "/runs/999", "/history/999"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char *p = page(s, (rg_request){.path = paths[i]}, 404);
        lacks(p, sc.dir);
        lacks(p, "runs.db");
        free(p);
    }
    /* The page form with a wrong token: an HTML page with a link back. */
    char body[200], csrf[80] = "";
    char *run = page(s, (rg_request){.path = "/runs/2"}, 200);
    const char *c = strstr(run, "name=\"csrf\" value=\"");
    assert_non_null(c);
    snprintf(csrf, sizeof csrf, "%.64s", c + 19);
    free(run);
    snprintf(body, sizeof body, "kind=note&text=hello&token=wrong-token-000000000&csrf=%s", csrf);
    rg_request q = {.method = "POST", .path = "/runs/2/notes", .body = body, .body_len = strlen(body),
                    .origin = "http://127.0.0.1", .host = "127.0.0.1",
                    .content_type = "application/x-www-form-urlencoded"};
    rg_response r;
    rg_serve_route(s, &q, &r);
    assert_int_equal(r.status, 401);
    assert_string_equal(r.content_type, "text/html; charset=utf-8");
    has(r.body, "<a id=\"back\" href=\"/runs/2\">");
    free(r.body);
    /* An imported record is not told to run `runs replicate`. */
    char *p = page(s, (rg_request){.path = "/runs/1"}, 200);
    lacks(p, "runs replicate");
    free(p);
    p = page(s, (rg_request){.path = "/runs/4"}, 200);
    has(p, "runs replicate 4");
    free(p);
    rg_serve_destroy(s);
}

/* Every href of the report names a served URL under the base, or there is none. */
static void test_report_links(void **state)
{
    assert_int_equal(tu_run_captured(sc.dir, out, sizeof out, errb, sizeof errb, "report 2 --html r.html --db runs.db"),
                     0);
    char path[600];
    snprintf(path, sizeof path, "%s/r.html", sc.dir);
    char *h = tu_slurp(path, NULL);
    assert_non_null(h);
    lacks(h, "href=");
    has(h, "id=\"chart-latency\"");
    free(h);
    assert_int_equal(tu_run_captured(sc.dir, out, sizeof out, errb, sizeof errb,
                                     "report 2 --html b.html --base-url http://index.example:8080/ --db runs.db"),
                     0);
    snprintf(path, sizeof path, "%s/b.html", sc.dir);
    h = tu_slurp(path, NULL);
    assert_non_null(h);
    int links = 0;
    for (const char *p = h; (p = strstr(p, "href=\"")); p++, links++)
        if (strncmp(p + 6, "http://index.example:8080/", 26)) fail_msg("a link off the base: %.80s", p);
    assert_true(links >= 5);
    free(h);
    int rc = tu_run_captured(sc.dir, out, sizeof out, errb, sizeof errb,
                             "report 2 --html c.html --base-url javascript:x --db runs.db");
    assert_int_equal(rc, 2);
    assert_int_equal(tu_count_lines(errb), 1);
}

int main(void)
{
    (void)fx_path;
    (void)fx_write_doc;
    (void)fx_write_manifest;
    fx_register_suites();   /* the bundled suites (014 cut to the fixture's workloads), as the CLI registers them */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),       cmocka_unit_test(test_navigation),
        cmocka_unit_test(test_cpu_runs),    cmocka_unit_test(test_compare),
        cmocka_unit_test(test_manifest_pretty), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_report_links),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
