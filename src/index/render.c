/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render.c -- the index's one renderer (see render.h).
 *
 * Charts are inline SVG. Their axes come from rg_nice_ticks and
 * rg_fmt_si, so labels are round values with SI units ("1 µs", "2 TB/s"),
 * and every loop over ticks or decades is bounded by a count fixed before
 * it starts: NaN, Inf, 0, null (NAN) and denormal figures are left out of
 * a chart, never iterated on.
 */
#define _POSIX_C_SOURCE 200809L
#include "render.h"

#include "rg_term.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void rg_render_ctx_init(rg_render_ctx *ctx, int static_site)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->root = static_site ? "../" : "/";
    ctx->ext = static_site ? ".html" : "";
    ctx->static_site = static_site;
    ctx->history_pages = !static_site;
    ctx->permalink_base = "";
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(ctx->today, sizeof ctx->today, "%Y-%m-%d", &tm);
}

/* ---- escaping ------------------------------------------------------------------------- */

/* s escaped for HTML, after it was made visible (e, a malloc'd copy from
 * rg_term: controls, bidi and invisible characters as \n, \u202e, ...). */
static void html_esc_visible(rg_buf *b, char *e)
{
    if (!e) {
        b->oom = 1;
        return;
    }
    for (const char *s = e; *s; s++) {
        switch (*s) {
        case '&': rg_buf_put(b, "&amp;", 5); break;
        case '<': rg_buf_put(b, "&lt;", 4); break;
        case '>': rg_buf_put(b, "&gt;", 4); break;
        case '"': rg_buf_put(b, "&quot;", 6); break;
        case '\'': rg_buf_put(b, "&#39;", 5); break;
        default: rg_buf_put(b, s, 1);
        }
    }
    free(e);
}

void rg_html_esc(rg_buf *b, const char *s) { html_esc_visible(b, rg_term_escape(s)); }

void rg_html_esc_block(rg_buf *b, const char *s) { html_esc_visible(b, rg_term_escape_block(s)); }

/* pre, then text escaped, then post (pre and post are markup). */
static void put_esc(rg_buf *b, const char *pre, const char *text, const char *post)
{
    rg_buf_puts(b, pre);
    rg_html_esc(b, text);
    rg_buf_puts(b, post);
}

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

void rg_url_esc(rg_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (unreserved(*p)) {
            rg_buf_put(b, (const char *)p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rg_buf_put(b, e, 3);
        }
    }
}

/* A byte a problem's file name keeps as it is: [A-Za-z0-9._-]. */
static int slug_keeps(unsigned char c) { return unreserved(c) && c != '~'; }

void rg_problem_slug(rg_buf *b, const char *def)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)(def ? def : "");
    if (!*p) rg_buf_put(b, "~", 1);   /* no other name maps to a lone '~' */
    for (const unsigned char *s = p; *s; s++) {
        if (slug_keeps(*s) && !(s == p && *s == '.')) {
            rg_buf_put(b, (const char *)s, 1);
        } else {
            char e[3] = {'~', hex[*s >> 4], hex[*s & 15]};
            rg_buf_put(b, e, 3);
        }
    }
}

/* ---- numbers ---------------------------------------------------------------------------- */

void rg_fmt_si(char *out, size_t n, double v, const char *unit)
{
    static const char *const pre[] = {"y", "z", "a", "f", "p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E", "Z", "Y"};
    if (!isfinite(v)) {
        snprintf(out, n, "%s", "");
        return;
    }
    if (v == 0) {
        snprintf(out, n, "0 %s", unit);
        return;
    }
    int e3 = (int)floor(log10(fabs(v)) / 3);
    if (e3 < -8 || e3 > 8) {
        snprintf(out, n, "%.3g %s", v, unit);
        return;
    }
    double m = v / pow(10, 3 * e3);
    if (fabs(m) >= 999.5 && e3 < 8) e3++, m /= 1000;
    snprintf(out, n, "%.3g %s%s", m, pre[e3 + 8], unit);
}

/* A usable chart figure: finite, positive and not denormal. */
static int figure(double v) { return isfinite(v) && v >= DBL_MIN; }

int rg_nice_ticks(double hi, double *t, int cap)
{
    if (!figure(hi) || cap < 2) return 0;
    double raw = hi / 5, e = pow(10, floor(log10(raw))), f = raw / e;
    double step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
    if (!figure(step)) return 0;
    int k = 0;
    for (; k < cap; k++) {
        t[k] = step * k;
        if (t[k] >= hi || !isfinite(t[k])) {
            if (!isfinite(t[k])) t[k] = hi;
            k++;
            break;
        }
    }
    return k;
}

/* ---- charts -------------------------------------------------------------------------------- */

/* Position of v on a log axis over decades [e0, e1] mapped to [x0, x0 + w]. */
static double logpos(double v, int e0, int e1, double x0, double w)
{
    double l = log10(v);
    if (l < e0) l = e0;
    if (l > e1) l = e1;
    return x0 + w * (l - e0) / (e1 - e0);
}

void rg_chart_latency(rg_buf *b, const rg_run_view *v)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < v->n_wl; i++) {
        const rg_wl_view *w = &v->wl[i];
        double xs[5] = {w->median, w->t_sol, w->t_b, w->min, w->max};
        for (int k = 0; k < 5; k++)
            if (figure(xs[k])) lo = fmin(lo, xs[k]), hi = fmax(hi, xs[k]);
    }
    if (!(hi > 0)) {
        rg_buf_puts(b, "<p class=\"muted\" id=\"chart-latency-absent\">No latency figures in this record.</p>\n");
        return;
    }
    int e1 = (int)ceil(log10(hi)), e0 = (int)floor(log10(lo));
    if (e1 <= e0) e1 = e0 + 1;
    if (e1 - e0 > 12) e0 = e1 - 12;   /* at most 12 decades; smaller values sit on the axis */
    const double x0 = 90, pw = 600, bar = 7, gap = 10, group = 3 * bar + gap;
    double height = 44 + (double)v->n_wl * group + 30;
    rg_buf_printf(b,
                  "<svg id=\"chart-latency\" class=\"chart\" role=\"img\" viewBox=\"0 0 720 %.0f\" width=\"720\" "
                  "height=\"%.0f\"><title>Latency per workload against T_SOL and the reference (log scale)</title>\n",
                  height, height);
    for (int e = e0; e <= e1; e++) {
        double x = x0 + pw * (e - e0) / (e1 - e0);
        char lab[48];
        rg_fmt_si(lab, sizeof lab, pow(10, e) * 1e-9, "s");
        rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"30\" x2=\"%.1f\" y2=\"%.0f\" class=\"grid\"/>", x, x, height - 25);
        rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">", x, height - 10);
        rg_html_esc(b, lab);
        rg_buf_puts(b, "</text>\n");
    }
    rg_buf_puts(b, "<rect x=\"90\" y=\"6\" width=\"10\" height=\"8\" class=\"k\"/><text x=\"104\" y=\"14\" "
                   "class=\"axis\">kernel median (whisker: min to max)</text>"
                   "<rect x=\"330\" y=\"6\" width=\"10\" height=\"8\" class=\"sol\"/><text x=\"344\" y=\"14\" "
                   "class=\"axis\">T_SOL</text>"
                   "<rect x=\"400\" y=\"6\" width=\"10\" height=\"8\" class=\"base\"/><text x=\"414\" y=\"14\" "
                   "class=\"axis\">reference T_b</text>\n");
    for (size_t i = 0; i < v->n_wl; i++) {
        const rg_wl_view *w = &v->wl[i];
        double y = 38 + (double)i * group;
        rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">#%d%s</text>", x0 - 6,
                      y + 1.5 * bar + 3, w->index, w->pass == 0 ? " failed" : "");
        const double xs[3] = {w->median, w->t_sol, w->t_b};
        const char *cls[3] = {"k", "sol", "base"}, *name[3] = {"kernel median", "T_SOL", "reference"};
        for (int k = 0; k < 3; k++) {
            if (!figure(xs[k])) continue;
            char lab[48];
            rg_fmt_si(lab, sizeof lab, xs[k] * 1e-9, "s");
            rg_buf_printf(b, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" class=\"%s\"><title>#%d %s ",
                          x0, y + k * bar, fmax(1, logpos(xs[k], e0, e1, x0, pw) - x0), bar - 1, cls[k], w->index,
                          name[k]);
            rg_html_esc(b, lab);
            rg_buf_puts(b, "</title></rect>");
        }
        if (figure(w->min) && figure(w->max))
            rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"whisker\"/>",
                          logpos(w->min, e0, e1, x0, pw), y + bar / 2, logpos(w->max, e0, e1, x0, pw), y + bar / 2);
        rg_buf_puts(b, "\n");
    }
    rg_buf_puts(b, "</svg>\n");
}

void rg_chart_bandwidth(rg_buf *b, const rg_run_view *v)
{
    double hi = figure(v->peak_gbps) ? v->peak_gbps : 0;
    size_t shown = 0;
    for (size_t i = 0; i < v->n_wl; i++)
        if (figure(v->wl[i].gbps)) hi = fmax(hi, v->wl[i].gbps), shown++;
    double t[16];
    int nt = shown ? rg_nice_ticks(hi, t, 16) : 0;
    if (nt < 2) {
        rg_buf_puts(b, "<p class=\"muted\" id=\"chart-bandwidth-absent\">No bandwidth figures in this record.</p>\n");
        return;
    }
    double top = t[nt - 1];
    const double x0 = 90, pw = 600, y0 = 30, ph = 220;
    double slot = pw / (double)v->n_wl, bw = fmin(28, slot * 0.6);
    rg_buf_puts(b, "<svg id=\"chart-bandwidth\" class=\"chart\" role=\"img\" viewBox=\"0 0 720 290\" width=\"720\" "
                   "height=\"290\"><title>Achieved bandwidth per workload against the device's peak</title>\n");
    for (int k = 0; k < nt; k++) {
        double y = y0 + ph - ph * (t[k] / top);
        char lab[48];
        rg_fmt_si(lab, sizeof lab, t[k] * 1e9, "B/s");
        rg_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\"/>", x0, y, x0 + pw, y);
        rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">", x0 - 6, y + 4);
        rg_html_esc(b, lab);
        rg_buf_puts(b, "</text>\n");
    }
    if (figure(v->peak_gbps)) {
        double y = y0 + ph - ph * (v->peak_gbps / top);
        char lab[48];
        rg_fmt_si(lab, sizeof lab, v->peak_gbps * 1e9, "B/s");
        rg_buf_printf(b, "<line id=\"bandwidth-peak\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"peak\"/>",
                      x0, y, x0 + pw, y);
        rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">", x0 + pw, y - 5);
        rg_html_esc(b, v->peak_label);
        put_esc(b, " ", lab, "</text>\n");
    }
    for (size_t i = 0; i < v->n_wl; i++) {
        const rg_wl_view *w = &v->wl[i];
        double xc = x0 + slot * ((double)i + 0.5);
        rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">#%d</text>", xc,
                      y0 + ph + 16, w->index);
        if (!figure(w->gbps)) continue;
        double h = ph * (w->gbps / top);
        char lab[48];
        rg_fmt_si(lab, sizeof lab, w->gbps * 1e9, "B/s");
        rg_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"%s\"><title>#%d ", xc - bw / 2,
                      y0 + ph - h, bw, h, w->pass == 0 ? "ptfail" : "k", w->index);
        rg_html_esc(b, lab);
        rg_buf_puts(b, "</title></rect>\n");
    }
    rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">workload (bytes any kernel "
                     "must move / kernel median)</text>\n</svg>\n",
                  x0 + pw / 2, y0 + ph + 34);
}

/* ---- page pieces ------------------------------------------------------------------------------ */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2330;background:#f6f7f9;margin:0}"
    "main{max-width:1000px;margin:0 auto;padding:24px}header.top{background:#1d2330;color:#fff;padding:8px 24px}"
    "header.top a{color:#fff;text-decoration:none;font-weight:600}a{color:#1b4a8f}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #d8dce3;"
    "padding-bottom:4px}.muted{color:#5b6475}.big{font-size:32px;font-weight:700}"
    "table{border-collapse:collapse;background:#fff;width:100%;font-size:13px}"
    "th,td{border:1px solid #e3e6eb;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f2f5;font-weight:600;white-space:nowrap}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}code,pre{font:12px ui-monospace,Menlo,monospace;word-break:break-all}"
    "pre{white-space:pre-wrap;background:#fff;border:1px solid #d8dce3;padding:8px;max-height:480px;overflow:auto}"
    ".badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}"
    ".passed,.replicated{background:#d9f2e3;color:#135c32}.failed{background:#fde2e1;color:#8a1c17}"
    ".measured{background:#e2ecfb;color:#1b4a8f}.imported{background:#efe6fb;color:#4f2a85}"
    ".flag{background:#fff4d6;border:1px solid #e0b84a;padding:8px;border-radius:6px}"
    "form{background:#fff;border:1px solid #d8dce3;padding:8px;border-radius:6px}"
    "textarea{width:100%;min-height:60px}"
    ".chart{background:#fff;border:1px solid #d8dce3;border-radius:8px;max-width:100%;height:auto}"
    ".chart .grid{stroke:#e6e8ec;stroke-width:1}.chart .axis{font-size:11px;fill:#5b6475}"
    ".chart .k{fill:#2f6fde}.chart .sol{fill:#2aa876}.chart .base{fill:#c9a227}"
    ".chart .whisker{stroke:#1d2330;stroke-width:1.2}.chart .peak{stroke:#c0392b;stroke-width:2;"
    "stroke-dasharray:6 4}.chart .ptfail{fill:#c0392b}.suspect{background:#fde2e1;color:#8a1c17}"
    ".trend{background:#fff;border:1px solid #d8dce3;border-radius:8px;max-width:100%;height:auto}";

static void page_open(rg_buf *b, const rg_render_ctx *ctx, const char *title)
{
    rg_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>");
    rg_html_esc(b, title);
    rg_buf_printf(b, " · ropegrad index</title><style>%s</style></head><body>\n<header class=\"top\"><a href=\"", css);
    rg_html_esc(b, ctx->root);
    rg_buf_puts(b, ctx->static_site ? "index.html" : "");
    rg_buf_puts(b, "\">ropegrad index</a></header><main>\n");
}

static char *page_close(rg_buf *b, char *err, size_t errlen)
{
    rg_buf_puts(b, "</main></body></html>\n");
    return rg_buf_finish(b, err, errlen);
}

/* href="..." pieces; the whole href goes through rg_html_esc. */
static void href_run(rg_buf *b, const rg_render_ctx *ctx, int64_t id)
{
    rg_buf_puts(b, "href=\"");
    rg_html_esc(b, ctx->root);
    rg_buf_printf(b, "runs/%lld", (long long)id);
    rg_html_esc(b, ctx->ext);
    rg_buf_puts(b, "\"");
}

static void href_problem(rg_buf *b, const rg_render_ctx *ctx, const char *def)
{
    rg_buf tmp = {0};
    if (ctx->static_site) rg_problem_slug(&tmp, def);
    else rg_url_esc(&tmp, def);
    put_esc(b, "href=\"", ctx->root, "problems/");
    rg_html_esc(b, tmp.p ? tmp.p : "");
    rg_html_esc(b, ctx->ext);
    rg_buf_puts(b, "\"");
    free(tmp.p);
}

static void href_history(rg_buf *b, const rg_render_ctx *ctx, int64_t id)
{
    rg_buf_puts(b, "href=\"");
    rg_html_esc(b, ctx->root);
    rg_buf_printf(b, "history/%lld%s\"", (long long)id, ctx->ext);
}

/* "Rank =2 of 5" with the method named, or the primary-figure rank and why. */
static void rank_method(rg_buf *b, int interval_ranked)
{
    rg_buf_puts(b, "<span class=\"muted\" id=\"rank-method\">");
    if (interval_ranked) rg_html_esc(b, "Method: " RG_RANK_METHOD "; suspect runs rank after the others until a replication confirms them.");
    else rg_buf_printf(b, "Ranked by the primary figure alone: the group holds more than %d runs, too many to read every "
                          "interval here (ropegrad runs rank gives the interval ranks).", RG_INTERVAL_RANK_MAX);
    rg_buf_puts(b, "</span>");
}

static void href_compare(rg_buf *b, const rg_render_ctx *ctx, int64_t a, int64_t c)
{
    rg_buf_puts(b, "href=\"");
    rg_html_esc(b, ctx->root);
    rg_buf_printf(b, "compare/%lld/%lld", (long long)a, (long long)c);
    rg_html_esc(b, ctx->ext);
    rg_buf_puts(b, "\"");
}

static void kv_table(rg_buf *b, const char *id, const char *title, const rg_kvlist *l, const char *empty)
{
    rg_buf_printf(b, "<section id=\"%s\"><h2>", id);
    rg_html_esc(b, title);
    rg_buf_puts(b, "</h2>\n");
    if (!l->n) {
        put_esc(b, "<p class=\"muted\">", empty, "</p></section>\n");
        return;
    }
    rg_buf_puts(b, "<table>\n");
    for (size_t i = 0; i < l->n; i++) {
        put_esc(b, "<tr><th>", l->items[i].key, "</th><td>");
        rg_html_esc(b, l->items[i].value);
        rg_buf_puts(b, "</td></tr>\n");
    }
    rg_buf_puts(b, "</table></section>\n");
}

/* A table cell with v in SI units, empty when absent. */
static void cell_si(rg_buf *b, double v, double scale, const char *unit)
{
    char s[48];
    rg_fmt_si(s, sizeof s, v * scale, unit);
    put_esc(b, "<td class=\"num\">", s, "</td>");
}

static void cell_num(rg_buf *b, double v, const char *suffix)
{
    rg_buf_puts(b, "<td class=\"num\">");
    if (isfinite(v)) rg_buf_printf(b, "%.4g%s", v, suffix);
    rg_buf_puts(b, "</td>");
}

/* "SOL 0.93 · 12.9× reference · 16/16 cases faster", absent parts left out. */
static void headline(rg_buf *b, double sol, double x_ref, double fast, double total)
{
    const char *sep = "";
    if (isfinite(sol)) rg_buf_printf(b, "SOL %.4g", sol), sep = " · ";
    if (isfinite(x_ref)) rg_buf_printf(b, "%s%.4g× reference", sep, x_ref), sep = " · ";
    if (isfinite(total) && total > 0) rg_buf_printf(b, "%s%.0f/%.0f cases faster", sep, fast, total);
}

static int has_headline(double sol, double x_ref, double total)
{
    return isfinite(sol) || isfinite(x_ref) || (isfinite(total) && total > 0);
}

static const char *date_part(const char *ts, char out[16])
{
    snprintf(out, 16, "%.10s", ts ? ts : "");
    return out;
}

static void note_form(rg_buf *b, const rg_render_ctx *ctx, int64_t id, const char *what, int flag)
{
    rg_buf_printf(b, "<form method=\"post\" id=\"%s-form\" action=\"", flag ? "flag" : "note");
    rg_html_esc(b, ctx->root);
    rg_buf_printf(b, "runs/%lld/%s\">\n", (long long)id, flag ? "flags" : "notes");
    if (!flag)
        rg_buf_puts(b, "<label>kind <select name=\"kind\"><option value=\"note\">note</option>"
                       "<option value=\"reproduction\">reproduction</option></select></label><br>\n");
    rg_buf_puts(b, "<label>");
    rg_html_esc(b, what);
    rg_buf_printf(b, "<br><textarea name=\"text\" maxlength=\"4000\" required></textarea></label><br>\n"
                     "<label>write token <input type=\"password\" name=\"token\" autocomplete=\"off\"></label>\n"
                     "<input type=\"hidden\" name=\"csrf\" value=\"");
    rg_html_esc(b, ctx->csrf);
    rg_buf_printf(b, "\"><button type=\"submit\">%s</button></form>\n", flag ? "Report the issue" : "Add");
}

char *rg_render_run(const rg_render_ctx *ctx, const rg_run_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    char s[128], d[16];
    char title[64];
    snprintf(title, sizeof title, "Run #%lld", (long long)v->id);
    page_open(&b, ctx, title);
    rg_buf_printf(&b, "<h1>Run #%lld</h1>\n<div class=\"muted\" id=\"title\">", (long long)v->id);
    rg_html_esc(&b, v->title);
    put_esc(&b, " <span class=\"badge ", !strcmp(v->status, "passed") ? "passed" : "failed", "\">");
    rg_html_esc(&b, v->status);
    rg_buf_puts(&b, "</span>");
    if (*v->evidence) {
        put_esc(&b, " <span class=\"badge ", v->evidence, "\">evidence: ");
        rg_html_esc(&b, v->evidence);
        rg_buf_puts(&b, "</span>");
    }
    rg_buf_puts(&b, "</div>\n");
    for (size_t i = 0; i < v->n_notes; i++) {
        if (strcmp(v->notes[i].kind, "flag")) continue;
        put_esc(&b, "<p class=\"flag\" id=\"flagged\">Issue reported on ", v->notes[i].created_at, ": ");
        rg_html_esc(&b, v->notes[i].text);
        rg_buf_puts(&b, "</p>\n");
    }

    rg_buf_puts(&b, "<section id=\"primary\"><h2>Primary measurement</h2>\n");
    if (figure(v->primary_ns)) {
        rg_fmt_si(s, sizeof s, v->primary_ns * 1e-9, "s");
        put_esc(&b, "<div class=\"big\">", s, " <span class=\"muted\" style=\"font-size:14px\">");
        rg_html_esc(&b, v->primary_stat);
        rg_buf_puts(&b, "</span></div>\n");
    }
    if (v->iv.known && v->iv.lo > 0 && isfinite(v->iv.hi)) {
        char lo[48], hi[48];
        rg_fmt_si(lo, sizeof lo, v->iv.lo * 1e-9, "s");
        rg_fmt_si(hi, sizeof hi, v->iv.hi * 1e-9, "s");
        put_esc(&b, "<p id=\"interval\">95% interval ", lo, " to ");
        rg_html_esc(&b, hi);
        rg_buf_puts(&b, " (from the stored samples)</p>\n");
    } else if (figure(v->iv.est)) {
        rg_buf_printf(&b, "<p id=\"interval\">95%% interval: %s</p>\n",
                      v->iv.known ? "the samples are too few to bound it" : "unknown (the record carries no samples)");
    }
    if (v->suspect) {
        put_esc(&b, "<p class=\"flag suspect\" id=\"suspect\"><span class=\"badge suspect\">suspect</span> ", v->suspect_why,
                v->confirmed ? " (confirmed by a replication here)</p>\n"
                             : ". It ranks after the other runs until a replication on the same protocol confirms it.</p>\n");
    }
    rg_buf_puts(&b, "<p id=\"rank\">");
    if (v->rank > 0)
        rg_buf_printf(&b, "Rank %s%d of %d in its comparison group%s", v->tied ? "=" : "", v->rank, v->group_size,
                      v->tied ? " (tied: the intervals overlap)" : "");
    else if (v->id > 0) rg_buf_puts(&b, "Not ranked (it did not pass correctness)");
    if (*v->observed_at) {
        rg_buf_puts(&b, v->id > 0 ? " · ropegrad comparison · observed " : "observed ");
        rg_html_esc(&b, date_part(v->observed_at, d));
    }
    rg_buf_puts(&b, "</p>\n");
    if (v->id > 0) {
        rg_buf_puts(&b, "<p>");
        rank_method(&b, v->interval_ranked);
        rg_buf_puts(&b, "</p>\n<p id=\"revision\">Revision ");
        rg_html_esc(&b, v->revision);
        if (ctx->history_pages) {   /* not in a one-file report */
            rg_buf_puts(&b, " · <a id=\"history-link\" ");
            href_history(&b, ctx, v->id);
            rg_buf_puts(&b, ">history of this implementation line →</a>");
        }
        rg_buf_puts(&b, "</p>\n");
    }
    if (v->first_id > 0 && v->first_id != v->id) {
        rg_buf_puts(&b, "<p><a id=\"compare-first\" ");
        href_compare(&b, ctx, v->first_id, v->id);
        rg_buf_puts(&b, ">Compare with #1 →</a></p>\n");
    } else if (v->rank == 1) {
        rg_buf_puts(&b, "<p class=\"muted\">This run is #1 of its comparison group.</p>\n");
    }
    if (has_headline(v->sol, v->x_ref, v->fast_total)) {
        rg_buf_puts(&b, "<p id=\"headline\">");
        headline(&b, v->sol, v->x_ref, v->fast_count, v->fast_total);
        rg_buf_puts(&b, "</p>\n");
    }
    rg_buf_puts(&b, "</section>\n");

    kv_table(&b, "identity", "Identity", &v->identity, "No identity recorded.");

    rg_buf_puts(&b, "<section id=\"correctness\"><h2>Correctness</h2>\n<p>");
    if (v->total > 0) rg_buf_printf(&b, "%d of %d workloads within the protocol's tolerance. ", v->passed, v->total);
    else rg_buf_puts(&b, "The record states no per-workload correctness. ");
    rg_html_esc(&b, v->correctness);
    rg_buf_puts(&b, "</p></section>\n");

    kv_table(&b, "workload", "Workload", &v->workload, "No workload description recorded.");

    rg_buf_puts(&b, "<section id=\"measurements\"><h2>Measurements</h2>\n");
    if (v->n_wl) {
        rg_buf_puts(&b, "<table id=\"measurements-table\"><tr><th>#</th><th>median</th><th>mean</th><th>min</th>"
                        "<th>max</th><th>bytes</th><th>bandwidth</th><th>T_SOL</th><th>reference</th><th>SOL score</th>"
                        "<th>correct</th></tr>\n");
        for (size_t i = 0; i < v->n_wl; i++) {
            const rg_wl_view *w = &v->wl[i];
            rg_buf_printf(&b, "<tr><td>%d</td>", w->index);
            cell_si(&b, w->median, 1e-9, "s");
            cell_si(&b, w->mean, 1e-9, "s");
            cell_si(&b, w->min, 1e-9, "s");
            cell_si(&b, w->max, 1e-9, "s");
            cell_si(&b, w->bytes, 1, "B");
            cell_si(&b, w->gbps, 1e9, "B/s");
            cell_si(&b, w->t_sol, 1e-9, "s");
            cell_si(&b, w->t_b, 1e-9, "s");
            cell_num(&b, w->score, "");
            rg_buf_printf(&b, "<td>%s</td></tr>\n", w->pass == 1 ? "yes" : w->pass == 0 ? "no" : "");
        }
        rg_buf_puts(&b, "</table>\n<h3>Latency per workload</h3>\n");
        rg_chart_latency(&b, v);
        rg_buf_puts(&b, "<h3>Bandwidth per workload</h3>\n");
        rg_chart_bandwidth(&b, v);
    } else {
        rg_buf_puts(&b, "<p class=\"muted\">No per-workload measurements in this record.</p>\n");
    }
    rg_buf_puts(&b, "</section>\n");

    kv_table(&b, "protocol", "Protocol", &v->protocol, "No protocol recorded.");
    kv_table(&b, "environment", "Environment", &v->environment, "No environment recorded.");
    kv_table(&b, "artifacts", "Artifacts", &v->artifacts, "No artifacts published with this run.");

    rg_buf_puts(&b, "<section id=\"notes\"><h2>Replications and notes</h2>\n");
    size_t shown = 0;
    for (size_t i = 0; i < v->n_reps; i++, shown++) {
        const rg_replication *r = &v->reps[i];
        rg_buf_puts(&b, "<p class=\"replication\">");
        rg_html_esc(&b, r->created_at);
        rg_buf_printf(&b, ": run <a ");
        href_run(&b, ctx, r->replica_id);
        rg_buf_printf(&b, ">#%lld</a> re-ran run <a ", (long long)r->replica_id);
        href_run(&b, ctx, r->original_id);
        rg_buf_printf(&b, ">#%lld</a>'s protocol: %d of %d workloads within the spread (%s)</p>\n",
                      (long long)r->original_id, r->within, r->total, r->agreed ? "agreed" : "did not agree");
    }
    for (size_t i = 0; i < v->n_notes; i++) {
        if (!strcmp(v->notes[i].kind, "flag")) continue;
        shown++;
        put_esc(&b, "<p class=\"note\"><span class=\"muted\">", v->notes[i].created_at, " · ");
        rg_html_esc(&b, *v->notes[i].kind ? v->notes[i].kind : "note");
        put_esc(&b, "</span><br>", v->notes[i].text, "</p>\n");
    }
    if (!shown) rg_buf_puts(&b, "<p class=\"muted\">No replications or notes yet.</p>\n");
    rg_buf_puts(&b, "<p class=\"muted\">Notes and reproduction reports never change the evidence level; only a rerun "
                    "of the recorded protocol (<code>ropegrad runs replicate ID</code>) does.</p>\n"
                    "<h3>Add a reproduction or note</h3>\n");
    if (ctx->forms) note_form(&b, ctx, v->id, "text", 0);
    else
        rg_buf_printf(&b, "<p class=\"muted\">This copy is read-only: <code>ropegrad runs note %lld TEXT</code>, or "
                          "the form of a served index with a write token.</p>\n",
                      (long long)v->id);
    rg_buf_puts(&b, "</section>\n");

    rg_buf_puts(&b, "<section id=\"manifest\"><h2>Canonical manifest</h2>\n<details><summary>Show manifest</summary>"
                    "<pre id=\"manifest-bytes\">");
    rg_html_esc_block(&b, v->manifest ? v->manifest : "");
    rg_buf_puts(&b, "</pre></details></section>\n");

    rg_buf_puts(&b, "<section id=\"cite\"><h2>Cite this record</h2>\n<pre id=\"cite-text\">");
    rg_buf tmp = {0};
    rg_buf_printf(&tmp, "%s/runs/%lld", ctx->permalink_base ? ctx->permalink_base : "", (long long)v->id);
    const char *permalink = tmp.p ? tmp.p : "";
    rg_buf cite = {0};
    /* the record's strings made visible as fields: the block keeps only its own line breaks */
    char *vtitle = rg_term_escape(v->title), *observed = rg_term_escape(v->observed_at);
    if (!vtitle || !observed) cite.oom = 1;
    rg_buf_printf(&cite, "ropegrad run #%lld: %s. Observed %s. Run digest %s. %s (accessed %s).\n\n"
                         "@misc{ropegrad-run-%lld,\n  title = {%s},\n  note = {run digest %s},\n  howpublished = "
                         "{%s},\n  year = {%.4s},\n  urldate = {%s}\n}",
                  (long long)v->id, vtitle ? vtitle : "", date_part(observed ? observed : "", d), v->run_digest,
                  permalink, ctx->today, (long long)v->id, vtitle ? vtitle : "", v->run_digest, permalink,
                  observed ? observed : "", ctx->today);
    free(vtitle);
    free(observed);
    rg_html_esc_block(&b, cite.p ? cite.p : "");
    free(cite.p);
    free(tmp.p);
    rg_buf_puts(&b, "</pre></section>\n");

    rg_buf_puts(&b, "<section id=\"report-issue\"><h2>Report an issue with this run</h2>\n");
    if (ctx->forms) note_form(&b, ctx, v->id, "what is wrong", 1);
    else rg_buf_puts(&b, "<p class=\"muted\">This copy is read-only: report issues on the served index.</p>\n");
    rg_buf_puts(&b, "</section>\n");

    put_esc(&b, "<section id=\"source\"><h2>Source and dates</h2>\n<p>", v->source, ". Observed ");
    rg_html_esc(&b, v->observed_at);
    if (*v->created_at) {
        rg_buf_puts(&b, ", published in this index ");
        rg_html_esc(&b, v->created_at);
    }
    rg_buf_puts(&b, ".</p>\n<p><a id=\"problem-link\" ");
    href_problem(&b, ctx, v->definition);
    rg_buf_puts(&b, ">All results for ");
    rg_html_esc(&b, v->definition);
    rg_buf_printf(&b, " →</a> · <a id=\"json-link\" href=\"");
    rg_html_esc(&b, ctx->root);
    rg_buf_printf(&b, "runs/%lld.json\">JSON</a></p></section>\n", (long long)v->id);
    return page_close(&b, err, errlen);
}

char *rg_render_problem(const rg_render_ctx *ctx, const rg_problem_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    page_open(&b, ctx, v->definition);
    put_esc(&b, "<h1>All results for ", v->definition, "</h1>\n");
    for (size_t gi = 0; gi < v->n_groups; gi++) {
        const rg_group_view *g = &v->groups[gi];
        rg_buf_printf(&b, "<section class=\"group\"><h2>");
        rg_html_esc(&b, g->device);
        rg_buf_printf(&b, " · %lld run%s</h2>\n<p class=\"muted\">comparison key <code>", (long long)g->runs,
                      g->runs == 1 ? "" : "s");
        rg_html_esc(&b, g->comparison_key);
        rg_buf_puts(&b, "</code> · ranked by ");
        rg_html_esc(&b, g->primary_stat);
        if ((int64_t)g->n < g->runs) rg_buf_printf(&b, " · the first %zu shown", g->n);
        rg_buf_puts(&b, "<br>");
        rank_method(&b, g->interval_ranked);
        rg_buf_puts(&b, "</p>\n<table><tr><th>rank</th><th>run</th><th>implementation</th><th>primary</th><th>SOL</th>"
                        "<th>× reference</th><th>cases faster</th><th>evidence</th><th>observed</th></tr>\n");
        for (size_t i = 0; i < g->n; i++) {
            const rg_rank_entry *e = &g->e[i];
            char s[48], d[16];
            if (e->rank > 0) rg_buf_printf(&b, "<tr><td class=\"rank\">%s%d</td>", e->tied ? "=" : "", e->rank);
            else rg_buf_puts(&b, "<tr><td>failed</td>");
            rg_buf_printf(&b, "<td><a class=\"rank-link\" ");
            href_run(&b, ctx, e->id);
            rg_buf_printf(&b, ">#%lld</a></td><td>", (long long)e->id);
            rg_html_esc(&b, e->kernel);
            if (e->suspect) rg_buf_puts(&b, " <span class=\"badge suspect\">suspect</span>");
            rg_buf_puts(&b, "</td>");
            cell_si(&b, e->primary_ns, 1e-9, "s");
            cell_num(&b, e->sol, "");
            cell_num(&b, e->x_ref, "×");
            rg_buf_puts(&b, "<td class=\"num\">");
            if (isfinite(e->fast_total)) rg_buf_printf(&b, "%.0f/%.0f", e->fast_count, e->fast_total);
            put_esc(&b, "</td><td>", e->evidence, "</td><td>");
            rg_html_esc(&b, date_part(e->observed_at, d));
            rg_buf_puts(&b, "</td></tr>\n");
            (void)s;
        }
        rg_buf_puts(&b, "</table></section>\n");
    }
    return page_close(&b, err, errlen);
}

char *rg_render_index(const rg_render_ctx *ctx, const rg_index_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    page_open(&b, ctx, "Problems");
    rg_buf_puts(&b, "<h1>Problems</h1>\n");
    if (!v->n) rg_buf_puts(&b, "<p class=\"muted\">No runs recorded yet.</p>\n");
    else
        rg_buf_puts(&b, "<table id=\"problems\"><tr><th>problem</th><th>comparison group (device)</th><th>runs</th>"
                        "<th>#1</th></tr>\n");
    for (size_t i = 0; i < v->n; i++) {
        const rg_problem_row *p = &v->rows[i];
        rg_buf_puts(&b, "<tr><td><a class=\"problem-link\" ");
        href_problem(&b, ctx, p->definition);
        put_esc(&b, ">", p->definition, "</a></td><td>");
        rg_html_esc(&b, p->device);
        rg_buf_puts(&b, " <code>");
        rg_html_esc(&b, p->comparison_key);
        rg_buf_printf(&b, "</code></td><td class=\"num\">%lld</td><td>", (long long)p->runs);
        if (p->best_id > 0) {
            rg_buf_puts(&b, "<a ");
            href_run(&b, ctx, p->best_id);
            rg_buf_printf(&b, ">run #%lld</a>", (long long)p->best_id);
        }
        rg_buf_puts(&b, "</td></tr>\n");
    }
    if (v->n) rg_buf_puts(&b, "</table>\n");
    rg_buf_puts(&b, "<h2 id=\"regressions\">Regressions of the latest revisions</h2>\n");
    if (!v->alerts_checked)
        rg_buf_printf(&b, "<p class=\"muted\">Not checked here: the registry holds more than %d runs "
                          "(ropegrad runs regressions checks them).</p>\n", RG_INTERVAL_RANK_MAX);
    else if (!v->n_alerts)
        rg_buf_puts(&b, "<p class=\"muted\" id=\"no-regressions\">None: no implementation line's latest revision is "
                        "SLOW against its previous revision on any workload.</p>\n");
    for (size_t i = 0; i < v->n_alerts; i++) {
        const rg_regression *x = &v->alerts[i];
        rg_buf_puts(&b, "<p class=\"flag regression\">");
        rg_html_esc(&b, x->definition);
        rg_buf_puts(&b, " · ");
        rg_html_esc(&b, x->line);
        rg_buf_puts(&b, " on ");
        rg_html_esc(&b, x->device);
        rg_buf_puts(&b, ": <a ");
        href_run(&b, ctx, x->run_id);
        rg_buf_printf(&b, ">run #%lld</a> (", (long long)x->run_id);
        rg_html_esc(&b, x->revision);
        rg_buf_printf(&b, ") is SLOW on %d of %zu workloads against <a ", x->n_slow, x->n_rows);
        href_run(&b, ctx, x->base_id);
        rg_buf_printf(&b, ">run #%lld</a> (", (long long)x->base_id);
        rg_html_esc(&b, x->base_revision);
        rg_buf_puts(&b, "):");
        for (size_t k = 0; k < x->n_rows; k++)
            if (x->rows[k].verdict == RG_VERDICT_SLOW)
                rg_buf_printf(&b, " #%d %.3f× [%.3f, %.3f]", x->rows[k].index, x->rows[k].shift.ratio,
                              x->rows[k].shift.lo, x->rows[k].shift.hi);
        if (ctx->history_pages) {
            rg_buf_puts(&b, " · <a ");
            href_history(&b, ctx, x->run_id);
            rg_buf_puts(&b, ">history</a>");
        }
        rg_buf_puts(&b, "</p>\n");
    }
    rg_buf_puts(&b, "<p class=\"muted\">");
    rg_html_esc(&b, "Method: " RG_CHECK_METHOD ".");
    rg_buf_printf(&b, " Threshold %.0f%%, alpha %g.", 100 * RG_STATS_THRESHOLD, RG_STATS_ALPHA);
    if (!ctx->static_site) rg_buf_puts(&b, " JSON feed: <a href=\"/api/regressions\">/api/regressions</a>.");
    rg_buf_puts(&b, "</p>\n");
    return page_close(&b, err, errlen);
}

char *rg_render_history(const rg_render_ctx *ctx, const rg_history_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    if (!v->n) {
        snprintf(err, errlen, "an empty history");
        return NULL;
    }
    const rg_run_row *r0 = &v->e[0].row;
    char line[160];
    if (r0->backend[0]) snprintf(line, sizeof line, "%.15s kernel %d (%.60s)", r0->backend, r0->kernel, r0->kernel_name);
    else snprintf(line, sizeof line, "source %.100s", r0->source);
    page_open(&b, ctx, "History");
    put_esc(&b, "<h1>History: ", line, "</h1>\n<p class=\"muted\">");
    rg_html_esc(&b, r0->definition);
    rg_buf_puts(&b, " on ");
    rg_html_esc(&b, r0->device);
    rg_buf_puts(&b, " · comparison key <code>");
    rg_html_esc(&b, r0->comparison_key);
    rg_buf_puts(&b, "</code><br>The primary statistic of each run, oldest first, with its 95% interval (");
    rg_html_esc(&b, RG_RANK_METHOD);
    rg_buf_puts(&b, "). Red points are suspect runs.</p>\n");
    rg_trend_svg(&b, v->e, v->n);
    rg_buf_puts(&b, "<table id=\"history\"><tr><th>run</th><th>observed</th><th>revision</th><th>primary</th>"
                    "<th>95% interval</th><th>evidence</th><th>flags</th></tr>\n");
    for (size_t i = 0; i < v->n; i++) {
        const rg_ranked *e = &v->e[i];
        char iv[96];
        rg_buf_puts(&b, "<tr><td><a ");
        href_run(&b, ctx, e->row.id);
        rg_buf_printf(&b, ">#%lld</a></td><td>", (long long)e->row.id);
        rg_html_esc(&b, e->row.observed_at);
        put_esc(&b, "</td><td>", e->revision, "</td>");
        cell_si(&b, e->iv.est, 1e-9, "s");
        rg_interval_label(&e->iv, iv, sizeof iv);
        put_esc(&b, "<td>", iv, " µs</td><td>");
        rg_html_esc(&b, e->row.evidence);
        rg_buf_puts(&b, "</td><td>");
        if (strcmp(e->row.status, "passed")) rg_buf_puts(&b, "failed ");
        if (e->suspect) put_esc(&b, "<span class=\"badge suspect\">suspect</span> ", e->suspect_why, "");
        rg_buf_puts(&b, "</td></tr>\n");
    }
    rg_buf_puts(&b, "</table>\n");
    return page_close(&b, err, errlen);
}

char *rg_render_compare(const rg_render_ctx *ctx, const rg_compare_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    char title[96];
    snprintf(title, sizeof title, "Run #%lld against run #%lld", (long long)v->b.id, (long long)v->a.id);
    page_open(&b, ctx, title);
    rg_buf_printf(&b, "<h1>Run <a ");
    href_run(&b, ctx, v->b.id);
    rg_buf_printf(&b, ">#%lld</a> against run <a ", (long long)v->b.id);
    href_run(&b, ctx, v->a.id);
    rg_buf_printf(&b, ">#%lld</a></h1>\n", (long long)v->a.id);
    if (!v->comparable)
        rg_buf_puts(&b, "<p class=\"flag\">Different comparison keys: these runs were not measured under one "
                        "protocol, workload set and device; the ratios are shown but do not rank them.</p>\n");
    const rg_run_view *sv[2] = {&v->a, &v->b};
    for (int k = 0; k < 2; k++)
        if (sv[k]->suspect) {
            rg_buf_printf(&b, "<p class=\"flag suspect\"><span class=\"badge suspect\">suspect</span> run #%lld: ",
                          (long long)sv[k]->id);
            rg_html_esc(&b, sv[k]->suspect_why);
            rg_buf_puts(&b, "</p>\n");
        }
    rg_buf_printf(&b, "<p class=\"muted\">ratio = run #%lld / run #%lld (below 1: #%lld is faster): the Hodges-Lehmann "
                      "ratio of the per-iteration samples with its 95%% distribution-free interval and the verdict of "
                      "`runs check` (threshold %.0f%%, alpha %g); where a record has no samples, the ratio of the "
                      "medians with an interval from the two runs' min and max.</p>\n",
                  (long long)v->b.id, (long long)v->a.id, (long long)v->b.id, 100 * RG_STATS_THRESHOLD, RG_STATS_ALPHA);
    rg_buf_printf(&b, "<table id=\"compare-table\"><tr><th>#</th><th>run #%lld</th><th>run #%lld</th><th>ratio</th>"
                      "<th>interval</th><th>verdict</th></tr>\n",
                  (long long)v->a.id, (long long)v->b.id);
    for (size_t i = 0; i < v->n; i++) {
        const rg_compare_row *r = &v->rows[i];
        rg_buf_printf(&b, "<tr><td>%d</td>", r->index);
        cell_si(&b, r->a, 1e-9, "s");
        cell_si(&b, r->b, 1e-9, "s");
        cell_num(&b, r->ratio, "");
        rg_buf_puts(&b, "<td class=\"num\">");
        if (isfinite(r->lo) && isfinite(r->hi)) rg_buf_printf(&b, "%.3f to %.3f", r->lo, r->hi);
        rg_buf_puts(&b, "</td><td>");
        if (r->shift) rg_buf_printf(&b, "%s (p %.2g)", r->verdict, r->p);
        else rg_buf_puts(&b, "no samples");
        rg_buf_puts(&b, "</td></tr>\n");
    }
    rg_buf_puts(&b, "</table>\n");
    return page_close(&b, err, errlen);
}

char *rg_render_error(const rg_render_ctx *ctx, int status, const char *msg, char *err, size_t errlen)
{
    rg_buf b = {0};
    char t[32];
    snprintf(t, sizeof t, "%d", status);
    page_open(&b, ctx, t);
    rg_buf_printf(&b, "<h1>%d</h1>\n<p id=\"error\">", status);
    rg_html_esc(&b, msg);
    rg_buf_puts(&b, "</p>\n");
    return page_close(&b, err, errlen);
}

/* ---- /api JSON ----------------------------------------------------------------------------------- */

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static char *finish_json(cJSON *o, char *err, size_t errlen)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s) snprintf(err, errlen, "out of memory");
    return s;
}

char *rg_api_index(const rg_index_view *v, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "problems");
    for (size_t i = 0; a && i < v->n; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "definition", v->rows[i].definition);
        cJSON_AddStringToObject(p, "comparisonKey", v->rows[i].comparison_key);
        cJSON_AddStringToObject(p, "device", v->rows[i].device);
        cJSON_AddNumberToObject(p, "runs", (double)v->rows[i].runs);
        if (v->rows[i].best_id > 0) cJSON_AddNumberToObject(p, "best", (double)v->rows[i].best_id);
        else cJSON_AddNullToObject(p, "best");
        cJSON_AddItemToArray(a, p);
    }
    return finish_json(o, err, errlen);
}

char *rg_api_problem(const rg_problem_view *v, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "definition", v->definition);
    cJSON *gs = cJSON_AddArrayToObject(o, "groups");
    for (size_t gi = 0; gs && gi < v->n_groups; gi++) {
        const rg_group_view *g = &v->groups[gi];
        cJSON *go = cJSON_CreateObject(), *ra = cJSON_AddArrayToObject(go, "ranked");
        cJSON_AddStringToObject(go, "comparisonKey", g->comparison_key);
        cJSON_AddStringToObject(go, "device", g->device);
        cJSON_AddStringToObject(go, "primaryStatistic", g->primary_stat);
        cJSON_AddNumberToObject(go, "runs", (double)g->runs);
        for (size_t i = 0; ra && i < g->n; i++) {
            const rg_rank_entry *e = &g->e[i];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "id", (double)e->id);
            if (e->rank > 0) cJSON_AddNumberToObject(x, "rank", e->rank);
            else cJSON_AddNullToObject(x, "rank");
            add_num(x, "primaryNs", e->primary_ns);
            add_num(x, "sol", e->sol);
            add_num(x, "xReference", e->x_ref);
            add_num(x, "casesFaster", e->fast_count);
            add_num(x, "cases", e->fast_total);
            cJSON_AddStringToObject(x, "status", e->status);
            cJSON_AddStringToObject(x, "evidence", e->evidence);
            cJSON_AddStringToObject(x, "observedAt", e->observed_at);
            cJSON_AddItemToArray(ra, x);
        }
        cJSON_AddItemToArray(gs, go);
    }
    return finish_json(o, err, errlen);
}

char *rg_api_run(const rg_run_view *v, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)v->id);
    cJSON_AddStringToObject(o, "definition", v->definition);
    cJSON_AddStringToObject(o, "status", v->status);
    cJSON_AddStringToObject(o, "evidence", v->evidence);
    cJSON_AddStringToObject(o, "device", v->device);
    cJSON_AddStringToObject(o, "runDigest", v->run_digest);
    cJSON_AddStringToObject(o, "comparisonKey", v->comparison_key);
    cJSON_AddStringToObject(o, "observedAt", v->observed_at);
    add_num(o, "primaryNs", v->primary_ns);
    cJSON_AddStringToObject(o, "primaryStatistic", v->primary_stat);
    if (v->rank > 0) cJSON_AddNumberToObject(o, "rank", v->rank);
    else cJSON_AddNullToObject(o, "rank");
    cJSON_AddNumberToObject(o, "groupSize", v->group_size);
    cJSON_AddBoolToObject(o, "tied", v->tied);
    cJSON_AddStringToObject(o, "rankMethod", v->interval_ranked ? RG_RANK_METHOD : "primary figure alone");
    cJSON_AddBoolToObject(o, "suspect", v->suspect);
    if (v->suspect) cJSON_AddStringToObject(o, "suspectReason", v->suspect_why);
    cJSON_AddStringToObject(o, "revision", v->revision);
    if (v->iv.known && isfinite(v->iv.hi)) {
        add_num(o, "intervalLoNs", v->iv.lo);
        add_num(o, "intervalHiNs", v->iv.hi);
    } else {
        cJSON_AddNullToObject(o, "intervalLoNs");
        cJSON_AddNullToObject(o, "intervalHiNs");
    }
    if (v->first_id > 0) cJSON_AddNumberToObject(o, "first", (double)v->first_id);
    else cJSON_AddNullToObject(o, "first");
    add_num(o, "sol", v->sol);
    add_num(o, "xReference", v->x_ref);
    add_num(o, "casesFaster", v->fast_count);
    add_num(o, "cases", v->fast_total);
    cJSON *nt = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; nt && i < v->n_notes; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "kind", v->notes[i].kind);
        cJSON_AddStringToObject(x, "createdAt", v->notes[i].created_at);
        cJSON_AddStringToObject(x, "text", v->notes[i].text);
        cJSON_AddItemToArray(nt, x);
    }
    return finish_json(o, err, errlen);
}
