/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chart.c -- the index's three charts (see chart.h).
 *
 * Layout: a legend line at the top, the plot, tick labels, then the axis
 * titles (the y title rotated in a 26-unit column at the left). The left
 * margin is computed from the longest tick or row label, so no label is
 * clipped. A series gets a legend entry only when at least one of its marks
 * is drawn, and a latency row's bars are stacked for the series drawn only,
 * so its label sits at the centre of its own bars.
 */
#include "chart.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "ticks.h"

#define CHAR_W 7.0          /* at most one character's width at the axis font (11 px) */
#define Y_TITLE_COLUMN 26.0 /* room for the rotated y title */
#define LABEL_GAP 8.0
#define LEGEND_Y 16.0
#define PLOT_TOP 36.0

/* A usable chart figure: finite, positive and not denormal. */
static int figure(double v) { return isfinite(v) && v >= DBL_MIN; }

/* The width of s at the axis font: UTF-8 characters, not bytes ("µ" is one). */
static double text_width(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) n += (*p & 0xC0) != 0x80;
    return CHAR_W * (double)n;
}

/* The left edge of a plot whose widest left label is `widest` units wide. */
static double plot_left(double widest) { return Y_TITLE_COLUMN + widest + LABEL_GAP; }

static void svg_open(rg_buf *b, const char *attrs, double height, const char *title)
{
    rg_buf_printf(b, "<svg %s role=\"img\" viewBox=\"0 0 %d %.0f\" width=\"100%%\"><title>", attrs, RG_CHART_WIDTH,
                  height);
    rg_html_esc(b, title);
    rg_buf_puts(b, "</title>\n");
}

/* Text at (x, y); extra: more attributes (markup, not escaped). */
static void text_at(rg_buf *b, double x, double y, const char *anchor, const char *extra, const char *s)
{
    rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" text-anchor=\"%s\"%s>", x, y, anchor, extra);
    rg_html_esc(b, s);
    rg_buf_puts(b, "</text>");
}

/* The x axis title centred under the plot, the y title rotated along it. */
static void axis_titles(rg_buf *b, double x_centre, double x_title_y, double y_centre, const char *x_title,
                        const char *y_title)
{
    rg_buf_printf(b, "<text id=\"x-title\" x=\"%.1f\" y=\"%.1f\" class=\"axis atitle\" text-anchor=\"middle\">",
                  x_centre, x_title_y);
    rg_html_esc(b, x_title);
    rg_buf_printf(b, "</text><text id=\"y-title\" x=\"14\" y=\"%.1f\" class=\"axis atitle\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 14 %.1f)\">", y_centre, y_centre);
    rg_html_esc(b, y_title);
    rg_buf_puts(b, "</text>\n");
}

/* ---- the legend: one entry per series drawn -------------------------------------------------- */

typedef struct legend {
    rg_buf *b;
    double x;
} legend;

enum mark { MARK_BAR, MARK_STROKE, MARK_DOT };

/* An entry: its mark (class cls, or fill colour for a dot) and its text. */
static void legend_entry(legend *l, const char *series, enum mark mark, const char *cls, const char *text)
{
    double x = l->x, y = LEGEND_Y;
    if (mark == MARK_BAR)
        rg_buf_printf(l->b, "<rect data-legend=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"8\" class=\"%s\"/>",
                      series, x, y - 8, cls);
    else if (mark == MARK_STROKE)
        rg_buf_printf(l->b, "<line data-legend=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"%s\"/>",
                      series, x, y - 4, x + 10, y - 4, cls);
    else
        rg_buf_printf(l->b, "<circle data-legend=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>", series, x + 5,
                      y - 4, cls);
    text_at(l->b, x + 14, y, "start", "", text);
    l->x += 14 + text_width(text) + 18;
}

/* ---- latency per workload (log scale) ---------------------------------------------------------- */

enum { LAT_KERNEL, LAT_SOL, LAT_REF, LAT_SERIES };
static const char *const lat_series[LAT_SERIES] = {"kernel", "sol", "ref"};
static const char *const lat_class[LAT_SERIES] = {"k", "sol", "base"};
static const char *const lat_name[LAT_SERIES] = {"kernel median", "T_SOL", "reference T_b"};

#define LAT_BAR 7.0
#define LAT_GAP 10.0

typedef struct lat_layout {
    int e0, e1;                 /* the axis' decades */
    int slot[LAT_SERIES];       /* a series' bar within its row; -1: not drawn */
    int bars[LAT_SERIES];       /* its bars drawn (the kernel's slot may hold only whiskers) */
    int nslots, whiskers;
    double x0, pw, group, bottom, height;
} lat_layout;

static double lat_figure(const rg_wl_view *w, int s)
{
    return s == LAT_KERNEL ? w->median : s == LAT_SOL ? w->t_sol : w->t_b;
}

static int has_whisker(const rg_wl_view *w) { return figure(w->min) && figure(w->max); }

static void lat_row_label(char *out, size_t n, const rg_wl_view *w)
{
    snprintf(out, n, "#%d%s", w->index, w->pass == 0 ? " failed" : "");
}

/* Position of v on a log axis over decades [e0, e1] mapped to [x0, x0 + w]. */
static double logpos(double v, int e0, int e1, double x0, double w)
{
    double l = log10(v);
    if (l < e0) l = e0;
    if (l > e1) l = e1;
    return x0 + w * (l - e0) / (e1 - e0);
}

/* The decades spanning every figure; 0 when there is none. */
static int lat_decades(const rg_run_view *v, lat_layout *L)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < v->n_wl; i++) {
        const rg_wl_view *w = &v->wl[i];
        double xs[5] = {w->median, w->t_sol, w->t_b, w->min, w->max};
        for (int k = 0; k < 5; k++)
            if (figure(xs[k])) lo = fmin(lo, xs[k]), hi = fmax(hi, xs[k]);
    }
    if (!(hi > 0)) return 0;
    L->e1 = (int)ceil(log10(hi));
    L->e0 = (int)floor(log10(lo));
    if (L->e1 <= L->e0) L->e1 = L->e0 + 1;
    if (L->e1 - L->e0 > 12) L->e0 = L->e1 - 12;   /* at most 12 decades; smaller values sit on the axis */
    return 1;
}

static int lat_plan(const rg_run_view *v, lat_layout *L)
{
    memset(L, 0, sizeof *L);
    if (!lat_decades(v, L)) return 0;
    double widest = 0;
    for (size_t i = 0; i < v->n_wl; i++) {
        char lab[48];
        lat_row_label(lab, sizeof lab, &v->wl[i]);
        widest = fmax(widest, text_width(lab));
        L->whiskers += has_whisker(&v->wl[i]);
    }
    for (int s = 0; s < LAT_SERIES; s++) {
        for (size_t i = 0; i < v->n_wl; i++) L->bars[s] += figure(lat_figure(&v->wl[i], s));
        int drawn = L->bars[s] || (s == LAT_KERNEL && L->whiskers);
        L->slot[s] = drawn ? L->nslots++ : -1;
    }
    L->x0 = plot_left(widest);
    L->pw = RG_CHART_WIDTH - L->x0 - 30;
    L->group = L->nslots * LAT_BAR + LAT_GAP;
    L->bottom = PLOT_TOP + (double)v->n_wl * L->group;
    L->height = L->bottom + 44;
    return 1;
}

static void lat_axis(rg_buf *b, const lat_layout *L)
{
    for (int e = L->e0; e <= L->e1; e++) {
        double x = L->x0 + L->pw * (e - L->e0) / (L->e1 - L->e0);
        char lab[48];
        rg_fmt_si(lab, sizeof lab, pow(10, e) * 1e-9, "s");
        rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", x, PLOT_TOP - 4, x,
                      L->bottom);
        text_at(b, x, L->bottom + 14, "middle", "", lab);
        rg_buf_puts(b, "\n");
    }
    axis_titles(b, L->x0 + L->pw / 2, L->bottom + 34, (PLOT_TOP + L->bottom) / 2, "latency (log scale)", "workload");
}

static void lat_legend(rg_buf *b, const lat_layout *L)
{
    legend l = {b, L->x0};
    for (int s = 0; s < LAT_SERIES; s++)
        if (L->bars[s])
            legend_entry(&l, lat_series[s], MARK_BAR, lat_class[s], lat_name[s]);
    if (L->whiskers) legend_entry(&l, "range", MARK_STROKE, "whisker", "kernel min to max");
    rg_buf_puts(b, "\n");
}

static void lat_row(rg_buf *b, const lat_layout *L, const rg_wl_view *w, double y)
{
    char lab[48];
    lat_row_label(lab, sizeof lab, w);
    text_at(b, L->x0 - 6, y + L->nslots * LAT_BAR / 2, "end", " dy=\"0.35em\"", lab);
    for (int s = 0; s < LAT_SERIES; s++) {
        double x = lat_figure(w, s);
        if (L->slot[s] < 0 || !figure(x)) continue;
        char val[48];
        rg_fmt_si(val, sizeof val, x * 1e-9, "s");
        rg_buf_printf(b, "<rect data-series=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" class=\"%s\">"
                         "<title>#%d %s ", lat_series[s], L->x0, y + L->slot[s] * LAT_BAR,
                      fmax(1, logpos(x, L->e0, L->e1, L->x0, L->pw) - L->x0), LAT_BAR - 1, lat_class[s], w->index,
                      lat_name[s]);
        rg_html_esc(b, val);
        rg_buf_puts(b, "</title></rect>");
    }
    if (has_whisker(w)) {
        double yc = y + L->slot[LAT_KERNEL] * LAT_BAR + LAT_BAR / 2;
        double x1 = logpos(w->min, L->e0, L->e1, L->x0, L->pw), x2 = logpos(w->max, L->e0, L->e1, L->x0, L->pw);
        rg_buf_printf(b, "<line data-series=\"range\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                         "class=\"whisker\"/>", x1, yc, x2, yc);
    }
    rg_buf_puts(b, "\n");
}

void rg_chart_latency(rg_buf *b, const rg_run_view *v)
{
    if (!b || !v) return;
    lat_layout L;
    if (!v->wl || !lat_plan(v, &L)) {
        rg_buf_puts(b, "<p class=\"muted\" id=\"chart-latency-absent\">No latency figures in this record.</p>\n");
        return;
    }
    svg_open(b, "id=\"chart-latency\" class=\"chart\"", L.height,
             "Latency per workload, with T_SOL and the reference where the record has them (log scale)");
    lat_legend(b, &L);
    lat_axis(b, &L);
    for (size_t i = 0; i < v->n_wl; i++) lat_row(b, &L, &v->wl[i], PLOT_TOP + (double)i * L.group);
    rg_buf_puts(b, "</svg>\n");
}

/* ---- linear axes (bandwidth, trend) ------------------------------------------------------------ */

typedef struct lin_axis {
    rg_ticks t;
    rg_axis_unit u;
    double widest;              /* the widest tick label */
} lin_axis;

/* Round ticks over [lo, hi] (caller's unit = to_base of base) and the widest label. */
static int lin_plan(lin_axis *a, double lo, double hi, double to_base, const char *base)
{
    if (rg_axis_ticks(lo, hi, &a->t, NULL, 0) || rg_axis_unit_pick(&a->t, to_base, base, &a->u, NULL, 0)) return 0;
    a->widest = 0;
    for (int k = 0; k < a->t.n; k++) {
        char lab[48];
        rg_axis_label(lab, sizeof lab, rg_tick_at(&a->t, k), &a->u);
        a->widest = fmax(a->widest, text_width(lab));
    }
    return 1;
}

/* The y of v on a plot from y0 (top) to y0 + ph (bottom). */
static double lin_y(const lin_axis *a, double v, double y0, double ph)
{
    return y0 + ph - ph * ((v - a->t.lo) / (a->t.hi - a->t.lo));   /* divided first: no overflow near DBL_MAX */
}

/* Grid lines and labels of the y axis, for a plot from x0 to x0 + pw. */
static void lin_y_axis(rg_buf *b, const lin_axis *a, double x0, double pw, double y0, double ph)
{
    for (int k = 0; k < a->t.n; k++) {
        double v = rg_tick_at(&a->t, k), y = lin_y(a, v, y0, ph);
        char lab[48];
        rg_axis_label(lab, sizeof lab, v, &a->u);
        rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", x0, y, x0 + pw, y);
        text_at(b, x0 - 6, y, "end", " dy=\"0.35em\" data-tick=\"y\"", lab);
        rg_buf_puts(b, "\n");
    }
}

/* ---- bandwidth per workload ------------------------------------------------------------------ */

#define BW_PLOT_H 220.0

static void bw_legend(rg_buf *b, const rg_run_view *v, double x0, int passed_bars, int failed_bars)
{
    legend l = {b, x0};
    if (passed_bars) legend_entry(&l, "kernel", MARK_BAR, "k", "achieved (bytes any kernel must move / kernel median)");
    if (failed_bars) legend_entry(&l, "failed", MARK_BAR, "ptfail", "failed workload");
    if (figure(v->peak_gbps)) {
        char peak[48], text[240];
        rg_fmt_si(peak, sizeof peak, v->peak_gbps * 1e9, "B/s");
        snprintf(text, sizeof text, "%.160s %s", v->peak_label, peak);
        legend_entry(&l, "peak", MARK_STROKE, "peak", text);
    }
    rg_buf_puts(b, "\n");
}

static void bw_bar(rg_buf *b, const rg_wl_view *w, const lin_axis *a, double xc, double bw)
{
    double y = lin_y(a, w->gbps, PLOT_TOP, BW_PLOT_H);
    char lab[48];
    rg_fmt_si(lab, sizeof lab, w->gbps * 1e9, "B/s");
    int failed = w->pass == 0;
    rg_buf_printf(b, "<rect data-series=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"%s\">"
                     "<title>#%d ", failed ? "failed" : "kernel", xc - bw / 2, y, bw, PLOT_TOP + BW_PLOT_H - y,
                  failed ? "ptfail" : "k", w->index);
    rg_html_esc(b, lab);
    rg_buf_puts(b, "</title></rect>\n");
}

void rg_chart_bandwidth(rg_buf *b, const rg_run_view *v)
{
    if (!b || !v) return;
    double hi = figure(v->peak_gbps) ? v->peak_gbps : 0;
    int passed_bars = 0, failed_bars = 0;
    for (size_t i = 0; v->wl && i < v->n_wl; i++)
        if (figure(v->wl[i].gbps)) hi = fmax(hi, v->wl[i].gbps), v->wl[i].pass == 0 ? failed_bars++ : passed_bars++;
    lin_axis a;
    if (!(passed_bars + failed_bars) || !lin_plan(&a, 0, hi, 1e9, "B/s")) {
        rg_buf_puts(b, "<p class=\"muted\" id=\"chart-bandwidth-absent\">No bandwidth figures in this record.</p>\n");
        return;
    }
    const double x0 = plot_left(a.widest), pw = RG_CHART_WIDTH - x0 - 20, bottom = PLOT_TOP + BW_PLOT_H;
    double slot = pw / (double)v->n_wl, bw = fmin(28, slot * 0.6);
    svg_open(b, "id=\"chart-bandwidth\" class=\"chart\"", bottom + 44,
             "Achieved bandwidth per workload against the device's peak");
    bw_legend(b, v, x0, passed_bars, failed_bars);
    lin_y_axis(b, &a, x0, pw, PLOT_TOP, BW_PLOT_H);
    if (figure(v->peak_gbps)) {
        double y = lin_y(&a, v->peak_gbps, PLOT_TOP, BW_PLOT_H);
        rg_buf_printf(b, "<line id=\"bandwidth-peak\" data-series=\"peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                         "y2=\"%.1f\" class=\"peak\"/>\n", x0, y, x0 + pw, y);
    }
    for (size_t i = 0; i < v->n_wl; i++) {
        const rg_wl_view *w = &v->wl[i];
        double xc = x0 + slot * ((double)i + 0.5);
        char lab[24];
        snprintf(lab, sizeof lab, "#%d", w->index);
        text_at(b, xc, bottom + 14, "middle", "", lab);
        if (figure(w->gbps)) bw_bar(b, w, &a, xc, bw);
    }
    axis_titles(b, x0 + pw / 2, bottom + 34, PLOT_TOP + BW_PLOT_H / 2, "workload", "bandwidth");
    rg_buf_puts(b, "</svg>\n");
}

/* ---- an implementation line over its runs ------------------------------------------------------ */

#define TREND_PLOT_H 190.0

static int has_interval(const rg_interval *v) { return v->known && figure(v->lo) && figure(v->hi); }

/* The extent of every estimate and interval; 0 when none. */
static int trend_extent(const rg_ranked *e, size_t n, double *lo, double *hi)
{
    *lo = INFINITY, *hi = 0;
    for (size_t i = 0; i < n; i++) {
        const rg_interval *v = &e[i].iv;
        if (!figure(v->est)) continue;
        *lo = fmin(*lo, has_interval(v) ? fmin(v->lo, v->est) : v->est);
        *hi = fmax(*hi, has_interval(v) ? fmax(v->hi, v->est) : v->est);
    }
    return *hi > 0 && isfinite(*lo) && isfinite(*hi);
}

static void trend_legend(rg_buf *b, const rg_ranked *e, size_t n, double x0)
{
    int intervals = 0, suspects = 0, plain = 0;
    for (size_t i = 0; i < n; i++) {
        if (!figure(e[i].iv.est)) continue;
        intervals += has_interval(&e[i].iv);
        e[i].suspect ? suspects++ : plain++;
    }
    legend l = {b, x0};
    if (plain) legend_entry(&l, "point", MARK_DOT, "#246", "primary statistic of a run");
    if (suspects) legend_entry(&l, "suspect", MARK_DOT, "#c00", "suspect run");
    if (intervals) legend_entry(&l, "interval", MARK_STROKE, "interval", "its 95% interval");
    rg_buf_puts(b, "\n");
}

/* A point's tooltip: "run #3, REV: 5.406 µs [5.401, 5.411]", in the axis' unit. */
static void trend_tooltip(rg_buf *b, const rg_ranked *r, const rg_axis_unit *u)
{
    const rg_interval *v = &r->iv;
    rg_buf_printf(b, "<title>run #%lld, ", (long long)r->row.id);
    rg_html_esc(b, r->revision);
    rg_buf_printf(b, ": %.4g ", v->est / u->per);
    rg_html_esc(b, u->name);
    if (has_interval(v)) rg_buf_printf(b, " [%.4g, %.4g]", v->lo / u->per, v->hi / u->per);
    else rg_buf_puts(b, " (interval unknown)");
    if (r->suspect) rg_buf_puts(b, ", suspect");
    rg_buf_puts(b, "</title>");
}

static void trend_point(rg_buf *b, const rg_ranked *r, const lin_axis *a, double x, double y)
{
    if (has_interval(&r->iv))
        rg_buf_printf(b, "<line class=\"interval\" data-series=\"interval\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                         "y2=\"%.1f\" stroke=\"#246\" stroke-width=\"2\"/>", x,
                      lin_y(a, r->iv.lo, PLOT_TOP, TREND_PLOT_H), x, lin_y(a, r->iv.hi, PLOT_TOP, TREND_PLOT_H));
    rg_buf_printf(b, "<circle class=\"point%s\" data-series=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\">",
                  r->suspect ? " suspect" : "", r->suspect ? "suspect" : "point", x, y, r->suspect ? "#c00" : "#246");
    trend_tooltip(b, r, &a->u);
    rg_buf_puts(b, "</circle>");
}

void rg_chart_trend(rg_buf *b, const rg_ranked *e, size_t n)
{
    if (!b) return;
    double lo, hi;
    lin_axis a;
    if (!e || !trend_extent(e, n, &lo, &hi) || !lin_plan(&a, lo, hi, 1e-9, "s")) {
        rg_buf_puts(b, "<p class=\"muted\" id=\"trend-absent\">No figures to chart in this line.</p>\n");
        return;
    }
    const double x0 = plot_left(a.widest), pw = RG_CHART_WIDTH - x0 - 20, bottom = PLOT_TOP + TREND_PLOT_H;
    svg_open(b, "class=\"trend\" aria-label=\"primary statistic over revisions\"", bottom + 44,
             "The primary statistic of each run of this line, oldest first, with its 95% interval");
    trend_legend(b, e, n, x0);
    lin_y_axis(b, &a, x0, pw, PLOT_TOP, TREND_PLOT_H);
    const double inset = 16;   /* the first and last points clear of the axis and the edge */
    double step = n > 1 ? (pw - 2 * inset) / (double)(n - 1) : 0, px = 0, py = 0;
    int have_prev = 0;
    for (size_t i = 0; i < n; i++) {
        double x = x0 + (n > 1 ? inset + step * (double)i : pw / 2);
        char lab[32];
        snprintf(lab, sizeof lab, "#%lld", (long long)e[i].row.id);
        text_at(b, x, bottom + 14, "middle", "", lab);
        if (!figure(e[i].iv.est)) continue;
        double y = lin_y(&a, e[i].iv.est, PLOT_TOP, TREND_PLOT_H);
        if (have_prev)
            rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>", px, py, x, y);
        trend_point(b, &e[i], &a, x, y);
        rg_buf_puts(b, "\n");
        px = x, py = y, have_prev = 1;
    }
    axis_titles(b, x0 + pw / 2, bottom + 34, PLOT_TOP + TREND_PLOT_H / 2, "run, oldest first", "latency");
    rg_buf_puts(b, "</svg>\n");
}

/* ---- the field: every implementation of a group per workload ---------------------------------- */

#define FIELD_PLOT_H 260.0
#define FIELD_MAX_WL 256
#define FIELD_LEGEND_LINE 18.0

static const char *const field_colour[RG_FIELD_MAX_SERIES] = {"#246", "#c60", "#393", "#a2a", "#c00", "#088",
                                                              "#860", "#55c", "#b48", "#444", "#6a0", "#39c"};

/* The workload indices any series has, ascending (at most FIELD_MAX_WL). */
static size_t field_workloads(const rg_group_view *g, int *idx)
{
    size_t n = 0;
    for (size_t s = 0; s < g->n_series; s++)
        for (size_t i = 0; i < g->series[s].n; i++) {
            int w = g->series[s].index[i];
            size_t k = 0;
            while (k < n && idx[k] < w) k++;
            if ((k < n && idx[k] == w) || n == FIELD_MAX_WL) continue;
            memmove(idx + k + 1, idx + k, (n - k) * sizeof *idx);
            idx[k] = w;
            n++;
        }
    return n;
}

/* The decades spanning every median; 0 when there is none. */
static int field_decades(const rg_group_view *g, int *e0, int *e1)
{
    double lo = INFINITY, hi = 0;
    for (size_t s = 0; s < g->n_series; s++)
        for (size_t i = 0; i < g->series[s].n; i++)
            if (figure(g->series[s].median[i])) lo = fmin(lo, g->series[s].median[i]), hi = fmax(hi, g->series[s].median[i]);
    if (!(hi > 0)) return 0;
    *e1 = (int)ceil(log10(hi));
    *e0 = (int)floor(log10(lo));
    if (*e1 <= *e0) *e1 = *e0 + 1;
    if (*e1 - *e0 > 12) *e0 = *e1 - 12;
    return 1;
}

/* The legend, wrapped to the chart's width; returns the plot's top. */
static double field_legend(rg_buf *b, const rg_group_view *g, double x0)
{
    double x = x0, y = LEGEND_Y;
    for (size_t s = 0; s < g->n_series; s++) {
        char text[120];
        snprintf(text, sizeof text, "#%lld %.90s", (long long)g->series[s].id, g->series[s].kernel);
        double w = 14 + text_width(text) + 18;
        if (x > x0 && x + w > RG_CHART_WIDTH) x = x0, y += FIELD_LEGEND_LINE;
        rg_buf_printf(b, "<circle data-legend=\"s%zu\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>", s, x + 5, y - 4,
                      field_colour[s]);
        text_at(b, x + 14, y, "start", "", text);
        x += w;
    }
    rg_buf_puts(b, "\n");
    return y + PLOT_TOP - LEGEND_Y;
}

static double field_y(double v, int e0, int e1, double top)
{
    return top + FIELD_PLOT_H - (logpos(v, e0, e1, 0, FIELD_PLOT_H));
}

static void field_axis(rg_buf *b, int e0, int e1, double x0, double pw, double top)
{
    for (int e = e0; e <= e1; e++) {
        double y = top + FIELD_PLOT_H * (1 - (double)(e - e0) / (e1 - e0));
        char lab[48];
        rg_fmt_si(lab, sizeof lab, pow(10, e) * 1e-9, "s");
        rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", x0, y, x0 + pw, y);
        text_at(b, x0 - 6, y, "end", " dy=\"0.35em\" data-tick=\"y\"", lab);
        rg_buf_puts(b, "\n");
    }
}

/* One series: a line through its workloads' medians, a dot at each (its tooltip the figure). */
static void field_series(rg_buf *b, const rg_field_series *s, size_t si, const int *idx, size_t nw, double x0,
                         double slot, int e0, int e1, double top)
{
    double px = 0, py = 0;
    int have_prev = 0;
    for (size_t k = 0; k < nw; k++) {
        size_t i = 0;
        while (i < s->n && s->index[i] != idx[k]) i++;
        if (i == s->n || !figure(s->median[i]) || s->pass[i] == 0) {
            have_prev = 0;
            continue;
        }
        double x = x0 + slot * ((double)k + 0.5), y = field_y(s->median[i], e0, e1, top);
        if (have_prev)
            rg_buf_printf(b, "<line data-series=\"s%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                             "stroke=\"%s\" stroke-width=\"1.5\"/>", si, px, py, x, y, field_colour[si]);
        char val[48];
        rg_fmt_si(val, sizeof val, s->median[i] * 1e-9, "s");
        rg_buf_printf(b, "<circle data-series=\"s%zu\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>#%lld ", si,
                      x, y, field_colour[si], (long long)s->id);
        rg_html_esc(b, s->kernel);
        rg_buf_printf(b, ", workload #%d: ", idx[k]);
        rg_html_esc(b, val);
        rg_buf_puts(b, "</title></circle>");
        px = x, py = y, have_prev = 1;
    }
    rg_buf_puts(b, "\n");
}

void rg_chart_field(rg_buf *b, const rg_group_view *g)
{
    if (!b || !g) return;
    int idx[FIELD_MAX_WL];
    size_t nw = g->series ? field_workloads(g, idx) : 0;
    int e0, e1;
    if (!nw || !field_decades(g, &e0, &e1)) {
        rg_buf_puts(b, "<p class=\"muted field-absent\">No per-workload figures to chart in this group.</p>\n");
        return;
    }
    const double x0 = plot_left(text_width("100 ms")), pw = RG_CHART_WIDTH - x0 - 20;
    rg_buf t = {0};   /* the legend first, to learn the plot's top */
    double top = field_legend(&t, g, x0), bottom = top + FIELD_PLOT_H;
    svg_open(b, "class=\"chart field\"", bottom + 44,
             "Every implementation of this group: its median per workload (log scale)");
    char err[64];
    char *legend_svg = rg_buf_finish(&t, err, sizeof err);
    if (legend_svg) rg_buf_puts(b, legend_svg);
    free(legend_svg);
    field_axis(b, e0, e1, x0, pw, top);
    double slot = pw / (double)nw;
    for (size_t k = 0; k < nw; k++) {
        char lab[24];
        snprintf(lab, sizeof lab, "#%d", idx[k]);
        text_at(b, x0 + slot * ((double)k + 0.5), bottom + 14, "middle", "", lab);
    }
    for (size_t s = 0; s < g->n_series && s < RG_FIELD_MAX_SERIES; s++)
        field_series(b, &g->series[s], s, idx, nw, x0, slot, e0, e1, top);
    axis_titles(b, x0 + pw / 2, bottom + 34, top + FIELD_PLOT_H / 2, "workload", "median (log scale)");
    rg_buf_puts(b, "</svg>\n");
}
