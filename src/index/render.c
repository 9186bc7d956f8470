/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render.c -- the index's one renderer (see render.h).
 *
 * Figures are shown with rg_fmt_si (ticks.h): three significant digits
 * and an SI prefix ("5.41 µs", "1.34 TB/s"). The charts are chart.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include "render.h"

#include "names.h"
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

/* A usable figure: finite, positive and not denormal. */
static int figure(double v) { return isfinite(v) && v >= DBL_MIN; }

/* A run's trust class (rank.h) as a badge, its reason on hover; nothing for a measured run. */
static void class_badge(rg_buf *b, rg_rank_class c, const char *reason)
{
    if (c == RG_CLASS_MEASURED) return;
    rg_buf_printf(b, " <span class=\"badge %s\" title=\"", rg_rank_class_name(c));
    rg_html_esc(b, reason);
    rg_buf_printf(b, "\">%s</span>", rg_rank_class_name(c));
}

/* ---- page pieces ------------------------------------------------------------------------------ */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2330;background:#f6f7f9;margin:0}"
    "main{max-width:1000px;margin:0 auto;padding:24px}header.top{background:#1d2330;color:#fff;padding:8px 24px;"
    "display:flex;flex-wrap:wrap;align-items:baseline}"
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
    ".chart .grid,.trend .grid{stroke:#e6e8ec;stroke-width:1}.chart .axis,.trend .axis{font-size:11px;fill:#5b6475}"
    ".chart .atitle,.trend .atitle{font-size:12px;fill:#1d2330}.trend .interval{stroke:#246;stroke-width:2}"
    ".chart .k{fill:#2f6fde}.chart .sol{fill:#2aa876}.chart .base{fill:#c9a227}"
    ".chart .whisker{stroke:#1d2330;stroke-width:1.2}.chart .peak{stroke:#c0392b;stroke-width:2;"
    "stroke-dasharray:6 4}.chart .ptfail{fill:#c0392b}.suspect{background:#fde2e1;color:#8a1c17}"
    ".unverifiable{background:#fff1cc;color:#6b4e00}"
    ".trend{background:#fff;border:1px solid #d8dce3;border-radius:8px;max-width:100%;height:auto}"
    "nav.links a{margin-left:16px;font-weight:400}nav.crumbs{font-size:13px;margin-bottom:8px}"
    ".nowrap{white-space:nowrap}pre.manifest{word-break:normal}tr.summary td{font-weight:600}"
    "td.why{color:#9aa3b2;text-align:center;cursor:help}table.field td.num,.trust{white-space:nowrap}th[title],.trust .badge{cursor:help}"
    ".trust-measured{background:#e2ecfb;color:#1b4a8f}.trust-reported{background:#efe6fb;color:#4f2a85}"
    ".trust-suspect,.trust-failed,.trust-damaged{background:#fde2e1;color:#8a1c17}"
    ".trust-busy,.trust-partial{background:#fff1cc;color:#6b4e00}.runid{font-size:11px}"
    "h3.kind{font-size:13px;margin:14px 0 6px;color:#3b4456}td.reason{font-size:12px;color:#5b6475}"
    ".leader{background:#fff;border:1px solid #d8dce3;border-radius:8px;padding:10px 14px;margin:12px 0}"
    ".leader .big{font-size:26px;text-decoration:none;margin-right:10px}ul.leaders{margin:4px 0 0;padding-left:18px}"
    ".chart .legend{font-size:12px;fill:#1d2330}.chart .wl{font-size:11px;fill:#1d2330}.chart .sub{font-size:10px;"
    "fill:#5b6475}.chart .launch{stroke:#8a94a6;stroke-width:1.5;stroke-dasharray:2 3}"
    ".chart .launchbound{fill:#f1f2f5}.chart .peaklabel{fill:#c0392b}.chart .launchlabel{fill:#5b6475}"
    ".chart .stair{stroke:#c25a00;stroke-width:2}section.superseded{opacity:.85}"
    "h1 .side .muted{font-size:14px;font-weight:400}.chart{margin-bottom:8px}"
    ".unlike{background:#fde2e1;border:1px solid #d9534f;padding:10px;border-radius:6px;font-weight:600}";

/* href="ROOT" + the index page + anchor ("#gpus"), for the header's links. */
static void href_index(rg_buf *b, const rg_render_ctx *ctx, const char *anchor)
{
    rg_buf_puts(b, "href=\"");
    rg_html_esc(b, ctx->root);
    rg_buf_puts(b, ctx->static_site ? "index.html" : "");
    rg_html_esc(b, anchor);
    rg_buf_puts(b, "\"");
}

/* The header: the index, then what a benchmark site links to (none in a one-file report). */
static void header_links(rg_buf *b, const rg_render_ctx *ctx)
{
    if (ctx->single_page) {
        rg_buf_puts(b, "<header class=\"top\"><span>ropegrad index</span></header>");
        return;
    }
    static const char *const links[][2] = {{"#problems", "problems"}, {"#gpus", "GPUs"}, {"#latest", "latest runs"},
                                           {"#regressions", "regressions"}};
    rg_buf_puts(b, "<header class=\"top\"><a ");
    href_index(b, ctx, "");
    rg_buf_puts(b, ">ropegrad index</a><nav class=\"links\" id=\"nav\">");
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        rg_buf_puts(b, "<a ");
        href_index(b, ctx, links[i][0]);
        put_esc(b, ">", links[i][1], "</a>");
    }
    if (!ctx->static_site) {
        rg_buf_puts(b, "<a href=\"");
        rg_html_esc(b, ctx->root);
        rg_buf_puts(b, "search\">search</a>");
    }
    rg_buf_puts(b, "</nav></header>");
}

static void page_open(rg_buf *b, const rg_render_ctx *ctx, const char *title)
{
    rg_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>");
    rg_html_esc(b, title);
    rg_buf_printf(b, " · ropegrad index</title><style>%s</style></head><body>\n", css);
    header_links(b, ctx);
    rg_buf_puts(b, "<main>\n");
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

/* "Index › L1/014 › run #2": def and here may be NULL; links only where the
 * pages exist (none in a one-file report). */
static void crumbs(rg_buf *b, const rg_render_ctx *ctx, const char *def, const char *here)
{
    char name[300], e[64];
    rg_buf_puts(b, "<nav class=\"crumbs\" id=\"crumbs\">");
    if (ctx->single_page) rg_buf_puts(b, "Index");
    else {
        rg_buf_puts(b, "<a ");
        href_index(b, ctx, "");
        rg_buf_puts(b, ">Index</a>");
    }
    if (def && !rg_problem_short(def, name, sizeof name, e, sizeof e)) {
        rg_buf_puts(b, " › ");
        if (here && !ctx->single_page) {
            rg_buf_puts(b, "<a ");
            href_problem(b, ctx, def);
            put_esc(b, ">", name, "</a>");
        } else rg_html_esc(b, name);
    }
    if (here) put_esc(b, " › ", here, "");
    rg_buf_puts(b, "</nav>\n");
}

/* "#12" linked to run 12's page; text alone in a one-file report. */
static void run_link(rg_buf *b, const rg_render_ctx *ctx, int64_t id, const char *prefix)
{
    if (ctx->single_page) {
        rg_html_esc(b, prefix);
        rg_buf_printf(b, "%lld", (long long)id);
        return;
    }
    rg_buf_puts(b, "<a class=\"nowrap\" ");
    href_run(b, ctx, id);
    put_esc(b, ">", prefix, "");
    rg_buf_printf(b, "%lld</a>", (long long)id);
}

/* name linked to run id's page; the text alone in a one-file report. */
static void run_name_link(rg_buf *b, const rg_render_ctx *ctx, int64_t id, const char *name)
{
    if (ctx->single_page) {
        rg_html_esc(b, name);
        return;
    }
    rg_buf_puts(b, "<a ");
    href_run(b, ctx, id);
    put_esc(b, ">", name, "</a>");
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

/* Who signed the run (each key id, when received) and where copies of it differed. */
static void copies_section(rg_buf *b, const rg_run_view *v)
{
    rg_buf_puts(b, "<section id=\"signatures\"><h2>Signatures and copies</h2>\n");
    if (!v->n_sigs) rg_buf_puts(b, "<p class=\"muted\">No signatures.</p>\n");
    for (size_t i = 0; i < v->n_sigs; i++) {
        put_esc(b, "<p class=\"signature\">ed25519, key <code>", v->sigs[i].key_id, "</code>");
        put_esc(b, " <span class=\"muted\">received ", v->sigs[i].received_at, "</span></p>\n");
    }
    for (size_t i = 0; i < v->n_conflicts; i++) {
        const rg_run_conflict *c = &v->conflicts[i];
        put_esc(b, "<p class=\"conflict\">Conflict in <code>", c->member, "</code> between copies of this run: ");
        put_esc(b, "stored <code>", c->stored, "</code>, ");
        put_esc(b, "a copy received ", c->received_at, " says ");
        put_esc(b, "<code>", c->offered, "</code></p>\n");
    }
    rg_buf_puts(b, "<p class=\"muted\">A signature vouches for the run digest; metadata (name, title, labels) is not "
                   "digested, so copies may differ in it.</p></section>\n");
}

/* 1 when some workload carries a speed-of-light figure (T_SOL, reference, score). */
static int has_sol_figures(const rg_run_view *v)
{
    for (size_t i = 0; i < v->n_wl; i++)
        if (isfinite(v->wl[i].t_sol) || isfinite(v->wl[i].t_b) || isfinite(v->wl[i].score)) return 1;
    return 0;
}

static void measurements_table(rg_buf *b, const rg_run_view *v)
{
    int sol = !v->cpu && has_sol_figures(v);   /* a GPU's figures say nothing of a CPU run */
    if (v->cpu) put_esc(b, "<p class=\"muted\" id=\"no-sol\">No T_SOL, reference or SOL score columns: ",
                                RG_NO_SOL_ON_CPU, ".</p>\n");
    rg_buf_puts(b, "<table id=\"measurements-table\"><tr><th>#</th><th>shape</th><th>median</th><th>mean</th><th>min</th>"
                   "<th>max</th><th>bytes</th><th>bandwidth</th>");
    if (sol) rg_buf_puts(b, "<th>T_SOL</th><th>reference</th><th>SOL score</th>");
    rg_buf_puts(b, "<th>correct</th></tr>\n");
    for (size_t i = 0; i < v->n_wl; i++) {
        const rg_wl_view *w = &v->wl[i];
        rg_buf_printf(b, "<tr><td>%d</td>", w->index);
        put_esc(b, "<td class=\"nowrap\">", w->shape, "</td>");
        cell_si(b, w->median, 1e-9, "s");
        cell_si(b, w->mean, 1e-9, "s");
        cell_si(b, w->min, 1e-9, "s");
        cell_si(b, w->max, 1e-9, "s");
        cell_si(b, w->bytes, 1, "B");
        cell_si(b, w->gbps, 1e9, "B/s");
        if (sol) {
            cell_si(b, w->t_sol, 1e-9, "s");
            cell_si(b, w->t_b, 1e-9, "s");
            cell_num(b, w->score, "");
        }
        rg_buf_printf(b, "<td>%s</td></tr>\n", w->pass == 1 ? "yes" : w->pass == 0 ? "no" : "");
    }
    rg_buf_puts(b, "</table>\n");
}

/* Per-workload figures and their charts; a record without them shows its
 * primary figure as its one measurement ("latency · mean 5.41 µs"). */
static void measurements_section(rg_buf *b, const rg_run_view *v)
{
    rg_buf_puts(b, "<section id=\"measurements\"><h2>Measurements</h2>\n");
    if (v->n_wl) {
        measurements_table(b, v);
        rg_buf_puts(b, "<h3>Latency per workload</h3>\n");
        rg_chart_latency(b, v);
        rg_buf_puts(b, "<h3>Bandwidth per workload</h3>\n");
        rg_chart_bandwidth(b, v);
    } else if (figure(v->primary_ns)) {
        char s[48];
        rg_fmt_si(s, sizeof s, v->primary_ns * 1e-9, "s");
        put_esc(b, "<table id=\"measurements-table\"><tr><th>latency · ", v->primary_stat, "</th>");
        put_esc(b, "<td class=\"num\">", s, "</td></tr></table>\n");
        rg_buf_puts(b, "<p class=\"muted\">No per-workload measurements in this record.</p>\n");
    } else {
        rg_buf_puts(b, "<p class=\"muted\">No per-workload measurements in this record.</p>\n");
    }
    rg_buf_puts(b, "</section>\n");
}

/* The run page's heading: its number, title, status and evidence, any issue reported. */
static void run_header(rg_buf *b, const rg_render_ctx *ctx, const rg_run_view *v)
{
    rg_buf_printf(b, "<h1>Run #%lld", (long long)v->id);
    if (*v->name) put_esc(b, ": <span id=\"run-name\">", v->name, "</span>");
    rg_buf_puts(b, "</h1>\n<div class=\"muted\" id=\"title\">");
    rg_html_esc(b, v->title);
    put_esc(b, " <span class=\"badge ", !strcmp(v->status, "passed") ? "passed" : "failed", "\">");
    rg_html_esc(b, v->status);
    rg_buf_puts(b, "</span>");
    if (*v->evidence) {
        put_esc(b, " <span class=\"badge ", v->evidence, "\">evidence: ");
        rg_html_esc(b, v->evidence);
        rg_buf_puts(b, "</span>");
    }
    rg_buf_puts(b, "</div>\n");
    for (size_t i = 0; i < v->n_notes; i++) {
        if (strcmp(v->notes[i].kind, "flag")) continue;
        put_esc(b, "<p class=\"flag\" id=\"flagged\">Issue reported on ", v->notes[i].created_at, ": ");
        rg_html_esc(b, v->notes[i].text);
        rg_buf_puts(b, "</p>\n");
    }
}

/* The Primary measurement section: the figure, its interval, the rank and #1. */
static void primary_section(rg_buf *b, const rg_render_ctx *ctx, const rg_run_view *v)
{
    char s[128], d[16];
    rg_buf_puts(b, "<section id=\"primary\"><h2>Primary measurement</h2>\n");
    if (figure(v->primary_ns)) {
        rg_fmt_si(s, sizeof s, v->primary_ns * 1e-9, "s");
        put_esc(b, "<div class=\"big\">", s, " <span class=\"muted\" style=\"font-size:14px\">");
        rg_html_esc(b, v->primary_stat);
        rg_buf_puts(b, "</span></div>\n");
    } else if (*v->not_timed) {
        put_esc(b, "<p id=\"not-timed\">Not timed: ", v->not_timed, "</p>\n");
    }
    if (v->iv.known && v->iv.lo > 0 && isfinite(v->iv.hi)) {
        char lo[48], hi[48];
        rg_fmt_si(lo, sizeof lo, v->iv.lo * 1e-9, "s");
        rg_fmt_si(hi, sizeof hi, v->iv.hi * 1e-9, "s");
        put_esc(b, "<p id=\"interval\">95% interval ", lo, " to ");
        rg_html_esc(b, hi);
        rg_buf_puts(b, " (from the stored samples)</p>\n");
    } else if (figure(v->iv.est)) {
        rg_buf_printf(b, "<p id=\"interval\">95%% interval: %s</p>\n",
                      v->iv.known ? "the samples are too few to bound it" : "unknown (the record carries no samples)");
    }
    if (v->suspect) {
        put_esc(b, "<p class=\"flag suspect\" id=\"suspect\"><span class=\"badge suspect\">suspect</span> ", v->suspect_why,
                v->confirmed ? " (confirmed by a replication here)</p>\n"
                             : ". It ranks after the other runs until a replication on the same protocol confirms it.</p>\n");
    }
    if (v->sol_check.state == RG_SOL_UNVERIFIABLE)
        put_esc(b, "<p class=\"flag unverifiable\" id=\"unverifiable\"><span class=\"badge unverifiable\">"
                    "unverifiable</span> ", v->sol_check.basis,
                ". It ranks after the verified runs and is never #1 while one exists.</p>\n");
    put_esc(b, "<p id=\"rank-class\">Trust: <span class=\"badge ", rg_rank_class_name(v->rank_class), "\">");
    put_esc(b, "", rg_rank_class_name(v->rank_class), "</span> ");
    put_esc(b, "", v->rank_reason, "</p>\n");
    rg_buf_puts(b, "<p id=\"rank\">");
    if (v->rank > 0)
        rg_buf_printf(b, "Rank %s%d of %d %s%s", v->tied ? "=" : "", v->rank, v->group_size,
                      v->rank_class == RG_CLASS_REPORTED ? "among the reported runs of its comparison group"
                                                         : "in its comparison group",
                      v->tied ? " (tied: the intervals overlap)" : "");
    else if (v->id > 0 && *v->not_timed)
        rg_buf_puts(b, !strcmp(v->status, "passed") ? "Not ranked: correctness only (nothing was timed)"
                                                     : "Not ranked (it did not pass correctness, and nothing was timed)");
    else if (v->id > 0 && v->superseded)
        put_esc(b, "Not ranked: superseded (", v->harness, " is an older protocol than its group's newest runs)");
    else if (v->id > 0 && !rg_rank_class_ranked(v->rank_class))
        put_esc(b, "Not ranked: ", rg_rank_class_name(v->rank_class), " (see above)");
    else if (v->id > 0 && !strcmp(v->status, "passed"))
        rg_buf_puts(b, "Not ranked by the primary figure (suspect or unverifiable, see above)");
    else if (v->id > 0) rg_buf_puts(b, "Not ranked (it did not pass correctness)");
    if (*v->observed_at) {
        if (v->id > 0) put_esc(b, " · ", v->comparison_label, " · observed ");
        else rg_buf_puts(b, "observed ");
        rg_html_esc(b, date_part(v->observed_at, d));
    }
    rg_buf_puts(b, "</p>\n");
    if (v->id > 0) {
        rg_buf_puts(b, "<p>");
        rank_method(b, v->interval_ranked);
        rg_buf_puts(b, "</p>\n<p id=\"revision\">Revision ");
        rg_html_esc(b, v->revision);
        if (ctx->history_pages) {   /* not in a one-file report */
            rg_buf_puts(b, " · <a id=\"history-link\" ");
            href_history(b, ctx, v->id);
            rg_buf_puts(b, ">history of this implementation line →</a>");
        }
        rg_buf_puts(b, "</p>\n");
    }
    if (v->first_id > 0 && v->first_id != v->id && !ctx->single_page) {
        rg_buf_puts(b, "<p><a id=\"compare-first\" ");
        href_compare(b, ctx, v->first_id, v->id);
        rg_buf_puts(b, ">Compare with #1 →</a></p>\n");
    } else if (v->first_id > 0 && v->first_id != v->id) {
        rg_buf_printf(b, "<p class=\"muted\" id=\"first-id\">#1 of its comparison group: run #%lld.</p>\n",
                      (long long)v->first_id);
    } else if (v->first_id > 0 && v->first_id == v->id) {
        rg_buf_puts(b, "<p class=\"muted\" id=\"is-first\">This run is #1 of its comparison group.</p>\n");
    } else if (v->id > 0) {
        rg_buf_puts(b, "<p class=\"muted\" id=\"no-first\">Its comparison group has no #1: no run of it is passed, "
                        "verified and not suspect.</p>\n");
    }
    if (has_headline(v->sol, v->x_ref, v->fast_total)) {
        rg_buf_puts(b, "<p id=\"headline\">");
        headline(b, v->sol, v->x_ref, v->fast_count, v->fast_total);
        rg_buf_puts(b, "</p>\n");
    }
    rg_buf_puts(b, "</section>\n");
}

/* The Replications and notes section, with its form when the index takes writes. */
static void notes_section(rg_buf *b, const rg_render_ctx *ctx, const rg_run_view *v)
{
    rg_buf_puts(b, "<section id=\"notes\"><h2>Replications and notes</h2>\n");
    size_t shown = 0;
    for (size_t i = 0; i < v->n_reps; i++, shown++) {
        const rg_replication *r = &v->reps[i];
        rg_buf_puts(b, "<p class=\"replication\">");
        rg_html_esc(b, r->created_at);
        rg_buf_puts(b, ": run ");
        run_link(b, ctx, r->replica_id, "#");
        rg_buf_puts(b, " re-ran run ");
        run_link(b, ctx, r->original_id, "#");
        rg_buf_printf(b, "'s protocol: %d of %d workloads agreed by their samples (%s)</p>\n", r->within, r->total,
                      r->agreed ? "agreed" : "did not agree");
    }
    for (size_t i = 0; i < v->n_notes; i++) {
        if (!strcmp(v->notes[i].kind, "flag")) continue;
        shown++;
        put_esc(b, "<p class=\"note\"><span class=\"muted\">", v->notes[i].created_at, " · ");
        rg_html_esc(b, *v->notes[i].kind ? v->notes[i].kind : "note");
        put_esc(b, "</span><br>", v->notes[i].text, "</p>\n");
    }
    if (!shown) rg_buf_puts(b, "<p class=\"muted\">No replications or notes yet.</p>\n");
    if (v->replicable)
        rg_buf_printf(b, "<p class=\"muted\" id=\"evidence-rule\">Notes and reproduction reports never change the "
                          "evidence level; only a rerun of the recorded protocol (<code>ropegrad runs replicate %lld"
                          "</code>) does.</p>\n", (long long)v->id);
    else
        rg_buf_puts(b, "<p class=\"muted\" id=\"evidence-rule\">Notes and reproduction reports never change the "
                        "evidence level. This record does not carry ropegrad's protocol, so it cannot be rerun here: its "
                        "evidence level stays as it is.</p>\n");
    rg_buf_puts(b, "<h3>Add a reproduction or note</h3>\n");
    if (ctx->forms) note_form(b, ctx, v->id, "text", 0);
    else
        rg_buf_printf(b, "<p class=\"muted\">This copy is read-only: <code>ropegrad runs note %lld TEXT</code>, or "
                          "the form of a served index with a write token.</p>\n",
                      (long long)v->id);
    rg_buf_puts(b, "</section>\n");
}

/* The Canonical manifest section (indented for reading). */
static void manifest_section(rg_buf *b, const rg_render_ctx *ctx, const rg_run_view *v)
{
    rg_buf_puts(b, "<section id=\"manifest\"><h2>Canonical manifest</h2>\n<details><summary>Show manifest</summary>"
                    "<pre class=\"manifest\" id=\"manifest-bytes\">");
    rg_html_esc_block(b, v->manifest_pretty ? v->manifest_pretty : v->manifest ? v->manifest : "");
    rg_buf_puts(b, "</pre></details></section>\n");
}

/* The Cite this record section: a sentence and a BibTeX entry. */
static void cite_section(rg_buf *b, const rg_render_ctx *ctx, const rg_run_view *v)
{
    char d[16];
    rg_buf_puts(b, "<section id=\"cite\"><h2>Cite this record</h2>\n<pre id=\"cite-text\">");
    rg_buf tmp = {0};
    /* By content: the first 8 hex digits of the run digest name the run on any index that holds it. */
    const char *hex = strncmp(v->run_digest, "sha256:", 7) ? NULL : v->run_digest + 7;
    if (hex && strlen(hex) >= 8) rg_buf_printf(&tmp, "%s/runs/%.8s", ctx->permalink_base ? ctx->permalink_base : "", hex);
    else rg_buf_printf(&tmp, "%s/runs/%lld", ctx->permalink_base ? ctx->permalink_base : "", (long long)v->id);
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
    rg_html_esc_block(b, cite.p ? cite.p : "");
    free(cite.p);
    free(tmp.p);
    rg_buf_puts(b, "</pre></section>\n");
}

/* The Report an issue and Source and dates sections. */
static void issue_and_source_sections(rg_buf *b, const rg_render_ctx *ctx, const rg_run_view *v)
{
    rg_buf_puts(b, "<section id=\"report-issue\"><h2>Report an issue with this run</h2>\n");
    if (ctx->forms) note_form(b, ctx, v->id, "what is wrong", 1);
    else rg_buf_puts(b, "<p class=\"muted\">This copy is read-only: report issues on the served index.</p>\n");
    rg_buf_puts(b, "</section>\n");

    put_esc(b, "<section id=\"source\"><h2>Source and dates</h2>\n<p>", v->source, ". Observed ");
    rg_html_esc(b, v->observed_at);
    if (*v->created_at) {
        rg_buf_puts(b, ", published in this index ");
        rg_html_esc(b, v->created_at);
    }
    rg_buf_puts(b, ".</p>\n");
    if (!ctx->single_page) {
        char name[300], e[64];
        if (rg_problem_title(v->definition, name, sizeof name, e, sizeof e)) snprintf(name, sizeof name, "this problem");
        rg_buf_puts(b, "<p><a id=\"problem-link\" ");
        href_problem(b, ctx, v->definition);
        put_esc(b, ">All results for ", name, " →</a> · <a id=\"json-link\" href=\"");
        rg_html_esc(b, ctx->root);
        rg_buf_printf(b, "runs/%lld.json\">JSON</a></p>", (long long)v->id);
    }
    rg_buf_puts(b, "</section>\n");
}

char *rg_render_run(const rg_render_ctx *ctx, const rg_run_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    char s[128], title[64];
    snprintf(title, sizeof title, "Run #%lld", (long long)v->id);
    page_open(&b, ctx, title);
    snprintf(s, sizeof s, "run #%lld", (long long)v->id);
    crumbs(&b, ctx, v->definition, s);
    run_header(&b, ctx, v);
    primary_section(&b, ctx, v);
    kv_table(&b, "identity", "Identity", &v->identity, "No identity recorded.");

    rg_buf_puts(&b, "<section id=\"correctness\"><h2>Correctness</h2>\n<p>");
    if (v->total > 0) rg_buf_printf(&b, "%d of %d workloads within the protocol's tolerance. ", v->passed, v->total);
    else rg_buf_puts(&b, "The record states no per-workload correctness. ");
    rg_html_esc(&b, v->correctness);
    rg_buf_puts(&b, "</p></section>\n");

    kv_table(&b, "workload", "Workload", &v->workload, "No workload description recorded.");

    measurements_section(&b, v);

    kv_table(&b, "protocol", "Protocol", &v->protocol, "No protocol recorded.");
    kv_table(&b, "environment", "Environment", &v->environment, "No environment recorded.");
    kv_table(&b, "artifacts", "Artifacts", &v->artifacts, "No artifacts published with this run.");

    copies_section(&b, v);
    notes_section(&b, ctx, v);
    manifest_section(&b, ctx, v);
    cite_section(&b, ctx, v);
    issue_and_source_sections(&b, ctx, v);
    return page_close(&b, err, errlen);
}

/* A comparison key, short, the whole of it on hover. */
static void short_key(rg_buf *b, const char *key)
{
    char k[64], e[64];
    if (rg_short_key(key, k, sizeof k, e, sizeof e)) snprintf(k, sizeof k, "?");
    put_esc(b, "<code title=\"", key, "\">");
    rg_html_esc(b, k);
    rg_buf_puts(b, "</code>");
}

/* "AMD EPYC · 16 workloads": a device's groups told apart by their workload sets. */
static void group_label(rg_buf *b, const char *device, int n_workloads)
{
    rg_html_esc(b, device);
    if (n_workloads > 0) rg_buf_printf(b, " · %d workload%s", n_workloads, n_workloads == 1 ? "" : "s");
}

/* The primary statistic's 95% interval, "" when the record has no samples. */
static void interval_cell(rg_buf *b, const rg_interval *iv)
{
    rg_buf_puts(b, "<td class=\"num nowrap\">");
    if (iv->known && isfinite(iv->lo) && isfinite(iv->hi)) {
        char lo[32], hi[32];
        rg_fmt_si(lo, sizeof lo, iv->lo * 1e-9, "s");
        rg_fmt_si(hi, sizeof hi, iv->hi * 1e-9, "s");
        put_esc(b, "", lo, " – ");
        rg_html_esc(b, hi);
    }
    rg_buf_puts(b, "</td>");
}

/* Where the one "× reference" figure comes from, for the group's note. */
static void reference_note(rg_buf *b, const rg_render_ctx *ctx, const rg_group_view *g)
{
    if (!g->ref_id) {
        rg_buf_puts(b, "× reference: no \"" RG_REFERENCE_RUN_NAME "\" run in this group "
                       "(<code>python3 -m ropegrad bench --impl reference</code> records one), so each run's figure is "
                       "its source's or its own baseline's (hover a figure for its basis).");
        return;
    }
    rg_buf_puts(b, "× reference: the reference run's primary figure over each run's, from ");
    if (ctx->single_page) rg_buf_printf(b, "run #%lld", (long long)g->ref_id);
    else {
        rg_buf_puts(b, "<a class=\"reference-run\" ");
        href_run(b, ctx, g->ref_id);
        rg_buf_printf(b, ">run #%lld</a>", (long long)g->ref_id);
    }
    rg_buf_puts(b, " (" RG_REFERENCE_RUN_NAME ", measured in this group).");
}

/* The trust column's words for a class. */
static const char *trust_label(const char *cls)
{
    if (!strcmp(cls, "measured")) return "measured here";
    return *cls ? cls : "unknown";
}

/* A figure's cell: its text with its basis on hover, or a dash saying why it is absent. */
static void why_cell(rg_buf *b, const char *text, const char *basis, const char *why)
{
    if (*text) {
        put_esc(b, "<td class=\"num\" title=\"", basis, "\">");
        rg_html_esc(b, text);
        rg_buf_puts(b, "</td>");
    } else put_esc(b, "<td class=\"num why\" title=\"", *why ? why : "not known", "\">–</td>");
}

/* The implementation's name, linked to its best run, the run's number under it. */
static void name_cell(rg_buf *b, const rg_render_ctx *ctx, const rg_rank_entry *e)
{
    rg_buf_puts(b, "<td class=\"impl\">");
    if (ctx->single_page) rg_html_esc(b, *e->name ? e->name : e->kernel);
    else {
        rg_buf_puts(b, "<a class=\"impl-link\" ");
        href_run(b, ctx, e->id);
        put_esc(b, ">", *e->name ? e->name : e->kernel, "</a>");
    }
    if (ctx->single_page) rg_buf_printf(b, " <span class=\"muted runid\">run #%lld</span>", (long long)e->id);
    else {
        rg_buf_puts(b, " <span class=\"muted runid\">run <a class=\"rank-link\" ");
        href_run(b, ctx, e->id);
        rg_buf_printf(b, ">#%lld</a></span>", (long long)e->id);
    }
    if (e->suspect) rg_buf_puts(b, " <span class=\"badge suspect\">suspect</span>");
    if (e->retracted_at[0]) rg_buf_puts(b, " <span class=\"badge retracted\">retracted by its source</span>");
    if (!strcmp(e->verification, "unverifiable") && strcmp(e->trust, "reported"))   /* a reported record has no medians */
        rg_buf_puts(b, " <span class=\"badge unverifiable\" title=\"the index cannot check its figures against its "
                       "T_SOL\">unverifiable</span>");
    rg_buf_puts(b, "</td>");
}

/* Trust: the class (its reason on hover), replications and signatures. */
static void trust_cell(rg_buf *b, const rg_rank_entry *e)
{
    put_esc(b, "<td class=\"trust\"><span class=\"badge trust-", e->trust, "\" title=\"");
    rg_html_esc(b, e->trust_reason);
    put_esc(b, "\">", trust_label(e->trust), "</span>");
    if (e->replications > 0) rg_buf_printf(b, " · replicated %d", e->replications);
    if (e->signatures > 0) rg_buf_puts(b, " · signed");
    rg_buf_puts(b, "</td>");
}

/* How many runs the implementation has, linked to its line's history when more than one. */
static void runs_cell(rg_buf *b, const rg_render_ctx *ctx, const rg_rank_entry *e)
{
    int n = e->impl_runs > 0 ? e->impl_runs : 1;
    rg_buf_puts(b, "<td class=\"num\">");
    if (n > 1 && ctx->history_pages) {
        rg_buf_puts(b, "<a class=\"impl-runs\" ");
        href_history(b, ctx, e->id);
        rg_buf_printf(b, ">%d runs</a>", n);
    } else rg_buf_printf(b, "%d", n);
    rg_buf_puts(b, "</td>");
}

enum field_table { FT_MEASURED, FT_REPORTED, FT_UNRANKED, FT_SUPERSEDED };

static int in_table(const rg_rank_entry *e, enum field_table t)
{
    if (t == FT_SUPERSEDED) return e->superseded;
    if (t == FT_UNRANKED) return !e->superseded && strcmp(e->trust, "measured") && strcmp(e->trust, "reported");
    if (!e->impl_best) return 0;
    if (t == FT_MEASURED) return !strcmp(e->trust, "measured");
    if (t == FT_REPORTED) return !strcmp(e->trust, "reported");
    return strcmp(e->trust, "measured") && strcmp(e->trust, "reported");
}

static void field_row(rg_buf *b, const rg_render_ctx *ctx, const rg_rank_entry *e, enum field_table t)
{
    char d[16], s[48] = "";
    if (e->field_rank > 0 && (t == FT_MEASURED || t == FT_REPORTED))
        rg_buf_printf(b, "<tr><td class=\"rank\">%s%d</td>", e->field_tied ? "=" : "", e->field_rank);
    else   /* a run that failed correctness and one that passed with nothing timed told apart */
        put_esc(b, "<tr><td>",
                t == FT_SUPERSEDED                                         ? "superseded"
                : !strcmp(e->trust, "failed") && !strcmp(e->status, "passed") ? "correctness only"
                                                                             : e->trust,
                "</td>");
    name_cell(b, ctx, e);
    cell_si(b, e->primary_ns, 1e-9, "s");
    if (t != FT_REPORTED) interval_cell(b, &e->iv);
    trust_cell(b, e);
    if (isfinite(e->x_ref)) snprintf(s, sizeof s, "%.3g×", e->x_ref);
    why_cell(b, s, e->x_ref_basis, e->x_ref_why);
    s[0] = 0;
    if (isfinite(e->sol)) snprintf(s, sizeof s, "%.3f", e->sol);
    why_cell(b, s, e->sol_basis, e->sol_why);
    s[0] = 0;
    if (isfinite(e->fast_total) && e->fast_total > 0) snprintf(s, sizeof s, "%.0f/%.0f", e->fast_count, e->fast_total);
    why_cell(b, s, "workloads on which the run beat the reference", e->fast_why);
    if (t != FT_SUPERSEDED) runs_cell(b, ctx, e);
    if (t == FT_UNRANKED || t == FT_SUPERSEDED)
        put_esc(b, "<td class=\"reason\">", t == FT_SUPERSEDED ? e->superseded_why : e->trust_reason, "</td>");
    put_esc(b, "<td class=\"nowrap\">", date_part(e->observed_at, d), "</td></tr>\n");
}

/* One table of a group's field; nothing when it has no row. */
static void field_table(rg_buf *b, const rg_render_ctx *ctx, const rg_group_view *g, enum field_table t)
{
    static const char *const heading[] = {
        "Measured here · ranked by their 95% intervals (overlapping intervals tie)",
        "Reported by their source · ranked by their published figure (no samples held here)",
        "Not ranked · listed with the reason", ""};
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) n += in_table(&g->e[i], t);
    if (!n) return;
    if (t != FT_SUPERSEDED) put_esc(b, "<h3 class=\"kind\">", heading[t], "</h3>\n");
    static const char *const table_id[] = {"measured", "reported", "unranked", "superseded"};
    rg_buf_printf(b, "<table class=\"field\" data-kind=\"%s\"><tr><th>#</th><th>implementation</th>", table_id[t]);
    put_esc(b, "<th title=\"", g->primary_stat, "\">time</th>");
    if (t != FT_REPORTED) rg_buf_puts(b, "<th>95% interval</th>");
    rg_buf_puts(b, "<th title=\"measured here: samples held; reported: imported, no samples; replicated N: N agreeing "
                   "reruns; signed: carries a signature\">trust</th><th title=\"the reference's time over this run's"
                   "\">× reference</th><th title=\"speed-of-light score: 1 is the floor\">SOL</th>"
                   "<th>cases faster</th>");
    if (t != FT_SUPERSEDED) rg_buf_puts(b, "<th>runs</th>");
    if (t == FT_UNRANKED || t == FT_SUPERSEDED) rg_buf_puts(b, "<th>why</th>");
    rg_buf_puts(b, "<th>observed</th></tr>\n");
    for (size_t i = 0; i < g->n; i++)
        if (in_table(&g->e[i], t)) field_row(b, ctx, &g->e[i], t);
    rg_buf_puts(b, "</table>\n");
}

/* The implementations the chart leaves out, listed under it. */
static void chart_others(rg_buf *b, const rg_group_view *g)
{
    size_t shown = 0;
    if (!g->n_series) return;   /* no chart: the tables list them all */
    for (size_t i = 0; i < g->n; i++) {
        const rg_rank_entry *e = &g->e[i];
        if (!e->impl_best) continue;
        int drawn = 0;
        for (size_t s = 0; s < g->n_series; s++) drawn |= g->series[s].id == e->id;
        if (drawn) continue;
        rg_buf_puts(b, shown++ ? "; " : "<p class=\"muted others\" id=\"chart-others\">Not drawn (the chart shows "
                                        "at most the top five and the reference): ");
        rg_html_esc(b, *e->name ? e->name : e->kernel);
        char s[48];
        rg_fmt_si(s, sizeof s, e->primary_ns * 1e-9, "s");
        if (*s) put_esc(b, " ", s, "");
        if (!strcmp(e->trust, "reported")) rg_buf_puts(b, " (no per-workload figures)");
    }
    if (shown) rg_buf_puts(b, ".</p>\n");
}

static void problem_group(rg_buf *b, const rg_render_ctx *ctx, const rg_group_view *g, size_t gi)
{
    int64_t superseded = 0;
    for (size_t i = 0; i < g->n; i++) superseded += g->e[i].superseded;
    rg_buf_printf(b, "<section class=\"group%s\" id=\"group-%zu\"><h2>", g->superseded ? " superseded" : "", gi + 1);
    rg_html_esc(b, *g->words ? g->words : g->device);
    rg_buf_puts(b, g->cpu ? "</h2>\n<p class=\"muted group-why\">Comparable: one CPU ("
                          : "</h2>\n<p class=\"muted group-why\">Comparable: one GPU (");
    rg_html_esc(b, g->device);
    if (*g->harness) put_esc(b, "), one harness and version (", g->harness, "");
    put_esc(b, "), one statistic (", g->primary_stat, ")");
    rg_buf_printf(b, ". %zu implementation%s, %lld run%s · comparison key ", g->n_impls, g->n_impls == 1 ? "" : "s",
                  (long long)g->runs, g->runs == 1 ? "" : "s");
    short_key(b, g->comparison_key);
    if ((int64_t)g->n < g->runs) rg_buf_printf(b, " · the first %zu runs read", g->n);
    rg_buf_puts(b, "<br>");
    reference_note(b, ctx, g);
    rg_buf_puts(b, "</p>\n");
    field_table(b, ctx, g, FT_MEASURED);
    size_t measured = 0;
    for (size_t i = 0; i < g->n; i++) measured += in_table(&g->e[i], FT_MEASURED);
    if (measured) {
        rg_buf_puts(b, "<p class=\"muted\">");
        rank_method(b, g->interval_ranked);
        rg_buf_puts(b, "</p>\n");
    }
    field_table(b, ctx, g, FT_REPORTED);
    field_table(b, ctx, g, FT_UNRANKED);
    rg_chart_field(b, g);
    chart_others(b, g);
    if (superseded) {
        rg_buf_printf(b, "<details class=\"superseded-runs\"><summary>Superseded: %lld run%s of an older protocol "
                         "or an older version of the harness, listed, never ranked</summary>\n", (long long)superseded,
                      superseded == 1 ? "" : "s");
        field_table(b, ctx, g, FT_SUPERSEDED);
        rg_buf_puts(b, "</details>\n");
    }
    rg_buf_puts(b, "</section>\n");
}

/* The first screen: the #1 of the first current group, large; the other groups' #1 in a line each. */
static void problem_leaders(rg_buf *b, const rg_render_ctx *ctx, const rg_problem_view *v)
{
    size_t shown = 0;
    for (size_t gi = 0; gi < v->n_groups; gi++) {
        const rg_group_view *g = &v->groups[gi];
        const rg_rank_entry *e = g->superseded ? NULL : rg_group_first(g);
        if (!e) continue;
        char s[48];
        rg_fmt_si(s, sizeof s, e->primary_ns * 1e-9, "s");
        if (!shown++) {
            rg_buf_puts(b, "<section id=\"leaders\"><div class=\"leader\" id=\"leader\"><div class=\"muted\">#1 on ");
            rg_html_esc(b, g->words);
            rg_buf_printf(b, " (%s)</div><div><a class=\"big\" id=\"leader-name\" href=\"#group-%zu\">",
                          !strcmp(e->trust, "measured") ? "measured here" : "as reported", gi + 1);
            rg_html_esc(b, *e->name ? e->name : e->kernel);
            put_esc(b, "</a> <span class=\"big\" id=\"leader-time\">", s, "</span> <span class=\"muted\">");
            rg_html_esc(b, g->primary_stat);
            rg_buf_puts(b, "</span></div></div>\n<ul class=\"leaders\" id=\"other-leaders\">");
            continue;
        }
        rg_buf_printf(b, "<li><a href=\"#group-%zu\">", gi + 1);
        rg_html_esc(b, g->words);
        put_esc(b, "</a>: #1 ", *e->name ? e->name : e->kernel, " ");
        put_esc(b, "<b>", s, "</b></li>");
    }
    if (shown) rg_buf_puts(b, "</ul></section>\n");
    (void)ctx;
}

/* href="ROOT/records/DEF" (static: records/SLUG.html). */
static void href_records(rg_buf *b, const rg_render_ctx *ctx, const char *def)
{
    rg_buf tmp = {0};
    if (ctx->static_site) rg_problem_slug(&tmp, def);
    else rg_url_esc(&tmp, def);
    put_esc(b, "href=\"", ctx->root, "records/");
    rg_html_esc(b, tmp.p ? tmp.p : "");
    rg_html_esc(b, ctx->ext);
    rg_buf_puts(b, "\"");
    free(tmp.p);
}

char *rg_render_problem(const rg_render_ctx *ctx, const rg_problem_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    char title[400];
    if (rg_problem_title(v->definition, title, sizeof title, err, errlen)) return NULL;
    page_open(&b, ctx, title);
    crumbs(&b, ctx, v->definition, NULL);
    put_esc(&b, "<h1 id=\"problem-title\">", title, "</h1>\n");
    put_esc(&b, "<p class=\"muted\">definition <code>", v->definition, "</code>");
    if (!ctx->single_page) {
        rg_buf_puts(&b, " · <a id=\"records-link\" ");
        href_records(&b, ctx, v->definition);
        rg_buf_puts(&b, ">records over time →</a>");
    }
    rg_buf_puts(&b, "</p>\n");
    problem_leaders(&b, ctx, v);
    int heading = 0;
    for (size_t gi = 0; gi < v->n_groups; gi++) {
        if (v->groups[gi].superseded && !heading++)
            rg_buf_puts(&b, "<h2 id=\"superseded\">Superseded groups</h2>\n<p class=\"muted\">Runs of an older "
                            "protocol or an older version of their harness: listed, never ranked against the groups "
                            "above.</p>\n");
        problem_group(&b, ctx, &v->groups[gi], gi);
    }
    return page_close(&b, err, errlen);
}

/* ---- records over time -------------------------------------------------------------------- */

char *rg_render_records(const rg_render_ctx *ctx, const rg_records_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    char title[400], t2[460];
    if (rg_problem_title(v->definition, title, sizeof title, err, errlen)) return NULL;
    snprintf(t2, sizeof t2, "Records · %s", title);
    page_open(&b, ctx, t2);
    crumbs(&b, ctx, v->definition, "records");
    put_esc(&b, "<h1 id=\"records-title\">Records over time: ", title, "</h1>\n");
    rg_buf_puts(&b, "<p class=\"muted\">Per GPU, harness and statistic: every run that may rank (measured here, or "
                    "reported by its source) by the date it was observed (published where none is recorded) -- and "
                    "the runs that set a new best figure. Suspect, busy, partial, failed and superseded runs set no "
                    "record.</p>\n");
    size_t shown = 0;
    for (size_t gi = 0; gi < v->n_groups; gi++) {
        const rg_records_group *r = &v->groups[gi];
        if (!r->n) continue;
        rg_buf_printf(&b, "<section class=\"records-group%s\" id=\"records-%zu\"><h2>", r->superseded ? " superseded" : "",
                      ++shown);
        rg_html_esc(&b, r->words);
        rg_buf_puts(&b, r->superseded ? " <span class=\"badge\">superseded</span></h2>\n" : "</h2>\n");
        rg_chart_records(&b, r);
        rg_buf_puts(&b, "<table class=\"records\"><tr><th>date</th><th>implementation</th><th>time</th>"
                        "<th>trust</th><th>gain over the previous record</th></tr>\n");
        for (size_t i = 0; i < r->n; i++) {
            const rg_record_point *p = &r->p[i];
            if (!p->record) continue;
            char d[16], s[48];
            put_esc(&b, "<tr class=\"record\"><td class=\"nowrap\">", date_part(p->date, d), "</td><td>");
            run_name_link(&b, ctx, p->id, p->name);
            rg_fmt_si(s, sizeof s, p->primary_ns * 1e-9, "s");
            put_esc(&b, "</td><td class=\"num\">", s, "</td>");
            put_esc(&b, "<td>", trust_label(p->trust), "</td><td class=\"num\">");
            if (isfinite(p->gain)) rg_buf_printf(&b, "%.3g× faster", p->gain);
            else rg_buf_puts(&b, "the first");
            rg_buf_puts(&b, "</td></tr>\n");
        }
        rg_buf_printf(&b, "</table>\n<p class=\"muted\">%zu record%s among %zu dated run%s.</p></section>\n",
                      r->n_records, r->n_records == 1 ? "" : "s", r->n, r->n == 1 ? "" : "s");
    }
    if (!shown) rg_buf_puts(&b, "<p class=\"muted\" id=\"no-records\">No run of this problem may rank yet.</p>\n");
    if (!ctx->single_page) {
        rg_buf_puts(&b, "<p><a id=\"problem-link\" ");
        href_problem(&b, ctx, v->definition);
        rg_buf_puts(&b, ">The field of this problem →</a></p>\n");
    }
    return page_close(&b, err, errlen);
}

/* The problem's title, linked, on the first of its rows only. */
static void index_problem_cell(rg_buf *b, const rg_render_ctx *ctx, const rg_index_view *v, size_t i)
{
    rg_buf_puts(b, "<td>");
    if (!i || strcmp(v->rows[i - 1].definition, v->rows[i].definition)) {
        char title[400], e[64];
        if (rg_problem_title(v->rows[i].definition, title, sizeof title, e, sizeof e)) snprintf(title, sizeof title, "?");
        rg_buf_puts(b, "<a class=\"problem-link\" ");
        href_problem(b, ctx, v->rows[i].definition);
        put_esc(b, " title=\"", v->rows[i].definition, "\">");
        rg_html_esc(b, title);
        rg_buf_puts(b, "</a>");
    }
    rg_buf_puts(b, "</td>");
}

static void index_problems(rg_buf *b, const rg_render_ctx *ctx, const rg_index_view *v)
{
    rg_buf_puts(b, "<h2 id=\"problems\">Problems</h2>\n");
    if (!v->n) {
        rg_buf_puts(b, "<p class=\"muted\">No runs recorded yet.</p>\n");
        return;
    }
    rg_buf_puts(b, "<table id=\"problems-table\"><tr><th>problem</th><th>comparison group (device)</th><th>key</th>"
                   "<th>runs</th><th>#1</th></tr>\n");
    for (size_t i = 0; i < v->n; i++) {
        const rg_problem_row *p = &v->rows[i];
        rg_buf_puts(b, "<tr>");
        index_problem_cell(b, ctx, v, i);
        rg_buf_puts(b, "<td>");
        group_label(b, p->device, v->best ? v->best[i].n_workloads : -1);
        rg_buf_puts(b, "</td><td class=\"nowrap\">");
        short_key(b, p->comparison_key);
        rg_buf_printf(b, "</td><td class=\"num\">%lld</td><td class=\"nowrap\">", (long long)p->runs);
        const rg_index_leader *l = NULL;
        for (size_t k = 0; v->leaders_listed && k < v->n_leaders && !l; k++)
            if (!strcmp(v->leaders[k].comparison_key, p->comparison_key)) l = &v->leaders[k];
        if (l) {   /* the #1 its problem page shows */
            run_name_link(b, ctx, l->id, l->name);
        } else if (p->best_id > 0 && !v->leaders_listed) run_link(b, ctx, p->best_id, "run #");
        rg_buf_puts(b, "</td></tr>\n");
    }
    rg_buf_puts(b, "</table>\n");
}

/* Each current group's #1 as its problem page shows it. */
static void index_leaders(rg_buf *b, const rg_render_ctx *ctx, const rg_index_view *v)
{
    rg_buf_puts(b, "<h2 id=\"gpus\">Headline figures: each comparison group's #1</h2>\n");
    if (!v->n_leaders) {
        rg_buf_puts(b, "<p class=\"muted\">No comparison group has a #1 yet.</p>\n");
        return;
    }
    rg_buf_puts(b, "<table id=\"headlines\"><tr><th>problem</th><th>GPU · harness · statistic</th><th>#1</th>"
                   "<th>time</th><th>trust</th></tr>\n");
    for (size_t i = 0; i < v->n_leaders; i++) {
        const rg_index_leader *l = &v->leaders[i];
        char title[400], e[64], s[48];
        if (rg_problem_short(l->definition, title, sizeof title, e, sizeof e)) snprintf(title, sizeof title, "?");
        rg_buf_puts(b, "<tr><td>");
        if (ctx->single_page) rg_html_esc(b, title);
        else {
            rg_buf_puts(b, "<a ");
            href_problem(b, ctx, l->definition);
            put_esc(b, ">", title, "</a>");
        }
        put_esc(b, "</td><td>", l->words, "</td><td>");
        run_name_link(b, ctx, l->id, l->name);
        rg_fmt_si(s, sizeof s, l->primary_ns * 1e-9, "s");
        put_esc(b, "</td><td class=\"num nowrap\">", s, "</td>");
        rg_buf_puts(b, l->measured ? "<td class=\"nowrap\">measured here</td></tr>\n" : "<td>reported</td></tr>\n");
    }
    rg_buf_puts(b, "</table>\n");
}

/* Best per problem per device: #1's primary figure. */
static void index_headlines(rg_buf *b, const rg_render_ctx *ctx, const rg_index_view *v)
{
    if (v->leaders_listed) {   /* each group's #1 as its problem page shows it */
        index_leaders(b, ctx, v);
        return;
    }
    rg_buf_puts(b, "<h2 id=\"gpus\">Headline figures by device</h2>\n");
    size_t shown = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (!v->best || !figure(v->best[i].primary_ns)) continue;
        if (!shown++) rg_buf_puts(b, "<table id=\"headlines\"><tr><th>device</th><th>problem</th><th>#1</th>"
                                     "<th>primary</th></tr>\n");
        char title[400], e[64], s[48];
        if (rg_problem_short(v->rows[i].definition, title, sizeof title, e, sizeof e)) snprintf(title, sizeof title, "?");
        rg_buf_puts(b, "<tr><td>");
        group_label(b, v->rows[i].device, v->best[i].n_workloads);
        put_esc(b, "</td><td>", title, "</td><td class=\"nowrap\">");
        run_link(b, ctx, v->rows[i].best_id, "run #");
        rg_fmt_si(s, sizeof s, v->best[i].primary_ns * 1e-9, "s");
        put_esc(b, "</td><td class=\"num\">", s, " <span class=\"muted\">");
        rg_html_esc(b, v->best[i].primary_stat);
        rg_buf_puts(b, "</span></td></tr>\n");
    }
    if (shown) rg_buf_puts(b, "</table>\n");
    else rg_buf_puts(b, "<p class=\"muted\">No comparison group has a #1 yet.</p>\n");
}

static void index_latest(rg_buf *b, const rg_render_ctx *ctx, const rg_index_view *v)
{
    rg_buf_puts(b, "<h2 id=\"latest\">Latest runs</h2>\n");
    if (!v->latest_listed) {
        rg_buf_printf(b, "<p class=\"muted\">Not listed here: the registry holds more than %d runs "
                         "(ropegrad runs list shows them).</p>\n", RG_INTERVAL_RANK_MAX);
        return;
    }
    rg_buf_puts(b, "<table id=\"latest-table\"><tr><th>run</th><th>problem</th><th>device</th><th>primary</th>"
                   "<th>status</th><th>observed</th></tr>\n");
    for (size_t i = 0; i < v->n_latest; i++) {
        const rg_run_row *r = &v->latest[i];
        char title[400], e[64], d[16];
        if (rg_problem_short(r->definition, title, sizeof title, e, sizeof e)) snprintf(title, sizeof title, "?");
        rg_buf_puts(b, "<tr><td class=\"nowrap\">");
        run_link(b, ctx, r->id, "run #");
        put_esc(b, "</td><td>", title, "</td><td>");
        rg_html_esc(b, r->device);
        rg_buf_puts(b, "</td>");
        cell_si(b, r->primary_ns > 0 ? r->primary_ns : NAN, 1e-9, "s");
        put_esc(b, "<td>", r->status, "");
        class_badge(b, v->latest_class[i], v->latest_reason[i]);
        rg_buf_puts(b, "</td><td>");
        rg_html_esc(b, date_part(r->observed_at, d));
        rg_buf_puts(b, "</td></tr>\n");
    }
    rg_buf_puts(b, "</table>\n");
}

char *rg_render_index(const rg_render_ctx *ctx, const rg_index_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    page_open(&b, ctx, "Problems");
    crumbs(&b, ctx, NULL, NULL);
    rg_buf_puts(&b, "<h1>ropegrad index</h1>\n");
    index_headlines(&b, ctx, v);
    index_problems(&b, ctx, v);
    index_latest(&b, ctx, v);
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
    crumbs(&b, ctx, r0->definition, "history");
    put_esc(&b, "<h1>History: ", *v->name ? v->name : line, "</h1>\n<p class=\"muted\">");
    rg_html_esc(&b, r0->definition);
    rg_buf_puts(&b, " on ");
    rg_html_esc(&b, r0->device);
    rg_buf_puts(&b, " · comparison key ");
    short_key(&b, r0->comparison_key);
    rg_buf_puts(&b, "<br>The primary statistic of each run, oldest first, with its 95% interval (");
    rg_html_esc(&b, RG_RANK_METHOD);
    rg_buf_puts(&b, "). Red points are suspect runs.</p>\n");
    rg_chart_trend(&b, v->e, v->n);
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
        if (e->rank_class != RG_CLASS_SUSPECT && e->rank_class != RG_CLASS_FAILED)
            class_badge(&b, e->rank_class, e->rank_reason);
        rg_buf_puts(&b, "</td></tr>\n");
    }
    rg_buf_puts(&b, "</table>\n");
    return page_close(&b, err, errlen);
}

/* a and b (ns) with 3 significant digits, more (up to 6) when the ratio is
 * not 1.000 but the two would read the same: "13.20 µs vs 13.66 µs", never
 * "13.2 µs vs 13.2 µs, ratio 1.035". */
static void fmt_pair(double a, double b, double ratio, char *sa, char *sb, size_t n)
{
    int same = !isfinite(ratio) || fabs(ratio - 1) < 0.0005;
    for (int digits = 3; digits <= 6; digits++) {
        rg_fmt_si_digits(sa, n, a * 1e-9, "s", digits);
        rg_fmt_si_digits(sb, n, b * 1e-9, "s", digits);
        if (same || strcmp(sa, sb)) return;
    }
}

/* A workload's shape from either run ("" when neither has one). */
static const char *compare_shape(const rg_compare_view *v, int index)
{
    for (size_t k = 0; k < v->a.n_wl; k++)
        if (v->a.wl[k].index == index) return v->a.wl[k].shape;
    for (size_t k = 0; k < v->b.n_wl; k++)
        if (v->b.wl[k].index == index) return v->b.wl[k].shape;
    return "";
}

static void compare_row(rg_buf *b, const rg_compare_row *r, const rg_compare_view *v)
{
    char sa[48], sb[48];
    fmt_pair(r->a, r->b, r->ratio, sa, sb, sizeof sa);
    if (r->primary) rg_buf_puts(b, "<tr id=\"primary-row\"><td>primary</td>");
    else {
        const char *shape = compare_shape(v, r->index);
        rg_buf_printf(b, "<tr><td>#%d", r->index);
        if (*shape) put_esc(b, " <span class=\"muted\">", shape, "</span>");
        rg_buf_puts(b, "</td>");
    }
    put_esc(b, "<td class=\"num\">", sa, "</td>");
    put_esc(b, "<td class=\"num\">", sb, "</td><td class=\"num\">");
    if (isfinite(r->ratio)) rg_buf_printf(b, "%.3f", r->ratio);
    rg_buf_puts(b, "</td><td class=\"num\">");
    if (isfinite(r->lo) && isfinite(r->hi)) rg_buf_printf(b, "%.3f to %.3f", r->lo, r->hi);
    else if (r->primary && !*v->unlike) rg_buf_puts(b, "none: a record carries no samples");
    rg_buf_puts(b, "</td><td>");
    if (r->shift) rg_buf_printf(b, "%s (p %.2g)", r->verdict, r->p);
    else if (r->primary && *v->unlike) rg_buf_puts(b, "not divided: the GPUs or the statistics differ (see above)");
    else if (r->primary) rg_buf_puts(b, "the runs' primary figures (a record has no per-workload figures)");
    else if (!isfinite(r->a) || !isfinite(r->b)) rg_buf_puts(b, "in one run only");
    else rg_buf_puts(b, "no samples");
    rg_buf_puts(b, "</td></tr>\n");
}

/* The summary row, as `runs compare` prints it. */
static void compare_summary_row(rg_buf *b, const rg_compare_view *v)
{
    if (!v->n_shared) return;
    char sa[48], sb[48];
    double ratio = v->geo_b / v->geo_a;
    fmt_pair(v->geo_a, v->geo_b, ratio, sa, sb, sizeof sa);
    put_esc(b, "<tr class=\"summary\" id=\"summary-row\"><td>all</td><td class=\"num\">", sa, "</td>");
    put_esc(b, "<td class=\"num\">", sb, "</td>");
    rg_buf_printf(b, "<td class=\"num\">%.3f</td><td colspan=\"2\">geomean over %d shared workload%s; %d SLOW, %d FAST"
                     "</td></tr>\n", ratio, v->n_shared, v->n_shared == 1 ? "" : "s", v->n_slow, v->n_fast);
}

/* "NAME (run #ID)", the name linked to the run. */
static void compare_side(rg_buf *b, const rg_render_ctx *ctx, const rg_run_view *r)
{
    rg_buf_puts(b, "<span class=\"side\">");
    run_name_link(b, ctx, r->id, *r->name ? r->name : r->title);
    class_badge(b, r->rank_class, r->rank_reason);
    rg_buf_printf(b, " <span class=\"muted\">(run #%lld, ", (long long)r->id);
    rg_html_esc(b, r->device);
    put_esc(b, ", ", r->primary_stat, ")</span></span>");
}

char *rg_render_compare(const rg_render_ctx *ctx, const rg_compare_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    char title[480];
    snprintf(title, sizeof title, "%.200s against %.200s", *v->b.name ? v->b.name : "run",
             *v->a.name ? v->a.name : "run");
    page_open(&b, ctx, title);
    char here[64];
    snprintf(here, sizeof here, "run #%lld against #%lld", (long long)v->b.id, (long long)v->a.id);
    crumbs(&b, ctx, v->b.definition, here);
    if (*v->unlike) put_esc(&b, "<p class=\"unlike\" id=\"unlike\">", v->unlike, "</p>\n");
    rg_buf_puts(&b, "<h1 id=\"compare-title\">");
    compare_side(&b, ctx, &v->b);
    rg_buf_puts(&b, "<br><span class=\"muted\" style=\"font-size:15px\">against</span> ");
    compare_side(&b, ctx, &v->a);
    rg_buf_puts(&b, "</h1>\n");
    if (!v->comparable && !*v->unlike)
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
    rg_buf_printf(&b, "<p class=\"muted\" id=\"compare-method\">ratio = run #%lld / run #%lld (below 1: #%lld is "
                      "faster): the Hodges-Lehmann ratio of the per-iteration samples with its 95%% distribution-free "
                      "interval and the verdict of <code>runs check</code> (threshold %.0f%%, alpha %g); where a record "
                      "has no samples, the ratio of the medians with an interval from the two runs' min and max; where "
                      "a record has no per-workload figures, its primary figure. The figures show as many digits as "
                      "tell them apart.</p>\n",
                  (long long)v->b.id, (long long)v->a.id, (long long)v->b.id, 100 * RG_STATS_THRESHOLD, RG_STATS_ALPHA);
    rg_chart_ratio(&b, v);
    rg_buf_printf(&b, "<table id=\"compare-table\"><tr><th>workload</th><th>run #%lld</th><th>run #%lld</th>"
                      "<th>ratio</th><th>interval</th><th>verdict</th></tr>\n",
                  (long long)v->a.id, (long long)v->b.id);
    for (size_t i = 0; i < v->n; i++)   /* the primary figures' row first */
        if (v->rows[i].primary) compare_row(&b, &v->rows[i], v);
    for (size_t i = 0; i < v->n; i++)
        if (!v->rows[i].primary) compare_row(&b, &v->rows[i], v);
    compare_summary_row(&b, v);
    rg_buf_puts(&b, "</table>\n");
    return page_close(&b, err, errlen);
}

char *rg_render_error(const rg_render_ctx *ctx, int status, const char *msg, const char *back_path, char *err,
                      size_t errlen)
{
    rg_buf b = {0};
    char t[32];
    snprintf(t, sizeof t, "%d", status);
    page_open(&b, ctx, t);
    crumbs(&b, ctx, NULL, t);
    rg_buf_printf(&b, "<h1>%d</h1>\n<p id=\"error\">", status);
    rg_html_esc(&b, msg ? msg : "");
    rg_buf_puts(&b, "</p>\n<p><a id=\"back\" href=\"");
    rg_html_esc(&b, ctx->root);
    if (back_path) rg_html_esc(&b, back_path);
    rg_buf_puts(&b, back_path ? "\">Back to the page</a></p>\n" : "\">Back to the index</a></p>\n");
    return page_close(&b, err, errlen);
}

char *rg_render_search(const rg_render_ctx *ctx, const rg_search_view *v, char *err, size_t errlen)
{
    rg_buf b = {0};
    page_open(&b, ctx, "Search");
    crumbs(&b, ctx, NULL, "search");
    rg_buf_puts(&b, "<h1>Search by implementation</h1>\n<form method=\"get\" id=\"search-form\" action=\"");
    rg_html_esc(&b, ctx->root);
    put_esc(&b, "search\"><label>implementation <input type=\"search\" name=\"q\" maxlength=\"100\" value=\"", v->q,
            "\"></label> <button type=\"submit\">Search</button></form>\n");
    if (!*v->q) return page_close(&b, err, errlen);
    if (!v->n) put_esc(&b, "<p class=\"muted\" id=\"no-hits\">No implementation name holds “", v->q, "”.</p>\n");
    else rg_buf_puts(&b, "<table id=\"search-hits\"><tr><th>run</th><th>implementation</th><th>problem</th>"
                         "<th>device</th><th>primary</th><th>status</th></tr>\n");
    for (size_t i = 0; i < v->n; i++) {
        const rg_search_hit *h = &v->hits[i];
        char title[400], e[64];
        if (rg_problem_short(h->definition, title, sizeof title, e, sizeof e)) snprintf(title, sizeof title, "?");
        rg_buf_puts(&b, "<tr><td class=\"nowrap\">");
        run_link(&b, ctx, h->id, "run #");
        put_esc(&b, "</td><td>", h->kernel, "</td><td>");
        rg_html_esc(&b, title);
        put_esc(&b, "</td><td>", h->device, "</td>");
        cell_si(&b, h->primary_ns, 1e-9, "s");
        put_esc(&b, "<td>", h->status, "");
        class_badge(&b, h->rank_class, h->rank_reason);
        rg_buf_puts(&b, "</td></tr>\n");
    }
    if (v->n) rg_buf_puts(&b, "</table>\n");
    if (v->more) rg_buf_printf(&b, "<p class=\"muted\">The newest %d matches are shown.</p>\n", RG_SEARCH_MAX);
    return page_close(&b, err, errlen);
}

/* ---- /api JSON ----------------------------------------------------------------------------------- */

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

/* Why a figure is empty: the reason while v is NAN, else null. */
static void add_why(cJSON *o, const char *k, double v, const char *why)
{
    if (!isfinite(v) && why && *why) cJSON_AddStringToObject(o, k, why);
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
        /* #1's trust class (measured; reported in a group without measured runs) and harness */
        int best = v->best && v->rows[i].best_id > 0;
        if (best) cJSON_AddStringToObject(p, "best_rank_class", rg_rank_class_name(v->best[i].rank_class));
        else cJSON_AddNullToObject(p, "best_rank_class");
        if (best && v->best[i].harness[0]) cJSON_AddStringToObject(p, "harness", v->best[i].harness);
        else cJSON_AddNullToObject(p, "harness");
        cJSON_AddItemToArray(a, p);
    }
    return finish_json(o, err, errlen);
}

/* The field's columns of a run (model_field.c). */
static void api_field_entry(cJSON *x, const rg_rank_entry *e)
{
    cJSON_AddStringToObject(x, "trust", e->trust);
    cJSON_AddStringToObject(x, "trustReason", e->trust_reason);
    cJSON_AddBoolToObject(x, "superseded", e->superseded);
    cJSON_AddBoolToObject(x, "implementationBest", e->impl_best);
    if (e->impl_best) cJSON_AddNumberToObject(x, "implementationRuns", e->impl_runs);
    if (e->field_rank > 0) cJSON_AddNumberToObject(x, "fieldRank", e->field_rank);
    else cJSON_AddNullToObject(x, "fieldRank");
    cJSON_AddNumberToObject(x, "replications", e->replications);
    cJSON_AddBoolToObject(x, "signed", e->signatures > 0);
    cJSON_AddStringToObject(x, "xReferenceBasis", e->x_ref_basis);
}

/* What the run's source says of it: "publishedAt" and "sourceRank" {rank, of} (null when none). */
static void api_source_facts(cJSON *x, const char *published_at, int rank, int of)
{
    if (published_at[0]) cJSON_AddStringToObject(x, "publishedAt", published_at);
    else cJSON_AddNullToObject(x, "publishedAt");
    if (rank > 0) {
        cJSON *r = cJSON_AddObjectToObject(x, "sourceRank");
        cJSON_AddNumberToObject(r, "rank", rank);
        if (of > 0) cJSON_AddNumberToObject(r, "of", of);
        else cJSON_AddNullToObject(r, "of");
    } else {
        cJSON_AddNullToObject(x, "sourceRank");
    }
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
        cJSON_AddStringToObject(go, "comparableBy", g->words);
        cJSON_AddStringToObject(go, "harness", g->harness);
        cJSON_AddBoolToObject(go, "superseded", g->superseded);
        cJSON_AddNumberToObject(go, "implementations", (double)g->n_impls);
        for (size_t i = 0; ra && i < g->n; i++) {
            const rg_rank_entry *e = &g->e[i];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "id", (double)e->id);
            cJSON_AddStringToObject(x, "name", e->name);
            if (e->rank > 0) cJSON_AddNumberToObject(x, "rank", e->rank);
            else cJSON_AddNullToObject(x, "rank");
            api_source_facts(x, e->published_at, e->source_rank, e->source_group_size);
            add_num(x, "primaryNs", e->primary_ns);
            add_num(x, "sol", e->sol);
            add_num(x, "xReference", e->x_ref);
            add_num(x, "casesFaster", e->fast_count);
            add_num(x, "cases", e->fast_total);
            add_why(x, "solWhy", e->sol, e->sol_why);
            add_why(x, "xReferenceWhy", e->x_ref, e->x_ref_why);
            add_why(x, "casesFasterWhy", e->fast_total, e->fast_why);
            cJSON_AddStringToObject(x, "status", e->status);
            cJSON_AddStringToObject(x, "evidence", e->evidence);
            cJSON_AddStringToObject(x, "observedAt", e->observed_at);
            cJSON_AddBoolToObject(x, "suspect", e->suspect);
            cJSON_AddStringToObject(x, "rank_class", rg_rank_class_name(e->rank_class));
            cJSON_AddStringToObject(x, "rank_reason", e->rank_reason);
            cJSON_AddBoolToObject(x, "superseded", e->superseded);
            if (e->verification[0]) cJSON_AddStringToObject(x, "verification", e->verification);
            else cJSON_AddNullToObject(x, "verification");
            api_field_entry(x, e);
            cJSON_AddItemToArray(ra, x);
        }
        cJSON_AddItemToArray(gs, go);
    }
    return finish_json(o, err, errlen);
}

/* "signatures": [{keyId, algorithm, receivedAt}], "conflicts": [{member, stored, offered, receivedAt}]. */
static void api_copies(cJSON *o, const rg_run_view *v)
{
    cJSON *sg = cJSON_AddArrayToObject(o, "signatures");
    for (size_t i = 0; sg && i < v->n_sigs; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "keyId", v->sigs[i].key_id);
        cJSON_AddStringToObject(x, "algorithm", "ed25519");
        cJSON_AddStringToObject(x, "receivedAt", v->sigs[i].received_at);
        cJSON_AddItemToArray(sg, x);
    }
    cJSON *cf = cJSON_AddArrayToObject(o, "conflicts");
    for (size_t i = 0; cf && i < v->n_conflicts; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "member", v->conflicts[i].member);
        cJSON_AddStringToObject(x, "stored", v->conflicts[i].stored);
        cJSON_AddStringToObject(x, "offered", v->conflicts[i].offered);
        cJSON_AddStringToObject(x, "receivedAt", v->conflicts[i].received_at);
        cJSON_AddItemToArray(cf, x);
    }
}

char *rg_api_run(const rg_run_view *v, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)v->id);
    cJSON_AddStringToObject(o, "name", v->name);
    cJSON_AddStringToObject(o, "definition", v->definition);
    api_source_facts(o, v->published_at, v->source_rank, v->source_group_size);
    cJSON_AddStringToObject(o, "status", v->status);
    cJSON_AddStringToObject(o, "evidence", v->evidence);
    cJSON_AddStringToObject(o, "device", v->device);
    cJSON_AddStringToObject(o, "runDigest", v->run_digest);
    cJSON_AddStringToObject(o, "comparisonKey", v->comparison_key);
    cJSON_AddStringToObject(o, "observedAt", v->observed_at);
    add_num(o, "primaryNs", v->primary_ns);
    cJSON_AddStringToObject(o, "primaryStatistic", v->primary_stat);
    if (*v->not_timed) cJSON_AddStringToObject(o, "notTimed", v->not_timed);
    else cJSON_AddNullToObject(o, "notTimed");
    if (v->rank > 0) cJSON_AddNumberToObject(o, "rank", v->rank);
    else cJSON_AddNullToObject(o, "rank");
    cJSON_AddNumberToObject(o, "groupSize", v->group_size);
    cJSON_AddBoolToObject(o, "tied", v->tied);
    cJSON_AddStringToObject(o, "rankMethod", v->interval_ranked ? RG_RANK_METHOD : "primary figure alone");
    cJSON_AddBoolToObject(o, "suspect", v->suspect);
    if (v->suspect) cJSON_AddStringToObject(o, "suspectReason", v->suspect_why);
    cJSON_AddStringToObject(o, "rank_class", rg_rank_class_name(v->rank_class));
    cJSON_AddStringToObject(o, "rank_reason", v->rank_reason);
    cJSON_AddBoolToObject(o, "superseded", v->superseded);
    cJSON_AddStringToObject(o, "verification", rg_sol_state_name(v->sol_check.state));
    cJSON_AddStringToObject(o, "verificationBasis", v->sol_check.basis);
    cJSON_AddStringToObject(o, "comparisonKeyOrigin", v->key_origin);
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
    add_why(o, "solWhy", v->sol, v->sol_why);
    add_why(o, "xReferenceWhy", v->x_ref, v->x_ref_why);
    add_why(o, "casesFasterWhy", v->fast_total, v->fast_why);
    if (*v->x_ref_source) cJSON_AddStringToObject(o, "xReferenceSource", v->x_ref_source);
    else cJSON_AddNullToObject(o, "xReferenceSource");
    cJSON *nt = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; nt && i < v->n_notes; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "kind", v->notes[i].kind);
        cJSON_AddStringToObject(x, "createdAt", v->notes[i].created_at);
        cJSON_AddStringToObject(x, "text", v->notes[i].text);
        cJSON_AddItemToArray(nt, x);
    }
    api_copies(o, v);
    return finish_json(o, err, errlen);
}
