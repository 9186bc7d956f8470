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
    const char *dot = strstr(w->shape, " · ");
    int len = dot ? (int)(dot - w->shape) : (int)strlen(w->shape);
    snprintf(out, n, "#%d%s%.*s%s", w->index, len ? " " : "", len, w->shape, w->pass == 0 ? " failed" : "");
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
        if (w->shape[0]) {   /* the shape over the number */
            const char *dot = strstr(w->shape, " · ");
            char top[48];
            snprintf(top, sizeof top, "%.*s", dot ? (int)(dot - w->shape) : (int)strlen(w->shape), w->shape);
            rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis wl\" text-anchor=\"middle\">", xc, bottom + 14);
            rg_html_esc(b, top);
            rg_buf_printf(b, "<tspan x=\"%.1f\" dy=\"1.2em\" class=\"sub\">%s</tspan></text>", xc, lab);
        } else text_at(b, xc, bottom + 14, "middle", "", lab);
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

/* ---- workloads on an x axis: ordered by bytes moved, labelled by shape ---------------------- */

#define WL_MAX 256

typedef struct wl_axis {
    int index[WL_MAX];
    double bytes[WL_MAX];
    char shape[WL_MAX][48];
    size_t n;
} wl_axis;

/* Adds workload index (bytes, shape) once. */
static void wl_add(wl_axis *a, int index, double bytes, const char *shape)
{
    for (size_t k = 0; k < a->n; k++)
        if (a->index[k] == index) {
            if (!figure(a->bytes[k]) && figure(bytes)) a->bytes[k] = bytes;
            return;
        }
    if (a->n == WL_MAX) return;
    a->index[a->n] = index;
    a->bytes[a->n] = bytes;
    snprintf(a->shape[a->n], sizeof a->shape[a->n], "%s", shape ? shape : "");
    a->n++;
}

/* By bytes moved (unknown last), then index. */
static void wl_sort(wl_axis *a)
{
    for (size_t i = 1; i < a->n; i++)
        for (size_t k = i; k > 0; k--) {
            double x = figure(a->bytes[k - 1]) ? a->bytes[k - 1] : INFINITY, y = figure(a->bytes[k]) ? a->bytes[k] : INFINITY;
            if (x < y || (x == y && a->index[k - 1] < a->index[k])) break;
            int ti = a->index[k];
            a->index[k] = a->index[k - 1], a->index[k - 1] = ti;
            double tb = a->bytes[k];
            a->bytes[k] = a->bytes[k - 1], a->bytes[k - 1] = tb;
            char ts[48];
            memcpy(ts, a->shape[k], sizeof ts);
            memcpy(a->shape[k], a->shape[k - 1], sizeof ts);
            memcpy(a->shape[k - 1], ts, sizeof ts);
        }
}

static size_t wl_find(const wl_axis *a, int index)
{
    for (size_t k = 0; k < a->n; k++)
        if (a->index[k] == index) return k;
    return a->n;
}

/* The x labels: the shape ("#N" without one) over the bytes moved, every
 * `every`-th workload where they would not fit side by side. */
static void wl_labels(rg_buf *b, const wl_axis *a, double x0, double slot, double y)
{
    size_t every = 1;
    while (slot * (double)every < 50) every++;
    for (size_t k = 0; k < a->n; k += every) {
        char top[48], bytes[32] = "";
        const char *shape = a->shape[k], *dot = strstr(shape, " · ");
        if (shape[0]) snprintf(top, sizeof top, "%.*s", (int)(dot ? (size_t)(dot - shape) : strlen(shape)), shape);
        else snprintf(top, sizeof top, "#%d", a->index[k]);
        if (figure(a->bytes[k])) rg_fmt_si(bytes, sizeof bytes, a->bytes[k], "B");
        double x = x0 + slot * ((double)k + 0.5);
        rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis wl\" text-anchor=\"middle\" data-workload=\"%d\">",
                      x, y, a->index[k]);
        rg_html_esc(b, top);
        rg_buf_printf(b, "<tspan x=\"%.1f\" dy=\"1.2em\" class=\"sub\">", x);
        rg_html_esc(b, dot ? dot + strlen(" · ") : bytes);
        rg_buf_puts(b, "</tspan></text>");
    }
    rg_buf_puts(b, "\n");
}

/* ---- the field: the top implementations of a group per workload ---------------------------- */

#define FIELD_PLOT_H 280.0
#define FIELD_LEGEND_LINE 18.0

static const char *const field_colour[RG_FIELD_CHART_LINES] = {"#1b4a8f", "#c25a00", "#2a8a3e", "#9b2f9b", "#b8860b",
                                                               "#555"};

/* The series' y value: achieved bandwidth as a share of peak (%), or GB/s
 * where the GPU's peak is not known. NAN when absent. */
static double field_value(const rg_group_view *g, const rg_field_series *s, size_t i)
{
    if (!figure(s->median[i]) || !figure(s->bytes[i]) || s->pass[i] == 0) return NAN;
    double gbps = s->bytes[i] / s->median[i];
    return figure(g->peak_gbps) ? 100 * gbps / g->peak_gbps : gbps;
}

/* The legend, wrapped to the chart's width; returns the plot's top. */
static double field_legend(rg_buf *b, const rg_group_view *g, double x0)
{
    double x = x0, y = LEGEND_Y;
    for (size_t s = 0; s < g->n_series; s++) {
        char text[240];
        snprintf(text, sizeof text, "%.200s%s", g->series[s].name[0] ? g->series[s].name : g->series[s].kernel,
                 g->series[s].reference ? " (reference)" : "");
        double w = 14 + text_width(text) + 18;
        if (x > x0 && x + w > RG_CHART_WIDTH) x = x0, y += FIELD_LEGEND_LINE;
        rg_buf_printf(b, "<line data-legend=\"s%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                         "stroke-width=\"3\"%s/>", s, x, y - 4, x + 10, y - 4, field_colour[s],
                      g->series[s].reference ? " stroke-dasharray=\"3 2\"" : "");
        text_at(b, x + 14, y, "start", " class=\"axis legend\"", text);
        x += w;
    }
    rg_buf_puts(b, "\n");
    return y + PLOT_TOP - LEGEND_Y + 8;
}

static double field_y(double v, double top, double ymax) { return top + FIELD_PLOT_H * (1 - fmin(v, ymax) / ymax); }

/* The y axis: 0 to 100% (more when some figure is above), every 20%; or GB/s. */
static double field_axis(rg_buf *b, const rg_group_view *g, double vmax, double x0, double pw, double top)
{
    int share = figure(g->peak_gbps);
    double ymax = share ? fmax(100, 20 * ceil(vmax / 20)) : 0;
    lin_axis a;
    if (!share) {
        if (!lin_plan(&a, 0, vmax, 1e9, "B/s")) return 0;
        ymax = a.t.hi;
        lin_y_axis(b, &a, x0, pw, top, FIELD_PLOT_H);
        return ymax;
    }
    for (double t = 0; t <= ymax + 1e-9; t += 20) {
        double y = field_y(t, top, ymax);
        char lab[16];
        snprintf(lab, sizeof lab, "%.0f%%", t);
        rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", x0, y, x0 + pw, y);
        text_at(b, x0 - 6, y, "end", " dy=\"0.35em\" data-tick=\"y\"", lab);
    }
    double y = field_y(100, top, ymax);
    char peak[48], text[300];
    rg_fmt_si(peak, sizeof peak, g->peak_gbps * 1e9, "B/s");
    snprintf(text, sizeof text, "100%% = %.160s %s: the floor (T_SOL)", g->peak_label, peak);
    rg_buf_printf(b, "<line id=\"field-peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"peak\"/>", x0, y,
                  x0 + pw, y);
    text_at(b, x0 + pw - 4, y - 5, "end", " class=\"axis peaklabel\"", text);
    rg_buf_puts(b, "\n");
    return ymax;
}

/* Where even the shortest time measured in the group (launch latency) caps
 * the share of peak: a dashed ceiling, and the workloads it holds below half
 * of peak shaded. */
static void field_launch(rg_buf *b, const rg_group_view *g, const wl_axis *a, double x0, double slot, double top,
                         double ymax)
{
    if (!figure(g->peak_gbps) || !figure(g->floor_ns)) return;
    char fl[48];
    rg_fmt_si(fl, sizeof fl, g->floor_ns * 1e-9, "s");
    for (size_t k = 0; k < a->n; k++) {
        if (!figure(a->bytes[k]) || 100 * (a->bytes[k] / g->peak_gbps) / g->floor_ns >= 50) continue;
        rg_buf_printf(b, "<rect class=\"launchbound\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>"
                         "near launch latency: moving these bytes at peak takes less than half of ", x0 + slot * (double)k,
                      top, slot, FIELD_PLOT_H);
        rg_html_esc(b, fl);
        rg_buf_puts(b, ", the shortest time any run here took on any workload</title></rect>");
    }
    int drawn = 0;
    rg_buf_puts(b, "<polyline id=\"launch-ceiling\" class=\"launch\" fill=\"none\" points=\"");
    for (size_t k = 0; k < a->n; k++) {
        if (!figure(a->bytes[k])) continue;
        double cap = fmin(100, 100 * (a->bytes[k] / g->peak_gbps) / g->floor_ns);
        rg_buf_printf(b, "%.1f,%.1f ", x0 + slot * ((double)k + 0.5), field_y(cap, top, ymax));
        drawn++;
    }
    rg_buf_puts(b, "\"/>\n");
    if (drawn) {
        char text[200];
        snprintf(text, sizeof text, "ceiling if a kernel takes at least %s (the shortest time measured here: launch "
                 "latency)", fl);
        text_at(b, x0 + 4, top + FIELD_PLOT_H - 6, "start", " class=\"axis launchlabel\"", text);
    }
    rg_buf_puts(b, "\n");
}

/* " (TEXT)", escaped. */
static void put_paren(rg_buf *b, const char *text)
{
    rg_buf_puts(b, " (");
    rg_html_esc(b, text);
    rg_buf_puts(b, ")");
}

static void field_series(rg_buf *b, const rg_group_view *g, size_t si, const wl_axis *a, double x0, double slot,
                         double top, double ymax)
{
    const rg_field_series *s = &g->series[si];
    int share = figure(g->peak_gbps);
    double px = 0, py = 0;
    int have_prev = 0;
    for (size_t k = 0; k < a->n; k++) {
        size_t i = 0;
        while (i < s->n && s->index[i] != a->index[k]) i++;
        double v = i < s->n ? field_value(g, s, i) : NAN;
        if (!isfinite(v)) {
            have_prev = 0;
            continue;
        }
        double x = x0 + slot * ((double)k + 0.5), y = field_y(v, top, ymax);
        if (have_prev)
            rg_buf_printf(b, "<line data-series=\"s%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                             "stroke-width=\"2\"%s/>", si, px, py, x, y, field_colour[si],
                          s->reference ? " stroke-dasharray=\"5 3\"" : "");
        char val[48], bw[48];
        rg_fmt_si(val, sizeof val, s->median[i] * 1e-9, "s");
        rg_fmt_si(bw, sizeof bw, s->bytes[i] / s->median[i] * 1e9, "B/s");
        rg_buf_printf(b, "<circle data-series=\"s%zu\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>", si, x, y,
                      field_colour[si]);
        rg_html_esc(b, s->name[0] ? s->name : s->kernel);
        rg_buf_printf(b, ", workload #%d", a->index[k]);
        if (s->shape[i][0]) put_paren(b, s->shape[i]);
        rg_buf_puts(b, ": ");
        rg_html_esc(b, val);
        rg_buf_puts(b, ", ");
        rg_html_esc(b, bw);
        if (share) rg_buf_printf(b, ", %.0f%% of peak", v);
        rg_buf_puts(b, "</title></circle>");
        px = x, py = y, have_prev = 1;
    }
    rg_buf_puts(b, "\n");
}

void rg_chart_field(rg_buf *b, const rg_group_view *g)
{
    if (!b || !g) return;
    wl_axis *a = calloc(1, sizeof *a);
    double vmax = 0;
    for (size_t s = 0; a && g->series && s < g->n_series; s++)
        for (size_t i = 0; i < g->series[s].n; i++) {
            wl_add(a, g->series[s].index[i], g->series[s].bytes[i], g->series[s].shape[i]);
            double v = field_value(g, &g->series[s], i);
            if (isfinite(v)) vmax = fmax(vmax, v);
        }
    if (!a || !a->n || !(vmax > 0)) {
        free(a);
        rg_buf_puts(b, "<p class=\"muted field-absent\">No chart: no implementation of this group that ranks has "
                       "per-workload figures (a reported record carries one figure).</p>\n");
        return;
    }
    wl_sort(a);
    const double x0 = plot_left(text_width("100%") + 8), pw = RG_CHART_WIDTH - x0 - 12;
    rg_buf t = {0};   /* the legend first, to learn the plot's top */
    double top = field_legend(&t, g, x0), bottom = top + FIELD_PLOT_H;
    int share = figure(g->peak_gbps);
    svg_open(b, "class=\"chart field\"", bottom + 58,
             share ? "The top implementations of this group: achieved bandwidth per workload as a share of the GPU's "
                     "peak (100% is the speed-of-light floor)"
                   : "The top implementations of this group: achieved bandwidth per workload");
    char err[64];
    char *legend_svg = rg_buf_finish(&t, err, sizeof err);
    if (legend_svg) rg_buf_puts(b, legend_svg);
    free(legend_svg);
    double slot = pw / (double)a->n;
    double ymax = field_axis(b, g, vmax, x0, pw, top);
    if (ymax > 0) {
        field_launch(b, g, a, x0, slot, top, ymax);
        wl_labels(b, a, x0, slot, bottom + 14);
        for (size_t s = 0; s < g->n_series && s < RG_FIELD_CHART_LINES; s++) field_series(b, g, s, a, x0, slot, top, ymax);
    }
    axis_titles(b, x0 + pw / 2, bottom + 48, top + FIELD_PLOT_H / 2,
                "workload (batch × sequence, bytes moved), ordered by bytes moved",
                share ? "achieved bandwidth, % of peak" : "achieved bandwidth");
    rg_buf_puts(b, "</svg>\n");
    free(a);
}

/* ---- records over time -------------------------------------------------------------------- */

#define REC_PLOT_H 220.0

/* Days since 1970-01-01 of "YYYY-MM-DD..." (Howard Hinnant's days_from_civil); NAN when unreadable. */
static double day_of(const char *d)
{
    int y, m, dd;
    if (!d || sscanf(d, "%4d-%2d-%2d", &y, &m, &dd) != 3 || m < 1 || m > 12 || dd < 1 || dd > 31) return NAN;
    y -= m <= 2;
    int era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (unsigned)((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + dd - 1);
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (double)era * 146097 + (double)doe - 719468;
}

void rg_chart_records(rg_buf *b, const rg_records_group *r)
{
    if (!b || !r) return;
    double d0 = INFINITY, d1 = -INFINITY, lo = INFINITY, hi = 0;
    for (size_t i = 0; i < r->n; i++) {
        double d = day_of(r->p[i].date);
        if (!isfinite(d) || !figure(r->p[i].primary_ns)) continue;
        d0 = fmin(d0, d), d1 = fmax(d1, d);
        lo = fmin(lo, r->p[i].primary_ns), hi = fmax(hi, r->p[i].primary_ns);
    }
    lin_axis a;
    if (!(hi > 0) || !lin_plan(&a, 0, hi, 1e-9, "s")) {
        rg_buf_puts(b, "<p class=\"muted records-absent\">No dated figures to chart.</p>\n");
        return;
    }
    if (d1 - d0 < 1) d0 -= 1, d1 += 1;
    const double x0 = plot_left(a.widest), pw = RG_CHART_WIDTH - x0 - 60, bottom = PLOT_TOP + REC_PLOT_H;
    svg_open(b, "class=\"chart records\"", bottom + 48, "The best figure by date: each run that may rank, and the "
             "record staircase");
    legend l = {b, x0};
    legend_entry(&l, "record", MARK_DOT, "#c25a00", "a new record");
    legend_entry(&l, "run", MARK_DOT, "#9aa3b2", "another run");
    legend_entry(&l, "best", MARK_STROKE, "stair", "the best figure so far");
    rg_buf_puts(b, "\n");
    lin_y_axis(b, &a, x0, pw, PLOT_TOP, REC_PLOT_H);
#define REC_X(d) (x0 + 30 + (pw - 40) * ((d) - d0) / (d1 - d0))
    double step = fmax(1, ceil((d1 - d0) / 5));   /* whole days, at most six labels */
    for (double d = ceil(d0); d <= d1; d += step) {
        long z = (long)d + 719468, era = (z >= 0 ? z : z - 146096) / 146097;   /* civil_from_days */
        unsigned long doe = (unsigned long)(z - era * 146097), yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        long y = (long)yoe + era * 400;
        unsigned long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
        unsigned long dd = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
        char lab[64];
        snprintf(lab, sizeof lab, "%04ld-%02lu-%02lu", y + (m <= 2), m, dd);
        text_at(b, REC_X(d), bottom + 18, "middle", "", lab);
    }
    double px = NAN, py = NAN;
    for (size_t i = 0; i < r->n; i++) {   /* the staircase through the records, then to the last date */
        const rg_record_point *p = &r->p[i];
        double d = day_of(p->date);
        if (!p->record || !isfinite(d)) continue;
        double x = REC_X(d), y = lin_y(&a, p->primary_ns, PLOT_TOP, REC_PLOT_H);
        if (isfinite(px))
            rg_buf_printf(b, "<polyline data-series=\"best\" class=\"stair\" fill=\"none\" points=\"%.1f,%.1f %.1f,%.1f "
                             "%.1f,%.1f\"/>", px, py, x, py, x, y);
        px = x, py = y;
    }
    if (isfinite(px))
        rg_buf_printf(b, "<line data-series=\"best\" class=\"stair\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                      px, py, REC_X(d1), py);
    for (size_t i = 0; i < r->n; i++) {
        const rg_record_point *p = &r->p[i];
        double d = day_of(p->date);
        if (!isfinite(d) || !figure(p->primary_ns)) continue;
        char val[48];
        rg_fmt_si(val, sizeof val, p->primary_ns * 1e-9, "s");
        rg_buf_printf(b, "<circle data-series=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>",
                      p->record ? "record" : "run", REC_X(d), lin_y(&a, p->primary_ns, PLOT_TOP, REC_PLOT_H),
                      p->record ? "5" : "3.5", p->record ? "#c25a00" : "#9aa3b2");
        rg_html_esc(b, p->name);
        rg_buf_puts(b, ": ");
        rg_html_esc(b, val);
        rg_buf_printf(b, ", %.10s, run #%lld%s</title></circle>", p->date, (long long)p->id, p->record ? ", a record" : "");
    }
#undef REC_X
    rg_buf_puts(b, "\n");
    axis_titles(b, x0 + pw / 2, bottom + 38, PLOT_TOP + REC_PLOT_H / 2, "date observed", r->primary_stat);
    rg_buf_puts(b, "</svg>\n");
}

/* ---- a compare page's ratios per workload ---------------------------------------------------- */

#define RATIO_PLOT_H 220.0

void rg_chart_ratio(rg_buf *b, const rg_compare_view *v)
{
    if (!b || !v) return;
    wl_axis *a = calloc(1, sizeof *a);
    double lo = 1, hi = 1;
    size_t drawn = 0;
    for (size_t i = 0; a && i < v->n; i++) {
        const rg_compare_row *r = &v->rows[i];
        if (r->primary || !figure(r->ratio)) continue;
        const rg_wl_view *w = NULL;
        for (size_t k = 0; k < v->a.n_wl && !w; k++)
            if (v->a.wl[k].index == r->index) w = &v->a.wl[k];
        for (size_t k = 0; k < v->b.n_wl && !w; k++)
            if (v->b.wl[k].index == r->index) w = &v->b.wl[k];
        wl_add(a, r->index, w ? w->bytes : NAN, w ? w->shape : "");
        lo = fmin(lo, figure(r->lo) ? r->lo : r->ratio), hi = fmax(hi, figure(r->hi) ? r->hi : r->ratio);
        drawn++;
    }
    lin_axis ax;
    if (!a || !drawn || !lin_plan(&ax, fmax(0, lo), hi, 1, "")) {
        free(a);
        rg_buf_puts(b, "<p class=\"muted\" id=\"ratio-absent\">No per-workload ratios to chart: a record carries no "
                       "per-workload figures.</p>\n");
        return;
    }
    wl_sort(a);
    const double x0 = plot_left(ax.widest), pw = RG_CHART_WIDTH - x0 - 12, bottom = PLOT_TOP + RATIO_PLOT_H;
    double slot = pw / (double)a->n;
    svg_open(b, "id=\"chart-ratio\" class=\"chart ratio\"", bottom + 58,
             "Per workload: the second run's time over the first's, with its 95% interval");
    legend l = {b, x0};
    legend_entry(&l, "ratio", MARK_DOT, "#1b4a8f", "ratio (below 1: the second run is faster)");
    legend_entry(&l, "interval", MARK_STROKE, "whisker", "its 95% interval");
    legend_entry(&l, "equal", MARK_STROKE, "peak", "1 = equal");
    rg_buf_puts(b, "\n");
    lin_y_axis(b, &ax, x0, pw, PLOT_TOP, RATIO_PLOT_H);
    double y1 = lin_y(&ax, 1, PLOT_TOP, RATIO_PLOT_H);
    rg_buf_printf(b, "<line data-series=\"equal\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"peak\"/>\n", x0,
                  y1, x0 + pw, y1);
    wl_labels(b, a, x0, slot, bottom + 14);
    for (size_t i = 0; i < v->n; i++) {
        const rg_compare_row *r = &v->rows[i];
        size_t k = r->primary || !figure(r->ratio) ? a->n : wl_find(a, r->index);
        if (k == a->n) continue;
        double x = x0 + slot * ((double)k + 0.5);
        if (figure(r->lo) && figure(r->hi))
            rg_buf_printf(b, "<line data-series=\"interval\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                             "class=\"whisker\"/>", x, lin_y(&ax, r->lo, PLOT_TOP, RATIO_PLOT_H), x,
                          lin_y(&ax, r->hi, PLOT_TOP, RATIO_PLOT_H));
        rg_buf_printf(b, "<circle data-series=\"ratio\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1b4a8f\"><title>"
                         "workload #%d: %.3f", x, lin_y(&ax, r->ratio, PLOT_TOP, RATIO_PLOT_H), r->index, r->ratio);
        if (figure(r->lo) && figure(r->hi)) rg_buf_printf(b, " [%.3f, %.3f]", r->lo, r->hi);
        if (r->verdict[0]) {
            rg_buf_puts(b, " ");
            rg_html_esc(b, r->verdict);
        }
        rg_buf_puts(b, "</title></circle>\n");
    }
    axis_titles(b, x0 + pw / 2, bottom + 48, PLOT_TOP + RATIO_PLOT_H / 2,
                "workload (batch × sequence, bytes moved), ordered by bytes moved", "time ratio");
    rg_buf_puts(b, "</svg>\n");
    free(a);
}
