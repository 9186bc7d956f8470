/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_copies.c -- issue 24 points 3 and 8: copies of one run.
 *   - an unsigned, differently titled first copy does not block a signed
 *     later one: its signature is added (key id, when received) and shown by
 *     the run's JSON, page and `runs show`; the title it differs in is kept
 *     as a conflict; pushing it again adds nothing;
 *   - a registry of schema 3 migrates: the signatures its manifests carry
 *     are listed;
 *   - after `runs sign` (rg_manifest_sign + rg_registry_replace_manifest),
 *     the served /runs/ID.json, /api/runs/ID, the page (cached before the
 *     signature) and the static site carry the signature. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "test_util.h"

#include "model.h"
#include "render.h"
#include "serve.h"
#include "site.h"
#include "test_record_fixture.h"

static char dir[400], db[500], key1[500], key2[500];
static char kid1[RG_DIGEST_LEN], kid2[RG_DIGEST_LEN];

static int setup(void **state)
{
    (void)state;
    char err[RG_ERRLEN];
    fx_path(dir, sizeof dir, "copies");
    if (tu_fresh_dir(dir)) return -1;
    snprintf(db, sizeof db, "%s/runs.db", dir);
    snprintf(key1, sizeof key1, "%s/one.key", dir);
    snprintf(key2, sizeof key2, "%s/two.key", dir);
    if (rg_keygen(key1, kid1, err, sizeof err) || rg_keygen(key2, kid2, err, sizeof err)) {
        fprintf(stderr, "keygen: %s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(dir);
}

static rg_registry *fresh_registry(void)
{
    rg_registry *g = fx_fresh_registry_at(db);
    if (!g) fail_msg("cannot open a fresh registry %s", db);
    return g;
}

/* The fixture run's manifest as text: retitled (title != NULL) and signed
 * with key (NULL: unsigned). Every copy has the same run digest. */
static char *copy_text(const char *title, const char *key)
{
    char err[RG_ERRLEN], kid[RG_DIGEST_LEN];
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 1);
    assert_non_null(m);
    if (title) {
        cJSON *md = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "run"), "metadata");
        cJSON_ReplaceItemInObject(md, "title", cJSON_CreateString(title));
    }
    if (key && rg_manifest_sign(m, key, kid, err, sizeof err)) fail_msg("sign: %s", err);
    char *t = rg_json_print(m, 1, err, sizeof err);
    cJSON_Delete(m);
    assert_non_null(t);
    return t;
}

static int import(rg_registry *g, const char *text, int64_t *id)
{
    char err[RG_ERRLEN];
    int existed = -1;
    if (rg_registry_import(g, text, strlen(text), RG_EVIDENCE_IMPORTED, id, &existed, err, sizeof err))
        fail_msg("import: %s", err);
    return existed;
}

static void expect_contains(const char *what, const char *text, const char *needle)
{
    if (!text || !strstr(text, needle)) fail_msg("%s lacks '%s': %.400s", what, needle, text ? text : "(null)");
}

static void test_signed_copy_after_unsigned(void **state)
{
    (void)state;
    rg_registry *g = fresh_registry();
    char err[RG_ERRLEN];
    char *first = copy_text(NULL, NULL), *second = copy_text("a different title", key1);
    int64_t id1, id2;
    assert_int_equal(import(g, first, &id1), 0);
    int existed = import(g, second, &id2);
    assert_int_equal(id2, id1);
    assert_true(existed & 1);
    assert_true(existed & RG_STORED_SIGNED);
    assert_true(existed & RG_STORED_CONFLICT);

    rg_run_signature *sigs;
    size_t ns;
    assert_int_equal(rg_registry_signatures(g, id1, &sigs, &ns, err, sizeof err), 0);
    assert_int_equal(ns, 1);
    assert_string_equal(sigs[0].key_id, kid1);
    assert_true(sigs[0].received_at[0] != 0);
    free(sigs);
    rg_run_conflict *cf;
    size_t nc;
    assert_int_equal(rg_registry_conflicts(g, id1, &cf, &nc, err, sizeof err), 0);
    assert_int_equal(nc, 1);
    assert_string_equal(cf[0].member, "run.metadata");
    expect_contains("the stored side", cf[0].stored, "ropegrad cuda kernel 1");
    expect_contains("the offered side", cf[0].offered, "a different title");
    rg_run_conflicts_free(cf, nc);

    /* What is served verifies, with the signer's key as the trusted one. */
    char *bytes, pub[800];
    size_t n;
    assert_int_equal(rg_registry_manifest_bytes(g, id1, &bytes, &n, err, sizeof err), 0);
    snprintf(pub, sizeof pub, "%s.pub", key1);
    cJSON *doc;
    if (rg_manifest_parse_verified(bytes, n, pub, &doc, NULL, err, sizeof err)) fail_msg("served copy: %s", err);
    cJSON_Delete(doc);
    free(bytes);

    /* The same copy again adds nothing; a second signer adds a second signature. */
    assert_int_equal(import(g, second, &id2), 1);
    char *third = copy_text(NULL, key2);
    assert_int_equal(import(g, third, &id2), 1 | RG_STORED_SIGNED);
    assert_int_equal(rg_registry_signatures(g, id1, &sigs, &ns, err, sizeof err), 0);
    assert_int_equal(ns, 2);
    free(sigs);
    assert_int_equal(rg_registry_conflicts(g, id1, &cf, &nc, err, sizeof err), 0);
    assert_int_equal(nc, 1);
    rg_run_conflicts_free(cf, nc);

    /* Shown: the run's JSON and page. */
    rg_run_view v;
    assert_int_equal(rg_model_run(g, id1, &v, err, sizeof err), 0);
    char *api = rg_api_run(&v, err, sizeof err);
    expect_contains("/api/runs/ID", api, kid1);
    expect_contains("/api/runs/ID", api, kid2);
    expect_contains("/api/runs/ID", api, "\"conflicts\"");
    expect_contains("/api/runs/ID", api, "a different title");
    rg_render_ctx ctx;
    rg_render_ctx_init(&ctx, 0);
    char *page = rg_render_run(&ctx, &v, err, sizeof err);
    expect_contains("the run page", page, kid1);
    expect_contains("the run page", page, "Conflict in <code>run.metadata</code>");
    free(api);
    free(page);
    rg_model_run_free(&v);
    rg_registry_close(g);

    /* and `runs show`. */
    char out[65536], errt[4096];
    int rc = tu_run_captured(dir, out, sizeof out, errt, sizeof errt, "runs show 1 --db %s", db);
    if (rc) fail_msg("runs show exited %d: %s", rc, errt);
    expect_contains("runs show", out, kid1);
    expect_contains("runs show", out, "conflict        run.metadata");
    free(first);
    free(second);
    free(third);
}

/* A second copy whose signature does not verify changes nothing. */
static void test_bad_signature_copy_refused(void **state)
{
    (void)state;
    rg_registry *g = fresh_registry();
    char err[RG_ERRLEN];
    char *first = copy_text(NULL, NULL), *signed_copy = copy_text(NULL, key1);
    int64_t id;
    assert_int_equal(import(g, first, &id), 0);
    char *v = strstr(signed_copy, "\"value\":");
    assert_non_null(v);
    v = strchr(v + 8, '"');
    v[1] = v[1] == 'A' ? 'B' : 'A';
    int existed;
    assert_int_not_equal(rg_registry_import(g, signed_copy, strlen(signed_copy), RG_EVIDENCE_IMPORTED, &id, &existed,
                                            err, sizeof err),
                         0);
    rg_run_signature *sigs;
    size_t ns;
    assert_int_equal(rg_registry_signatures(g, 1, &sigs, &ns, err, sizeof err), 0);
    assert_int_equal(ns, 0);
    free(sigs);
    rg_registry_close(g);
    free(first);
    free(signed_copy);
}

/* A registry as schema 3 left it: no signature or conflict tables. */
static void test_schema3_migrates(void **state)
{
    (void)state;
    rg_registry *g = fresh_registry();
    char err[RG_ERRLEN];
    char *signed_copy = copy_text(NULL, key2);
    int64_t id;
    assert_int_equal(import(g, signed_copy, &id), 0);
    rg_registry_close(g);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "DROP TABLE run_signatures; DROP TABLE run_conflicts; DROP TABLE run_sources;"
                                     "ALTER TABLE runs DROP COLUMN impl_name; ALTER TABLE runs DROP COLUMN impl_version;"
                                     "ALTER TABLE runs DROP COLUMN run_title; ALTER TABLE runs DROP COLUMN project;"
                                     "ALTER TABLE runs DROP COLUMN author; ALTER TABLE runs DROP COLUMN source_revision;"
                                     "ALTER TABLE runs DROP COLUMN published_at; ALTER TABLE runs DROP COLUMN source_rank;"
                                     "ALTER TABLE runs DROP COLUMN source_group_size;"
                                     "ALTER TABLE runs DROP COLUMN retracted_at; DROP TABLE machine_noise; PRAGMA user_version = 3;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    if (rg_registry_open(db, 0, &g, err, sizeof err)) fail_msg("reopen: %s", err);
    rg_run_signature *sigs;
    size_t ns;
    assert_int_equal(rg_registry_signatures(g, id, &sigs, &ns, err, sizeof err), 0);
    assert_int_equal(ns, 1);
    assert_string_equal(sigs[0].key_id, kid2);
    free(sigs);
    /* Schema 5 filled the names of the runs already stored from their manifests. */
    rg_run_row row;
    assert_int_equal(rg_registry_get(g, id, &row, NULL, err, sizeof err), 0);
    assert_string_equal(row.impl_name, "ropegrad");
    assert_true(row.impl_version[0] != '\0');
    assert_true(row.run_title[0] != '\0');
    assert_string_equal(row.published_at, "");
    assert_int_equal(row.source_rank, 0);
    rg_registry_close(g);
    free(signed_copy);
}

/* Copies signed by eight keys fill a manifest's signatures; a ninth is
 * refused in one line, and the stored run stays readable. */
static void test_ninth_signature_refused(void **state)
{
    (void)state;
    rg_registry *g = fresh_registry();
    char err[RG_ERRLEN], key[600], kid[RG_DIGEST_LEN];
    int64_t id;
    int existed;
    for (int k = 0; k < 9; k++) {
        snprintf(key, sizeof key, "%s/many-%d.key", dir, k);
        unlink(key);
        char pub[700];
        snprintf(pub, sizeof pub, "%s.pub", key);
        unlink(pub);
        if (rg_keygen(key, kid, err, sizeof err)) fail_msg("keygen: %s", err);
        char *t = copy_text(NULL, key);
        int rc = rg_registry_import(g, t, strlen(t), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err);
        free(t);
        if (k < 8 && rc) fail_msg("copy %d: %s", k, err);
        if (k == 8) {
            assert_int_equal(rc, 1);   /* refused: the server answers 422 */
            expect_contains("the refusal", err, "more than 8 signatures");
            assert_null(strchr(err, '\n'));
        }
    }
    rg_run_row row;
    rg_manifest m;
    assert_int_equal(rg_registry_get(g, id, &row, &m, err, sizeof err), 0);
    assert_int_equal(m.n_signatures, 8);
    rg_manifest_free(&m);
    rg_registry_close(g);
}

/* POST /api/runs of a signed copy of a stored unsigned run: 200, the
 * signature added; a copy whose signature was altered: 422. */
static void test_push_adds_signature(void **state)
{
    (void)state;
    rg_registry *g = fresh_registry();
    char err[RG_ERRLEN], tok[600];
    char *first = copy_text(NULL, NULL), *signed_copy = copy_text("pushed later", key1);
    int64_t id;
    assert_int_equal(import(g, first, &id), 0);
    snprintf(tok, sizeof tok, "%s/token", dir);
    static const char token[] = "copies-token-0123456789abcdef";
    assert_int_equal(rg_write_file_atomic(tok, token, strlen(token), err, sizeof err), 0);
    chmod(tok, 0600);
    rg_serve_options o = {.db_path = db, .listen = "127.0.0.1:0", .write_token_file = tok};
    rg_server *s;
    if (rg_serve_create(&o, &s, err, sizeof err)) fail_msg("%s", err);
    rg_request q = {.method = "POST", .path = "/api/runs", .authorization = "Bearer copies-token-0123456789abcdef",
                    .body = signed_copy, .body_len = strlen(signed_copy)};
    rg_response r;
    rg_serve_route(s, &q, &r);
    if (r.status != 200) fail_msg("POST: %d %s", r.status, r.body ? r.body : "");
    expect_contains("the answer", r.body, "\"signaturesAdded\":true");
    expect_contains("the answer", r.body, "\"conflict\":true");
    free(r.body);
    char *v = strstr(signed_copy, "\"value\":");
    assert_non_null(v);
    v = strchr(v + 8, '"');
    v[1] = v[1] == 'A' ? 'B' : 'A';
    rg_serve_route(s, &q, &r);
    assert_int_equal(r.status, 422);
    free(r.body);
    rg_serve_destroy(s);
    rg_run_signature *sigs;
    size_t ns;
    assert_int_equal(rg_registry_signatures(g, id, &sigs, &ns, err, sizeof err), 0);
    assert_int_equal(ns, 1);
    free(sigs);
    rg_registry_close(g);
    free(first);
    free(signed_copy);
}

static char *get(rg_server *s, const char *path)
{
    rg_request q = {.method = "GET", .path = path};
    rg_response r;
    rg_serve_route(s, &q, &r);
    if (r.status != 200) fail_msg("GET %s: %d", path, r.status);
    return r.body;
}

/* What `ropegrad runs sign ID --key KEY` does. */
static void sign_stored(rg_registry *g, int64_t id, const char *key)
{
    char err[RG_ERRLEN], kid[RG_DIGEST_LEN], *text;
    assert_int_equal(rg_registry_get_text(g, id, &text, err, sizeof err), 0);
    cJSON *doc = rg_json_parse_strict(text, strlen(text), "stored", err, sizeof err);
    free(text);
    assert_non_null(doc);
    if (rg_manifest_sign(doc, key, kid, err, sizeof err) || rg_registry_replace_manifest(g, id, doc, err, sizeof err))
        fail_msg("sign: %s", err);
    cJSON_Delete(doc);
}

static void test_signed_copy_is_served(void **state)
{
    (void)state;
    rg_registry *g = fresh_registry();
    char err[RG_ERRLEN];
    char *first = copy_text(NULL, NULL);
    int64_t id;
    assert_int_equal(import(g, first, &id), 0);
    rg_serve_options o = {.db_path = db, .listen = "127.0.0.1:0"};
    rg_server *s;
    if (rg_serve_create(&o, &s, err, sizeof err)) fail_msg("%s", err);
    char *before = get(s, "/runs/1");   /* now cached */
    assert_null(strstr(before, kid1));
    free(before);
    int64_t gen0, gen1;
    assert_int_equal(rg_registry_generation(g, &gen0, err, sizeof err), 0);
    sign_stored(g, id, key1);
    assert_int_equal(rg_registry_generation(g, &gen1, err, sizeof err), 0);
    assert_true(gen1 != gen0);

    char *json = get(s, "/runs/1.json"), *page = get(s, "/runs/1"), *api = get(s, "/api/runs/1");
    expect_contains("/runs/1.json", json, kid1);
    expect_contains("/runs/1 (cached before signing)", page, kid1);
    expect_contains("/api/runs/1", api, kid1);
    char pub[800];
    snprintf(pub, sizeof pub, "%s.pub", key1);
    cJSON *doc;
    if (rg_manifest_parse_verified(json, strlen(json), pub, &doc, NULL, err, sizeof err)) fail_msg("served: %s", err);
    cJSON_Delete(doc);
    free(json);
    free(page);
    free(api);
    rg_serve_destroy(s);

    char site[800], *t;
    size_t files, n;
    snprintf(site, sizeof site, "%s/site", dir);
    assert_int_equal(rg_site_write(g, site, &files, err, sizeof err), 0);
    char path[900];
    snprintf(path, sizeof path, "%s/runs/1.json", site);
    t = tu_slurp(path, &n);
    expect_contains("site runs/1.json", t, kid1);
    free(t);
    snprintf(path, sizeof path, "%s/runs/1.html", site);
    t = tu_slurp(path, &n);
    expect_contains("site runs/1.html", t, kid1);
    free(t);
    rg_registry_close(g);
    free(first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signed_copy_after_unsigned),
        cmocka_unit_test(test_bad_signature_copy_refused),
        cmocka_unit_test(test_schema3_migrates),
        cmocka_unit_test(test_ninth_signature_refused),
        cmocka_unit_test(test_signed_copy_is_served),
        cmocka_unit_test(test_push_adds_signature),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
