/* SPDX-License-Identifier: Apache-2.0 */
/* test_site_names.c -- issue 24 point 12: a static site's problem file
 * names are one-to-one (names that the old slug sent to one file -- "a b"
 * and the literal "a_b-<its hash>", "a/b" and "a_b" plus hash, "" and "." --
 * get distinct files, and every name decodes back from its file name), and
 * `site --out -` and `site --db ""` are refused with one line and exit 2
 * (even with a good registry in $ROPEGRAD_DB, which main would have used). */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "render.h"
#include "test_record_fixture.h"
#include "test_util.h"

static char *slug(const char *name)
{
    rg_buf b = {0};
    rg_problem_slug(&b, name);
    char err[64];
    char *s = rg_buf_finish(&b, err, sizeof err);
    assert_non_null(s);
    return s;
}

static int hex_value(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

/* The name a file name encodes (the inverse of rg_problem_slug), or NULL
 * when the file name is not one the encoding writes. */
static char *unslug(const char *s)
{
    char *out = malloc(strlen(s) + 1);
    assert_non_null(out);
    size_t k = 0;
    if (!strcmp(s, "~")) {
        out[0] = 0;
        return out;
    }
    for (size_t i = 0; s[i]; i++) {
        if (s[i] != '~') {
            out[k++] = s[i];
            continue;
        }
        int hi = hex_value(s[i + 1]), lo = hi < 0 ? -1 : hex_value(s[i + 2]);
        if (hi < 0 || lo < 0) {
            free(out);
            return NULL;
        }
        out[k++] = (char)(hi * 16 + lo);
        i += 2;
    }
    out[k] = 0;
    return out;
}

static void test_slug_one_to_one(void **state)
{
    (void)state;
    char h[65], forged[80];
    rg_sha256_hex("a b", 3, h);
    snprintf(forged, sizeof forged, "a_b-%.12s", h);   /* main's file name for "a b" */
    const char *names[] = {"014_rotary_embedding", "a b", forged, "a_b", "a/b", "a~20b", "a%20b", "a~b",
                           "",    ".",   "..",   ".x",  "~2E", "~",   "A",   "a",   "caf\xc3\xa9", "x\ny",
                           "-",   "_",   "~7E"};
    const size_t n = sizeof names / sizeof *names;
    char *files[sizeof names / sizeof *names];
    for (size_t i = 0; i < n; i++) {
        files[i] = slug(names[i]);
        for (const char *p = files[i]; *p; p++)
            if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-~", *p))
                fail_msg("'%s' -> '%s': a byte outside the safe set", names[i], files[i]);
        if (files[i][0] == '.' || files[i][0] == 0) fail_msg("'%s' -> '%s': hidden or empty file name", names[i], files[i]);
        char *back = unslug(files[i]);
        if (!back || strcmp(back, names[i])) fail_msg("'%s' -> '%s' does not decode back", names[i], files[i]);
        free(back);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (!strcmp(files[i], files[j])) fail_msg("'%s' and '%s' share the file '%s'", names[i], names[j], files[i]);
    for (size_t i = 0; i < n; i++) free(files[i]);
}

/* ---- the command --------------------------------------------------------------------- */

static char dir[400], out_text[1 << 14], err_text[1 << 14];

static int site_cmd(const char *args)
{
    return tu_run_prefixed(dir, "ROPEGRAD_DB=runs.db", out_text, sizeof out_text, err_text, sizeof err_text, args);
}

static void test_site_refuses_stdout_and_empty_db(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "site-names");
    assert_int_equal(tu_fresh_dir(dir), 0);
    assert_int_equal(fx_write_manifest(tu_path_in(dir, "m.json"), "NVIDIA H200", 1, 1.0, 1), 0);
    TU_EXPECT_OK(site_cmd("runs import m.json"), err_text);
    TU_EXPECT_OK(site_cmd("site --out good"), err_text);   /* the registry itself is fine */

    TU_EXPECT_ONE_LINE_ERROR(site_cmd("site --out -"), err_text, "--out -");
    assert_int_equal(access(tu_path_in(dir, "-"), F_OK), -1);   /* no folder named '-' */
    TU_EXPECT_ONE_LINE_ERROR(site_cmd("site --out s --db ''"), err_text, "--db");
    assert_int_equal(access(tu_path_in(dir, "s"), F_OK), -1);
    assert_int_equal(tu_rm_rf(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slug_one_to_one),
        cmocka_unit_test(test_site_refuses_stdout_and_empty_db),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
