/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c -- `ropegrad report ID --html FILE`: one self-contained page.
 *
 * Everything is inline (CSS in <style>, charts as inline <svg>), nothing is
 * fetched and no script runs, so the file can be mailed, archived or opened
 * offline and still shows the same thing. The page reads only the stored
 * manifest (plus the registry's evidence level and notes): every figure on it
 * is one the digests cover.
 *
 * Two charts:
 *   #chart-latency   per workload, horizontal bars on a log axis: the
 *                    kernel's median, T_SOL and the baseline T_b when known;
 *   #chart-roofline  achieved bandwidth (bytes any kernel must move / median)
 *                    per workload against the device's peak -- the datasheet
 *                    figure for a known GPU, else the best this run reached.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "rg_util.h"

/* Text into HTML (element content and attribute values alike). */
static void html_esc(rg_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': rg_buf_put(b, "&amp;", 5); break;
        case '<': rg_buf_put(b, "&lt;", 4); break;
        case '>': rg_buf_put(b, "&gt;", 4); break;
        case '"': rg_buf_put(b, "&quot;", 6); break;
        case '\'': rg_buf_put(b, "&#39;", 5); break;
        default: rg_buf_put(b, s, 1);
        }
    }
}

static void row_kv(rg_buf *b, const char *k, const char *v)
{
    rg_buf_put(b, "<tr><th>", 8);
    html_esc(b, k);
    rg_buf_put(b, "</th><td>", 9);
    html_esc(b, v);
    rg_buf_put(b, "</td></tr>\n", 11);
}

/* A row for the string member o.key ("" when absent). */
static void row_kv_num(rg_buf *b, const char *k, double v)
{
    char s[64];
    if (isfinite(v)) snprintf(s, sizeof s, "%.0f", v);
    else snprintf(s, sizeof s, "-");
    row_kv(b, k, s);
}

static void card(rg_buf *b, const char *label, const char *value, const char *sub)
{
    rg_buf_printf(b, "<div class=\"card\"><div class=\"label\">");
    html_esc(b, label);
    rg_buf_printf(b, "</div><div class=\"value\">");
    html_esc(b, value);
    rg_buf_printf(b, "</div><div class=\"sub\">");
    html_esc(b, sub);
    rg_buf_printf(b, "</div></div>\n");
}

typedef struct wl {
    int index, pass;
    double bytes, t_k, t_min, t_max, t_sol, t_b, score, gbps;
} wl;

/* Log-axis position of v (ns) in [lo, hi] mapped to [x0, x0 + w]. */
static double logx(double v, double lo, double hi, double x0, double w)
{
    if (!(v > 0)) v = lo;
    return x0 + w * (log10(v) - log10(lo)) / (log10(hi) - log10(lo));
}

static void fmt_time(char *s, size_t n, double ns)
{
    if (ns >= 1e6) snprintf(s, n, "%.3g ms", ns / 1e6);
    else if (ns >= 1e3) snprintf(s, n, "%.3g us", ns / 1e3);
    else snprintf(s, n, "%.3g ns", ns);
}

static void chart_latency(rg_buf *b, const wl *w, size_t n)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        double v[4] = {w[i].t_k, w[i].t_sol, w[i].t_b, w[i].t_max};
        for (int k = 0; k < 4; k++)
            if (v[k] > 0 && isfinite(v[k])) lo = fmin(lo, v[k]), hi = fmax(hi, v[k]);
    }
    lo = pow(10, floor(log10(lo)));
    hi = pow(10, ceil(log10(hi)));
    if (hi <= lo) hi = lo * 10;
    const double x0 = 70, pw = 620, bar = 7, gap = 10;
    double group = 3 * bar + gap;
    double height = 40 + n * group + 30;
    rg_buf_printf(b,
                  "<svg id=\"chart-latency\" class=\"chart\" role=\"img\" viewBox=\"0 0 720 %.0f\" width=\"720\" "
                  "height=\"%.0f\"><title>Per-workload latency against T_SOL and the baseline (log scale)</title>\n",
                  height, height);
    /* decade grid */
    for (double d = lo; d <= hi * 1.0001; d *= 10) {
        double x = logx(d, lo, hi, x0, pw);
        char lab[32];
        fmt_time(lab, sizeof lab, d);
        rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"30\" x2=\"%.1f\" y2=\"%.0f\" class=\"grid\"/>", x, x, height - 25);
        rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">%s</text>\n", x, height - 10,
                      lab);
    }
    rg_buf_printf(b, "<rect x=\"80\" y=\"6\" width=\"10\" height=\"8\" class=\"k\"/><text x=\"94\" y=\"14\" "
                     "class=\"axis\">kernel median (whisker: min-max)</text>"
                     "<rect x=\"300\" y=\"6\" width=\"10\" height=\"8\" class=\"sol\"/><text x=\"314\" y=\"14\" "
                     "class=\"axis\">T_SOL</text>"
                     "<rect x=\"370\" y=\"6\" width=\"10\" height=\"8\" class=\"base\"/><text x=\"384\" y=\"14\" "
                     "class=\"axis\">baseline T_b</text>\n");
    for (size_t i = 0; i < n; i++) {
        double y = 34 + i * group;
        rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">#%d%s</text>", x0 - 6,
                      y + 1.5 * bar + 3, w[i].index, w[i].pass ? "" : " FAIL");
        const double v[3] = {w[i].t_k, w[i].t_sol, w[i].t_b};
        const char *cls[3] = {"k", "sol", "base"};
        for (int k = 0; k < 3; k++) {
            if (!(v[k] > 0) || !isfinite(v[k])) continue;
            char lab[32];
            fmt_time(lab, sizeof lab, v[k]);
            rg_buf_printf(b, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" class=\"%s\"><title>#%d %s %s</title></rect>",
                          x0, y + k * bar, fmax(1, logx(v[k], lo, hi, x0, pw) - x0), bar - 1, cls[k], w[i].index,
                          k == 0 ? "kernel" : k == 1 ? "T_SOL" : "baseline", lab);
        }
        if (w[i].t_min > 0 && w[i].t_max > 0)
            rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"whisker\"/>",
                          logx(w[i].t_min, lo, hi, x0, pw), y + bar / 2, logx(w[i].t_max, lo, hi, x0, pw), y + bar / 2);
        rg_buf_printf(b, "\n");
    }
    rg_buf_printf(b, "</svg>\n");
}

static void chart_roofline(rg_buf *b, const wl *w, size_t n, double peak_gbps, const char *peak_label)
{
    double bmin = INFINITY, bmax = 0, gmax = peak_gbps;
    for (size_t i = 0; i < n; i++) {
        if (w[i].bytes > 0) bmin = fmin(bmin, w[i].bytes), bmax = fmax(bmax, w[i].bytes);
        if (isfinite(w[i].gbps)) gmax = fmax(gmax, w[i].gbps);
    }
    if (!(bmin > 0)) bmin = 1, bmax = 10;
    bmin = pow(10, floor(log10(bmin)));
    bmax = pow(10, ceil(log10(bmax)));
    if (bmax <= bmin) bmax = bmin * 10;
    if (!(gmax > 0)) gmax = 1;
    gmax *= 1.12;
    const double x0 = 70, pw = 620, y0 = 30, ph = 260;
    rg_buf_printf(b,
                  "<svg id=\"chart-roofline\" class=\"chart\" role=\"img\" viewBox=\"0 0 720 330\" width=\"720\" "
                  "height=\"330\"><title>Achieved bandwidth per workload against the peak</title>\n");
    for (double d = bmin; d <= bmax * 1.0001; d *= 10) {
        double x = logx(d, bmin, bmax, x0, pw);
        rg_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" class=\"grid\"/>", x, y0, x, y0 + ph);
        rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">%.0e B</text>\n", x,
                      y0 + ph + 16, d);
    }
    for (int k = 0; k <= 4; k++) {
        double g = gmax * k / 4, y = y0 + ph - ph * k / 4.0;
        rg_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\"/>", x0, y, x0 + pw, y);
        rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">%.3g GB/s</text>\n", x0 - 4,
                      y + 4, g);
    }
    rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">bytes any kernel must move "
                     "(log)</text>\n",
                  x0 + pw / 2, y0 + ph + 32);
    if (peak_gbps > 0) {
        double y = y0 + ph - ph * peak_gbps / gmax;
        rg_buf_printf(b, "<line id=\"roofline-peak\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"peak\"/>", x0,
                      y, x0 + pw, y);
        rg_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">", x0 + pw, y - 5);
        html_esc(b, peak_label);
        rg_buf_printf(b, " %.0f GB/s</text>\n", peak_gbps);
    }
    for (size_t i = 0; i < n; i++) {
        if (!(w[i].bytes > 0) || !isfinite(w[i].gbps)) continue;
        double x = logx(w[i].bytes, bmin, bmax, x0, pw), y = y0 + ph - ph * w[i].gbps / gmax;
        rg_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" class=\"%s\"><title>#%d: %.0f bytes, %.1f GB/s%s</title></circle>",
                      x, y, w[i].pass ? "pt" : "ptfail", w[i].index, w[i].bytes, w[i].gbps,
                      peak_gbps > 0 ? "" : "");
        rg_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\">#%d</text>\n", x + 6, y - 4, w[i].index);
    }
    rg_buf_printf(b, "</svg>\n");
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2330;background:#f6f7f9;margin:0}"
    "main{max-width:980px;margin:0 auto;padding:24px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #d8dce3;"
    "padding-bottom:4px}.muted{color:#5b6475}"
    ".cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}.card{background:#fff;border:1px solid #d8dce3;"
    "border-radius:8px;padding:12px 16px;min-width:150px}.card .label{font-size:12px;color:#5b6475;"
    "text-transform:uppercase;letter-spacing:.04em}.card .value{font-size:24px;font-weight:600}"
    ".card .sub{font-size:12px;color:#5b6475}"
    "table{border-collapse:collapse;background:#fff;width:100%;font-size:13px}"
    "th,td{border:1px solid #e3e6eb;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f2f5;font-weight:600;white-space:nowrap}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}code{font:12px ui-monospace,Menlo,monospace;word-break:break-all}"
    ".badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}"
    ".passed,.replicated{background:#d9f2e3;color:#135c32}.failed{background:#fde2e1;color:#8a1c17}"
    ".measured{background:#e2ecfb;color:#1b4a8f}.imported{background:#efe6fb;color:#4f2a85}"
    ".chart{background:#fff;border:1px solid #d8dce3;border-radius:8px;max-width:100%;height:auto}"
    ".chart .grid{stroke:#e6e8ec;stroke-width:1}.chart .axis{font-size:11px;fill:#5b6475}"
    ".chart .k{fill:#2f6fde}.chart .sol{fill:#2aa876}.chart .base{fill:#c9a227}"
    ".chart .whisker{stroke:#1d2330;stroke-width:1.2}.chart .peak{stroke:#c0392b;stroke-width:2;"
    "stroke-dasharray:6 4}.chart .pt{fill:#2f6fde}.chart .ptfail{fill:#c0392b}";

char *rg_report_html(const rg_manifest *m, const rg_run_row *row, const rg_note *notes, size_t n_notes, char *err,
                     size_t errlen)
{
    if (!m || !row) {
        snprintf(err, errlen, "report: no manifest or no run");
        return NULL;
    }
    size_t n = m->n_workloads, i;
    wl *w = calloc(n ? n : 1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (i = 0; i < n; i++) {
        const rg_mf_workload *x = &m->workloads[i];
        w[i].index = x->index;
        w[i].bytes = x->bytes;
        w[i].t_k = x->median;
        w[i].t_min = x->min;
        w[i].t_max = x->max;
        w[i].gbps = x->gbps;
        w[i].t_sol = x->t_sol_ns;
        w[i].t_b = x->t_b_ns;
        w[i].score = x->sol_score;
        w[i].pass = x->pass;
    }
    int gpu = strcmp(m->vendor, "cpu") != 0;
    const char *product = NULL;
    double peak = 0;
    char peak_label[160];
    if (gpu) peak = rg_datasheet_bandwidth_tbps(m->product, &product) * 1e3;
    if (peak > 0) {
        snprintf(peak_label, sizeof peak_label, "%s datasheet peak", product);
    } else {
        for (i = 0; i < n; i++)
            if (isfinite(w[i].gbps)) peak = fmax(peak, w[i].gbps);
        snprintf(peak_label, sizeof peak_label, "%s", gpu ? "GPU not in the datasheet table: best achieved"
                                                          : "CPU: best achieved in this run");
    }

    rg_buf b = {0};
    char s1[128], s2[256];
    rg_buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                      "<title>ropegrad run #%lld</title><style>%s</style></head><body><main>\n",
                  (long long)row->id, css);
    rg_buf_printf(&b, "<h1>Run #%lld: ", (long long)row->id);
    html_esc(&b, m->benchmark);
    rg_buf_printf(&b, "</h1>\n<div class=\"muted\">");
    if (m->backend[0]) {
        rg_buf_printf(&b, "backend ");
        html_esc(&b, m->backend);
        rg_buf_printf(&b, " &middot; kernel %d (", m->kernel);
        html_esc(&b, m->kernel_name);
        rg_buf_printf(&b, ") &middot; ");
    } else {
        rg_buf_printf(&b, "source ");
        html_esc(&b, m->source);
        rg_buf_printf(&b, ", external id ");
        html_esc(&b, m->external_id);
        rg_buf_printf(&b, " &middot; ");
    }
    html_esc(&b, row->device);
    rg_buf_printf(&b, " &middot; observed ");
    html_esc(&b, m->observed_at);
    rg_buf_printf(&b, " &middot; <span class=\"badge %s\">", !strcmp(row->status, "passed") ? "passed" : "failed");
    html_esc(&b, row->status);
    rg_buf_printf(&b, "</span> <span class=\"badge %s\">", !strcmp(row->evidence, RG_EVIDENCE_IMPORTED) ? "imported"
                                                            : !strcmp(row->evidence, RG_EVIDENCE_REPLICATED) ? "replicated"
                                                                                                        : "measured");
    html_esc(&b, row->evidence);
    rg_buf_printf(&b, "</span></div>\n<div class=\"cards\">\n");

    snprintf(s1, sizeof s1, "%.3f us", m->primary_ns / 1e3);
    snprintf(s2, sizeof s2, "%.31s latency", m->primary_statistic);
    card(&b, "Primary measurement", s1, s2);
    if (isfinite(m->sol_score)) snprintf(s1, sizeof s1, "%.4f", m->sol_score);
    else snprintf(s1, sizeof s1, "n/a");
    snprintf(s2, sizeof s2, "T_SOL: %.100s", m->t_sol_mode[0] ? m->t_sol_mode : m->source);
    card(&b, "SOL score", s1, s2);
    if (isfinite(m->avg_speedup)) snprintf(s1, sizeof s1, "%.2fx", m->avg_speedup);
    else snprintf(s1, sizeof s1, "n/a");
    snprintf(s2, sizeof s2, "mean T_b / T_k; baseline: %.100s", m->baseline_mode[0] ? m->baseline_mode : m->source);
    card(&b, "Speedup", s1, s2);
    if (isfinite(m->fast_1_total)) snprintf(s1, sizeof s1, "%.0f / %.0f", m->fast_1_count, m->fast_1_total);
    else snprintf(s1, sizeof s1, "n/a");
    card(&b, "Cases faster", s1, "correct and faster than the baseline");
    if (m->total >= 0) snprintf(s1, sizeof s1, "%d / %d", m->passed, m->total);
    else snprintf(s1, sizeof s1, "%.15s", m->status);
    card(&b, "Correct", s1, m->total >= 0 ? "workloads within the protocol's tolerance" : "as marked by the source");
    rg_buf_printf(&b, "</div>\n");

    if (n) {
        rg_buf_printf(&b, "<h2>Latency per workload</h2>\n");
        chart_latency(&b, w, n);
        rg_buf_printf(&b, "<h2>Bandwidth (roofline view)</h2>\n");
        chart_roofline(&b, w, n, peak, peak_label);
        rg_buf_printf(&b, "<h2>Workloads</h2>\n<table><tr><th>#</th><th>bytes</th><th>median us</th><th>min us</th>"
                          "<th>max us</th><th>GB/s</th><th>T_SOL us</th><th>T_b us</th><th>SOL score</th><th>correct</th></tr>\n");
    } else {
        rg_buf_printf(&b, "<p class=\"muted\">This record carries no per-workload figures.</p>\n");
    }
    for (i = 0; i < n; i++) {
        rg_buf_printf(&b, "<tr><td>%d</td><td class=\"num\">%.0f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td>"
                          "<td class=\"num\">%.3f</td><td class=\"num\">%.1f</td>",
                      w[i].index, w[i].bytes, w[i].t_k / 1e3, w[i].t_min / 1e3, w[i].t_max / 1e3, w[i].gbps);
        if (isfinite(w[i].t_sol)) rg_buf_printf(&b, "<td class=\"num\">%.3f</td>", w[i].t_sol / 1e3);
        else rg_buf_printf(&b, "<td class=\"num\">-</td>");
        if (isfinite(w[i].t_b)) rg_buf_printf(&b, "<td class=\"num\">%.3f</td>", w[i].t_b / 1e3);
        else rg_buf_printf(&b, "<td class=\"num\">-</td>");
        if (isfinite(w[i].score)) rg_buf_printf(&b, "<td class=\"num\">%.3f</td>", w[i].score);
        else rg_buf_printf(&b, "<td class=\"num\">-</td>");
        rg_buf_printf(&b, "<td>%s</td></tr>\n", w[i].pass ? "yes" : "NO");
    }
    if (n) rg_buf_printf(&b, "</table>\n");

    rg_buf_printf(&b, "<h2>Identity</h2>\n<table>\n");
    row_kv(&b, "implementation", m->impl_name[0] ? m->impl_name : "(not in this record)");
    row_kv(&b, "version", m->impl_version);
    row_kv(&b, "backend", m->backend);
    row_kv(&b, "kernel", m->kernel_name);
    row_kv(&b, "device", row->device);
    row_kv(&b, "source", m->source);
    row_kv(&b, "external id", m->external_id);
    row_kv(&b, "T_SOL source", m->t_sol_detail);
    row_kv(&b, "baseline source", m->baseline_mode);
    rg_buf_printf(&b, "</table>\n<h2>Digests</h2>\n<table>\n");
    row_kv(&b, "run", row->run_digest);
    row_kv(&b, "protocol", m->protocol_digest);
    row_kv(&b, "workload", m->workload_digest);
    row_kv(&b, "environment", m->environment_digest);
    row_kv(&b, "implementation", m->implementation_digest);
    row_kv(&b, "comparison key", row->comparison_key);
    rg_buf_printf(&b, "</table>\n<h2>Protocol</h2>\n<table>\n");
    row_kv(&b, "harness", m->harness_name);
    row_kv(&b, "harness version", m->harness_version);
    row_kv(&b, "timer", m->timer);
    row_kv(&b, "primary statistic", m->measurement_statistic);
    if (m->warmup >= 0) row_kv_num(&b, "warmup", m->warmup);
    if (m->iterations >= 0) row_kv_num(&b, "iterations", m->iterations);
    row_kv(&b, "cold L2", m->cold_l2);
    row_kv(&b, "inputs", m->inputs);
    row_kv(&b, "correctness reference", m->correctness_reference);
    row_kv(&b, "comparator", m->correctness_comparator);
    row_kv(&b, "comparability family", m->family);
    row_kv(&b, "notes", m->family_notes);
    rg_buf_printf(&b, "</table>\n<h2>Environment</h2>\n<table>\n");
    row_kv(&b, "vendor", m->vendor);
    row_kv(&b, "product", m->product);
    row_kv(&b, "architecture", m->architecture);
    for (i = 0; i < m->n_libraries; i++) row_kv(&b, m->libraries[i].key, m->libraries[i].value);
    row_kv(&b, "host", m->hostname);
    row_kv(&b, "OS", m->os);
    row_kv(&b, "CPU", m->cpu_model);
    if (m->cpu_threads >= 0) row_kv_num(&b, "CPU threads", m->cpu_threads);
    row_kv(&b, "build flags", m->build_flags);
    rg_buf_printf(&b, "</table>\n");
    if (n_notes) {
        rg_buf_printf(&b, "<h2>Notes</h2>\n<table>\n");
        for (i = 0; i < n_notes; i++) row_kv(&b, notes[i].created_at, notes[i].text);
        rg_buf_printf(&b, "</table>\n");
    }
    rg_buf_printf(&b, "<p class=\"muted\">Generated by ropegrad from the verified manifest of run #%lld%s. "
                      "Every figure here is covered by the digests above.</p>\n</main></body></html>\n",
                  (long long)row->id, !strcmp(row->evidence, RG_EVIDENCE_IMPORTED) ? " (imported: measured elsewhere)" : "");
    free(w);
    return rg_buf_finish(&b, err, errlen);
}
