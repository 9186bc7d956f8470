/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render.h -- the one renderer of the index: HTML pages (run, problem,
 * compare, the list of problems) and the /api JSON, from the view structs of
 * model.h. Used by `ropegrad serve`, `ropegrad site` and `ropegrad report`.
 *
 * Pages are self-contained (inline CSS and SVG, no script, nothing fetched).
 * Every string from a manifest, a note or a URL goes through rg_html_esc
 * (element text and attribute values alike) or rg_url_esc (path segments).
 */
#ifndef RG_INDEX_RENDER_H
#define RG_INDEX_RENDER_H

#include <stddef.h>

#include "chart.h"   /* the charts of the pages */
#include "html.h"    /* rg_html_esc, rg_html_esc_block */
#include "model.h"
#include "rg_util.h"
#include "ticks.h"   /* rg_fmt_si */

typedef struct rg_render_ctx {
    const char *root;      /* prefix of every link: "/" when served, "../" in a static site */
    const char *ext;       /* "" when served, ".html" in a static site */
    int static_site;       /* 1: file names for problems are slugs, not %-escaped */
    int forms;             /* show the note and issue forms (a server that takes writes) */
    int history_pages;     /* link runs to their line's history page (served, and written by site; not a report) */
    char csrf[72];         /* the forms' anti-CSRF token */
    char today[16];        /* the citation's access date, YYYY-MM-DD */
    const char *permalink_base; /* e.g. "http://127.0.0.1:8080" (may be "") */
    int single_page;       /* a one-file report: no links to pages it does not include */
} rg_render_ctx;

/* Fills ctx for a server (static_site 0) or a static site (1). */
void rg_render_ctx_init(rg_render_ctx *ctx, int static_site);

/* s as one URL path segment: everything outside A-Z a-z 0-9 - . _ ~ %-escaped. */
void rg_url_esc(rg_buf *b, const char *s);
/* A problem's file name in a static site, one-to-one (two names never share
 * a file): [A-Za-z0-9._-] kept, every other byte, the escape '~' itself and a
 * leading '.' written as ~HH (upper-case hex); "" is "~". Links use it too. */
void rg_problem_slug(rg_buf *b, const char *definition);


/* Pages: malloc'd HTML, NULL with a message. */
char *rg_render_run(const rg_render_ctx *ctx, const rg_run_view *v, char *err, size_t errlen);
char *rg_render_problem(const rg_render_ctx *ctx, const rg_problem_view *v, char *err, size_t errlen);
char *rg_render_index(const rg_render_ctx *ctx, const rg_index_view *v, char *err, size_t errlen);
char *rg_render_compare(const rg_render_ctx *ctx, const rg_compare_view *v, char *err, size_t errlen);
/* An implementation line over revisions: the trend chart (interval at each point) and a table. */
char *rg_render_history(const rg_render_ctx *ctx, const rg_history_view *v, char *err, size_t errlen);
/* Records over time of a problem: per comparison group, the staircase chart
 * and the table of the runs that set a new best figure, oldest first. */
char *rg_render_records(const rg_render_ctx *ctx, const rg_records_view *v, char *err, size_t errlen);
/* A small page for an error status ("404 not found: ..."), with a link back
 * to back_path (a path under ctx->root, e.g. "runs/3"; NULL: the index). */
char *rg_render_error(const rg_render_ctx *ctx, int status, const char *msg, const char *back_path, char *err,
                      size_t errlen);
/* The search page: implementations whose name holds q (case-insensitive),
 * at most RG_SEARCH_MAX of them. */
char *rg_render_search(const rg_render_ctx *ctx, const rg_search_view *v, char *err, size_t errlen);

/* JSON for /api (documented in the README). */
char *rg_api_index(const rg_index_view *v, char *err, size_t errlen);
char *rg_api_problem(const rg_problem_view *v, char *err, size_t errlen);
char *rg_api_run(const rg_run_view *v, char *err, size_t errlen);

#endif
