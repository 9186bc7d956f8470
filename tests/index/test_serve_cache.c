/* SPDX-License-Identifier: Apache-2.0 */
/* test_serve_cache.c -- the index's page cache through rg_serve_route: keyed
 * by path alone (any number of Host headers: one entry, the same bytes) and
 * never above its byte cap (many distinct paths); and the forms' CSRF value
 * belongs to the server, not to the token. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "serve.h"
#include "test_record_fixture.h"

#define TOKEN "cache-token-0123456789abcdef"

static char db[600], tokfile[600];

static int setup(void **state)
{
    char err[RG_ERRLEN];
    fx_path(db, sizeof db, "cache.db");
    fx_path(tokfile, sizeof tokfile, "cache-token");
    if (rg_write_file_atomic(tokfile, TOKEN "\n", strlen(TOKEN) + 1, err, sizeof err)) return -1;
    if (chmod(tokfile, 0600)) return -1;   /* a secret: the server refuses one others may read */
    unlink(db);
    rg_registry *g;
    if (rg_registry_open(db, 1, &g, err, sizeof err)) return -1;
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 1);
    char *t = m ? rg_json_print(m, 0, err, sizeof err) : NULL;
    int64_t id;
    int existed;
    int rc = t ? rg_registry_import(g, t, strlen(t), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err) : -1;
    free(t);
    cJSON_Delete(m);
    rg_registry_close(g);
    return rc;
}

static int teardown(void **state)
{
    tu_unlink_db(db);
    unlink(tokfile);
    return 0;
}

static rg_server *make(size_t cache_bytes)
{
    rg_serve_options o = {.db_path = db, .listen = "127.0.0.1:0", .write_token_file = tokfile,
                          .cache_bytes = cache_bytes};
    rg_server *s;
    char err[RG_ERRLEN];
    if (rg_serve_create(&o, &s, err, sizeof err)) fail_msg("%s", err);
    return s;
}

static rg_response get(rg_server *s, const char *path, const char *host)
{
    rg_request q = {.method = "GET", .path = path, .host = host};
    rg_response r;
    rg_serve_route(s, &q, &r);
    assert_int_equal(r.status, 200);
    return r;
}

static void test_host_is_no_key(void **state)
{
    rg_server *s = make(0);
    rg_response first = get(s, "/runs/1", "a.example");
    size_t entries, bytes;
    for (int i = 0; i < 300; i++) {
        char host[64];
        snprintf(host, sizeof host, "attacker-%d.example:%d", i, 8000 + i);
        rg_response r = get(s, "/runs/1", host);
        assert_int_equal(r.len, first.len);
        assert_memory_equal(r.body, first.body, r.len);
        free(r.body);
    }
    assert_int_equal(rg_serve_cache_stats(s, &entries, &bytes), 0);
    assert_int_equal(entries, 1);
    assert_int_equal(bytes, first.len);
    free(first.body);
    rg_serve_destroy(s);
}

static void test_byte_cap(void **state)
{
    rg_response one = {0};
    rg_server *big = make(0);
    one = get(big, "/compare/1/1", NULL);
    rg_serve_destroy(big);
    size_t cap = one.len * 3 + one.len / 2;   /* room for three pages */
    rg_server *s = make(cap);
    size_t entries = 0, bytes = 0, most = 0;
    char path[64];
    for (int a = 0; a < 15; a++)
        for (int b = 0; b < 15; b++) {
            snprintf(path, sizeof path, "/compare/%.*s1/%.*s1", a, "00000000000000", b, "00000000000000");
            rg_response r = get(s, path, NULL);
            assert_int_equal(r.len, one.len);
            free(r.body);
            assert_int_equal(rg_serve_cache_stats(s, &entries, &bytes), 0);
            assert_true(bytes <= cap);
            most = entries > most ? entries : most;
        }
    assert_int_equal(most, 3);   /* it caches up to the cap, not beyond */
    free(one.body);
    rg_serve_destroy(s);
    /* A page bigger than the whole cap is served, not kept. */
    s = make(16);
    rg_response r = get(s, "/runs/1", NULL);
    free(r.body);
    assert_int_equal(rg_serve_cache_stats(s, &entries, &bytes), 0);
    assert_int_equal(entries + bytes, 0);
    rg_serve_destroy(s);
}

static void test_csrf_is_the_servers(void **state)
{
    rg_server *a = make(0), *b = make(0);
    char ca[65], cb[65];
    assert_int_equal(rg_serve_form_csrf(a, ca), 0);
    assert_int_equal(rg_serve_form_csrf(b, cb), 0);
    assert_int_equal(strspn(ca, "0123456789abcdef"), 64);
    assert_string_not_equal(ca, cb);   /* one token, two servers */
    assert_int_equal(rg_serve_form_csrf(NULL, ca), -1);
    assert_string_equal(ca, "");
    rg_serve_destroy(a);
    rg_serve_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_is_no_key),
        cmocka_unit_test(test_byte_cap),
        cmocka_unit_test(test_csrf_is_the_servers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
