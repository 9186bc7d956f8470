/* SPDX-License-Identifier: Apache-2.0 */
/*
 * site.c -- static files from the index's renderer (see site.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "site.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"
#include "render.h"

static int mkdir_p(const char *dir, char *err, size_t errlen)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        snprintf(err, errlen, "%.200s...: path too long", dir);
        return 2;
    }
    for (char *s = p + 1;; s++) {
        if (*s == '/' || !*s) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0755) && errno != EEXIST) {
                snprintf(err, errlen, "%s: cannot create: %s", p, strerror(errno));
                return 2;
            }
            struct stat sb;
            if (stat(p, &sb) || !S_ISDIR(sb.st_mode)) {
                snprintf(err, errlen, "%s: not a directory", p);
                return 2;
            }
            *s = c;
            if (!c) break;
        }
    }
    return 0;
}

/* Writes text (freed here) to dir/name atomically. */
static int put(const char *dir, const char *name, char *text, size_t len, size_t *files, char *err, size_t errlen)
{
    if (!text) return 2;
    char path[4096];
    int rc = 2;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) snprintf(err, errlen, "path too long");
    else rc = rg_write_file_atomic(path, text, len, err, errlen) ? 2 : 0;
    free(text);
    if (!rc) (*files)++;
    return rc;
}

int rg_site_write(rg_registry *g, const char *dir, size_t *files, char *err, size_t errlen)
{
    *files = 0;
    char sub[4200];
    const char *subs[] = {"", "/runs", "/problems", "/compare", "/history", "/records"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        snprintf(sub, sizeof sub, "%s%s", dir, subs[i]);
        if (mkdir_p(sub, err, errlen)) return 2;
    }
    rg_render_ctx top, deep, deeper;
    rg_render_ctx_init(&top, 1);
    top.root = "./";
    rg_render_ctx_init(&deep, 1);
    rg_render_ctx_init(&deeper, 1);
    deeper.root = "../../";
    top.history_pages = deep.history_pages = deeper.history_pages = 1;   /* written below */

    rg_index_view iv;
    if (rg_model_front(g, &iv, err, errlen)) return 2;
    char *t = rg_render_index(&top, &iv, err, errlen);
    int rc = put(dir, "index.html", t, t ? strlen(t) : 0, files, err, errlen);
    for (size_t i = 0; !rc && i < iv.n; i++) {
        if (i > 0 && !strcmp(iv.rows[i].definition, iv.rows[i - 1].definition)) continue;
        rg_problem_view pv;
        if (rg_model_problem(g, iv.rows[i].definition, &pv, err, errlen)) {
            rc = 2;
            break;
        }
        rg_buf name = {0};
        rg_buf_puts(&name, "problems/");
        rg_problem_slug(&name, iv.rows[i].definition);
        rg_buf_puts(&name, ".html");
        t = rg_render_problem(&deep, &pv, err, errlen);
        rg_model_problem_free(&pv);
        rc = name.oom ? 2 : put(dir, name.p, t, t ? strlen(t) : 0, files, err, errlen);
        free(name.p);
        rg_records_view rv;   /* the problem's records over time */
        if (!rc && rg_model_records(g, iv.rows[i].definition, &rv, err, errlen)) rc = 2;
        if (rc) break;
        rg_buf rname = {0};
        rg_buf_puts(&rname, "records/");
        rg_problem_slug(&rname, iv.rows[i].definition);
        rg_buf_puts(&rname, ".html");
        t = rg_render_records(&deep, &rv, err, errlen);
        rg_model_records_free(&rv);
        rc = rname.oom ? 2 : put(dir, rname.p, t, t ? strlen(t) : 0, files, err, errlen);
        free(rname.p);
    }
    rg_model_index_free(&iv);
    if (rc) return 2;

    int64_t *ids;
    size_t n;
    if (rg_model_run_ids(g, &ids, &n, err, errlen)) return 2;
    for (size_t i = 0; !rc && i < n; i++) {
        rg_run_view v;
        if (rg_model_run(g, ids[i], &v, err, errlen)) {
            rc = 2;
            break;
        }
        char name[96];
        snprintf(name, sizeof name, "runs/%lld.html", (long long)v.id);
        t = rg_render_run(&deep, &v, err, errlen);
        rc = put(dir, name, t, t ? strlen(t) : 0, files, err, errlen);
        if (!rc) {
            snprintf(name, sizeof name, "runs/%lld.json", (long long)v.id);
            char *bytes = malloc(v.manifest_len + 1);
            if (bytes) memcpy(bytes, v.manifest, v.manifest_len);
            else snprintf(err, errlen, "out of memory");
            rc = put(dir, name, bytes, v.manifest_len, files, err, errlen);
        }
        if (!rc) {   /* the history of the run's implementation line (rank.h) */
            rg_history_view hv;
            rc = rg_model_history(g, v.id, &hv, err, errlen) ? 2 : 0;
            if (!rc) {
                snprintf(name, sizeof name, "history/%lld.html", (long long)v.id);
                t = rg_render_history(&deep, &hv, err, errlen);
                rg_model_history_free(&hv);
                rc = put(dir, name, t, t ? strlen(t) : 0, files, err, errlen);
            }
        }
        if (!rc && v.first_id > 0 && v.first_id != v.id) {
            rg_compare_view cv;
            snprintf(sub, sizeof sub, "%s/compare/%lld", dir, (long long)v.first_id);
            rc = mkdir_p(sub, err, errlen) || rg_model_compare(g, v.first_id, v.id, &cv, err, errlen) ? 2 : 0;
            if (!rc) {
                snprintf(name, sizeof name, "compare/%lld/%lld.html", (long long)v.first_id, (long long)v.id);
                t = rg_render_compare(&deeper, &cv, err, errlen);
                rg_model_compare_free(&cv);
                rc = put(dir, name, t, t ? strlen(t) : 0, files, err, errlen);
            }
        }
        rg_model_run_free(&v);
    }
    free(ids);
    return rc;
}

/* A base URL for the report's links: http(s)://, printable, no quote or
 * space, at most 200 bytes; its trailing '/' dropped. */
static int base_url_ok(const char *u, char *out, size_t n, char *err, size_t errlen)
{
    size_t len = strlen(u);
    int scheme = !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8);
    int clean = len <= 200 && len < n;
    for (const char *p = u; clean && *p; p++) clean = *p > ' ' && *p < 127 && !strchr("\"'<>\\`", *p);
    if (!scheme || !clean || len <= 8) {
        snprintf(err, errlen, "--base-url must be an http:// or https:// URL of printable characters (no quotes or "
                              "spaces), at most 200 bytes");
        return -1;
    }
    snprintf(out, n, "%s", u);
    while (len > 8 && out[len - 1] == '/') out[--len] = 0;
    return 0;
}

char *rg_report_page(rg_registry *g, int64_t id, const char *base_url, char *err, size_t errlen)
{
    if (!g) {
        snprintf(err, errlen, "no registry");
        return NULL;
    }
    char base[208], root[212];
    if (base_url && base_url_ok(base_url, base, sizeof base, err, errlen)) return NULL;
    rg_run_view v;
    if (rg_model_run(g, id, &v, err, errlen)) return NULL;
    rg_render_ctx ctx;
    if (base_url) {   /* links to the served index's pages */
        rg_render_ctx_init(&ctx, 0);
        snprintf(root, sizeof root, "%s/", base);
        ctx.root = root;
        ctx.permalink_base = base;
    } else {          /* one file: no link to a page it does not include */
        rg_render_ctx_init(&ctx, 1);
        ctx.root = "./";
        ctx.single_page = 1;
        ctx.history_pages = 0;
    }
    char *t = rg_render_run(&ctx, &v, err, errlen);
    rg_model_run_free(&v);
    return t;
}
