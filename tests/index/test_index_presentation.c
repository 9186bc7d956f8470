/* SPDX-License-Identifier: Apache-2.0 */
/* test_index_presentation.c -- issue 41, items 2 to 5: the problem page is
 * the field (one row per implementation, named; reported and measured runs
 * in separate tables; trust with its reason on hover; old-protocol runs
 * superseded; the #1 before the first group), the chart (workloads by bytes
 * moved, labelled by shape, % of peak, at most six lines, the others listed),
 * records over time (the records in date order, each faster than the last)
 * and the compare page (a warning at the top when the GPUs differ). Every
 * name goes through the one escaper. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <unistd.h>

#include "model.h"
#include "render.h"
#include "serve.h"
#include "test_field_fixture.h"
#include "test_serve_fixture.h"

#define DEF "014_rotary_embedding_with_attention_scaling_backward"
#define PUBLIC RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json"
/* doubleAI's 014 run on the B200 from KernelIndex's catalog: the same comparison key, stack v1.1 */
#define PUBLIC_V11 RG_SOURCE_DIR "/tests/data/kernelindex/catalog-014-doubleai-b200.manifest.json"
#define OLD RG_SOURCE_DIR "/tests/data/old-format/h200-cuda-014-before-switches.manifest.json"
#define CURRENT RG_SOURCE_DIR "/results/ops/h200-cuda-014.manifest.json"
#define B200 "NVIDIA B200"
#define REF_NAME "reference (torch eager) torch 2.5.1"
#define NASTY "<b>x</b>&\"q\""

static tu_scratch sc;
static char db[400];

/* A fixture run named kernel_name on gpu, scale x the fixture's times,
 * observed on January `day` (second `sec`). */
static char *run_text(const char *gpu, const char *kernel_name, double scale, int day, int sec)
{
    return fx_named_run_text(gpu, kernel_name, scale, (day - 1) * 60 + sec, 1);
}

static int add(rg_registry *g, char *text, int64_t want) { return fx_add(g, text, want); }

static int add_file(rg_registry *g, const char *path, int64_t want)
{
    size_t n;
    return add(g, tu_slurp(path, &n), want);
}

/* B200 group (fixtures, geomean): implementations A..H at 1.0 .. 1.7x, H
 * named NASTY, the reference at 3x, a second run of A (1.25x). Dates: C day
 * 1 (1.2x), D day 2 (1.3x), B day 3 (1.1x), E day 4, A day 5 (1.0x), F..H
 * days 6-8, A again day 9: records C, B, A.
 * Then: 11 the public record (B200, mean, stack v1.0), 12 an H200 fixture,
 * 13 and 14 the H200 runs of 014 before and after the timing switches, 15
 * doubleAI's public run (B200, mean, stack v1.1). */
static int setup(void **state)
{
    (void)state;
    if (tu_scratch_open(&sc, "rg_presentation")) return -1;
    snprintf(db, sizeof db, "%s/runs.db", sc.dir);
    char err[RG_ERRLEN];
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) return -1;
    static const char *names[] = {"impl-A", "impl-B", "impl-C", "impl-D", "impl-E", "impl-F", "impl-G", NASTY};
    static const int days[] = {5, 3, 1, 2, 4, 6, 7, 8};
    int rc = 0;
    for (int i = 0; i < 8 && !rc; i++) rc = add(g, run_text(B200, names[i], 1.0 + 0.1 * i, days[i], 0), i + 1);
    rc = rc || add(g, run_text(B200, REF_NAME, 3.0, 1, 1), 9) || add(g, run_text(B200, "impl-A", 1.25, 9, 0), 10) ||
         add_file(g, PUBLIC, 11) || add(g, run_text("NVIDIA H200", "impl-A", 0.8, 10, 0), 12) ||
         add_file(g, OLD, 13) || add_file(g, CURRENT, 14) || add_file(g, PUBLIC_V11, 15);
    rg_registry_close(g);
    return rc ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(sc.dir);
    return 0;
}

static char *page(const char *path)
{
    rg_server *s = fx_serve(db, NULL);
    assert_non_null(s);
    rg_request q = {.method = "GET", .path = path};
    rg_response r;
    rg_serve_route(s, &q, &r);
    if (r.status != 200) fail_msg("%s: %d: %.300s", path, r.status, r.body);
    char *body = r.body;
    rg_serve_destroy(s);
    return body;
}

static void has(const char *body, const char *needle)
{
    if (!body || !strstr(body, needle)) fail_msg("'%s' is not on the page", needle);
}

static void lacks(const char *body, const char *needle)
{
    if (body && strstr(body, needle)) fail_msg("'%s' is on the page", needle);
}

static size_t count(const char *hay, const char *end, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) && (!end || p < end); p++) n++;
    return n;
}

/* The text of the section <section ... id="ID"> (malloc'd). */
static char *section(const char *html, const char *id)
{
    char open[64];
    snprintf(open, sizeof open, "id=\"%s\"", id);
    const char *a = strstr(html, open), *z = a ? strstr(a, "</section>") : NULL;
    if (!a || !z) fail_msg("no section %s", id);
    char *s = malloc((size_t)(z - a) + 1);
    memcpy(s, a, (size_t)(z - a));
    s[z - a] = 0;
    return s;
}

/* The group whose heading holds `words`, as section text. */
static char *group_with(const char *html, const char *words)
{
    for (int i = 1; i < 10; i++) {
        char id[16];
        snprintf(id, sizeof id, "group-%d", i);
        if (!strstr(html, id)) break;
        char *s = section(html, id);
        const char *h2 = strstr(s, "<h2>"), *h2e = h2 ? strstr(h2, "</h2>") : NULL;
        const char *w = h2 ? strstr(h2, words) : NULL;
        if (w && w < h2e) return s;
        free(s);
    }
    fail_msg("no group headed '%s'", words);
    return NULL;
}

static void test_field_rows(void **state)
{
    (void)state;
    char *p = page("/problems/" DEF);
    char *b = group_with(p, B200 " · ropegrad");
    /* One row per implementation: 8 + the reference; A's two runs in one row. */
    assert_int_equal(count(b, NULL, "class=\"impl-link\""), 9);
    has(b, ">2 runs</a>");
    has(b, "Comparable: one GPU (" B200 "), one harness and version (ropegrad ");
    has(b, "data-kind=\"measured\"");
    lacks(b, "data-kind=\"reported\"");   /* a table never mixes the two kinds of rank */
    /* Trust, its reason on hover. */
    has(b, "<span class=\"badge trust-measured\" title=\"measured: samples of 3 workloads held here");
    /* Escaped, never raw. */
    has(b, "&lt;b&gt;x&lt;/b&gt;&amp;&quot;q&quot;");
    lacks(p, NASTY);
    free(b);
    /* The public field: reported, ranked by its figure in its own table; the v1.0 record superseded
     * by the group's v1.1 run. */
    b = group_with(p, B200 " · SOL-ExecBench evaluation stack v1.1 · mean");
    has(b, "data-kind=\"reported\"");
    lacks(b, "data-kind=\"measured\"");
    has(b, "<td class=\"rank\">1</td><td class=\"impl\"><a class=\"impl-link\" href=\"/runs/15\">doubleAI · "
           "submission 19887</a>");
    has(b, "<span class=\"badge trust-reported\" title=\"reported: a figure without samples; ranked among reported runs "
           "by its mean");
    const char *old = strstr(b, "<details class=\"superseded-runs\">");
    assert_non_null(old);
    has(old, "Recursive · submission 6579");
    has(old, "an older version of its harness (SOL-ExecBench evaluation stack v1.0; the group holds SOL-ExecBench "
             "evaluation stack v1.1)");
    assert_true(strstr(b, "href=\"/runs/11\"") > old);
    free(b);
    /* The H200 run made before the timing switches is superseded, listed apart. */
    b = group_with(p, "NVIDIA H200 · ropegrad 0.1.0 · geomean of per-workload medians · 16 workloads");
    const char *sup = strstr(b, "<details class=\"superseded-runs\">");
    assert_non_null(sup);
    assert_non_null(strstr(sup, "href=\"/runs/13\""));
    assert_null(strstr(b, "href=\"/runs/13\"") < sup ? strstr(b, "href=\"/runs/13\"") : NULL);
    free(b);
    /* The #1 is named, with its time, before the first group. */
    const char *leader = strstr(p, "id=\"leader-name\""), *first = strstr(p, "<section class=\"group");
    assert_non_null(leader);
    assert_true(leader < first);
    has(p, "id=\"leader-time\"");
    free(p);
}

/* The front page's headline figures: each current group's #1 as its problem page shows it. */
static void test_front_page(void **state)
{
    (void)state;
    char *p = page("/");
    const char *t = strstr(p, "<table id=\"headlines\">"), *end = t ? strstr(t, "</table>") : NULL;
    assert_non_null(end);
    const char *pub = strstr(t, "<td>" B200 " · SOL-ExecBench evaluation stack v1.1 · mean</td><td><a href=\"/runs/15\">"
                                "doubleAI · submission 19887</a>");
    assert_true(pub && pub < end);
    const char *h200 = strstr(t, "href=\"/runs/14\"");   /* the current H200 run, not the superseded #13 */
    assert_true(h200 && h200 < end);
    const char *old = strstr(t, "href=\"/runs/13\"");
    assert_true(!old || old > end);
    free(p);
}

static void test_api_classes(void **state)
{
    (void)state;
    char *j = page("/api/problems/" DEF);
    has(j, "\"trust\":\"reported\"");
    has(j, "\"trust\":\"measured\"");
    has(j, "\"trustReason\":\"reported: a figure without samples");
    has(j, "\"superseded\":true");
    free(j);
}

static void test_chart(void **state)
{
    (void)state;
    char *p = page("/problems/" DEF);
    char *b = group_with(p, B200 " · ropegrad");
    const char *svg = strstr(b, "<svg class=\"chart field\""), *end = svg ? strstr(svg, "</svg>") : NULL;
    assert_non_null(svg);
    /* Labelled by shape, ordered by bytes moved; no "#0" labels. */
    const char *w2 = strstr(svg, ">1×128<tspan"), *w1 = strstr(svg, ">2×3637<tspan"), *w0 = strstr(svg, ">32×256<tspan");
    assert_true(w2 && w1 && w0 && w2 < w1 && w1 < w0 && w0 < end);
    assert_null(strstr(svg, ">#0<"));
    /* y: a share of the GPU's peak, 100% drawn. */
    has(svg, "achieved bandwidth, % of peak");
    has(svg, "id=\"field-peak\"");
    /* At most six lines: the top five and the reference; the others listed below. */
    size_t lines = 0;
    for (int s = 0; s < 12; s++) {
        char legend[32];
        snprintf(legend, sizeof legend, "data-legend=\"s%d\"", s);
        lines += strstr(svg, legend) && strstr(svg, legend) < end;
    }
    assert_int_equal(lines, 6);
    has(svg, "torch 2.5.1) (reference)");   /* the reference, drawn and said */
    const char *f = strstr(svg, "impl-F");
    assert_true(!f || f > end);   /* not drawn */
    const char *others = strstr(b, "id=\"chart-others\"");
    assert_non_null(others);
    has(others, "impl-F");
    has(others, "impl-G");
    has(others, "&lt;b&gt;x");
    free(b);
    free(p);
}

static void test_chart_unit(void **state)
{
    (void)state;
    rg_problem_view v;
    char err[RG_ERRLEN];
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    assert_int_equal(rg_model_problem(g, DEF, &v, err, sizeof err), 0);
    rg_registry_close(g);
    for (size_t i = 0; i < v.n_groups; i++) assert_true(v.groups[i].n_series <= RG_FIELD_CHART_LINES);
    /* Current protocol first: the superseded groups after the others. */
    int seen = 0;
    for (size_t i = 0; i < v.n_groups; i++) {
        if (v.groups[i].superseded) seen = 1;
        else assert_false(seen);
    }
    rg_model_problem_free(&v);
}

static void test_records(void **state)
{
    (void)state;
    char *p = page("/problems/" DEF);
    has(p, "id=\"records-link\" href=\"/records/" DEF "\"");
    free(p);
    p = page("/records/" DEF);
    char *b = strstr(p, B200 " · ropegrad");
    assert_non_null(b);
    const char *end = strstr(b, "</section>");
    has(b, "<svg class=\"chart records\"");
    /* The records of the B200 group, oldest first: C (day 1), B (day 3), A (day 5). */
    const char *c = strstr(b, "impl-C)</a>"), *bb = strstr(b, "impl-B)</a>"), *a = strstr(b, "impl-A)</a>");
    assert_true(c && bb && a && c < bb && bb < a && a < end);
    assert_int_equal(count(b, end, "<tr class=\"record\">"), 3);
    lacks(strstr(b, "<table class=\"records\">"), "impl-D)</a></td>");   /* slower than C: no record */
    has(b, "the first");
    has(b, "× faster");
    free(p);
    /* The model: dates ascend, each record faster than the one before. */
    rg_records_view v;
    char err[RG_ERRLEN];
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    assert_int_equal(rg_model_records(g, DEF, &v, err, sizeof err), 0);
    rg_registry_close(g);
    size_t groups = 0;
    for (size_t i = 0; i < v.n_groups; i++) {
        const rg_records_group *r = &v.groups[i];
        double best = INFINITY;
        for (size_t k = 0; k < r->n; k++) {
            if (k) assert_true(strcmp(r->p[k - 1].date, r->p[k].date) <= 0);
            assert_int_equal(r->p[k].record, r->p[k].primary_ns < best);
            if (r->p[k].record) best = r->p[k].primary_ns;
        }
        groups += r->n > 0;
    }
    assert_true(groups >= 2);
    rg_model_records_free(&v);
    /* A problem with no runs: 404. */
    rg_server *s = fx_serve(db, NULL);
    rg_request q = {.method = "GET", .path = "/records/no_such_problem"};
    rg_response r;
    rg_serve_route(s, &q, &r);
    assert_int_equal(r.status, 404);
    free(r.body);
    rg_serve_destroy(s);
}

static void test_compare(void **state)
{
    (void)state;
    /* Same GPU and statistic: both names, the ratio chart, no warning. */
    char *p = page("/compare/1/2");
    has(p, "impl-B)</a>");
    has(p, "impl-A)</a>");
    has(p, "id=\"chart-ratio\"");
    lacks(p, "id=\"unlike\"");
    free(p);
    /* B200 against H200, both geomeans: the GPUs differ, the statistics do not. */
    p = page("/compare/1/12");
    const char *warn = strstr(p, "<p class=\"unlike\" id=\"unlike\">These runs were measured on different GPUs "
                                 "(NVIDIA B200 and NVIDIA H200): ");
    assert_non_null(warn);
    assert_true(warn < strstr(p, "<h1"));
    lacks(p, "different statistics");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_rows), cmocka_unit_test(test_front_page), cmocka_unit_test(test_api_classes), cmocka_unit_test(test_chart),
        cmocka_unit_test(test_chart_unit), cmocka_unit_test(test_records),     cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
