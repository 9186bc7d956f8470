/* SPDX-License-Identifier: Apache-2.0 */
/* test_serve_attack.c -- `ropegrad serve` under attack, over HTTP on loopback
 * (issue 24, point 7): the forms' CSRF value says nothing about the write
 * token; 1,000 slow connections leave `/` answering within 1 s; a slow body
 * is cut off at its deadline; the page cache is keyed by path alone and
 * capped in bytes; a registry deleted, replaced, read-only or busy answers
 * writes with 503 and loses nothing acknowledged; 405 carries Allow; %00 in
 * a path is 400.
 *
 * Black box: only the binary and HTTP. RG_SERVE_TEST_BIN names another
 * binary to test (e.g. an older build, to see these tests fail there). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sqlite3.h>

#include "test_util.h"

#include "test_record_fixture.h"

#define TOKEN "attack-token-0123456789abcdef"
#define SLOW_CONNECTIONS 1000

static char tokfile[600];
static char *m2_text, *m3_text;

static const char *bin(void)
{
    const char *b = getenv("RG_SERVE_TEST_BIN");
    return b && *b ? b : TU_BIN;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static char *manifest_text(int kernel, double scale, int stamp)
{
    char err[RG_ERRLEN];
    cJSON *m = fx_manifest("NVIDIA H200", kernel, scale, stamp);
    char *t = m ? rg_json_print(m, 0, err, sizeof err) : NULL;
    cJSON_Delete(m);
    return t;
}

static void remove_registry(const char *path)
{
    char p[700];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* A fresh registry at path holding run 1. */
static void make_registry(const char *path)
{
    char err[RG_ERRLEN];
    remove_registry(path);
    rg_registry *g;
    if (rg_registry_open(path, 1, &g, err, sizeof err)) fail_msg("%s", err);
    char *t = manifest_text(1, 1.0, 1);
    int64_t id;
    int existed;
    int rc = rg_registry_import(g, t, strlen(t), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err);
    free(t);
    rg_registry_close(g);
    if (rc || id != 1) fail_msg("fixture registry: %s", err);
}

static int setup(void **state)
{
    fx_path(tokfile, sizeof tokfile, "attack-token");
    char err[RG_ERRLEN];
    m2_text = manifest_text(2, 0.8, 2);
    m3_text = manifest_text(3, 0.9, 3);
    if (!m2_text || !m3_text) return -1;
    if (rg_write_file_atomic(tokfile, TOKEN "\n", strlen(TOKEN) + 1, err, sizeof err)) return -1;
    return chmod(tokfile, 0600);
}

static int teardown(void **state)
{
    unlink(tokfile);
    free(m2_text);
    free(m3_text);
    return 0;
}

/* ---- a server process --------------------------------------------------------------------- */

typedef struct server {
    pid_t pid;
    char base[128];   /* http://127.0.0.1:PORT */
    int port;
} server;

/* Every server started and not yet stopped: a failed test leaves none behind. */
static pid_t live[16];

static void track(pid_t pid, pid_t was)
{
    for (int i = 0; i < 16; i++)
        if (live[i] == was) {
            live[i] = pid;
            return;
        }
}

static void stop_all(void)
{
    for (int i = 0; i < 16; i++)
        if (live[i] > 0) {
            kill(live[i], SIGTERM);
            waitpid(live[i], NULL, 0);
            live[i] = 0;
        }
}

/* What the next server starts under: a shell prefix ("ulimit -n 1024;") and
 * a file size limit in bytes (RLIMIT_FSIZE; 0: none), set in its process only. */
static const char *start_prefix = "";
static rlim_t start_fsize;

/* Starts `ropegrad serve --db db` on a free loopback port with the write
 * token and extra options; 0, or -1 when it did not start. */
static int start(server *sv, const char *db, const char *extra)
{
    int fd[2];
    if (pipe(fd)) return -1;
    sv->pid = fork();
    if (sv->pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        if (start_fsize && setrlimit(RLIMIT_FSIZE, &(struct rlimit){start_fsize, start_fsize})) _exit(127);
        /* Under ASan (scripts/sanitize.sh) freed memory sits in quarantine
         * and would count as growth in the memory checks below. */
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[1024];
        snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0:thread_local_quarantine_size_kb=0", asan ? asan : "",
                 asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s exec '%s' serve --db '%s' --listen 127.0.0.1:0 --write-token-file '%s' %s",
                 start_prefix, bin(), db, tokfile, extra ? extra : "");
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    track(sv->pid, 0);
    FILE *f = fdopen(fd[0], "r");
    char line[1024] = "";
    int ok = f && fgets(line, sizeof line, f) != NULL;
    if (f) fclose(f);
    const char *p = strstr(line, "http://");
    const char *slash = p ? strchr(p + 7, '/') : NULL;
    if (!ok || !slash) {
        waitpid(sv->pid, NULL, 0);
        track(0, sv->pid);
        sv->pid = 0;
        return -1;
    }
    snprintf(sv->base, sizeof sv->base, "%.*s", (int)(slash - p), p);
    sv->port = atoi(strrchr(sv->base, ':') + 1);
    return 0;
}

static void stop(server *sv)
{
    if (sv->pid <= 0) return;
    kill(sv->pid, SIGTERM);
    waitpid(sv->pid, NULL, 0);
    track(0, sv->pid);
    sv->pid = 0;
}

/* A fresh one-run registry (its path into db[600]) and a server over it. */
static void serve_fresh(server *sv, char *db, const char *name, const char *extra)
{
    fx_path(db, 600, name);
    make_registry(db);
    assert_int_equal(start(sv, db, extra), 0);
}

static void finish(server *sv, const char *db)
{
    stop(sv);
    remove_registry(db);
}

/* The server's resident memory in KiB (/proc), -1 when unknown or not a
 * measure of what the server keeps: under ASan (scripts/sanitize.sh sets
 * ASAN_OPTIONS) the allocator and its shadow hold on to what was freed;
 * test_serve_cache checks the cap in bytes there. */
static long rss_kib(pid_t pid)
{
    if (getenv("ASAN_OPTIONS")) return -1;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kib = atol(line + 6);
    if (f) fclose(f);
    return kib;
}

/* ---- HTTP ----------------------------------------------------------------------------------- */

typedef struct reply {
    long status;
    char *body, *head;
    size_t n, hn;
    double seconds;
} reply;

static size_t add_bytes(char **p, size_t *n, const char *d, size_t k)
{
    char *q = realloc(*p, *n + k + 1);
    if (!q) return 0;
    memcpy(q + *n, d, k);
    *p = q;
    *n += k;
    q[*n] = 0;
    return k;
}

static size_t on_body(char *d, size_t a, size_t b, void *u)
{
    reply *r = u;
    return add_bytes(&r->body, &r->n, d, a * b);
}

static size_t on_head(char *d, size_t a, size_t b, void *u)
{
    reply *r = u;
    return add_bytes(&r->head, &r->hn, d, a * b);
}

typedef struct call {
    const char *method, *path, *body, *from;   /* from: a source address, e.g. 127.0.0.2 */
    const char *headers[4];
    int raw_path;                              /* send the path as is (no curl normalisation) */
} call;

static reply http(const server *sv, call c)
{
    reply r = {0};
    char url[1024];
    snprintf(url, sizeof url, "%s%s", sv->base, c.path);
    CURL *h = curl_easy_init();
    struct curl_slist *hl = NULL;
    for (int i = 0; i < 4 && c.headers[i]; i++) hl = curl_slist_append(hl, c.headers[i]);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_head);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    if (c.raw_path) curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
    if (c.from) curl_easy_setopt(h, CURLOPT_INTERFACE, c.from);
    if (hl) curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    if (c.body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, c.body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(c.body));
    }
    if (c.method) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c.method);
    double t0 = now_s();
    if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    r.seconds = now_s() - t0;
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    return r;
}

static void reply_free(reply *r)
{
    free(r->body);
    free(r->head);
}

static long status_of(const server *sv, call c)
{
    reply r = http(sv, c);
    long s = r.status;
    reply_free(&r);
    return s;
}

static long push(const server *sv, const char *manifest)
{
    return status_of(sv, (call){.path = "/api/runs", .body = manifest, .headers = {"Authorization: Bearer " TOKEN}});
}

static long api_note(const server *sv, const char *text_json)
{
    return status_of(sv, (call){.path = "/api/runs/1/notes", .body = text_json,
                                .headers = {"Authorization: Bearer " TOKEN}});
}

/* ---- the forms' CSRF value ------------------------------------------------------------------ */

/* The csrf field of the run page's form (64 hex characters). */
static void page_csrf(const server *sv, char out[65])
{
    reply r = http(sv, (call){.path = "/runs/1"});
    assert_int_equal(r.status, 200);
    const char *p = r.body ? strstr(r.body, "name=\"csrf\" value=\"") : NULL;
    assert_non_null(p);
    p += strlen("name=\"csrf\" value=\"");
    assert_true(strspn(p, "0123456789abcdef") == 64 && p[64] == '"');
    memcpy(out, p, 64);
    out[64] = 0;
    reply_free(&r);
}

static void hex(const unsigned char *md, unsigned n, char out[65])
{
    for (unsigned i = 0; i < n && i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* What a dictionary attack would try: the HMAC the old server used, and
 * plain hashes of the token. */
static void assert_not_from_token(const char *csrf)
{
    static const char *const msgs[] = {"ropegrad-form", "", "csrf"};
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    char h[65] = "";
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
        HMAC(EVP_sha256(), TOKEN, (int)strlen(TOKEN), (const unsigned char *)msgs[i], strlen(msgs[i]), md, &n);
        hex(md, n, h);
        assert_string_not_equal(csrf, h);
    }
    EVP_Digest(TOKEN, strlen(TOKEN), md, &n, EVP_sha256(), NULL);
    hex(md, n, h);
    assert_string_not_equal(csrf, h);
}

static long form_post(const server *sv, const char *csrf)
{
    char body[512], origin[160];
    snprintf(body, sizeof body, "kind=note&text=from+the+form&token=%s&csrf=%s", TOKEN, csrf);
    snprintf(origin, sizeof origin, "Origin: %s", sv->base);
    return status_of(sv, (call){.path = "/runs/1/notes", .body = body, .headers = {origin}});
}

static void test_csrf_not_from_token(void **state)
{
    char db[600], csrf_a[65], csrf_b[65];
    fx_path(db, sizeof db, "attack-csrf.db");
    make_registry(db);
    server a, b;
    assert_int_equal(start(&a, db, NULL), 0);
    assert_int_equal(start(&b, db, NULL), 0);
    page_csrf(&a, csrf_a);
    page_csrf(&b, csrf_b);
    assert_string_not_equal(csrf_a, csrf_b);   /* the same token, two servers */
    assert_not_from_token(csrf_a);
    assert_not_from_token(csrf_b);
    assert_int_equal(form_post(&a, csrf_b), 403);   /* another server's value */
    assert_int_equal(form_post(&a, csrf_a), 303);
    char again[65];
    page_csrf(&a, again);
    assert_string_equal(again, csrf_a);   /* stable for the server's life */
    stop(&a);
    stop(&b);
    remove_registry(db);
}

/* ---- 405, %00 --------------------------------------------------------------------------------- */

static void test_allow_and_nul(void **state)
{
    char db[600];
    server sv;
    serve_fresh(&sv, db, "attack-405.db", NULL);
    const char *methods[] = {"DELETE", "PUT", "PATCH", "OPTIONS"};
    for (size_t i = 0; i < 4; i++) {
        reply r = http(&sv, (call){.method = methods[i], .path = "/runs/1"});
        assert_int_equal(r.status, 405);
        const char *allow = r.head ? strstr(r.head, "\nAllow: ") : NULL;
        if (!allow) fail_msg("%s: 405 without Allow:\n%s", methods[i], r.head ? r.head : "");
        assert_non_null(strstr(allow, "GET"));
        assert_non_null(strstr(allow, "POST"));
        reply_free(&r);
    }
    const char *nul[] = {"/runs/1%00.json", "/runs/1%00", "/problems/014%00x", "/%00"};
    for (size_t i = 0; i < 4; i++) {
        long s = status_of(&sv, (call){.path = nul[i], .raw_path = 1});
        if (s != 400) fail_msg("GET %s: %ld, wanted 400", nul[i], s);
    }
    long s = status_of(&sv, (call){.path = "/runs/1%00/notes", .raw_path = 1, .body = "{\"text\":\"x\"}",
                                   .headers = {"Authorization: Bearer " TOKEN}});
    assert_int_equal(s, 400);
    assert_int_equal(status_of(&sv, (call){.path = "/runs/%31"}), 200);   /* other escapes still decode */
    finish(&sv, db);
}

/* ---- the page cache ------------------------------------------------------------------------------ */

static void test_cache_ignores_host(void **state)
{
    char db[600];
    server sv;
    serve_fresh(&sv, db, "attack-host.db", NULL);
    reply first = http(&sv, (call){.path = "/runs/1"});
    assert_int_equal(first.status, 200);
    for (int i = 0; i < 50; i++) status_of(&sv, (call){.path = "/runs/1"});
    long before = rss_kib(sv.pid);
    for (int i = 0; i < 600; i++) {
        char host[96];
        snprintf(host, sizeof host, "Host: attacker-%04d.example", i);
        reply r = http(&sv, (call){.path = "/runs/1", .headers = {host}});
        assert_int_equal(r.status, 200);
        /* No header reaches the page: every client gets the one cached copy. */
        if (r.n != first.n || memcmp(r.body, first.body, r.n)) fail_msg("the page differs with %s", host);
        assert_null(strstr(r.body, "attacker-"));
        reply_free(&r);
    }
    long after = rss_kib(sv.pid);
    if (before > 0 && after - before > 2048)
        fail_msg("600 Host headers grew the server by %ld KiB (a %zu-byte page)", after - before, first.n);
    reply_free(&first);
    finish(&sv, db);
}

static void test_cache_capped(void **state)
{
    char db[600], path[128];
    fx_path(db, sizeof db, "attack-cap.db");
    make_registry(db);
    server sv;
    assert_int_equal(start(&sv, db, "--cache-bytes 65536"), 0);
    status_of(&sv, (call){.path = "/compare/1/1"});
    long before = rss_kib(sv.pid);
    size_t page = 0;
    /* 225 distinct paths of one compare page (ids with leading zeros). */
    for (int a = 0; a < 15; a++)
        for (int b = 0; b < 15; b++) {
            snprintf(path, sizeof path, "/compare/%.*s1/%.*s1", a, "00000000000000", b, "00000000000000");
            reply r = http(&sv, (call){.path = path});
            assert_int_equal(r.status, 200);
            page = r.n;
            reply_free(&r);
        }
    long after = rss_kib(sv.pid);
    if (before > 0 && after - before > 4096)
        fail_msg("225 cached %zu-byte pages grew the server by %ld KiB under a 64 KiB cap", page, after - before);
    stop(&sv);
    /* The option is checked like the others. */
    assert_int_not_equal(start(&sv, db, "--cache-bytes 0"), 0);
    assert_int_not_equal(start(&sv, db, "--cache-bytes lots"), 0);
    remove_registry(db);
}

/* ---- slow clients ------------------------------------------------------------------------------- */

static void raise_file_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* A connection from source address from to the server, sending part of a
 * request (or nothing); -1 when it could not connect within 2 s. */
static int slow_client(const server *sv, const char *from, int say_something)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
    inet_pton(AF_INET, from, &src.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
    dst.sin_port = htons((uint16_t)sv->port);
    if (bind(fd, (struct sockaddr *)&src, sizeof src) || connect(fd, (struct sockaddr *)&dst, sizeof dst)) {
        close(fd);
        return -1;
    }
    if (say_something && write(fd, "GET / HTTP/1.1\r\nHost: x\r\n", 26) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* GET / from another client (127.0.0.2) while n slow connections come from
 * the addresses 127.0.0.(first .. first + spread - 1): answered, within 1 s. */
static void flood_then_get(const server *sv, int first, int spread)
{
    static int fds[SLOW_CONNECTIONS];
    int open_ok = 0;
    for (int i = 0; i < SLOW_CONNECTIONS; i++) {
        char from[32];
        snprintf(from, sizeof from, "127.0.0.%d", first + i % spread);
        fds[i] = slow_client(sv, from, i % 2);
        open_ok += fds[i] >= 0;
    }
    nanosleep(&(struct timespec){0, 300000000L}, NULL);   /* the server has taken them in */
    reply r = http(sv, (call){.path = "/", .from = "127.0.0.2"});
    long status = r.status;
    double seconds = r.seconds;
    reply_free(&r);
    for (int i = 0; i < SLOW_CONNECTIONS; i++)
        if (fds[i] >= 0) close(fds[i]);
    if (status != 200 || seconds > 1.0)
        fail_msg("%d slow connections from %d address(es) (%d connected): GET / got %ld after %.2f s", SLOW_CONNECTIONS,
                 spread, open_ok, status, seconds);
}

static void test_slow_connections(void **state)
{
    raise_file_limit();
    char db[600];
    server sv;
    serve_fresh(&sv, db, "attack-slow.db", NULL);
    for (int i = 0; i < 8; i++) assert_int_equal(status_of(&sv, (call){.path = "/"}), 200);   /* rendered, cached */
    flood_then_get(&sv, 1, 1);    /* one client address: held to its limit */
    nanosleep(&(struct timespec){0, 200000000L}, NULL);
    flood_then_get(&sv, 10, 20);  /* 20 addresses, 50 each: all under the limit, all held */
    finish(&sv, db);
}

/* A body sent one byte at a time, each well within the idle timeout, is cut
 * off at the body deadline. */
static void test_slow_body(void **state)
{
    char db[600];
    server sv;
    serve_fresh(&sv, db, "attack-body.db", "--timeout 5 --body-deadline 2");
    int fd = slow_client(&sv, "127.0.0.1", 0);
    assert_true(fd >= 0);
    const char head[] = "POST /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TOKEN
                        "\r\nContent-Length: 1000\r\n\r\n";
    assert_true(write(fd, head, sizeof head - 1) == (ssize_t)(sizeof head - 1));
    double t0 = now_s(), closed = -1;
    while (now_s() - t0 < 8 && closed < 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 400) > 0) {
            char buf[256];
            if (read(fd, buf, sizeof buf) <= 0) closed = now_s() - t0;
        } else if (write(fd, "{", 1) < 0) {
            closed = now_s() - t0;
        }
    }
    close(fd);
    if (closed < 0 || closed > 4) fail_msg("a body dribbled for %.1f s was not cut off at its 2 s deadline", closed);
    finish(&sv, db);
}

/* ---- the registry file under the server -------------------------------------------------------- */


/* 64 connections from each of 18 addresses (127.0.0.2-19), each sending part
 * of its headers and then a byte every half second (never idle), against a
 * server that may hold 896 connections (ulimit -n 1024): a GET from another
 * address is answered at once (the longest header waits are closed while most
 * connections wait), and every slow connection is closed by the header
 * deadline (2 s), in bounded time. */
#define HDR_ADDRS 18
#define HDR_PER_ADDR 64
static void test_slow_headers(void **state)
{
    raise_file_limit();
    char db[600];
    server sv;
    start_prefix = "ulimit -n 1024;";
    serve_fresh(&sv, db, "attack-headers.db", "--header-deadline 2 --max-per-client 64");
    start_prefix = "";
    assert_int_equal(status_of(&sv, (call){.path = "/"}), 200);
    static int fds[HDR_ADDRS * HDR_PER_ADDR];
    int n = 0, connected = 0;
    double t0 = now_s();
    for (int a = 0; a < HDR_ADDRS; a++)
        for (int k = 0; k < HDR_PER_ADDR; k++) {
            char from[32];
            snprintf(from, sizeof from, "127.0.0.%d", 2 + a);
            fds[n] = slow_client(&sv, from, 1);
            connected += fds[n++] >= 0;
        }
    double opened = now_s() - t0;
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    reply r = http(&sv, (call){.path = "/", .from = "127.0.0.1"});
    long status = r.status;
    double seconds = r.seconds;
    reply_free(&r);
    if (status != 200 || seconds > 1.5)
        fail_msg("%d slow connections (%d connected in %.1f s) from %d addresses: GET / got %ld after %.2f s",
                 HDR_ADDRS * HDR_PER_ADDR, connected, opened, HDR_ADDRS, status, seconds);
    /* A byte every half second on every slow connection (the idle timeout never fires) until the server
     * has closed them all: the deadline is 2 s from each one's start; 6 s bound the test. */
    int open_now = connected;
    while (open_now && now_s() - t0 < 6.0) {
        open_now = 0;
        for (int i = 0; i < n; i++) {
            if (fds[i] < 0) continue;
            char b;
            ssize_t got = recv(fds[i], &b, 1, MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
                send(fds[i], "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
                close(fds[i]);
                fds[i] = -1;
                continue;
            }
            open_now++;
        }
        if (open_now) nanosleep(&(struct timespec){0, 500000000L}, NULL);
    }
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
    if (open_now) fail_msg("%d of %d slow connections still open %.1f s after they started", open_now, connected,
                           now_s() - t0);
    assert_int_equal(kill(sv.pid, 0), 0);   /* up, and answering */
    assert_int_equal(status_of(&sv, (call){.path = "/"}), 200);
    finish(&sv, db);
}

/* A registry that cannot grow (the server's file size limit, RLIMIT_FSIZE,
 * below what a push writes): the push is answered 507, the server stays up
 * (SIGXFSZ ignored), pages still answer, and `runs push` says it in one line
 * with exit 2. */
static void test_full_disk(void **state)
{
    char db[600];
    server sv;
    fx_path(db, sizeof db, "attack-full.db");
    make_registry(db);
    start_fsize = 40 * 1024;   /* room for SQLite's 32 KiB shared-memory index, not for a push's log */
    int started = start(&sv, db, NULL);
    start_fsize = 0;
    assert_int_equal(started, 0);
    /* Runs pushed until one does not fit (the first, or one of the next few): 507, never 500. */
    long status = 0;
    for (int i = 0; i < 20 && status != 507; i++) {
        char *t = manifest_text(10 + i, 1.0 + 0.01 * i, 10 + i);
        reply r = http(&sv, (call){.path = "/api/runs", .body = t, .headers = {"Authorization: Bearer " TOKEN}});
        free(t);
        status = r.status;
        if (status != 201 && status != 507) fail_msg("push %d to a registry that cannot grow: %ld %s", i, status,
                                                     r.body ? r.body : "");
        if (status == 507) {
            assert_non_null(strstr(r.body, "\"status\":507"));
            assert_non_null(strstr(r.body, "the disk is full or the file size limit was reached"));
        }
        reply_free(&r);
    }
    assert_int_equal(status, 507);
    assert_int_equal(kill(sv.pid, 0), 0);   /* SIGXFSZ did not end it */
    assert_int_equal(status_of(&sv, (call){.path = "/"}), 200);
    long again = push(&sv, m3_text);
    assert_true(again == 507 || again == 201);
    /* The CLI's push: one line, exit 2. */
    char dir[400], cmd[2048], out[4096], err[4096];
    fx_path(dir, sizeof dir, "attack-full-cli");
    tu_fresh_dir(dir);
    char mpath[700];
    snprintf(mpath, sizeof mpath, "%s/m2.json", dir);
    char e2[RG_ERRLEN];
    assert_int_equal(rg_write_file_atomic(mpath, m2_text, strlen(m2_text), e2, sizeof e2), 0);
    snprintf(cmd, sizeof cmd, "runs push %s m2.json --token-file '%s'", sv.base, tokfile);
    int rc = tu_run_captured(dir, out, sizeof out, err, sizeof err, "%s", cmd);
    if (rc != 2 || tu_count_lines(err) != 1 || !strstr(err, "507")) fail_msg("runs push: exit %d: %s", rc, err);
    tu_rm_rf(dir);
    assert_int_equal(status_of(&sv, (call){.path = "/runs/1"}), 200);
    finish(&sv, db);
}

/* The run ids a registry file holds. */
static int has_run(const char *path, int64_t id)
{
    char err[RG_ERRLEN];
    rg_registry *g;
    if (rg_registry_open(path, 0, &g, err, sizeof err)) fail_msg("%s", err);
    rg_run_row row;
    int rc = rg_registry_get(g, id, &row, NULL, err, sizeof err);
    rg_registry_close(g);
    return rc == 0;
}

static void test_registry_replaced(void **state)
{
    char db[600], kept[600], other[600];
    fx_path(db, sizeof db, "attack-swap.db");
    fx_path(kept, sizeof kept, "attack-swap-kept.db");
    fx_path(other, sizeof other, "attack-swap-other.db");
    make_registry(db);
    make_registry(other);
    unlink(kept);
    assert_int_equal(link(db, kept), 0);   /* the server's file, whatever happens to its name */
    server sv;
    assert_int_equal(start(&sv, db, NULL), 0);
    assert_int_equal(push(&sv, m2_text), 201);
    /* Replaced: another registry renamed over the name. */
    assert_int_equal(rename(other, db), 0);
    for (int i = 0; i < 6; i++) {   /* every worker thread, whatever it has open */
        assert_int_equal(push(&sv, m3_text), 503);
        assert_int_equal(api_note(&sv, "{\"text\":\"not acknowledged\"}"), 503);
    }
    stop(&sv);   /* a clean stop: the WAL goes into the server's file */
    /* Nothing acknowledged was lost: it is in the file the server started
     * with; nothing refused is anywhere. */
    assert_true(has_run(kept, 2));
    assert_false(has_run(kept, 3));
    assert_false(has_run(db, 2));
    assert_false(has_run(db, 3));
    remove_registry(kept);
    /* Deleted. */
    assert_int_equal(start(&sv, db, NULL), 0);
    assert_int_equal(api_note(&sv, "{\"text\":\"acknowledged\"}"), 201);
    remove_registry(db);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(push(&sv, m3_text), 503);
        assert_int_equal(api_note(&sv, "{\"text\":\"not acknowledged\"}"), 503);
    }
    stop(&sv);
}

static void test_registry_read_only(void **state)
{
    char db[600];
    fx_path(db, sizeof db, "attack-ro.db");
    make_registry(db);
    assert_int_equal(chmod(db, 0444), 0);
    server sv;
    assert_int_equal(start(&sv, db, NULL), 0);
    assert_int_equal(status_of(&sv, (call){.path = "/runs/1"}), 200);
    assert_int_equal(push(&sv, m2_text), 503);
    assert_int_equal(api_note(&sv, "{\"text\":\"x\"}"), 503);
    stop(&sv);
    chmod(db, 0644);
    remove_registry(db);
}

static void test_registry_busy(void **state)
{
    char db[600];
    server sv;
    serve_fresh(&sv, db, "attack-busy.db", NULL);
    assert_int_equal(status_of(&sv, (call){.path = "/runs/1"}), 200);   /* WAL set up */
    sqlite3 *lock;
    assert_int_equal(sqlite3_open(db, &lock), SQLITE_OK);
    assert_int_equal(sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    reply r = http(&sv, (call){.path = "/api/runs/1/notes", .body = "{\"text\":\"waits\"}",
                               .headers = {"Authorization: Bearer " TOKEN}});
    sqlite3_exec(lock, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(lock);
    if (r.status != 503) fail_msg("a write to a locked registry: %ld (%s)", r.status, r.body ? r.body : "");
    assert_non_null(strstr(r.body, "busy"));
    reply_free(&r);
    assert_int_equal(api_note(&sv, "{\"text\":\"after\"}"), 201);
    finish(&sv, db);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csrf_not_from_token), cmocka_unit_test(test_allow_and_nul),
        cmocka_unit_test(test_cache_ignores_host),  cmocka_unit_test(test_cache_capped),
        cmocka_unit_test(test_slow_connections),    cmocka_unit_test(test_slow_body),
        cmocka_unit_test(test_slow_headers),        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_registry_replaced),   cmocka_unit_test(test_registry_read_only),
        cmocka_unit_test(test_registry_busy),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    stop_all();
    curl_global_cleanup();
    return rc;
}
