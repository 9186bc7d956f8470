/* SPDX-License-Identifier: Apache-2.0 */
/* runs_format.c -- see runs_format.h. */
#include "runs_format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *rg_cli_time(char *buf, size_t n, double ns)
{
    if (!isfinite(ns)) {
        snprintf(buf, n, "-");
        return buf;
    }
    double v = ns / 1e3;
    const char *unit = "µs";
    if (fabs(v) >= 999.95) v /= 1e3, unit = "ms";
    if (fabs(v) >= 999.95) v /= 1e3, unit = "s";
    double a = fabs(v);
    int dec = a < 0.99995 ? 4 : a < 9.9995 ? 3 : a < 99.995 ? 2 : a < 999.95 ? 1 : 0;
    snprintf(buf, n, "%.*f %s", dec, v, unit);
    return buf;
}

const char *rg_cli_interval(char *buf, size_t n, double est, double lo, double hi, int known)
{
    char a[32], b[32], c[32];
    if (!isfinite(est)) snprintf(buf, n, "-");
    else if (!known) snprintf(buf, n, "%s [unknown]", rg_cli_time(a, sizeof a, est));
    else if (!(lo > 0) || !isfinite(hi)) snprintf(buf, n, "%s [too few samples]", rg_cli_time(a, sizeof a, est));
    else
        snprintf(buf, n, "%s [%s, %s]", rg_cli_time(a, sizeof a, est), rg_cli_time(b, sizeof b, lo),
                 rg_cli_time(c, sizeof c, hi));
    return buf;
}

/* Characters (UTF-8 sequences) in s: the columns it takes on a terminal. */
static int cols_of(const char *s)
{
    int cols = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) cols += (*p & 0xC0) != 0x80;
    return cols;
}

int rg_cli_w(const char *s, int width) { return width + (int)strlen(s) - cols_of(s); }

const char *rg_cli_fmt4(char *buf, size_t n, double v)
{
    if (isfinite(v)) snprintf(buf, n, "%.4f", v);
    else snprintf(buf, n, "-");
    return buf;
}

const char *rg_cli_short_digest(const char *d)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "%.19s", d && *d ? d : "-");   /* "sha256:" + 12 hex */
    return buf;
}

/* "cuda 12 (12-vec-2d)" for a ropegrad run, "sol-execbench #6579" for an imported
 * one, "sol-execbench: ropegrad_cuda" for an official trace file imported (no id). */
const char *rg_cli_impl_label(char *buf, size_t n, const rg_run_row *r)
{
    if (r->backend[0]) snprintf(buf, n, "%.15s %d %.40s", r->backend, r->kernel, r->kernel_name);
    else if (!r->external_id[0] && r->kernel_name[0])   /* an imported official trace: the solution it ran */
        snprintf(buf, n, "%.30s: %.40s", r->source, r->kernel_name);
    else snprintf(buf, n, "%.30s #%.40s", r->source, r->external_id);
    return buf;
}

/* "SOL 0.9295 · 12.86x reference · 16/16 faster", parts left out when unknown. */
void rg_cli_headline(char *buf, size_t n, double sol, double speedup, double fast, double total)
{
    size_t k = 0;
    buf[0] = 0;
    if (isfinite(sol)) k += (size_t)snprintf(buf + k, n - k, "SOL %.4f", sol);
    else k += (size_t)snprintf(buf + k, n - k, "SOL -");
    if (k < n && isfinite(speedup)) k += (size_t)snprintf(buf + k, n - k, " · %.2f× reference", speedup);
    if (k < n && isfinite(total)) snprintf(buf + k, n - k, " · %.0f/%.0f faster", fast, total);
}

/* Prints s left-aligned in width columns: characters, not bytes (the
 * headline holds "·" and "×"). */
void rg_cli_print_cols(const char *s, int width)
{
    int cols = cols_of(s);
    rg_term_fputs(s, stdout);
    for (; cols < width; cols++) putchar(' ');
}

const char *rg_cli_fit(char *buf, size_t n, const char *s, int width)
{
    const unsigned char *t = (const unsigned char *)rg_term(s), *p = t;
    int cols = cols_of((const char *)t);
    size_t keep = strlen((const char *)t);
    if (cols > width) {   /* width - 1 characters, then the ellipsis */
        for (int c = 0; *p && c < width - 1; c++)
            for (p++; (*p & 0xC0) == 0x80; p++) {}
        keep = (size_t)(p - t);
    }
    snprintf(buf, n, "%.*s%s", (int)keep, (const char *)t, cols > width ? "…" : "");
    return buf;
}
