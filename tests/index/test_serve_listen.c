/* SPDX-License-Identifier: Apache-2.0 */
/* test_serve_listen.c -- `serve --listen` (listen.h): localhost:0 binds
 * 127.0.0.1 and answers there, [::1]:0 binds IPv6 loopback and answers
 * there (skipped where the machine has no IPv6 loopback), a name that does
 * not resolve is refused, a name that resolves to an address that is not
 * loopback is refused (rg_listen_pick on a list like getaddrinfo's), and
 * literal addresses keep their rules. Loopback only. */
#define _POSIX_C_SOURCE 200809L
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "test_util.h"

#include "listen.h"
#include "serve.h"
#include "test_record_fixture.h"

#define TOKEN "listen-test-token-0123456789"

static char db[600];

static int setup(void **state)
{
    fx_path(db, sizeof db, "listen.db");
    return fx_one_run_registry(db);
}

static int teardown(void **state) { return tu_unlink_db(db); }

static size_t sink(char *p, size_t size, size_t n, void *out)
{
    (void)p;
    (void)out;
    return size * n;
}

/* The status of GET url (0: no answer). */
static long status_of(const char *url)
{
    CURL *c = curl_easy_init();
    long status = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    return status;
}

/* Serves on listen and GETs / at the printed address: host is what a URL names. */
static void serve_and_get(const char *listen, const char *host)
{
    rg_serve_options o = {.db_path = db, .listen = listen};
    rg_server *s;
    char err[RG_ERRLEN];
    if (rg_serve_create(&o, &s, err, sizeof err) || rg_serve_start(s, err, sizeof err)) fail_msg("%s: %s", listen, err);
    assert_string_equal(rg_serve_host(s), host);
    assert_true(rg_serve_port(s) > 0);
    char url[128];
    snprintf(url, sizeof url, "http://%s:%d/", rg_serve_host(s), rg_serve_port(s));
    assert_int_equal(status_of(url), 200);
    rg_serve_destroy(s);
}

/* The default worker count follows the machine: one per online CPU, 2 to 64. */
static void test_default_threads(void **state)
{
    (void)state;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned want = n < 2 ? 2u : n > 64 ? 64u : (unsigned)n;
    assert_int_equal(rg_serve_default_threads(), want);
}

static void test_localhost(void **state) { serve_and_get("localhost:0", "127.0.0.1"); }

/* Whether this machine can bind the IPv6 loopback address. */
static int have_ipv6_loopback(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static void test_ipv6_loopback(void **state)
{
    if (!have_ipv6_loopback()) {
        print_message("skip: this machine cannot bind ::1 (no IPv6 loopback)\n");
        skip();
    }
    serve_and_get("[::1]:0", "[::1]");
}

static void test_refused(void **state)
{
    rg_listen_addr a;
    char err[RG_ERRLEN];
    assert_int_equal(rg_listen_parse("no-such-host.invalid:8080", &a, err, sizeof err), 2);
    assert_non_null(strstr(err, "does not resolve"));
    const char *bad[] = {"[::1]8080", "[127.0.0.1]:80", "::1:8080", "localhost:", "localhost:65536", "localhost:+80",
                         ":8080", "[]:80", "localhost:8080x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        if (rg_listen_parse(bad[i], &a, err, sizeof err) != 2 || !strstr(err, bad[i])) fail_msg("%s: '%s'", bad[i], err);
    }
    rg_serve_options o = {.db_path = db, .listen = "no-such-host.invalid:0"};
    rg_server *s;
    assert_int_equal(rg_serve_create(&o, &s, err, sizeof err), 2);
    assert_null(s);
}

/* An addrinfo list of the given IPv4 (v4 = 1) and IPv6 addresses, as getaddrinfo gives. */
typedef struct fake {
    struct addrinfo ai[3];
    struct sockaddr_storage sa[3];
} fake;

static void add(fake *f, int i, const char *text)
{
    int v6 = strchr(text, ':') != NULL;
    memset(&f->ai[i], 0, sizeof f->ai[i]);
    memset(&f->sa[i], 0, sizeof f->sa[i]);
    f->ai[i].ai_family = v6 ? AF_INET6 : AF_INET;
    f->ai[i].ai_addr = (struct sockaddr *)&f->sa[i];
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&f->sa[i];
        a->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, text, &a->sin6_addr), 1);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&f->sa[i];
        a->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, text, &a->sin_addr), 1);
    }
    if (i > 0) f->ai[i - 1].ai_next = &f->ai[i];
}

static void test_name_rule(void **state)
{
    fake f;
    rg_listen_addr a;
    char err[RG_ERRLEN];
    add(&f, 0, "127.0.0.1");
    add(&f, 1, "10.1.2.3");   /* a name that also points beyond this machine */
    assert_int_equal(rg_listen_pick("host.example:80", f.ai, 80, &a, err, sizeof err), 2);
    assert_non_null(strstr(err, "10.1.2.3, not a loopback address"));
    add(&f, 0, "::1");
    add(&f, 1, "127.0.0.2");   /* IPv4 first */
    assert_int_equal(rg_listen_pick("lo:80", f.ai, 80, &a, err, sizeof err), 0);
    assert_string_equal(a.host, "127.0.0.2");
    assert_int_equal(ntohs(((struct sockaddr_in *)&a.sa)->sin_port), 80);
    add(&f, 0, "::1");   /* IPv6 only */
    assert_int_equal(rg_listen_pick("lo6:81", f.ai, 81, &a, err, sizeof err), 0);
    assert_string_equal(a.host, "[::1]");
    assert_int_equal(a.sa.ss_family, AF_INET6);
    add(&f, 0, "2001:db8::1");
    assert_int_equal(rg_listen_pick("v6.example:80", f.ai, 80, &a, err, sizeof err), 2);
    assert_int_equal(rg_listen_pick("empty:80", NULL, 80, &a, err, sizeof err), 2);
}

/* Literal addresses keep their rules: any IPv4 or bracketed IPv6 address, as given. */
static void test_literals(void **state)
{
    rg_listen_addr a;
    char err[RG_ERRLEN];
    assert_int_equal(rg_listen_parse("10.1.2.3:8080", &a, err, sizeof err), 0);
    assert_string_equal(a.host, "10.1.2.3");
    assert_false(a.any);
    assert_int_equal(rg_listen_parse("0.0.0.0:0", &a, err, sizeof err), 0);
    assert_true(a.any);
    assert_int_equal(rg_listen_parse("[::]:8080", &a, err, sizeof err), 0);
    assert_true(a.any);
    assert_string_equal(a.host, "[::]");
    assert_int_equal(rg_listen_parse(NULL, &a, err, sizeof err), 0);   /* the default */
    assert_string_equal(a.host, "127.0.0.1");
    assert_int_equal(ntohs(((struct sockaddr_in *)&a.sa)->sin_port), 8080);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_localhost),   cmocka_unit_test(test_ipv6_loopback), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_name_rule),   cmocka_unit_test(test_literals), cmocka_unit_test(test_default_threads),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
