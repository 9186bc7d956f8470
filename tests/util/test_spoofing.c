/* SPDX-License-Identifier: Apache-2.0 */
/* test_spoofing.c -- issue 24 point 10: newlines, tabs, bidi controls and
 * zero-width characters in record strings are made visible (\n, \t,
 * \u202e, \u200b) by the terminal writer (every %s of rg_term_printf while
 * the format keeps its own line breaks; rg_term_escape in test_term.c), in `runs
 * show`, `runs list`, `runs cite` and on the pages; and the names that form
 * comparison groups (device, implementation, backend, ...) refuse bidi and
 * zero-width characters on verify, runs import and POST /api/runs with one
 * line. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "render.h"
#include "rg_term.h"
#include "serve.h"
#include "test_record_fixture.h"

#define RLO "\xe2\x80\xae"    /* U+202E RIGHT-TO-LEFT OVERRIDE */
#define ZWSP "\xe2\x80\x8b"   /* U+200B ZERO WIDTH SPACE */
#define ALM "\xd8\x9c"        /* U+061C ARABIC LETTER MARK */
#define BOM "\xef\xbb\xbf"    /* U+FEFF */
#define TOKEN "test-token-0123456789abcdef"

/* rg_term_printf: each %s argument a field, the format's own layout kept,
 * every other conversion as printf writes it. */
static void test_printf_fields(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_true(rg_term_printf(f, "[%s] [%-6s] %d %5.2f %lld %zu %% %*d|%.*s|%x\n\tend\n", "a\nb", "t\tt", -3, 1.5,
                               12345678901LL, (size_t)7, 4, 9, 2, "abc", 255u) != EOF);
    assert_true(rg_term_printf(f, "%s" RLO "\n", "x" RLO) != EOF);
    rewind(f);
    char got[512] = "";
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = 0;
    fclose(f);
    assert_string_equal(got, "[a\\nb] [t\\tt  ] -3  1.50 12345678901 7 %    9|ab|ff\n\tend\nx\\u202e\\u202e\n");
}

/* ---- end to end ------------------------------------------------------------------------ */

static char dir[400], out_text[1 << 16], err_text[1 << 14];

static int rg_in_dir(const char *args)
{
    return tu_run_prefixed(dir, "", out_text, sizeof out_text, err_text, sizeof err_text, args);
}

/* No line of text starts with what a field tried to forge. */
static void assert_no_forged_line(const char *text, const char *forged, const char *what)
{
    for (const char *p = text; p; p = strchr(p, '\n')) {
        if (*p == '\n') p++;
        if (!strncmp(p, forged, strlen(forged))) fail_msg("%s: a field forged the line '%s'", what, forged);
    }
    if (strstr(text, RLO) || strstr(text, ZWSP)) fail_msg("%s: a bidi or zero-width character reached the output", what);
}

static void test_cli_outputs(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "spoof");
    assert_int_equal(tu_fresh_dir(dir), 0);
    assert_int_equal(fx_write_manifest(tu_path_in(dir, "m.json"), "NVIDIA H200\nFAKE-DEVICE\tok", 1, 1.0, 1), 0);
    TU_EXPECT_OK(rg_in_dir("runs import m.json --db t.db"), err_text);
    TU_EXPECT_OK(rg_in_dir("runs note 1 \"$(printf 'fine\\nFAKE-NOTE \\342\\200\\256 \\342\\200\\213')\" --db t.db"),
                 err_text);
    static const char *const cmds[] = {"runs show 1 --db t.db", "runs list --db t.db", "runs cite 1 --db t.db"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        TU_EXPECT_OK(rg_in_dir(cmds[i]), err_text);
        assert_no_forged_line(out_text, "FAKE", cmds[i]);
        /* runs list cuts the device to its column, without "NVIDIA ". */
        const char *dev = strncmp(cmds[i], "runs list", 9) ? "NVIDIA H200\\nFAKE" : "H200\\nFAKE";
        if (!strstr(out_text, dev)) fail_msg("%s: the device's newline is not shown as \\n:\n%s", cmds[i], out_text);
    }
    TU_EXPECT_OK(rg_in_dir("runs show 1 --db t.db"), err_text);
    assert_non_null(strstr(out_text, "H200\\nFAKE-DEVICE\\tok"));
    assert_non_null(strstr(out_text, "fine\\nFAKE-NOTE \\u202e \\u200b"));
    assert_int_equal(tu_rm_rf(dir), 0);
}

/* A manifest whose device name holds c: verify and import refuse it with one
 * line naming the code point; nothing is stored. */
static void expect_refused(const char *device, const char *cp)
{
    assert_int_equal(fx_write_manifest(tu_path_in(dir, "bad.json"), device, 1, 1.0, 1), 0);
    TU_EXPECT_ONE_LINE_ERROR(rg_in_dir("verify bad.json"), err_text, cp);
    assert_non_null(strstr(err_text, "environment.spec.hardware.product"));
    TU_EXPECT_ONE_LINE_ERROR(rg_in_dir("runs import bad.json --db t.db"), err_text, cp);
}

static void test_identifiers_refused(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "spoof-ids");
    assert_int_equal(tu_fresh_dir(dir), 0);
    expect_refused("NVIDIA " RLO "002H", "U+202E");
    expect_refused("NVIDIA H" ZWSP "200", "U+200B");
    expect_refused("NVIDIA H200" BOM, "U+FEFF");
    expect_refused(ALM "NVIDIA H200", "U+061C");
    assert_int_equal(access(tu_path_in(dir, "t.db"), F_OK), -1);   /* nothing stored, no registry made */

    /* POST /api/runs: a 400 with the reason, on one line. */
    char db[500], tok[500], err[RG_ERRLEN];
    snprintf(db, sizeof db, "%s/s.db", dir);
    snprintf(tok, sizeof tok, "%s/token", dir);
    assert_int_equal(rg_write_file_atomic(tok, TOKEN "\n", strlen(TOKEN) + 1, err, sizeof err), 0);
    assert_int_equal(chmod(tok, 0600), 0);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 1, &g, err, sizeof err), 0);
    rg_registry_close(g);
    rg_serve_options o = {.db_path = db, .listen = "127.0.0.1:0", .write_token_file = tok};
    rg_server *s;
    if (rg_serve_create(&o, &s, err, sizeof err)) fail_msg("%s", err);
    size_t n;
    char *body = tu_slurp(tu_path_in(dir, "bad.json"), &n);
    assert_non_null(body);
    rg_request q = {.method = "POST", .path = "/api/runs", .authorization = "Bearer " TOKEN, .body = body, .body_len = n};
    rg_response r = {0};
    rg_serve_route(s, &q, &r);
    if (r.status != 400 || !r.body || !strstr(r.body, "U+061C") || tu_count_lines(r.body) != 1)
        fail_msg("POST /api/runs: %d %s", r.status, r.body ? r.body : "");
    free(r.body);
    free(body);
    rg_serve_destroy(s);
    assert_int_equal(tu_rm_rf(dir), 0);
}

/* Pages: the run page shows the device's newline and a note's bidi control
 * as visible escapes, never the raw characters. */
static void test_pages(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "spoof-pages");
    assert_int_equal(tu_fresh_dir(dir), 0);
    assert_int_equal(fx_write_manifest(tu_path_in(dir, "m.json"), "NVIDIA H200\nFAKE\tX", 1, 1.0, 1), 0);
    TU_EXPECT_OK(rg_in_dir("runs import m.json --db t.db"), err_text);
    TU_EXPECT_OK(rg_in_dir("runs note 1 \"$(printf 'see \\342\\200\\256gnp.exe \\342\\201\\240')\" --db t.db"), err_text);
    TU_EXPECT_OK(rg_in_dir("site --out site --db t.db"), err_text);
    char *page = tu_slurp(tu_path_in(dir, "site/runs/1.html"), NULL);
    assert_non_null(page);
    assert_null(strstr(page, RLO));
    assert_null(strstr(page, "\xe2\x81\xa0"));
    assert_null(strstr(page, "H200\nFAKE"));
    assert_non_null(strstr(page, "see \\u202egnp.exe \\u2060"));
    assert_non_null(strstr(page, "NVIDIA H200\\nFAKE\\tX"));
    free(page);
    char *index = tu_slurp(tu_path_in(dir, "site/index.html"), NULL);
    assert_non_null(index);
    assert_null(strstr(index, "H200\nFAKE"));
    assert_non_null(strstr(index, "NVIDIA H200\\nFAKE\\tX"));
    free(index);
    assert_int_equal(tu_rm_rf(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_printf_fields),      cmocka_unit_test(test_cli_outputs),
        cmocka_unit_test(test_identifiers_refused), cmocka_unit_test(test_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
