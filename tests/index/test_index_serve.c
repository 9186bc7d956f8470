/* SPDX-License-Identifier: Apache-2.0 */
/* test_index_serve.c -- the index's server: routing, limits, auth and CSRF
 * through rg_serve_route, then `ropegrad serve` itself on a free loopback
 * port, over HTTP (libcurl): 404/413/400/401, a push, the manifest byte for
 * byte, and a slow client cut off by the timeout. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <pthread.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sqlite3.h>

#include "test_util.h"

#include "push.h"
#include "render.h"
#include "serve.h"
#include "test_record_fixture.h"
#include "test_serve_fixture.h"

#define TOKEN "test-token-0123456789abcdef"

static char db[600], tokfile[600], m1_path[600], m2_path[600], bad_path[600];
static char m3_path[600];
static char *m1_text, *m2_text, *m3_text;

/* Two manifests (pretty-printed: bytes that differ from the registry's own
 * serialization) and a registry holding the first. */
static int setup(void **state)
{
    fx_path(db, sizeof db, "serve.db");
    fx_path(tokfile, sizeof tokfile, "token");
    fx_path(m1_path, sizeof m1_path, "m1.json");
    fx_path(m2_path, sizeof m2_path, "m2.json");
    fx_path(bad_path, sizeof bad_path, "bad.json");
    fx_path(m3_path, sizeof m3_path, "m3.json");
    char err[RG_ERRLEN];
    cJSON *m1 = fx_manifest("NVIDIA H200", 1, 1.0, 1), *m2 = fx_manifest("NVIDIA H200", 2, 0.8, 2);
    m1_text = rg_json_print(m1, 1, err, sizeof err);
    m2_text = rg_json_print(m2, 1, err, sizeof err);
    cJSON *m3 = fx_manifest("NVIDIA H200", 3, 0.9, 3);
    m3_text = rg_json_print(m3, 1, err, sizeof err);
    cJSON_Delete(m1);
    cJSON_Delete(m2);
    cJSON_Delete(m3);
    if (!m1_text || !m2_text || !m3_text) return -1;
    rg_write_file_atomic(m3_path, m3_text, strlen(m3_text), err, sizeof err);
    rg_write_file_atomic(m1_path, m1_text, strlen(m1_text), err, sizeof err);
    rg_write_file_atomic(m2_path, m2_text, strlen(m2_text), err, sizeof err);
    char *bad = strdup(m2_text);
    /* a changed environment: its digest no longer matches the one the run names */
    char *p = strstr(bad, "\"hostname\": \"");
    if (!p || !p[13]) return -1;
    p[13] = p[13] == 'x' ? 'y' : 'x';
    rg_write_file_atomic(bad_path, bad, strlen(bad), err, sizeof err);
    free(bad);
    rg_write_file_atomic(tokfile, TOKEN "\n", strlen(TOKEN) + 1, err, sizeof err);
    chmod(tokfile, 0600);   /* a secret: group or others must not read it */
    unlink(db);
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) return -1;
    int64_t id;
    int existed;
    int rc = rg_registry_import(g, m1_text, strlen(m1_text), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err);
    rg_registry_close(g);
    return rc || id != 1 ? -1 : 0;
}

static int teardown(void **state)
{
    tu_unlink_db(db);
    unlink(tokfile);
    unlink(m1_path);
    unlink(m2_path);
    unlink(bad_path);
    unlink(m3_path);
    free(m3_text);
    free(m1_text);
    free(m2_text);
    return 0;
}

static rg_server *make(int writable) { return fx_serve(db, writable ? tokfile : NULL); }

static int route(rg_server *s, rg_request q, rg_response *r)
{
    if (!q.method) q.method = "GET";
    rg_serve_route(s, &q, r);
    return r->status;
}

static void expect(rg_server *s, rg_request q, int status, const char *needle)
{
    rg_response r;
    int got = route(s, q, &r);
    if (got != status || (needle && (!r.body || !strstr(r.body, needle))))
        fail_msg("%s %s: got %d (%.300s), wanted %d with '%s'", q.method ? q.method : "GET", q.path, got,
                 r.body ? r.body : "", status, needle ? needle : "");
    /* An error says why in one line. */
    if (status >= 400 && r.body && !strncmp(r.body, "{", 1)) assert_int_equal(tu_count_lines(r.body), 1);
    free(r.body);
}

static void test_routes(void **state)
{
    rg_server *s = make(0);
    expect(s, (rg_request){.path = "/"}, 200, "014_rotary_embedding");
    expect(s, (rg_request){.path = "/runs/1"}, 200, "Rank 1 of 1");
    expect(s, (rg_request){.path = "/runs/1"}, 200, "id=\"rank-method\"");
    expect(s, (rg_request){.path = "/history/1"}, 200, "<svg class=\"trend\"");
    expect(s, (rg_request){.path = "/api/regressions"}, 200, "\"regressions\"");
    expect(s, (rg_request){.path = "/"}, 200, "Regressions of the latest revisions");
    expect(s, (rg_request){.path = "/api/runs/1"}, 200, "\"rank\":1");
    expect(s, (rg_request){.path = "/api/problems"}, 200, "\"runs\":1");
    expect(s, (rg_request){.path = "/problems/014_rotary_embedding_with_attention_scaling_backward"}, 200,
           "id=\"problem-title\"");
    expect(s, (rg_request){.path = "/api/problems/014_rotary_embedding_with_attention_scaling_backward"}, 200,
           "\"ranked\"");
    expect(s, (rg_request){.path = "/compare/1/1"}, 200, "compare-table");
    /* The manifest: exactly the bytes it was imported as. */
    rg_response r;
    assert_int_equal(route(s, (rg_request){.path = "/runs/1.json"}, &r), 200);
    assert_int_equal(r.len, strlen(m1_text));
    assert_memory_equal(r.body, m1_text, r.len);
    free(r.body);
    /* Unknown paths, ids and methods. */
    const char *nf[] = {"/nope", "/runs/", "/runs/0", "/runs/-1", "/runs/1x", "/runs/99", "/runs/99.json",
                        "/runs/.json", "/compare/1", "/compare/1/x", "/problems/none-such", "/runs/1/notes",
                        "/runs/99999999999999999999", "/api/runs/1/x", "/history/99", "/history/x"};
    for (size_t i = 0; i < sizeof nf / sizeof nf[0]; i++) expect(s, (rg_request){.path = nf[i]}, 404, NULL);
    expect(s, (rg_request){.method = "DELETE", .path = "/runs/1"}, 405, NULL);
    /* A hostile path is escaped on the 404 page. */
    expect(s, (rg_request){.path = "/problems/<script>x</script>"}, 404, "&lt;script&gt;");
    /* Read-only: every write is refused. */
    expect(s, (rg_request){.method = "POST", .path = "/api/runs", .authorization = "Bearer " TOKEN}, 403,
           "read-only");
    rg_serve_destroy(s);
}

/* The notes of run id in the registry. */
static size_t notes_of(int64_t id)
{
    char err[RG_ERRLEN];
    rg_registry *g;
    rg_note *notes;
    size_t n;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    assert_int_equal(rg_registry_notes(g, id, &notes, &n, err, sizeof err), 0);
    rg_notes_free(notes, n);
    rg_registry_close(g);
    return n;
}

/* A note's kind is a JSON string of the documented set (note, reproduction,
 * flag) or absent (a note): a number, null, a boolean, an array, an object
 * or another string is 400 and adds nothing (a numeric kind was a note). */
static void test_note_kind_strict(void **state)
{
    rg_server *s = make(1);
    rg_request q = {.method = "POST", .path = "/api/runs/1/notes", .authorization = "Bearer " TOKEN};
    static const char *const bad[] = {
        "{\"kind\":7,\"text\":\"x\"}",       "{\"kind\":0,\"text\":\"x\"}",
        "{\"kind\":null,\"text\":\"x\"}",    "{\"kind\":true,\"text\":\"x\"}",
        "{\"kind\":[\"note\"],\"text\":\"x\"}", "{\"kind\":{\"note\":1},\"text\":\"x\"}",
        "{\"kind\":\"\",\"text\":\"x\"}",      "{\"kind\":\"Note\",\"text\":\"x\"}",
    };
    size_t before = notes_of(1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        q.body = bad[i];
        q.body_len = strlen(bad[i]);
        expect(s, q, 400, "kind");
    }
    assert_int_equal(notes_of(1), before);
    q.body = "{\"kind\":\"flag\",\"text\":\"x\"}";
    q.body_len = strlen(q.body);
    expect(s, q, 201, NULL);
    q.body = "{\"text\":\"x\"}";
    q.body_len = strlen(q.body);
    expect(s, q, 201, NULL);
    assert_int_equal(notes_of(1), before + 2);
    rg_serve_destroy(s);
}

static void test_writes_auth_limits(void **state)
{
    rg_server *s = make(1);
    rg_request post = {.method = "POST", .path = "/api/runs", .authorization = "Bearer " TOKEN};
    rg_request q = post;
    q.authorization = NULL;
    expect(s, q, 401, "Bearer");
    q.authorization = "Bearer wrong-token-0123456789abcde";
    expect(s, q, 401, NULL);
    q = post;
    q.body_too_big = 1;
    expect(s, q, 413, "limit");
    q = post;
    q.body = "{\"items\": [";
    q.body_len = strlen(q.body);
    expect(s, q, 400, "invalid JSON");
    q.body = "[1,2]";
    q.body_len = 5;
    expect(s, q, 400, NULL);
    /* A manifest that does not verify is refused and not stored. */
    size_t n;
    char *bad = tu_slurp(bad_path, &n);
    q.body = bad;
    q.body_len = n;
    expect(s, q, 422, "does not verify");
    free(bad);
    expect(s, (rg_request){.path = "/runs/2"}, 404, NULL);
    /* A good one: 201, its URL, then the same again: 200, the same id. */
    q.body = m2_text;
    q.body_len = strlen(m2_text);
    expect(s, q, 201, "\"url\":\"/runs/2\"");
    expect(s, q, 200, "\"existed\":true");
    expect(s, (rg_request){.path = "/runs/2"}, 200, "evidence: imported");

    /* Notes over /api: bearer token, JSON body. */
    rg_request nq = {.method = "POST", .path = "/api/runs/2/notes", .authorization = "Bearer " TOKEN};
    nq.body = "{\"kind\":\"note\",\"text\":\"<script>alert(1)</script>\"}";
    nq.body_len = strlen(nq.body);
    expect(s, nq, 201, NULL);
    nq.body = "{\"kind\":\"vote\",\"text\":\"x\"}";
    nq.body_len = strlen(nq.body);
    expect(s, nq, 400, "kind");
    nq.body = "{\"text\":\"\"}";
    nq.body_len = strlen(nq.body);
    expect(s, nq, 400, NULL);
    nq.path = "/api/runs/77/notes";
    nq.body = "{\"text\":\"x\"}";
    nq.body_len = strlen(nq.body);
    expect(s, nq, 404, NULL);
    expect(s, (rg_request){.path = "/runs/2"}, 200, "&lt;script&gt;alert(1)&lt;/script&gt;");

    /* Forms: the token, the CSRF field and a same-origin request, all three. */
    char csrf[65], body[512];
    assert_int_equal(rg_serve_form_csrf(s, csrf), 0);
    snprintf(body, sizeof body, "kind=reproduction&text=re-ran+it+%%3Cb%%3Eok%%3C%%2Fb%%3E&token=%s&csrf=%s", TOKEN,
             csrf);
    rg_request f = {.method = "POST", .path = "/runs/2/notes", .host = "127.0.0.1:8080",
                    .origin = "http://127.0.0.1:8080", .body = body, .body_len = strlen(body)};
    rg_request g = f;
    g.origin = "http://evil.example";
    expect(s, g, 403, "cross-site");
    g.origin = NULL;
    expect(s, g, 403, "cross-site");   /* neither Origin nor Referer */
    g.referer = "http://127.0.0.1:8080.evil.example/x";
    expect(s, g, 403, "cross-site");
    char b2[512];
    snprintf(b2, sizeof b2, "text=x&token=%s&csrf=%064d", TOKEN, 0);
    g = f;
    g.body = b2;
    g.body_len = strlen(b2);
    expect(s, g, 403, "CSRF");
    snprintf(b2, sizeof b2, "text=x&token=not-the-token&csrf=%s", csrf);
    g.body_len = strlen(b2);
    expect(s, g, 401, "token");
    g = f;
    g.origin = NULL;
    g.referer = "http://127.0.0.1:8080/runs/2";
    expect(s, g, 303, NULL);
    expect(s, f, 303, NULL);
    rg_response r;
    route(s, (rg_request){.path = "/runs/2"}, &r);
    assert_non_null(strstr(r.body, "re-ran it &lt;b&gt;ok&lt;/b&gt;"));
    assert_non_null(strstr(r.body, "reproduction"));
    assert_non_null(strstr(r.body, "evidence: imported"));   /* a note never changes the evidence */
    assert_non_null(strstr(r.body, csrf));                    /* the form carries the field */
    free(r.body);
    /* Report an issue: a flag the page shows. */
    snprintf(body, sizeof body, "text=wrong+device&token=%s&csrf=%s", TOKEN, csrf);
    f.path = "/runs/2/flags";
    f.body_len = strlen(body);
    expect(s, f, 303, NULL);
    expect(s, (rg_request){.path = "/runs/2"}, 200, "id=\"flagged\"");
    rg_serve_destroy(s);
}

/* ---- the real server over HTTP ------------------------------------------------------------ */

static pid_t server_pid;

static int start_server(char *base, size_t n, const char *extra)
{
    int fd[2];
    if (pipe(fd)) return -1;
    server_pid = fork();
    if (server_pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "exec %s serve --db %s --listen 127.0.0.1:0 --write-token-file %s %s", TU_BIN, db,
                 tokfile, extra);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    char line[1024] = "";
    int ok = f && fgets(line, sizeof line, f) != NULL;
    if (f) fclose(f);
    const char *p = strstr(line, "http://");
    char *slash = p ? strchr(p + 7, '/') : NULL;
    if (!ok || !slash) return -1;
    snprintf(base, n, "%.*s", (int)(slash - p), p);
    return 0;
}

static void stop_server(void)
{
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        int st;
        waitpid(server_pid, &st, 0);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);   /* a clean stop */
        server_pid = 0;
    }
}

typedef struct got {
    char *p;
    size_t n;
} got;

static size_t sink(char *d, size_t a, size_t b, void *u)
{
    got *g = u;
    char *p = realloc(g->p, g->n + a * b + 1);
    if (!p) return 0;
    memcpy(p + g->n, d, a * b);
    g->p = p;
    g->n += a * b;
    g->p[g->n] = 0;
    return a * b;
}

static long http(const char *url, const char *body, size_t len, const char *auth, got *out)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = auth ? curl_slist_append(NULL, auth) : NULL;
    memset(out, 0, sizeof *out);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (h) curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return status;
}

static void test_http(void **state)
{
    char base[256], url[512];
    assert_int_equal(start_server(base, sizeof base, "--timeout 1"), 0);
    got g;
    snprintf(url, sizeof url, "%s/runs/1.json", base);
    assert_int_equal(http(url, NULL, 0, NULL, &g), 200);
    assert_int_equal(g.n, strlen(m1_text));
    assert_memory_equal(g.p, m1_text, g.n);   /* byte for byte */
    free(g.p);
    snprintf(url, sizeof url, "%s/no/such/page", base);
    assert_int_equal(http(url, NULL, 0, NULL, &g), 404);
    free(g.p);
    snprintf(url, sizeof url, "%s/api/runs", base);
    assert_int_equal(http(url, "{nope", 5, "Authorization: Bearer " TOKEN, &g), 400);
    assert_int_equal(tu_count_lines(g.p), 1);
    free(g.p);
    assert_int_equal(http(url, "{}", 2, NULL, &g), 401);
    free(g.p);
    size_t big = RG_SERVE_MAX_BODY + 1;
    char *blob = malloc(big);
    memset(blob, ' ', big);
    assert_int_equal(http(url, blob, big, "Authorization: Bearer " TOKEN, &g), 413);
    free(g.p);
    free(blob);
    /* The push client: stored, then already there; a bad manifest refused. */
    long status;
    char reply[512], err[512];
    assert_int_equal(rg_push(base, m3_text, strlen(m3_text), TOKEN, &status, reply, sizeof reply, err, sizeof err), 0);
    assert_int_equal(status, 201);
    assert_non_null(strstr(reply, "/runs/3"));
    assert_int_equal(rg_push(base, m3_text, strlen(m3_text), TOKEN, &status, reply, sizeof reply, err, sizeof err), 0);
    assert_int_equal(status, 200);
    size_t n;
    char *bad = tu_slurp(bad_path, &n);
    assert_int_equal(rg_push(base, bad, n, TOKEN, &status, reply, sizeof reply, err, sizeof err), 1);
    assert_int_equal(status, 422);
    free(bad);
    snprintf(url, sizeof url, "%s/runs/3.json", base);
    assert_int_equal(http(url, NULL, 0, NULL, &g), 200);
    assert_int_equal(g.n, strlen(m3_text));
    assert_memory_equal(g.p, m3_text, g.n);
    free(g.p);
    /* The CLI client. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s runs push %s %s --token-file %s > /dev/null", TU_BIN, base, m3_path, tokfile);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s runs push %s %s --token-file %s 2> /dev/null", TU_BIN, base, bad_path, tokfile);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);

    /* A slow client (half a request line, then nothing) is cut off. */
    int port = atoi(strrchr(base, ':') + 1);
    int sfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal(connect(sfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_true(write(sfd, "GET /runs/1 HT", 14) == 14);
    struct timeval tv = {8, 0};
    setsockopt(sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char buf[64];
    ssize_t k = read(sfd, buf, sizeof buf);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(sfd);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (k != 0 || waited > 5) fail_msg("slow client: read %zd after %.1f s (wanted EOF after ~1 s)", k, waited);
    stop_server();
}

typedef struct push_job {
    char url[512];
    char *body;
    long status;
} push_job;

static void *push_thread(void *p)
{
    push_job *j = p;
    got g;
    j->status = http(j->url, j->body, strlen(j->body), "Authorization: Bearer " TOKEN, &g);
    free(g.p);
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* A push that waits for the registry (another process holds its write lock)
 * does not hold up the pages: with one worker thread, a page asked for
 * meanwhile is answered at once (the write waits on the writer thread,
 * serve_writer.h), and the push is stored once the lock is let go. */
static void test_write_does_not_hold_pages(void **state)
{
    char base[256], url[512], err[RG_ERRLEN];
    assert_int_equal(start_server(base, sizeof base, "--threads 1"), 0);
    sqlite3 *other;
    assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    cJSON *m = fx_manifest("NVIDIA H200", 5, 0.7, 5);
    push_job j = {.body = rg_json_print(m, 0, err, sizeof err)};
    cJSON_Delete(m);
    assert_non_null(j.body);
    snprintf(j.url, sizeof j.url, "%s/api/runs", base);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, push_thread, &j), 0);
    struct timespec pause = {0, 300000000L};
    nanosleep(&pause, NULL);   /* the push is in, waiting for the lock */
    got g;
    snprintf(url, sizeof url, "%s/runs/1", base);
    double t0 = now_s();
    long page = http(url, NULL, 0, NULL, &g);
    double waited = now_s() - t0;
    free(g.p);
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    pthread_join(t, NULL);
    free(j.body);
    stop_server();
    assert_int_equal(page, 200);
    if (waited > 3) fail_msg("the page waited %.1f s for the push", waited);
    assert_int_equal(j.status, 201);
}

/* The run page's rank (model.c's rank tables, a binary search) is the
 * registry's (rg_registry_rank_of, counting), for every run, also after a
 * new run changed the group. */
static void test_rank_matches_registry(void **state)
{
    char err[RG_ERRLEN];
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    for (int round = 0; round < 2; round++) {
        int64_t *ids;
        size_t n;
        assert_int_equal(rg_model_run_ids(g, &ids, &n, err, sizeof err), 0);
        assert_true(n >= 3);
        int ranked_second = 0;
        for (size_t i = 0; i < n; i++) {
            int rank, size;
            int64_t first;
            assert_int_equal(rg_registry_rank_of(g, ids[i], &rank, &size, &first, err, sizeof err), 0);
            rg_run_view v;
            assert_int_equal(rg_model_run(g, ids[i], &v, err, sizeof err), 0);
            /* The page's rank is the interval rank (rank.h); #1 by the primary figure. */
            rg_ranked me;
            int ranked;
            assert_int_equal(rg_registry_rank_run(g, ids[i], &me, &ranked, err, sizeof err), 0);
            assert_true(v.interval_ranked);
            assert_int_equal(v.rank, me.rank);
            assert_int_equal(v.tied, me.tied);
            assert_int_equal(v.group_size, ranked);
            assert_int_equal(ranked, size);
            assert_int_equal(v.first_id, first);
            ranked_second |= rank >= 2;
            rg_model_run_free(&v);
        }
        assert_true(ranked_second);
        free(ids);
        if (round == 0) {   /* a faster run joins: every rank below it moves */
            cJSON *m = fx_manifest("NVIDIA H200", 4, 0.5, 4);
            char *t = rg_json_print(m, 0, err, sizeof err);
            int64_t id;
            int existed;
            assert_int_equal(rg_registry_import(g, t, strlen(t), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err), 0);
            free(t);
            cJSON_Delete(m);
        }
    }
    rg_registry_close(g);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_writes_auth_limits),
        cmocka_unit_test(test_note_kind_strict),
        cmocka_unit_test(test_http),
        cmocka_unit_test(test_rank_matches_registry),
        cmocka_unit_test(test_write_does_not_hold_pages),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    if (server_pid > 0) kill(server_pid, SIGTERM);
    curl_global_cleanup();
    return rc;
}
