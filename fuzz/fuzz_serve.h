/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_serve.h -- the index server (src/index/serve.c) for the serve targets.
 *
 * A registry holding one run (the CLI-made manifest of the seed corpus) is
 * made once per process and kept as bytes; every input gets a fresh copy of
 * that file and a fresh server over it (writable, token FZ_TOKEN), so each
 * input sees the same registry whatever the inputs before it wrote.
 * rg_serve_route is the whole router: no socket is opened.
 */
#ifndef ROPEGRAD_FUZZ_SERVE_H
#define ROPEGRAD_FUZZ_SERVE_H

#include <sys/stat.h>
#include "fuzz_common.h"
#include "record.h"
#include "rg_util.h"
#include "serve.h"

#define FZ_TOKEN "fuzz-token-0123456789abcdef"
#define FZ_MANIFEST RG_SOURCE_DIR "/fuzz/corpus/fuzz_registry_import/cli-manifest-cpu.json"

static char *fz_db_bytes;
static size_t fz_db_len;

static void fz_serve_cleanup(void)
{
    fz_remove("token");
    free(fz_db_bytes);
}

/* Reads path whole (malloc'd, NUL-terminated); aborts when it cannot. */
static char *fz_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0) p = malloc((size_t)len + 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "fuzz: cannot read %s\n", path);
        abort();
    }
    fclose(f);
    p[len] = 0;
    *n = (size_t)len;
    return p;
}

static void fz_remove_registry(void)
{
    fz_remove("registry.db");
    fz_remove("registry.db-wal");
    fz_remove("registry.db-shm");
    fz_remove("registry.db-journal");
}

/* The one-run registry and the token file, once per process. */
static void fz_serve_setup(void)
{
    if (fz_db_bytes) return;
    char err[RG_ERRLEN], path[512];
    size_t n;
    char *m = fz_slurp(FZ_MANIFEST, &n);
    snprintf(path, sizeof path, "%s/registry.db", fz_workdir());
    fz_remove_registry();
    rg_registry *g;
    int64_t id;
    int existed;
    if (rg_registry_open(path, 1, &g, err, sizeof err) ||
        rg_registry_import(g, m, n, RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err) || id != 1) {
        fprintf(stderr, "fuzz: cannot make the registry: %s\n", err);
        abort();
    }
    rg_registry_close(g);
    free(m);
    fz_db_bytes = fz_slurp(path, &fz_db_len);
    /* A secret: the server refuses a token file others may read. */
    if (chmod(fz_write("token", FZ_TOKEN "\n", strlen(FZ_TOKEN) + 1), 0600)) abort();
    atexit(fz_serve_cleanup);
}

/* A fresh server over a fresh copy of the one-run registry. */
static rg_server *fz_server(void)
{
    fz_serve_setup();
    fz_remove_registry();
    char db[512], tok[512], err[RG_ERRLEN];
    snprintf(db, sizeof db, "%s", fz_write("registry.db", fz_db_bytes, fz_db_len));
    snprintf(tok, sizeof tok, "%s/token", fz_workdir());
    rg_serve_options o = {.db_path = db, .listen = "127.0.0.1:0", .write_token_file = tok, .max_body = 65536};
    rg_server *s;
    if (rg_serve_create(&o, &s, err, sizeof err)) {
        fprintf(stderr, "fuzz: cannot make the server: %s\n", err);
        abort();
    }
    return s;
}

/* What every answer must be: a known status, a body, one line of JSON for
 * an API error, Allow on 405, a Location on 201 and 303. */
static void fz_check_response(const rg_response *r)
{
    static const int known[] = {200, 201, 303, 400, 401, 403, 404, 405, 413, 422, 503};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= r->status == known[i];
    if (!ok) fprintf(stderr, "status %d: %.300s\n", r->status, r->body ? r->body : "");
    FZ_CHECK(ok);
    FZ_CHECK(r->body && r->content_type);
    if (r->status >= 400) FZ_CHECK(r->len == strlen(r->body));
    if (r->status >= 400 && r->body[0] == '{') {
        const char *nl = strchr(r->body, '\n');
        FZ_CHECK(nl && nl[1] == 0);
    }
    FZ_CHECK((r->status == 405) == (r->allow != NULL));
    if (r->status == 201 || r->status == 303) FZ_CHECK(!strncmp(r->location, "/runs/", 6));
}

/* The run page after a write: still a page, nothing a note said unescaped. */
static void fz_check_run_page(rg_server *s)
{
    rg_request q = {.method = "GET", .path = "/runs/1", .host = "127.0.0.1:8080"};
    rg_response r;
    rg_serve_route(s, &q, &r);
    FZ_CHECK(r.status == 200 && r.body && !strstr(r.body, "<script"));
    free(r.body);
}

#endif
