/* SPDX-License-Identifier: Apache-2.0 */
/* test_serve_openapi.c -- the HTTP API as documented: /api/openapi.json is an
 * OpenAPI 3.1 document listing exactly the routes the server dispatches
 * (routes.h), both ways, and every route of the table answers something
 * other than "no such page"; runs are named by content (the first 8 hex
 * digits of the run digest) as well as by local id, a prefix two runs share
 * is a 404 naming both; `serve --base-url` makes the citations' permalinks. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <sqlite3.h>
#include <unistd.h>

#include "test_util.h"

#include "routes.h"
#include "serve.h"
#include "test_record_fixture.h"

static char db[600];
static char def[256], hex1[9];

static int setup(void **state)
{
    fx_path(db, sizeof db, "openapi.db");
    rg_registry *g = fx_fresh_registry_at(db);
    if (!g) return -1;
    fx_import(g, "NVIDIA H200", 1, 1.0, 1);
    fx_import(g, "NVIDIA H200", 2, 1.2, 2);
    rg_run_row row;
    char err[RG_ERRLEN];
    int rc = rg_registry_get(g, 1, &row, NULL, err, sizeof err);
    rg_registry_close(g);
    if (rc) return -1;
    snprintf(def, sizeof def, "%s", row.definition);
    snprintf(hex1, sizeof hex1, "%.8s", row.run_digest + 7);
    return 0;
}

static int teardown(void **state) { return tu_unlink_db(db); }

static rg_server *server(const char *base_url)
{
    rg_serve_options o = {.db_path = db, .base_url = base_url};
    rg_server *s;
    char err[RG_ERRLEN];
    if (rg_serve_create(&o, &s, err, sizeof err)) fail_msg("serve: %s", err);
    return s;
}

static int get(rg_server *s, const char *method, const char *path, rg_response *r)
{
    rg_request q = {.method = method, .path = path};
    rg_serve_route(s, &q, r);
    return r->status;
}

/* The table's pattern made into a path that names run 1 and the fixture's problem. */
static void concrete(const char *pattern, char *out, size_t n)
{
    size_t at = 0;
    for (const char *p = pattern; *p && at + 1 < n;) {
        if (*p != '{') {
            out[at++] = *p++;
            continue;
        }
        const char *close = strchr(p, '}');
        const char *v = !strncmp(p, "{definition}", 12) ? def : "1";
        at += (size_t)snprintf(out + at, n - at, "%s", v);
        p = close + 1;
    }
    out[at < n ? at : n - 1] = 0;
}

static void test_document_matches_routes(void **state)
{
    rg_server *s = server(NULL);
    rg_response r;
    assert_int_equal(get(s, "GET", "/api/openapi.json", &r), 200);
    assert_string_equal(r.content_type, "application/json");
    cJSON *doc = cJSON_ParseWithLength(r.body, r.len);
    free(r.body);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "openapi")->valuestring, "3.1.0");
    const cJSON *paths = cJSON_GetObjectItem(doc, "paths");
    assert_non_null(paths);
    size_t n;
    const rg_route *routes = rg_routes(&n);
    assert_int_equal(n, RG_ROUTE_COUNT);
    /* Every route of the table is in the document, with its method... */
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(routes[i].id, (rg_route_id)i);
        const cJSON *item = cJSON_GetObjectItem(paths, routes[i].pattern);
        char m[8];
        snprintf(m, sizeof m, "%s", routes[i].method);
        for (char *c = m; *c; c++) *c = (char)tolower((unsigned char)*c);
        if (!item || !cJSON_GetObjectItem(item, m))
            fail_msg("route %s %s is not in /api/openapi.json", routes[i].method, routes[i].pattern);
    }
    /* ... and every operation of the document is a route of the table. */
    int ops = 0;
    for (const cJSON *item = paths->child; item; item = item->next)
        for (const cJSON *op = item->child; op; op = op->next) {
            int found = 0;
            for (size_t i = 0; i < n && !found; i++) {
                char m[8];
                snprintf(m, sizeof m, "%s", routes[i].method);
                for (char *c = m; *c; c++) *c = (char)tolower((unsigned char)*c);
                found = !strcmp(routes[i].pattern, item->string) && !strcmp(m, op->string);
            }
            if (!found) fail_msg("/api/openapi.json documents %s %s, which the server does not route", op->string,
                                 item->string);
            ops++;
        }
    assert_int_equal(ops, (int)n);
    /* Every reference points at a component that exists. */
    char *text = cJSON_PrintUnformatted(doc);
    for (const char *p = text; (p = strstr(p, "\"$ref\":\"#/components/")) != NULL; p++) {
        char kind[32], name[64];
        assert_int_equal(sscanf(p, "\"$ref\":\"#/components/%31[^/]/%63[^\"]", kind, name), 2);
        const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "components"), kind), name);
        if (!c) fail_msg("dangling $ref #/components/%s/%s", kind, name);
    }
    free(text);
    cJSON_Delete(doc);
    /* The table is what the server dispatches: each route, made concrete, is routed (not "no such page"). */
    for (size_t i = 0; i < n; i++) {
        char path[600];
        concrete(routes[i].pattern, path, sizeof path);
        int st = get(s, routes[i].method, path, &r);
        if (st == 404) fail_msg("%s %s (%s): 404 %s", routes[i].method, path, routes[i].pattern, r.body);
        free(r.body);
        const char *param[2];
        size_t len[2];
        assert_int_equal(rg_route_match(routes[i].method, path, param, len), (int)i);
    }
    assert_int_equal(get(s, "GET", "/nope", &r), 404);
    free(r.body);
    assert_int_equal(rg_route_match("GET", "/runs/", (const char *[2]){0}, (size_t[2]){0}), -1);
    assert_int_equal(rg_route_match("GET", "/runs/1/x", (const char *[2]){0}, (size_t[2]){0}), -1);
    assert_int_equal(rg_route_match("HEAD", "/runs/1.json", (const char *[2]){0}, (size_t[2]){0}), RG_ROUTE_MANIFEST);
    assert_int_equal(rg_route_match("DELETE", "/", (const char *[2]){0}, (size_t[2]){0}), -1);
    rg_serve_destroy(s);
}

static void test_content_urls(void **state)
{
    rg_server *s = server(NULL);
    rg_response r;
    char path[64];
    snprintf(path, sizeof path, "/runs/%s", hex1);
    assert_int_equal(get(s, "GET", path, &r), 200);
    assert_non_null(strstr(r.body, "ropegrad run #1"));   /* the citation names run 1 */
    free(r.body);
    snprintf(path, sizeof path, "/runs/%s.json", hex1);
    assert_int_equal(get(s, "GET", path, &r), 200);
    free(r.body);
    snprintf(path, sizeof path, "/api/runs/%s", hex1);
    assert_int_equal(get(s, "GET", path, &r), 200);
    free(r.body);
    snprintf(path, sizeof path, "/compare/%s/2", hex1);
    assert_int_equal(get(s, "GET", path, &r), 200);
    free(r.body);
    snprintf(path, sizeof path, "/history/%s", hex1);
    assert_int_equal(get(s, "GET", path, &r), 200);
    free(r.body);
    /* A prefix no run has: 404 saying so (an all-digit one is then a local id). */
    const char *none = strcmp(hex1, "abcdef01") ? "abcdef01" : "abcdef02";
    snprintf(path, sizeof path, "/api/runs/%s", none);
    assert_int_equal(get(s, "GET", path, &r), 404);
    assert_non_null(strstr(r.body, "no run has a run digest that starts with"));
    free(r.body);
    assert_int_equal(get(s, "GET", "/api/runs/00000002", &r), 200);   /* no digest starts so: local id 2 */
    free(r.body);
    assert_int_equal(get(s, "GET", "/api/runs/77", &r), 404);
    free(r.body);
    rg_serve_destroy(s);
    /* Two runs whose digests share the prefix (run 2's stored digest rewritten): 404 naming both. */
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE runs SET run_digest = 'sha256:%s%s' WHERE id = 2", hex1,
             "ffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    s = server(NULL);
    snprintf(path, sizeof path, "/runs/%s", hex1);
    assert_int_equal(get(s, "GET", path, &r), 404);
    assert_non_null(strstr(r.body, "2 runs have a run digest that starts with"));
    assert_non_null(strstr(r.body, " #1 #2;"));
    free(r.body);
    assert_int_equal(get(s, "GET", "/runs/1", &r), 200);   /* the local id still names it */
    free(r.body);
    rg_serve_destroy(s);
}

static void test_base_url(void **state)
{
    rg_server *s = server("https://index.example.org/rg");
    rg_response r;
    assert_int_equal(get(s, "GET", "/runs/1", &r), 200);
    char want[96];
    snprintf(want, sizeof want, "https://index.example.org/rg/runs/%s", hex1);
    if (!strstr(r.body, want)) fail_msg("the citation does not hold %s", want);
    assert_null(strstr(r.body, "http://127.0.0.1"));
    free(r.body);
    rg_serve_destroy(s);
    char err[RG_ERRLEN];
    const char *bad[] = {"index.example.org", "ftp://x", "https://", "https://x/", "https://x/a b", "https://x?q=1",
                         "https://x#f", "https://x/\"<script>", "http:///path"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!rg_serve_check_base_url(bad[i], err, sizeof err)) fail_msg("--base-url '%s' taken", bad[i]);
    assert_int_equal(rg_serve_check_base_url("http://127.0.0.1:8080", err, sizeof err), 0);
    rg_serve_options o = {.db_path = db, .base_url = "https://x/"};
    assert_int_equal(rg_serve_create(&o, &s, err, sizeof err), 2);
    char out[4096], e[4096], dir[400];
    fx_path(dir, sizeof dir, "openapi-cli");
    assert_int_equal(tu_fresh_dir(dir), 0);
    assert_int_equal(tu_run_captured(dir, out, sizeof out, e, sizeof e, "serve --db '%s' --base-url 'https://x/'", db),
                     2);
    tu_rm_rf(dir);
    assert_int_equal(tu_count_lines(e), 1);
    assert_non_null(strstr(e, "--base-url"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document_matches_routes),
        cmocka_unit_test(test_content_urls),
        cmocka_unit_test(test_base_url),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
