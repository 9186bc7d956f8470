/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.h -- `ropegrad serve`: the registry as a website (libmicrohttpd).
 *
 * Routes (GET unless said; see the README for the JSON):
 *   /                        the problems, run counts, #1 of each group
 *   /problems/DEF            all results for a problem, per comparison group
 *   /runs/ID                 the run page
 *   /runs/ID.json            the canonical manifest, byte for byte as stored
 *   /compare/A/B             per-workload ratios B / A with intervals
 *   /api/problems  /api/problems/DEF  /api/runs/ID      JSON
 *   POST /api/runs           a manifest: verified as `runs import` does, stored
 *                            (evidence imported); 201 + {"id", "url"}
 *   POST /api/runs/ID/notes  {"kind": "note"|"reproduction"|"flag", "text"}
 *   POST /runs/ID/notes, /runs/ID/flags   the page's forms
 * Writes need the write token: "Authorization: Bearer TOKEN" for /api, the
 * token field plus the CSRF field (an HMAC under a random key made when the
 * server starts, never derived from the token) and a same-origin Origin or
 * Referer for the forms. No token configured: read-only (403).
 * Bodies over max_body: 413; bad JSON: 400; unknown paths: 404; other
 * methods: 405 with Allow; a NUL (%00) in the path: 400; a registry that is
 * read-only, busy, deleted or replaced since the start: 503 to every write;
 * all with a one-line reason.
 */
#ifndef RG_INDEX_SERVE_H
#define RG_INDEX_SERVE_H

#include <stddef.h>
#include <stdint.h>

/* The documented default request body limit. */
#define RG_SERVE_MAX_BODY (1024 * 1024)
/* The documented defaults of the page cache's size, the connections one
 * client address may hold and a request body's deadline. */
#define RG_SERVE_CACHE_BYTES (64u * 1024 * 1024)
#define RG_SERVE_MAX_PER_CLIENT 64
#define RG_SERVE_BODY_DEADLINE 30
/* A request's headers must arrive within this many seconds of the
 * connection's start (or of its previous request's end); and while more
 * than 3/4 of the connections the server may hold wait for headers, the
 * longest waits are closed first (serve_deadline.h). */
#define RG_SERVE_HEADER_DEADLINE 10

typedef struct rg_serve_options {
    const char *db_path;            /* the registry (must exist) */
    const char *listen;             /* "ADDR:PORT", "[ADDR6]:PORT" or "NAME:PORT" (listen.h), default
                                       127.0.0.1:8080; port 0: any free port */
    const char *write_token_file;   /* NULL: read-only */
    unsigned threads;               /* worker threads, 0: rg_serve_default_threads() */
    size_t max_body;                /* 0: RG_SERVE_MAX_BODY */
    unsigned timeout_s;             /* idle connection timeout, 0: 10 s */
    size_t cache_bytes;             /* page cache cap, 0: RG_SERVE_CACHE_BYTES */
    unsigned max_per_client;        /* connections per client address, 0: RG_SERVE_MAX_PER_CLIENT */
    unsigned body_deadline_s;       /* a request body's whole time, 0: RG_SERVE_BODY_DEADLINE */
    unsigned header_deadline_s;     /* a request's headers' whole time, 0: RG_SERVE_HEADER_DEADLINE */
    const char *base_url;           /* the public URL the citations' permalinks start with ("https://x.org/idx");
                                       NULL: http://ADDR:PORT when listening on one address */
} rg_serve_options;

/* A --base-url: http:// or https://, a host, an optional port and path, no
 * query, fragment, space, quote or angle bracket, no trailing slash, at most
 * 200 bytes. 0, or 2 with err. */
int rg_serve_check_base_url(const char *url, char *err, size_t errlen);

typedef struct rg_server rg_server;

/* A request as the router sees it (tests call rg_serve_route directly). */
typedef struct rg_request {
    const char *method, *path;      /* path already %-decoded */
    const char *authorization, *origin, *referer, *host, *content_type;
    const char *body;
    size_t body_len;
    int body_too_big;
    const char *query;              /* GET /search: the q argument, decoded; NULL when absent */
} rg_request;

typedef struct rg_response {
    int status;
    const char *content_type;       /* static string */
    char *body;                     /* malloc'd */
    size_t len;
    char location[256];             /* for 201/303, else "" */
    const char *allow;              /* for 405: the Allow header (static string), else NULL */
} rg_response;

/* The worker threads when none are asked for: one per online CPU, 2 to 64.
 * More workers than cores made the tail of uncached pages longer under load
 * (results/serve_load.md: p99 23 ms with 4 workers, 11.7 ms with 2, on
 * 2 cores). */
unsigned rg_serve_default_threads(void);

/* A server object without a listening socket (tests); rg_serve_start binds. */
int rg_serve_create(const rg_serve_options *o, rg_server **out, char *err, size_t errlen);
int rg_serve_start(rg_server *s, char *err, size_t errlen);
/* The port it listens on (after start). */
int rg_serve_port(const rg_server *s);
/* The address it listens on as a URL names it: 127.0.0.1, [::1] ("" for NULL). */
const char *rg_serve_host(const rg_server *s);
void rg_serve_destroy(rg_server *s);

/* Routes one request; always fills resp (free resp->body). */
void rg_serve_route(rg_server *s, const rg_request *req, rg_response *resp);

/* The forms' CSRF field of server s: hex HMAC-SHA256(key, "ropegrad-form")
 * with a 32-byte key from RAND_bytes made by rg_serve_create (so it says
 * nothing about the write token). 0, or -1 with out "" when s is NULL. */
int rg_serve_form_csrf(const rg_server *s, char out[65]);

/* The page cache's size now: entries and bytes of the bodies kept. */
int rg_serve_cache_stats(rg_server *s, size_t *entries, size_t *bytes);

#endif
