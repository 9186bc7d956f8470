/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.c -- the HTTP server of the index (see serve.h).
 *
 * libmicrohttpd with a pool of worker threads, each with its own SQLite
 * connection (a thread-local registry handle): under WAL, readers never wait
 * for a writer and the writer never waits for readers; writers wait for each
 * other on the registry's busy timeout. POSTs run on one writer thread
 * (serve_writer.h) while their connection is suspended: a write that waits
 * for the disk or for another writer never holds up the pages of the other
 * connections of its worker. Answers to GETs are cached, keyed by
 * path and Host and valid for the registry's generation (it moves with every
 * stored run, note or replication), so 10,000 runs are ranked once per
 * change, not once per request. Pages are rendered by render.c from
 * model.c's views.
 *
 * Under attack: the cache is keyed by path alone (no header reaches a cached
 * page) and capped in bytes; one client address holds at most
 * max_per_client connections, idle ones are closed after timeout_s, a
 * request's headers must arrive within header_deadline_s (and slow ones are
 * closed first while most connections wait for headers: serve_deadline.h),
 * a request body within body_deadline_s; every write first checks
 * that the registry path still names the file the server was started with
 * (and again after writing) and answers 503 when not, or when the registry
 * is read-only or busy.
 */
#define _POSIX_C_SOURCE 200809L
#include "serve.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "listen.h"
#include "routes.h"
#include "serve_deadline.h"
#include "serve_writer.h"

#include "model.h"
#include "rank_tables.h"
#include "render.h"
#include "strict_json.h"

#define CACHE_SLOTS 512

/* A rendered answer (200 to a GET), valid while the registry's generation
 * is the one it was rendered at. */
typedef struct cache_slot {
    char *key;                      /* the path */
    int64_t gen;
    const char *type;
    char *body;
    size_t len;
    int rendering;                  /* a thread is rendering this key's next version */
} cache_slot;

struct rg_server {
    char db_path[4096];
    char token[512];
    int writable;
    char csrf[65];                  /* hex HMAC under form_key */
    unsigned char form_key[32];     /* random, made at create */
    dev_t db_dev;                   /* the registry file's identity at create */
    ino_t db_ino;
    size_t max_body, cache_bytes, cache_used;
    unsigned threads, timeout_s, max_per_client, body_deadline_s, header_deadline_s;
    char base[256];                 /* --base-url, else "http://ADDR:PORT" once listening on one address, else "" */
    int base_given;                 /* base came from --base-url */
    rg_listen_addr addr;
    struct MHD_Daemon *d;
    int port;
    pthread_key_t key;
    pthread_mutex_t mu;
    cache_slot cache[CACHE_SLOTS];
    rg_writer *writer;              /* runs the POSTs (serve_writer.h); NULL: read-only, or stopped */
    rg_deadline *deadline;          /* the request-header deadline's watch (serve_deadline.h) */
};

/* A fresh random key for the forms and the CSRF value it gives. */
static int make_form_key(rg_server *s, char *err, size_t errlen)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    static const char msg[] = "ropegrad-form";
    if (RAND_bytes(s->form_key, (int)sizeof s->form_key) != 1 ||
        !HMAC(EVP_sha256(), s->form_key, (int)sizeof s->form_key, (const unsigned char *)msg, sizeof msg - 1, md,
              &n) ||
        n < 32) {
        snprintf(err, errlen, "serve: no random bytes for the forms' key (OpenSSL RAND_bytes)");
        return 2;
    }
    for (unsigned i = 0; i < 32; i++) snprintf(s->csrf + 2 * i, 3, "%02x", md[i]);
    OPENSSL_cleanse(md, sizeof md);
    return 0;
}

int rg_serve_form_csrf(const rg_server *s, char out[65])
{
    if (!out) return -1;
    out[0] = 0;
    if (!s) return -1;
    memcpy(out, s->csrf, 65);
    return 0;
}

/* The registry file's identity, to notice it deleted or replaced. */
static int file_identity(const char *path, dev_t *dev, ino_t *ino)
{
    struct stat sb;
    if (stat(path, &sb)) return -1;
    *dev = sb.st_dev;
    *ino = sb.st_ino;
    return 0;
}

/* 1 when the registry path still names the file the server started with. */
static int same_registry_file(const rg_server *s)
{
    dev_t dev;
    ino_t ino;
    return file_identity(s->db_path, &dev, &ino) == 0 && dev == s->db_dev && ino == s->db_ino;
}

static void close_registry(void *p) { rg_registry_close(p); }

static int read_token(const char *path, char *tok, size_t n, char *err, size_t errlen)
{
    char why[600];
    size_t len;
    char *text = rg_read_secret_file(path, n - 1, &len, why, sizeof why);
    if (!text) {
        snprintf(err, errlen, "the write token: %s", why);
        return 2;
    }
    memcpy(tok, text, len + 1);
    free(text);
    while (len && isspace((unsigned char)tok[len - 1])) tok[--len] = 0;
    if (len < 16) {
        snprintf(err, errlen, "%s: the write token must have at least 16 characters", path);
        return 2;
    }
    for (size_t i = 0; i < len; i++)
        if (!isgraph((unsigned char)tok[i])) {
            snprintf(err, errlen, "%s: the write token must be one line of printable characters", path);
            return 2;
        }
    return 0;
}

unsigned rg_serve_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 2 ? 2u : n > 64 ? 64u : (unsigned)n;
}

int rg_serve_create(const rg_serve_options *o, rg_server **out, char *err, size_t errlen)
{
    if (out) *out = NULL;
    if (!out || !o || !o->db_path || !*o->db_path) {
        snprintf(err, errlen, "serve: no registry given (--db FILE)");
        return 2;
    }
    rg_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    snprintf(s->db_path, sizeof s->db_path, "%s", o->db_path);
    s->max_body = o->max_body ? o->max_body : RG_SERVE_MAX_BODY;
    s->threads = o->threads ? o->threads : rg_serve_default_threads();
    s->timeout_s = o->timeout_s ? o->timeout_s : 10;
    s->cache_bytes = o->cache_bytes ? o->cache_bytes : RG_SERVE_CACHE_BYTES;
    s->max_per_client = o->max_per_client ? o->max_per_client : RG_SERVE_MAX_PER_CLIENT;
    s->body_deadline_s = o->body_deadline_s ? o->body_deadline_s : RG_SERVE_BODY_DEADLINE;
    s->header_deadline_s = o->header_deadline_s ? o->header_deadline_s : RG_SERVE_HEADER_DEADLINE;
    if (o->base_url && rg_serve_check_base_url(o->base_url, err, errlen)) {
        free(s);
        return 2;
    }
    if (o->base_url) snprintf(s->base, sizeof s->base, "%s", o->base_url), s->base_given = 1;
    if (rg_listen_parse(o->listen, &s->addr, err, errlen) ||
        (o->write_token_file && read_token(o->write_token_file, s->token, sizeof s->token, err, errlen)) ||
        make_form_key(s, err, errlen)) {
        OPENSSL_cleanse(s, sizeof *s);
        free(s);
        return 2;
    }
    s->writable = o->write_token_file != NULL;
    /* Open once here: a missing, foreign or newer registry is an error now,
     * not on the first request (this also migrates an older one). */
    rg_registry *g;
    if (rg_registry_open(s->db_path, 0, &g, err, errlen)) {
        free(s);
        return 2;
    }
    rg_registry_close(g);
    if (file_identity(s->db_path, &s->db_dev, &s->db_ino)) {
        snprintf(err, errlen, "%s: %s", s->db_path, strerror(errno));
        OPENSSL_cleanse(s, sizeof *s);
        free(s);
        return 2;
    }
    pthread_key_create(&s->key, close_registry);
    pthread_mutex_init(&s->mu, NULL);
    *out = s;
    return 0;
}

/* This thread's connection to the registry. */
static rg_registry *reg(rg_server *s, char *err, size_t errlen)
{
    rg_registry *g = pthread_getspecific(s->key);
    if (g) return g;
    if (rg_registry_open(s->db_path, 0, &g, err, errlen)) return NULL;
    pthread_setspecific(s->key, g);
    return g;
}

/* ---- responses ------------------------------------------------------------------------- */

static const char *const HTML = "text/html; charset=utf-8";
static const char *const JSON = "application/json";
static const char *const TEXT = "text/plain; charset=utf-8";

static void set_body(rg_response *r, int status, const char *type, char *body)
{
    r->status = status;
    r->content_type = type;
    r->body = body;
    r->len = body ? strlen(body) : 0;
}

/* A word that starts a path: '/' at the start of msg or after a space,
 * a parenthesis or a quote, followed by more than a space. */
static int path_starts(const char *msg, const char *p)
{
    return *p == '/' && p[1] && p[1] != ' ' && (p == msg || strchr(" ('\"", p[-1]));
}

/* msg without filesystem paths: the registry's file is "the registry", any
 * other absolute path "(a path)". An error page or /api answer never tells
 * a client where the server keeps its files. NULL when out of memory. */
static char *without_paths(const rg_server *s, const char *msg)
{
    rg_buf b = {0};
    size_t dl = strlen(s->db_path);
    rg_buf_puts(&b, "");
    for (const char *p = msg; *p;) {
        if (dl && !strncmp(p, s->db_path, dl)) {
            rg_buf_puts(&b, "the registry");
            p += dl;
        } else if (path_starts(msg, p)) {
            rg_buf_puts(&b, "(a path)");
            while (*p && *p != ' ' && *p != ',' && *p != ')' && *p != '\'' && *p != '"' && !(*p == ':' && p[1] == ' '))
                p++;
        } else {
            rg_buf_put(&b, p++, 1);
        }
    }
    char e[32];
    return rg_buf_finish(&b, e, sizeof e);
}

/* "runs/3" for a form posted to /runs/3/notes: its error page links back there. */
static const char *form_back(const rg_request *q, char *out, size_t n)
{
    const char *sl = strncmp(q->path, "/runs/", 6) ? NULL : strchr(q->path + 6, '/');
    if (!sl || strcmp(q->method, "POST") || (size_t)(sl - q->path) >= n) return NULL;
    snprintf(out, n, "%.*s", (int)(sl - q->path - 1), q->path + 1);
    return out;
}

/* An error: an HTML page for pages and the page forms (with a link back),
 * one line of JSON for /api and the other POSTs; no filesystem path in either. */
static void error_resp(rg_server *s, const rg_request *q, rg_response *r, int status, const char *msg_in)
{
    char back[64];
    const char *back_path = form_back(q, back, sizeof back);
    int api = !strncmp(q->path, "/api/", 5) || (!strcmp(q->method, "POST") && !back_path);
    char err[128];
    char *clean = without_paths(s, msg_in ? msg_in : "");
    const char *msg = clean ? clean : "an error (out of memory)";
    if (api) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "status", status);
        cJSON_AddStringToObject(o, "error", msg);
        char *t = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        size_t n = t ? strlen(t) : 0;
        char *line = t ? realloc(t, n + 2) : NULL;
        if (line) line[n] = '\n', line[n + 1] = 0;
        else free(t);
        set_body(r, status, JSON, line);
    } else {
        rg_render_ctx ctx;
        rg_render_ctx_init(&ctx, 0);
        set_body(r, status, HTML, rg_render_error(&ctx, status, msg, back_path, err, sizeof err));
    }
    free(clean);
}

/* "12" -> 12; anything else (sign, spaces, overflow, zero) is no id. */
static int parse_id(const char *p, size_t n, int64_t *id)
{
    if (n == 0 || n > 15) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    if (v <= 0) return -1;
    *id = v;
    return 0;
}

/* ---- auth ---------------------------------------------------------------------------------- */

static int token_ok(const rg_server *s, const char *t, size_t n)
{
    size_t tl = strlen(s->token);
    return s->writable && t && n == tl && CRYPTO_memcmp(t, s->token, tl) == 0;
}

static int bearer_ok(const rg_server *s, const char *auth)
{
    if (!auth || strncmp(auth, "Bearer ", 7)) return 0;
    return token_ok(s, auth + 7, strlen(auth + 7));
}

/* The form came from a page of this server: Origin, else Referer, names
 * http://HOST exactly (HOST from the Host header). */
static int same_origin(const rg_request *q)
{
    if (!q->host || !*q->host) return 0;
    char want[300];
    int n = snprintf(want, sizeof want, "http://%s", q->host);
    if (n <= 0 || (size_t)n >= sizeof want) return 0;
    if (q->origin && *q->origin) return !strcmp(q->origin, want);
    if (q->referer) return !strncmp(q->referer, want, (size_t)n) && q->referer[n] == '/';
    return 0;
}

/* Decodes one application/x-www-form-urlencoded field of body into out
 * (malloc'd), NULL when absent or malformed. */
static char *form_field(const char *body, size_t len, const char *name)
{
    if (!body) return NULL;   /* a POST without a body (NULL + 0 is undefined) */
    size_t nl = strlen(name);
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *fe = amp ? amp : end;
        if ((size_t)(fe - p) > nl && !memcmp(p, name, nl) && p[nl] == '=') {
            const char *v = p + nl + 1;
            char *out = malloc((size_t)(fe - v) + 1);
            if (!out) return NULL;
            size_t k = 0;
            for (const char *c = v; c < fe; c++) {
                if (*c == '+') out[k++] = ' ';
                else if (*c == '%') {
                    if (fe - c < 3 || !isxdigit((unsigned char)c[1]) || !isxdigit((unsigned char)c[2])) {
                        free(out);
                        return NULL;
                    }
                    char h[3] = {c[1], c[2], 0};
                    out[k++] = (char)strtol(h, NULL, 16);
                    c += 2;
                } else out[k++] = *c;
            }
            out[k] = 0;
            if (strlen(out) != k) {   /* an encoded NUL */
                free(out);
                return NULL;
            }
            return out;
        }
        p = fe + 1;
    }
    return NULL;
}

/* ---- handlers ---------------------------------------------------------------------------------- */

static void run_page(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t id, int api)
{
    rg_run_view v;
    char err[512];
    int rc = rg_model_run(g, id, &v, err, sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 404 : 500, err);
        return;
    }
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    ctx.forms = s->writable;
    memcpy(ctx.csrf, s->csrf, sizeof s->csrf);
    /* The citation's permalink names this server by the address it listens
     * on, never by a request's Host header: the page is cached for everyone. */
    ctx.permalink_base = s->base;
    char *body = api ? rg_api_run(&v, err, sizeof err) : rg_render_run(&ctx, &v, err, sizeof err);
    rg_model_run_free(&v);
    if (!body) error_resp(s, q, r, 500, err);
    else set_body(r, 200, api ? JSON : HTML, body);
}

static void problem_page(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, const char *def, int api)
{
    char err[512];
    rg_problem_view v;
    int rc = rg_model_problem(g, def, &v, err, sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 404 : 500, err);
        return;
    }
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *body = api ? rg_api_problem(&v, err, sizeof err) : rg_render_problem(&ctx, &v, err, sizeof err);
    rg_model_problem_free(&v);
    if (!body) error_resp(s, q, r, 500, err);
    else set_body(r, 200, api ? JSON : HTML, body);
}

static void records_page(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, const char *def)
{
    char err[512];
    rg_records_view v;
    int rc = rg_model_records(g, def, &v, err, sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 404 : 500, err);
        return;
    }
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *body = rg_render_records(&ctx, &v, err, sizeof err);
    rg_model_records_free(&v);
    if (!body) error_resp(s, q, r, 500, err);
    else set_body(r, 200, HTML, body);
}

static void index_page(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int api)
{
    rg_index_view v;
    char err[512];
    if ((api ? rg_model_index(g, &v, err, sizeof err) : rg_model_front(g, &v, err, sizeof err))) {
        error_resp(s, q, r, 500, err);
        return;
    }
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *body = api ? rg_api_index(&v, err, sizeof err) : rg_render_index(&ctx, &v, err, sizeof err);
    rg_model_index_free(&v);
    if (!body) error_resp(s, q, r, 500, err);
    else set_body(r, 200, api ? JSON : HTML, body);
}

static void compare_page(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t a, int64_t b)
{
    rg_compare_view v;
    char err[512];
    int rc = rg_model_compare(g, a, b, &v, err, sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 404 : 500, err);
        return;
    }
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *body = rg_render_compare(&ctx, &v, err, sizeof err);
    rg_model_compare_free(&v);
    if (!body) error_resp(s, q, r, 500, err);
    else set_body(r, 200, HTML, body);
}

static void history_page(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t id)
{
    rg_history_view v;
    char err[512];
    int rc = rg_model_history(g, id, &v, err, sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 404 : 500, err);
        return;
    }
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *body = rg_render_history(&ctx, &v, err, sizeof err);
    rg_model_history_free(&v);
    if (!body) error_resp(s, q, r, 500, err);
    else set_body(r, 200, HTML, body);
}

static void search_page(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r)
{
    rg_search_view v;
    char err[512];
    int rc = q->query && *q->query ? rg_model_search(g, q->query, &v, err, sizeof err) : 0;
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 400 : 500, err);
        return;
    }
    if (!q->query || !*q->query) memset(&v, 0, sizeof v);   /* the empty form */
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *body = rg_render_search(&ctx, &v, err, sizeof err);
    if (!body) error_resp(s, q, r, 500, err);
    else set_body(r, 200, HTML, body);
}

/* The JSON feed of the regressions of the latest revision of each line. */
static void regressions_json(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r)
{
    rg_index_view v;
    char err[512];
    if (rg_model_index(g, &v, err, sizeof err)) {
        error_resp(s, q, r, 500, err);
        return;
    }
    char *body = v.alerts_checked ? rg_regressions_json(v.alerts, v.n_alerts, RG_STATS_ALPHA, RG_STATS_THRESHOLD, err,
                                                        sizeof err)
                                  : NULL;
    if (!v.alerts_checked) snprintf(err, sizeof err, "the registry holds more than %d runs: not checked here",
                                    RG_INTERVAL_RANK_MAX);
    rg_model_index_free(&v);
    if (!body) error_resp(s, q, r, v.alerts_checked ? 500 : 503, err);
    else set_body(r, 200, JSON, body);
}

static void manifest_json(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t id)
{
    char *bytes;
    size_t n;
    char err[512];
    int rc = rg_registry_manifest_bytes(g, id, &bytes, &n, err, sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 404 : 500, err);
        return;
    }
    r->status = 200;
    r->content_type = JSON;
    r->body = bytes;
    r->len = n;
}

/* A failed write's status: 503 when another writer held the registry
 * beyond the busy timeout, 507 when the disk is full or the file size limit
 * (RLIMIT_FSIZE) was reached, else fallback. */
static int write_failure(const rg_registry *g, int fallback)
{
    return rg_registry_busy(g) ? 503 : rg_registry_full(g) ? 507 : fallback;
}

static void post_run(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t *stored)
{
    char err[512];
    int64_t id;
    int existed;
    int rc = rg_registry_import(g, q->body ? q->body : "", q->body_len, RG_EVIDENCE_IMPORTED, &id, &existed, err,
                                sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 3 ? 400 : rc == 1 ? 422 : write_failure(g, 500), err);
        return;
    }
    *stored = id;
    cJSON *o = cJSON_CreateObject();
    char url[64];
    snprintf(url, sizeof url, "/runs/%lld", (long long)id);
    cJSON_AddNumberToObject(o, "id", (double)id);
    cJSON_AddStringToObject(o, "url", url);
    cJSON_AddBoolToObject(o, "existed", existed);
    cJSON_AddBoolToObject(o, "signaturesAdded", (existed & RG_STORED_SIGNED) != 0);
    cJSON_AddBoolToObject(o, "conflict", (existed & RG_STORED_CONFLICT) != 0);
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!t) {
        error_resp(s, q, r, 500, "out of memory");
        return;
    }
    set_body(r, existed ? 200 : 201, JSON, t);
    snprintf(r->location, sizeof r->location, "%s", url);
}

static void add_note(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t id, const char *kind,
                     const char *text, int form)
{
    char err[512];
    if (!text || !*text || strlen(text) > 4000) {
        error_resp(s, q, r, 400, "a note needs text of 1 to 4000 bytes");
        return;
    }
    int rc = rg_registry_add_note_kind(g, id, kind, text, err, sizeof err);
    if (rc) {
        error_resp(s, q, r, rc == 1 ? 404 : strstr(err, "kind") ? 400 : write_failure(g, 500), err);
        return;
    }
    if (form) {
        set_body(r, 303, TEXT, strdup("added\n"));
        snprintf(r->location, sizeof r->location, "/runs/%lld#%s", (long long)id,
                 strcmp(kind, "flag") ? "notes" : "flagged");
    } else {
        set_body(r, 201, JSON, strdup("{\"added\":true}\n"));
        snprintf(r->location, sizeof r->location, "/runs/%lld", (long long)id);
    }
}

static void api_note(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t id)
{
    char err[512];
    cJSON *o = rg_json_parse_strict(q->body ? q->body : "", q->body_len, "the note", err, sizeof err);
    if (!o) {
        error_resp(s, q, r, 400, err);
        return;
    }
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        error_resp(s, q, r, 400, "bad JSON: expected {\"kind\": \"note\", \"text\": \"...\"}");
        return;
    }
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind"), *t = cJSON_GetObjectItemCaseSensitive(o, "text");
    /* kind: absent (a note), else a string of the set (the registry checks which); never a number or null. */
    if (k && !cJSON_IsString(k))
        error_resp(s, q, r, 400, "a note's kind is a JSON string: \"note\", \"reproduction\" or \"flag\"");
    else
        add_note(s, g, q, r, id, k ? k->valuestring : "note", cJSON_IsString(t) ? t->valuestring : NULL, 0);
    cJSON_Delete(o);
}

static void form_note(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, int64_t id, int flag)
{
    if (!same_origin(q)) {
        error_resp(s, q, r, 403, "cross-site form refused (Origin or Referer must be this server)");
        return;
    }
    char *tok = form_field(q->body, q->body_len, "token"), *csrf = form_field(q->body, q->body_len, "csrf");
    char *text = form_field(q->body, q->body_len, "text"), *kind = form_field(q->body, q->body_len, "kind");
    if (!csrf || strlen(csrf) != 64 || CRYPTO_memcmp(csrf, s->csrf, 64))
        error_resp(s, q, r, 403, "the form's CSRF field is missing or wrong (reload the page)");
    else if (!tok || !token_ok(s, tok, strlen(tok)))
        error_resp(s, q, r, 401, "wrong or missing write token");
    else add_note(s, g, q, r, id, flag ? "flag" : kind ? kind : "note", text, 1);
    free(tok);
    free(csrf);
    free(text);
    free(kind);
}

/* A run named in a path (n bytes at t): the first 8 hex digits of its run
 * digest, when one run's digest starts with them, else its local id. 0 with
 * *id; else r is the 404 (no such run, or a prefix several runs share:
 * named, each with its page). */
static int run_ref(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r, const char *t, size_t n,
                   int64_t *id)
{
    char hex[9] = "", err[512];
    int is_hex = n == 8;
    for (size_t i = 0; i < n && is_hex; i++) is_hex = (t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f');
    if (is_hex) {
        memcpy(hex, t, 8);
        int64_t ids[8];
        size_t k;
        if (rg_registry_find_digest(g, hex, ids, 8, &k, err, sizeof err)) {
            error_resp(s, q, r, 500, err);
            return 2;
        }
        if (k == 1) {
            *id = ids[0];
            return 0;
        }
        if (k > 1) {
            int at = snprintf(err, sizeof err, "%zu%s runs have a run digest that starts with %s:", k,
                              k == 8 ? " or more" : "", hex);
            for (size_t i = 0; i < k && at > 0 && (size_t)at < sizeof err; i++)
                at += snprintf(err + at, sizeof err - (size_t)at, " #%lld", (long long)ids[i]);
            if (at > 0 && (size_t)at < sizeof err)
                snprintf(err + at, sizeof err - (size_t)at, "; name one by its local id (runs/ID)");
            error_resp(s, q, r, 404, err);
            return 2;
        }
    }
    if (!parse_id(t, n, id)) return 0;
    if (is_hex) snprintf(err, sizeof err, "no run has a run digest that starts with %s", hex);
    else snprintf(err, sizeof err, "no such run: a run is named by its local id or the first 8 hex digits of its run "
                                   "digest");
    error_resp(s, q, r, 404, err);
    return 2;
}

static void openapi_json(rg_response *r)
{
    const char *doc = rg_openapi_json();
    char *body = strdup(doc);
    if (!body) {
        set_body(r, 500, TEXT, NULL);
        return;
    }
    set_body(r, 200, JSON, body);
}

/* GET and HEAD: pages, JSON, manifests, through the route table (routes.h). */
static void route_get(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r)
{
    const char *param[2];
    size_t len[2];
    int64_t id = 0, id2 = 0;
    int route = rg_route_match("GET", q->path, param, len);
    char def[512];
    switch (route) {
    case RG_ROUTE_INDEX: index_page(s, g, q, r, 0); return;
    case RG_ROUTE_API_PROBLEMS: index_page(s, g, q, r, 1); return;
    case RG_ROUTE_PROBLEM:
    case RG_ROUTE_API_PROBLEM:
        snprintf(def, sizeof def, "%.*s", (int)(len[0] < sizeof def ? len[0] : sizeof def - 1), param[0]);
        problem_page(s, g, q, r, def, route == RG_ROUTE_API_PROBLEM);
        return;
    case RG_ROUTE_RECORDS:
        snprintf(def, sizeof def, "%.*s", (int)(len[0] < sizeof def ? len[0] : sizeof def - 1), param[0]);
        records_page(s, g, q, r, def);
        return;
    case RG_ROUTE_RUN:
    case RG_ROUTE_MANIFEST:
    case RG_ROUTE_API_RUN:
    case RG_ROUTE_HISTORY:
        if (run_ref(s, g, q, r, param[0], len[0], &id)) return;
        if (route == RG_ROUTE_MANIFEST) manifest_json(s, g, q, r, id);
        else if (route == RG_ROUTE_HISTORY) history_page(s, g, q, r, id);
        else run_page(s, g, q, r, id, route == RG_ROUTE_API_RUN);
        return;
    case RG_ROUTE_COMPARE:
        if (run_ref(s, g, q, r, param[0], len[0], &id) || run_ref(s, g, q, r, param[1], len[1], &id2)) return;
        compare_page(s, g, q, r, id, id2);
        return;
    case RG_ROUTE_SEARCH: search_page(s, g, q, r); return;
    case RG_ROUTE_REGRESSIONS: regressions_json(s, g, q, r); return;
    case RG_ROUTE_OPENAPI: openapi_json(r); return;
    default: error_resp(s, q, r, 404, "no such page"); return;
    }
}

/* The path alone: no header changes a GET's answer. */
static char *cache_key(const rg_request *q) { return strdup(q->path); }

static unsigned slot_of(const char *key)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 16777619u;
    return h % CACHE_SLOTS;
}

static void free_slot(rg_server *s, cache_slot *c)
{
    s->cache_used -= c->len;
    free(c->key);
    free(c->body);
    c->key = NULL;
    c->body = NULL;
    c->len = 0;
}

/* Frees other slots (not being rendered) until need more bytes fit under
 * the cap; 0 when they do. Called with s->mu held. */
static int make_room(rg_server *s, const cache_slot *keep, size_t need)
{
    for (unsigned i = 0; i < CACHE_SLOTS && s->cache_used + need > s->cache_bytes; i++) {
        cache_slot *c = &s->cache[i];
        if (c != keep && c->key && !c->rendering) free_slot(s, c);
    }
    return s->cache_used + need > s->cache_bytes ? -1 : 0;
}

int rg_serve_cache_stats(rg_server *s, size_t *entries, size_t *bytes)
{
    if (!s || !entries || !bytes) return -1;
    pthread_mutex_lock(&s->mu);
    *entries = 0;
    for (unsigned i = 0; i < CACHE_SLOTS; i++) *entries += s->cache[i].body != NULL;
    *bytes = s->cache_used;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static void copy_out(const cache_slot *c, rg_response *r)
{
    char *body = malloc(c->len + 1);
    if (!body) return;
    memcpy(body, c->body, c->len);
    body[c->len] = 0;
    r->status = 200;
    r->content_type = c->type;
    r->body = body;
    r->len = c->len;
}

/* 1 when r was filled from the cache: the version of generation gen, or,
 * while another thread renders that one, the previous version (one render's
 * time old: what a reader who came a moment earlier saw). 0: render it; when
 * *claimed, this thread is the one rendering key and must call cache_put. */
static int cache_get(rg_server *s, const char *key, int64_t gen, rg_response *r, int *claimed)
{
    *claimed = 0;
    pthread_mutex_lock(&s->mu);
    cache_slot *c = &s->cache[slot_of(key)];
    if (c->key && !strcmp(c->key, key)) {
        if (c->gen == gen || (c->rendering && c->gen < gen)) copy_out(c, r);
        else c->rendering = *claimed = 1;
    }
    pthread_mutex_unlock(&s->mu);
    return r->body != NULL;
}

/* Keeps a copy of r (when a 200) under key (taken over) unless a newer
 * version is there; ends this thread's claim on the slot. */
static void cache_put(rg_server *s, char *key, int64_t gen, const rg_response *r, int claimed)
{
    char *body = r->status == 200 && r->body && r->len <= s->cache_bytes ? malloc(r->len + 1) : NULL;
    if (body) memcpy(body, r->body, r->len);
    pthread_mutex_lock(&s->mu);
    cache_slot *c = &s->cache[slot_of(key)];
    int same = c->key && !strcmp(c->key, key);
    if (claimed && same) c->rendering = 0;
    if (body && !(same && c->gen > gen) && !(!same && c->rendering)) {
        c->rendering = 0;
        free_slot(s, c);
        if (make_room(s, c, r->len)) {
            pthread_mutex_unlock(&s->mu);
            free(key);
            free(body);
            return;
        }
        s->cache_used += r->len;
        c->key = key;
        c->gen = gen;
        c->type = r->content_type;
        c->body = body;
        c->len = r->len;
        c->rendering = 0;
        key = NULL;
        body = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    free(key);
    free(body);
}

/* 1 when a write may go to g; else r is a 503 saying why. */
static int registry_takes_writes(rg_server *s, const rg_registry *g, const rg_request *q, rg_response *r)
{
    if (!same_registry_file(s)) {
        error_resp(s, q, r, 503, "the registry file was deleted or replaced since the server started: "
                                 "writes are refused (restart the server)");
        return 0;
    }
    if (rg_registry_read_only(g)) {
        error_resp(s, q, r, 503, "the registry is read-only: writes are refused");
        return 0;
    }
    return 1;
}

/* A write is acknowledged once it is copied from the WAL (whose name
 * another file can take) into the registry file itself, when it can be (a
 * failed copy leaves it committed in the WAL, as SQLite keeps any write),
 * and only while that file is still the one the server started with; else
 * the answer is a 503. */
static void acknowledge_if_stored(rg_server *s, rg_registry *g, const rg_request *q, rg_response *r)
{
    char err[512];
    if (r->status >= 400) return;
    rg_registry_checkpoint(g, err, sizeof err);
    if (same_registry_file(s)) return;
    free(r->body);
    memset(r, 0, sizeof *r);
    error_resp(s, q, r, 503, "the registry file was deleted or replaced during the write: not stored");
}

/* After a push is acknowledged: its group's rank table of the new generation
 * (rank_tables.h), built here rather than by the first page that needs it.
 * Only a head start: a page builds it itself when this fails. */
static void warm_ranks(rg_registry *g, int64_t id)
{
    rg_run_row row;
    char err[512];
    if (id > 0 && !rg_registry_get(g, id, &row, NULL, err, sizeof err))
        rg_rank_tables_warm(g, row.comparison_key, err, sizeof err);
}

void rg_serve_route(rg_server *s, const rg_request *q, rg_response *r)
{
    if (!r) return;
    memset(r, 0, sizeof *r);
    if (!s || !q) {
        set_body(r, 500, TEXT, strdup("no server or no request\n"));
        return;
    }
    if (!q->method || !q->path) {
        rg_request named = *q;
        named.method = q->method ? q->method : "";
        named.path = q->path ? q->path : "";
        error_resp(s, &named, r, 400, "a request needs a method and a path");
        return;
    }
    const char *p = q->path;
    int get = !strcmp(q->method, "GET") || !strcmp(q->method, "HEAD"), post = !strcmp(q->method, "POST");
    if (!get && !post) {
        error_resp(s, q, r, 405, "only GET, HEAD and POST");
        r->allow = "GET, HEAD, POST";
        return;
    }
    if (strstr(p, "%00")) {   /* an encoded NUL, left encoded by unescape_path */
        error_resp(s, q, r, 400, "a NUL (%00) in the path");
        return;
    }
    if (post && q->body_too_big) {
        char m[96];
        snprintf(m, sizeof m, "request body over the limit of %zu bytes", s->max_body);
        error_resp(s, q, r, 413, m);
        return;
    }
    char err[512];
    rg_registry *g = reg(s, err, sizeof err);
    if (!g) {
        error_resp(s, q, r, 503, err);
        return;
    }
    if (get && rg_route_match("GET", p, (const char *[2]){0}, (size_t[2]){0}) == RG_ROUTE_SEARCH) {
        /* its answer depends on the query: never cached by path */
        search_page(s, g, q, r);
        return;
    }
    if (get) {
        /* A GET's answer depends on the registry alone (and the Host, in
         * the citation): kept until the registry's generation moves, so a
         * page of a 10,000-run group is ranked once per change, not once
         * per request. */
        int64_t gen;
        char *key = q->path ? cache_key(q) : NULL;
        if (!key || rg_registry_generation(g, &gen, err, sizeof err)) {
            free(key);
            route_get(s, g, q, r);
            return;
        }
        int claimed;
        if (cache_get(s, key, gen, r, &claimed)) {
            free(key);
            return;
        }
        route_get(s, g, q, r);
        cache_put(s, key, gen, r, claimed);
        return;
    }
    /* POST: every write needs the token. */
    int64_t id = 0;
    const char *param[2];
    size_t len[2];
    int route = rg_route_match("POST", p, param, len);
    int api_runs = route == RG_ROUTE_POST_RUNS, api_note_path = route == RG_ROUTE_POST_API_NOTE;
    int form_path = route == RG_ROUTE_POST_NOTE || route == RG_ROUTE_POST_FLAG, flag = route == RG_ROUTE_POST_FLAG;
    if (!api_runs && !api_note_path && !form_path) {
        error_resp(s, q, r, 404, "no such endpoint");
        return;
    }
    if ((api_note_path || form_path) && parse_id(param[0], len[0], &id)) {
        error_resp(s, q, r, 404, "no such endpoint: notes are posted to a run's local id");
        return;
    }
    if (!s->writable) {
        error_resp(s, q, r, 403, "this index is read-only (start serve with --write-token-file)");
        return;
    }
    if (!registry_takes_writes(s, g, q, r)) return;
    if (form_path) form_note(s, g, q, r, id, flag);
    else if (!bearer_ok(s, q->authorization))
        error_resp(s, q, r, 401, "missing or wrong Authorization: Bearer token");
    else if (api_runs) post_run(s, g, q, r, &id);
    else api_note(s, g, q, r, id);
    acknowledge_if_stored(s, g, q, r);
    if (api_runs && r->status < 300) warm_ranks(g, id);
}

/* ---- libmicrohttpd glue ------------------------------------------------------------------------------ */

typedef struct conn_state {
    char *body;
    size_t n, cap;
    int too_big;
    struct timespec t0;             /* when the headers were in: the body's deadline runs from here */
    /* A POST handed to the writer thread: the connection is suspended until
     * its answer r is ready (answered = 1), then resumed. */
    rg_server *s;
    struct MHD_Connection *c;
    rg_request q;
    rg_response r;
    int answered;
} conn_state;

/* Seconds since t0. */
static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* MHD's unescaper, except that a path whose decoding holds a NUL stays as
 * sent (rg_serve_route answers a "%00" in it with 400): decoded, the path
 * would silently end at the NUL. */
static size_t unescape_path(void *cls, struct MHD_Connection *c, char *uri)
{
    (void)cls;
    (void)c;
    size_t raw = strlen(uri);
    char *copy = strdup(uri);
    size_t n = MHD_http_unescape(uri);
    if (copy && strlen(uri) != n) {
        memcpy(uri, copy, raw + 1);
        n = raw;
    }
    free(copy);
    return n;
}

static enum MHD_Result send_resp(struct MHD_Connection *c, rg_response *r)
{
    struct MHD_Response *m =
        MHD_create_response_from_buffer(r->len, r->body ? r->body : (void *)"", r->body ? MHD_RESPMEM_MUST_FREE
                                                                                        : MHD_RESPMEM_PERSISTENT);
    if (!m) {
        free(r->body);
        return MHD_NO;
    }
    MHD_add_response_header(m, "Content-Type", r->content_type ? r->content_type : TEXT);
    MHD_add_response_header(m, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(m, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; "
                                                          "img-src data:; form-action 'self'");
    if (*r->location) MHD_add_response_header(m, "Location", r->location);
    if (r->allow) MHD_add_response_header(m, "Allow", r->allow);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, m);
    MHD_destroy_response(m);
    return ret;
}

/* On the writer thread: the POST's answer, then its connection resumed
 * (libmicrohttpd then calls on_request again, which sends the answer). */
static void write_on_writer(void *p)
{
    conn_state *st = p;
    rg_serve_route(st->s, &st->q, &st->r);
    st->answered = 1;
    MHD_resume_connection(st->c);
}

/* Before the job is queued (so before the writer can resume it). */
static void suspend_for_writer(void *p) { MHD_suspend_connection(((conn_state *)p)->c); }

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    rg_server *s = cls;
    conn_state *st = *con_cls;
    if (!st) {
        rg_deadline_headers_done(c);
        st = calloc(1, sizeof *st);
        if (!st) return MHD_NO;
        *con_cls = st;
        clock_gettime(CLOCK_MONOTONIC, &st->t0);
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->max_body) {
            /* Answer now, without reading the body; MHD closes the connection. */
            rg_request q = {.method = method, .path = url, .body_too_big = 1};
            rg_response r;
            rg_serve_route(s, &q, &r);
            st->too_big = 2;
            return send_resp(c, &r);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (since(&st->t0) > s->body_deadline_s) return MHD_NO;   /* a slow body: closed */
        if (!st->too_big && st->n + *upload_size <= s->max_body) {
            if (st->n + *upload_size > st->cap) {
                size_t cap = st->cap ? st->cap : 4096;
                while (cap < st->n + *upload_size) cap *= 2;
                char *p = realloc(st->body, cap + 1);
                if (!p) return MHD_NO;
                st->body = p;
                st->cap = cap;
            }
            memcpy(st->body + st->n, upload, *upload_size);
            st->n += *upload_size;
            st->body[st->n] = 0;
        } else if (!st->too_big) {
            st->too_big = 1;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (st->too_big == 2) return MHD_YES;
    if (st->answered) return send_resp(c, &st->r);   /* resumed: the writer thread's answer */
    rg_request q = {
        .method = method,
        .path = url,
        .authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"),
        .referer = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_REFERER),
        .host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST),
        .content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
        .body = st->body,
        .body_len = st->n,
        .body_too_big = st->too_big,
        .query = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "q"),
    };
    if (!strcmp(method, "POST")) {
        st->s = s;
        st->c = c;
        st->q = q;   /* its strings are the connection's: valid while it is suspended */
        if (!rg_writer_submit(s->writer, write_on_writer, suspend_for_writer, st)) return MHD_YES;
    }
    rg_response r;
    rg_serve_route(s, &q, &r);
    return send_resp(c, &r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    conn_state *st = *con_cls;
    if (st) {
        free(st->body);
        free(st);
        *con_cls = NULL;
    }
    rg_deadline_request_done(c);
}

/* As many connections as the process may open files, less a margin for
 * the registry, the listening socket and the logs (epoll: no FD_SETSIZE). */
static unsigned connection_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 100000) return 100000;
    return rl.rlim_cur > 256 ? (unsigned)rl.rlim_cur - 128 : (unsigned)rl.rlim_cur / 2;
}

int rg_serve_start(rg_server *s, char *err, size_t errlen)
{
    if (!s) {
        snprintf(err, errlen, "serve: no server");
        return 2;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY | MHD_ALLOW_SUSPEND_RESUME;
    if (s->writable && !s->writer && rg_writer_start(&s->writer, err, errlen)) return 2;
    if (s->addr.sa.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    const unsigned limit = connection_limit();
    if (!s->deadline && rg_deadline_start(&s->deadline, s->header_deadline_s, limit / 4 * 3, err, errlen)) return 2;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&s->addr.sa,
                            MHD_OPTION_THREAD_POOL_SIZE, s->threads, MHD_OPTION_CONNECTION_TIMEOUT, s->timeout_s,
                            MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                            s->max_per_client, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape_path, NULL, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, rg_deadline_notify, s->deadline,
                            MHD_OPTION_END);
    const unsigned port = s->addr.sa.ss_family == AF_INET6
                              ? ntohs(((const struct sockaddr_in6 *)(const void *)&s->addr.sa)->sin6_port)
                              : ntohs(((const struct sockaddr_in *)(const void *)&s->addr.sa)->sin_port);
    if (!s->d) {
        snprintf(err, errlen, "cannot listen on %s:%u (in use, or not an address of this machine)", s->addr.host,
                 port);
        return 2;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : (int)port;
    if (!s->addr.any && !s->base_given) snprintf(s->base, sizeof s->base, "http://%s:%d", s->addr.host, s->port);
    return 0;
}

int rg_serve_port(const rg_server *s) { return s ? s->port : 0; }

int rg_serve_check_base_url(const char *url, char *err, size_t errlen)
{
    size_t n = url ? strlen(url) : 0;
    const char *host = !url                          ? NULL
                       : !strncmp(url, "https://", 8) ? url + 8
                       : !strncmp(url, "http://", 7)  ? url + 7
                                                      : NULL;
    const char *bad = url ? strpbrk(url, " \t\r\n\"'<>?#\\`") : NULL;
    if (!host || !*host || *host == '/' || *host == ':' || bad || n > 200 || url[n - 1] == '/') {
        snprintf(err, errlen, "--base-url '%.60s': expected http(s)://HOST[:PORT][/PATH] without a trailing slash, "
                              "query or fragment (at most 200 bytes)", url ? url : "");
        return 2;
    }
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p < 0x21 || *p > 0x7e) {
            snprintf(err, errlen, "--base-url: printable ASCII only (percent-encode the rest)");
            return 2;
        }
    return 0;
}

const char *rg_serve_host(const rg_server *s) { return s ? s->addr.host : ""; }

void rg_serve_destroy(rg_server *s)
{
    if (!s) return;
    /* The writer first: it resumes every connection it holds (a POST that
     * comes after it stopped is answered on its worker thread). */
    rg_writer_stop(s->writer);
    rg_deadline_stop(s->deadline);   /* no more cuts; the daemon still notifies each close */
    if (s->d) MHD_stop_daemon(s->d);
    rg_deadline_free(s->deadline);
    rg_writer_free(s->writer);
    rg_registry *g = pthread_getspecific(s->key);
    if (g) {
        rg_registry_close(g);
        pthread_setspecific(s->key, NULL);
    }
    pthread_key_delete(s->key);
    for (unsigned i = 0; i < CACHE_SLOTS; i++) free_slot(s, &s->cache[i]);
    pthread_mutex_destroy(&s->mu);
    OPENSSL_cleanse(s->token, sizeof s->token);
    OPENSSL_cleanse(s->form_key, sizeof s->form_key);
    free(s);
}
