/* SPDX-License-Identifier: Apache-2.0 */
/* test_chart.c -- the index's three charts (src/index/chart.c), as a reader
 * sees them: the legend names exactly the series drawn, a latency row's
 * label sits at the centre of its bars, every chart has axis titles and
 * fills its column, the history chart's ticks are round with one unit (µs,
 * ms...) and no label runs off the left edge, strings are escaped. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render.h"

#define MU "\xc2\xb5"

static char *finish(rg_buf *b)
{
    char err[64];
    char *s = rg_buf_finish(b, err, sizeof err);
    if (!s) fail_msg("%s", err);
    return s;
}

/* A run view of n workloads: medians around 5 µs, min/max around them;
 * T_SOL and the reference figure only when asked. */
static void run_view(rg_run_view *v, size_t n, int with_sol, int with_ref)
{
    memset(v, 0, sizeof *v);
    v->n_wl = n;
    v->wl = calloc(n, sizeof *v->wl);
    assert_non_null(v->wl);
    v->peak_gbps = NAN;
    for (size_t i = 0; i < n; i++) {
        rg_wl_view *w = &v->wl[i];
        w->index = (int)i;
        w->pass = 1;
        w->median = 5000 + 100.0 * (double)i;
        w->min = w->median * 0.98, w->max = w->median * 1.05;
        w->gbps = 2000 + 150.0 * (double)i;
        w->t_sol = with_sol ? 1800 : NAN;
        w->t_b = with_ref ? 40000 : NAN;
    }
}

/* The set of values of attribute attr ("data-legend", "data-series") in
 * svg, as a string of "name;" entries (each once). */
static void names_of(const char *svg, const char *attr, char *out, size_t n)
{
    out[0] = '\0';
    char key[32];
    snprintf(key, sizeof key, "%s=\"", attr);
    for (const char *p = svg; (p = strstr(p, key)); p++) {
        char name[32], entry[40];
        if (sscanf(p + strlen(key), "%31[^\"]", name) != 1) continue;
        snprintf(entry, sizeof entry, "%s;", name);
        if (!strstr(out, entry) && strlen(out) + strlen(entry) < n) strcat(out, entry);
    }
}

/* The legend lists a series if and only if the chart draws it. */
static void legend_matches_drawn(const char *svg, const char *want)
{
    char legend[256], drawn[256];
    names_of(svg, "data-legend", legend, sizeof legend);
    names_of(svg, "data-series", drawn, sizeof drawn);
    if (strcmp(legend, want) || strcmp(drawn, want) != 0) {
        /* the orders may differ: compare as sets */
        for (const char *p = want; *p;) {
            const char *e = strchr(p, ';');
            char one[40];
            snprintf(one, sizeof one, "%.*s", (int)(e - p + 1), p);
            if (!strstr(legend, one) || !strstr(drawn, one))
                fail_msg("series %s: legend {%s}, drawn {%s}", one, legend, drawn);
            p = e + 1;
        }
        if (strlen(legend) != strlen(want) || strlen(drawn) != strlen(want))
            fail_msg("legend {%s}, drawn {%s}, want {%s}", legend, drawn, want);
    }
}

static void fills_column(const char *svg)
{
    assert_non_null(strstr(svg, "viewBox=\"0 0 950 "));
    assert_non_null(strstr(svg, "width=\"100%\""));
    assert_null(strstr(svg, "width=\"720\""));
}

static void test_latency_legend_is_what_is_drawn(void **state)
{
    (void)state;
    const struct {
        int sol, ref;
        const char *want;
    } cases[] = {
        {0, 0, "kernel;range;"},            /* a CPU run: no T_SOL, no reference */
        {1, 0, "kernel;sol;range;"},        /* a GPU run without a baseline */
        {1, 1, "kernel;sol;ref;range;"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rg_run_view v;
        run_view(&v, 4, cases[c].sol, cases[c].ref);
        rg_buf b = {0};
        rg_chart_latency(&b, &v);
        char *svg = finish(&b);
        legend_matches_drawn(svg, cases[c].want);
        if (!cases[c].sol) assert_null(strstr(svg, ">T_SOL<"));
        if (!cases[c].ref) assert_null(strstr(svg, ">reference T_b<"));
        assert_non_null(strstr(svg, ">latency (log scale)</text>"));
        assert_non_null(strstr(svg, ">workload</text>"));
        fills_column(svg);
        free(svg);
        free(v.wl);
    }
}

/* Each row label's y against its bars: the label (centred on its line by
 * dy=0.35em) must sit within a pixel of the middle of the row's bars. */
static void test_latency_labels_centred_on_bars(void **state)
{
    (void)state;
    for (int sol = 0; sol <= 1; sol++) {
        rg_run_view v;
        run_view(&v, 5, sol, 0);
        rg_buf b = {0};
        rg_chart_latency(&b, &v);
        char *svg = finish(&b);
        int rows = 0;
        for (const char *p = svg; (p = strstr(p, "text-anchor=\"end\" dy=\"0.35em\">#")); p++) {
            const char *y_at = p;
            while (y_at > svg && strncmp(y_at, " y=\"", 4)) y_at--;
            double label_y = atof(y_at + 4), top = INFINITY, bottom = -INFINITY;
            const char *end = strstr(p, "\n");
            for (const char *r = p; (r = strstr(r, "<rect data-series=")) && r < end; r++) {
                double y, h;
                const char *ya = strstr(r, " y=\""), *ha = strstr(r, " height=\"");
                y = atof(ya + 4), h = atof(ha + 9);
                top = fmin(top, y), bottom = fmax(bottom, y + h);
            }
            assert_true(isfinite(top));
            if (fabs(label_y - (top + bottom) / 2) > 1)
                fail_msg("row %d: label at y %.1f, bars %.1f..%.1f", rows, label_y, top, bottom);
            rows++;
        }
        assert_int_equal(rows, 5);
        free(svg);
        free(v.wl);
    }
}

static void test_bandwidth_legend_titles_width(void **state)
{
    (void)state;
    rg_run_view v;
    run_view(&v, 4, 1, 0);
    rg_buf b = {0};
    rg_chart_bandwidth(&b, &v);   /* no peak, every workload passed */
    char *svg = finish(&b);
    legend_matches_drawn(svg, "kernel;");
    assert_non_null(strstr(svg, ">bandwidth</text>"));
    assert_non_null(strstr(svg, ">workload</text>"));
    assert_non_null(strstr(svg, ">0 TB/s</text>"));   /* round ticks, one unit: 0..3 TB/s by 1 */
    assert_non_null(strstr(svg, ">3 TB/s</text>"));
    assert_null(strstr(svg, "GB/s</text>"));
    fills_column(svg);
    free(svg);
    v.peak_gbps = 4800;
    snprintf(v.peak_label, sizeof v.peak_label, "NVIDIA H200 datasheet peak");
    v.wl[2].pass = 0;
    b = (rg_buf){0};
    rg_chart_bandwidth(&b, &v);
    svg = finish(&b);
    legend_matches_drawn(svg, "kernel;failed;peak;");
    assert_non_null(strstr(svg, "NVIDIA H200 datasheet peak 4.8 TB/s"));
    assert_non_null(strstr(svg, ">5 TB/s</text>"));
    free(svg);
    free(v.wl);
}

/* A history line of n runs with estimates est[i] ns and intervals +-0.01%. */
static rg_ranked *line_of(const double *est, size_t n)
{
    rg_ranked *e = calloc(n, sizeof *e);
    assert_non_null(e);
    for (size_t i = 0; i < n; i++) {
        e[i].row.id = (int64_t)i + 1;
        e[i].iv = (rg_interval){est[i], est[i] * 0.9999, est[i] * 1.0001, 1};
        snprintf(e[i].revision, sizeof e[i].revision, "git %012zu", i);
    }
    return e;
}

/* The y tick labels of a chart: their text and the x of their right end. */
static int y_ticks(const char *svg, char lab[][48], double *x, int cap)
{
    int n = 0;
    for (const char *p = svg; n < cap && (p = strstr(p, "data-tick=\"y\">")); p++) {
        sscanf(p + strlen("data-tick=\"y\">"), "%47[^<]", lab[n]);
        const char *xa = p;
        while (xa > svg && strncmp(xa, "<text x=\"", 9)) xa--;
        x[n++] = atof(xa + 9);
    }
    return n;
}

/* "5.405 µs" -> 5.405 and its unit; 0 when the label is not "NUMBER UNIT". */
static int split_label(const char *lab, double *v, char *unit)
{
    char num[32];
    return sscanf(lab, "%31s %15s", num, unit) == 2 && sscanf(num, "%lf", v) == 1;
}

static void expect_round_ticks(const char *svg, const char *unit_want, double step_want)
{
    char lab[16][48], unit[16];
    double x[16], v[16];
    int n = y_ticks(svg, lab, x, 16);
    if (n < 4 || n > 6) fail_msg("%d ticks", n);
    for (int k = 0; k < n; k++) {
        if (!split_label(lab[k], &v[k], unit)) fail_msg("label '%s'", lab[k]);
        assert_string_equal(unit, unit_want);   /* one unit on the whole axis */
        size_t chars = 0;
        for (const unsigned char *c = (const unsigned char *)lab[k]; *c; c++) chars += (*c & 0xC0) != 0x80;
        /* 6.2 px a character at 11 px: the label starts right of the y title's column */
        if (x[k] - 6.2 * (double)chars < 20) fail_msg("label '%s' ends at x %.1f: clipped", lab[k], x[k]);
    }
    for (int k = 1; k < n; k++) assert_true(fabs(v[k] - v[k - 1] - step_want) < 1e-9);
    assert_true(fabs(v[0] / step_want - round(v[0] / step_want)) < 1e-6);
}

static void test_trend_round_ticks_one_unit(void **state)
{
    (void)state;
    const double close[] = {5401, 5411, 5406};            /* the issue's 5.401..5.411 us */
    rg_ranked *e = line_of(close, 3);
    rg_buf b = {0};
    rg_chart_trend(&b, e, 3);
    char *svg = finish(&b);
    expect_round_ticks(svg, MU "s", 0.005);
    assert_non_null(strstr(svg, ">5.400 " MU "s<"));     /* 5.400 .. 5.415 µs by 0.005 */
    assert_non_null(strstr(svg, ">5.415 " MU "s<"));
    assert_null(strstr(svg, " us"));
    legend_matches_drawn(svg, "point;interval;");
    assert_non_null(strstr(svg, ">run, oldest first</text>"));
    assert_non_null(strstr(svg, ">latency</text>"));
    assert_non_null(strstr(svg, "run #2, git 000000000001: 5.411 " MU "s"));
    fills_column(svg);
    free(svg);
    free(e);

    const double wide[] = {518852, 1022300, 700000, 640000};   /* 518.852..1022.300 us */
    e = line_of(wide, 4);
    e[3].suspect = 1;
    e[2].iv.known = 0;
    snprintf(e[1].revision, sizeof e[1].revision, "<b>&\"'");
    b = (rg_buf){0};
    rg_chart_trend(&b, e, 4);
    svg = finish(&b);
    expect_round_ticks(svg, "ms", 0.2);                   /* 0.4 .. 1.2 ms: a switch of unit, no clipping */
    legend_matches_drawn(svg, "point;suspect;interval;");
    assert_non_null(strstr(svg, "run #2, &lt;b&gt;&amp;&quot;&#39;: "));
    assert_null(strstr(svg, "<b>"));
    free(svg);
    free(e);
}

/* No "nan" or "inf" printed anywhere: such figures are left out, not drawn. */
static void no_nonfinite_text(const char *s)
{
    const char *bad[] = {"nan", "inf"};
    for (int k = 0; k < 2; k++)
        if (strstr(s, bad[k])) fail_msg("'%s' in: %.120s", bad[k], strstr(s, bad[k]));
}

static void test_trend_without_figures(void **state)
{
    (void)state;
    const double bad[] = {NAN, INFINITY, 0, -5, 5e-324};
    rg_ranked *e = line_of(bad, 5);
    rg_buf b = {0};
    rg_chart_trend(&b, e, 5);
    rg_chart_trend(&b, NULL, 3);
    char *s = finish(&b);
    assert_non_null(strstr(s, "id=\"trend-absent\""));
    assert_null(strstr(s, "<svg"));
    no_nonfinite_text(s);
    free(s);
    free(e);
    const double one[] = {DBL_MAX / 4, 1e300};   /* finite, huge: one round axis, in seconds */
    e = line_of(one, 2);
    e[0].iv.known = e[1].iv.known = 0;
    b = (rg_buf){0};
    rg_chart_trend(&b, e, 2);
    s = finish(&b);
    no_nonfinite_text(s);
    assert_true(strlen(s) < 100000);
    free(s);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latency_legend_is_what_is_drawn),
        cmocka_unit_test(test_latency_labels_centred_on_bars),
        cmocka_unit_test(test_bandwidth_legend_titles_width),
        cmocka_unit_test(test_trend_round_ticks_one_unit),
        cmocka_unit_test(test_trend_without_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
