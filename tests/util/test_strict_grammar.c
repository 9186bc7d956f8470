/* SPDX-License-Identifier: Apache-2.0 */
/* test_strict_grammar.c -- issue 24 point 9: the one strict reader follows
 * RFC 8259's number grammar (a table of valid and invalid numbers and
 * strings), and the notes API (POST /api/runs/ID/notes) reads its body with
 * it: invalid UTF-8, U+0000, a repeated name or trailing text is a 400 and
 * adds no note. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "serve.h"
#include "strict_json.h"
#include "test_record_fixture.h"

#define TOKEN "test-token-0123456789abcdef"

static int parses(const char *text)
{
    char err[512];
    cJSON *j = rg_json_parse_strict(text, strlen(text), "t", err, sizeof err);
    cJSON_Delete(j);
    return j != NULL;
}

static void test_number_grammar(void **state)
{
    (void)state;
    static const char *valid[] = {"0",      "-0",     "5407",    "-5407", "5407.5",  "0.5",   "5407e0", "5407E+2",
                                  "1e-2",   "1.5e10", "-0.0e-0", "[1,-2]", "{\"a\":0}", "[0.25]", "1E5",    " 12 "};
    static const char *invalid[] = {"05407", "5407.",  "5407.e0", "+1",     ".5",   "1e",      "1e+",    "0x1f",
                                    "NaN",   "-NaN",   "Infinity", "-Infinity", "-",  "[05407]", "{\"a\":1.}", "[-.5]",
                                    "00",    "-01",    "1.e5",    "[1e]",   "0b1",  "1_000"};
    for (size_t i = 0; i < sizeof valid / sizeof *valid; i++)
        if (!parses(valid[i])) fail_msg("valid number refused: %s", valid[i]);
    for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++)
        if (parses(invalid[i])) fail_msg("invalid number accepted: %s", invalid[i]);
}

static void test_string_grammar(void **state)
{
    (void)state;
    static const char *valid[] = {"\"\"", "\"a\\nb\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"caf\xc3\xa9\"",
                                  "\"05407\"", "\"1e\"", "{\"a\":\"5407.\"}"};
    static const char *invalid[] = {"\"\\u0000\"",  "\"a\\ud800\"", "\"\\udc00\"",       "\"\xc3\"",
                                    "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"a\tb\"",     "{\"a\":1,\"a\":2}",
                                    "{} x",         "\"unterminated", "'single'",        "\"\\x41\""};
    for (size_t i = 0; i < sizeof valid / sizeof *valid; i++)
        if (!parses(valid[i])) fail_msg("valid string refused: %s", valid[i]);
    for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++)
        if (parses(invalid[i])) fail_msg("invalid string accepted: %s", invalid[i]);
}

/* ---- the notes API ------------------------------------------------------------------ */

static char dir[400], db[500], tokfile[500];

static int setup_db(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "grammar");
    if (tu_fresh_dir(dir)) return -1;
    snprintf(db, sizeof db, "%s/runs.db", dir);
    snprintf(tokfile, sizeof tokfile, "%s/token", dir);
    char err[RG_ERRLEN];
    cJSON *m = fx_manifest("NVIDIA H200", 1, 1.0, 1);
    char *text = m ? rg_json_print(m, 1, err, sizeof err) : NULL;
    cJSON_Delete(m);
    if (!text) return -1;
    rg_write_file_atomic(tokfile, TOKEN "\n", strlen(TOKEN) + 1, err, sizeof err);
    chmod(tokfile, 0600);
    rg_registry *g;
    int64_t id;
    int existed;
    int rc = rg_registry_open(db, 1, &g, err, sizeof err);
    if (!rc) rc = rg_registry_import(g, text, strlen(text), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err);
    if (!rc) rg_registry_close(g);
    free(text);
    return rc ? -1 : 0;
}

static int teardown_db(void **state)
{
    (void)state;
    return tu_rm_rf(dir);
}

static int post_note(rg_server *s, const char *body, size_t len, char *reply, size_t cap)
{
    rg_request q = {.method = "POST", .path = "/api/runs/1/notes", .authorization = "Bearer " TOKEN, .body = body,
                    .body_len = len};
    rg_response r = {0};
    rg_serve_route(s, &q, &r);
    snprintf(reply, cap, "%s", r.body ? r.body : "");
    free(r.body);
    return r.status;
}

static void test_notes_api_strict(void **state)
{
    (void)state;
    rg_serve_options o = {.db_path = db, .listen = "127.0.0.1:0", .write_token_file = tokfile};
    rg_server *s;
    char err[RG_ERRLEN], reply[1024];
    if (rg_serve_create(&o, &s, err, sizeof err)) fail_msg("%s", err);
    static const struct {
        const char *body;
        size_t len;
    } bad[] = {
        {"{\"text\":\"a\\u0000b\"}", 0},             /* U+0000 as an escape */
        {"{\"text\":\"a\0b\"}", 13},                 /* U+0000 raw */
        {"{\"text\":\"\xc3\x28\"}", 0},              /* invalid UTF-8 */
        {"{\"text\":\"a\",\"text\":\"b\"}", 0},      /* a repeated name */
        {"{\"text\":\"a\"} trailing", 0},            /* text after the document */
        {"{\"text\":\"a\",\"n\":05407}", 0},         /* a number outside the grammar */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t len = bad[i].len ? bad[i].len : strlen(bad[i].body);
        int st = post_note(s, bad[i].body, len, reply, sizeof reply);
        if (st != 400 || tu_count_lines(reply) != 1) fail_msg("body %zu: got %d (%s), wanted a one-line 400", i, st, reply);
    }
    assert_int_equal(post_note(s, "{\"kind\":\"note\",\"text\":\"fine\"}", 29, reply, sizeof reply), 201);
    rg_serve_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_number_grammar),
        cmocka_unit_test(test_string_grammar),
        cmocka_unit_test_setup_teardown(test_notes_api_strict, setup_db, teardown_db),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
