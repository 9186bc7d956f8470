/* SPDX-License-Identifier: Apache-2.0 */
/* test_index_render.c -- the index's renderer: escaping, SI labels, and
 * charts and pages over hostile numbers and strings. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "render.h"
#include "test_record_fixture.h"

static char *esc_with(void (*f)(rg_buf *, const char *), const char *s)
{
    rg_buf b = {0};
    rg_buf_puts(&b, "");
    f(&b, s);
    char err[64];
    return rg_buf_finish(&b, err, sizeof err);
}

static void test_escaping(void **state)
{
    char *h = esc_with(rg_html_esc, "<script>alert('x')</script> & \"q\"");
    assert_string_equal(h, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
    free(h);
    char *u = esc_with(rg_url_esc, "a b/../\"<x>?#%");
    assert_string_equal(u, "a%20b%2F..%2F%22%3Cx%3E%3F%23%25");
    free(u);
    char *s1 = esc_with(rg_problem_slug, "014_rope-v1.0");
    assert_string_equal(s1, "014_rope-v1.0");   /* safe names stay readable */
    free(s1);
    char *s2 = esc_with(rg_problem_slug, "../../etc/passwd");
    assert_null(strchr(s2, '/'));
    assert_int_not_equal(s2[0], '.');
    free(s2);
    char *s3 = esc_with(rg_problem_slug, "a/b"), *s4 = esc_with(rg_problem_slug, "a_b");
    assert_string_not_equal(s3, s4);             /* replaced names get a hash: no collision */
    free(s3);
    free(s4);
}

static void test_si_labels(void **state)
{
    char s[48];
    rg_fmt_si(s, sizeof s, 1.34e12, "B/s");
    assert_string_equal(s, "1.34 TB/s");
    rg_fmt_si(s, sizeof s, 5.406e-6, "s");
    assert_string_equal(s, "5.41 µs");
    rg_fmt_si(s, sizeof s, 999.7, "B");
    assert_string_equal(s, "1 kB");               /* never "1e+03 B" */
    rg_fmt_si(s, sizeof s, 0, "s");
    assert_string_equal(s, "0 s");
    rg_fmt_si(s, sizeof s, NAN, "s");
    assert_string_equal(s, "");                   /* absent: nothing */
    rg_fmt_si(s, sizeof s, INFINITY, "s");
    assert_string_equal(s, "");
    rg_fmt_si(s, sizeof s, 5e-324, "s");          /* far outside the prefixes: still a number */
    assert_non_null(strstr(s, "e-324"));
}

/* A run view whose every figure is v (or cycles through hostile values). */
static void hostile_view(rg_run_view *v, const double *vals, size_t nv)
{
    memset(v, 0, sizeof *v);
    v->id = 7;
    v->n_wl = 6;
    v->wl = calloc(v->n_wl, sizeof *v->wl);
    for (size_t i = 0; i < v->n_wl; i++) {
        rg_wl_view *w = &v->wl[i];
        w->index = (int)i;
        w->pass = (int)i % 3 - 1;
        double *f[] = {&w->bytes, &w->median, &w->mean, &w->min, &w->max, &w->stddev, &w->gbps, &w->t_sol, &w->t_b,
                       &w->score, &w->speedup};
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) *f[k] = vals[(i + k) % nv];
    }
    v->primary_ns = vals[0];
    v->sol = vals[1 % nv];
    v->x_ref = vals[2 % nv];
    v->fast_count = v->fast_total = vals[3 % nv];
    v->peak_gbps = vals[4 % nv];
    v->passed = v->total = -1;
}

static void test_charts_hostile(void **state)
{
    const double sets[][6] = {
        {NAN, NAN, NAN, NAN, NAN, NAN},
        {0, 0, 0, 0, 0, 0},
        {5e-324, 5e-324, DBL_TRUE_MIN, 5e-324, 1e-310, 5e-324},
        {INFINITY, -INFINITY, NAN, 0, -1, 5e-324},
        {DBL_MAX, 1e300, 1e-300, 1, DBL_MAX, 3},
        {1340, 1.34e3, 2e-9, 7e15, 0.5, 12},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        rg_run_view v;
        hostile_view(&v, sets[s], 6);
        rg_buf b = {0};
        rg_chart_latency(&b, &v);
        rg_chart_bandwidth(&b, &v);
        char err[64];
        char *svg = rg_buf_finish(&b, err, sizeof err);
        assert_non_null(svg);
        assert_true(strlen(svg) < 200000);   /* bounded: no loop ran away */
        assert_null(strstr(svg, "nan"));
        if (strstr(svg, "inf")) fail_msg("set %zu: %.200s", s, strstr(svg, "inf") - 100);
        if (s == 5) assert_null(strstr(svg, "e+"));   /* SI labels, not "4e+03" (beyond yotta: e+ is honest) */
        free(svg);
        rg_render_ctx ctx;
        rg_render_ctx_init(&ctx, 0);
        char *page = rg_render_run(&ctx, &v, err, sizeof err);
        assert_non_null(page);
        assert_null(strstr(page, "n/a"));
        assert_null(strstr(page, "0 / 0"));
        assert_null(strstr(page, ">nan"));
        assert_null(strstr(page, ">inf"));
        free(page);
        free(v.wl);
    }
}

/* The spec of one role's object of a manifest document. */
static cJSON *spec_of(cJSON *m, const char *role)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(m, role), "spec");
}

/* The run view of a manifest document, through the typed reader. */
static int model_of(const cJSON *m, const rg_run_row *row, rg_run_view *v, char *err, size_t errlen)
{
    rg_manifest tm;
    if (rg_manifest_read(m, &tm, err, errlen)) return 2;
    int rc = rg_model_run_from_manifest(&tm, row, v, err, errlen);
    rg_manifest_free(&tm);
    return rc;
}

/* The two hangs, from a manifest: null bytes and a denormal median. */
static void test_manifest_null_bytes_denormal_median(void **state)
{
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 5);
    assert_non_null(m);
    cJSON *tw = cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(m, "run"), "ropegrad"), "workloads");
    assert_true(cJSON_GetArraySize(tw) == FX_N);
    for (cJSON *w = tw->child; w; w = w->next) {
        cJSON_ReplaceItemInObject(w, "bytes", cJSON_CreateNull());
        cJSON_ReplaceItemInObject(w, "gbps", cJSON_CreateNull());
        cJSON_ReplaceItemInObject(w, "median", cJSON_CreateNumber(5e-324));
        cJSON_ReplaceItemInObject(w, "min", cJSON_CreateNumber(0));
    }
    rg_run_view v;
    char err[256];
    assert_int_equal(model_of(m, NULL, &v, err, sizeof err), 0);
    cJSON_Delete(m);
    assert_true(isnan(v.wl[0].bytes));
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *page = rg_render_run(&ctx, &v, err, sizeof err);
    assert_non_null(page);
    assert_non_null(strstr(page, "chart-bandwidth-absent"));   /* no bandwidth: said, not drawn */
    assert_non_null(strstr(page, "id=\"chart-latency\""));   /* T_SOL bars still drawn */
    assert_null(strstr(page, "nan"));
    assert_null(strstr(page, "n/a"));
    free(page);
    rg_model_run_free(&v);
}

static void test_page_escapes_manifest_strings(void **state)
{
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 3);
    assert_non_null(m);
    cJSON *sn = cJSON_GetObjectItem(spec_of(m, "run"), "sourceNative");
    cJSON_ReplaceItemInObject(sn, "benchmark", cJSON_CreateString("<img src=x onerror=alert(1)>\"'&"));
    cJSON *impl = spec_of(m, "implementation");
    cJSON_ReplaceItemInObject(impl, "kernelName", cJSON_CreateString("k\" onmouseover=\"x"));
    rg_run_row row;
    memset(&row, 0, sizeof row);
    row.id = 9;
    snprintf(row.evidence, sizeof row.evidence, "<b>");
    rg_run_view v;
    char err[256];
    assert_int_equal(model_of(m, &row, &v, err, sizeof err), 0);
    cJSON_Delete(m);
    v.first_id = 3;
    for (int st = 0; st < 2; st++) {
        rg_render_ctx ctx;
        rg_render_ctx_init(&ctx, st);
        ctx.forms = 1;
        snprintf(ctx.csrf, sizeof ctx.csrf, "\"><x>");
        char *page = rg_render_run(&ctx, &v, err, sizeof err);
        assert_non_null(page);
        assert_null(strstr(page, "<img"));
        assert_null(strstr(page, "onmouseover=\""));
        assert_null(strstr(page, "<b>"));
        assert_null(strstr(page, "\"><x>"));
        assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;"));
        /* The problem link: %-escaped when served, a slug in a static site. */
        if (st == 0) assert_non_null(strstr(page, "href=\"/problems/%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E"));
        else assert_non_null(strstr(page, "href=\"../problems/~3Cimg~20src~3Dx~20onerror~3Dalert~281~29~3E"));
        assert_non_null(strstr(page, "id=\"compare-first\""));
        free(page);
    }
    rg_model_run_free(&v);
}

int main(void)
{
    (void)fx_path;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping),        cmocka_unit_test(test_si_labels),
        cmocka_unit_test(test_charts_hostile),
        cmocka_unit_test(test_page_escapes_manifest_strings),
        cmocka_unit_test(test_manifest_null_bytes_denormal_median),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
