/* SPDX-License-Identifier: Apache-2.0 */
/* test_term.c -- control characters from stored strings never reach the
 * terminal (issue 12): rg_term_escape() on its own (C0, DEL, ESC sequences,
 * C1 as UTF-8 and as raw bytes, invalid UTF-8, newline and tab; valid UTF-8
 * kept), then end to end: a manifest whose device name carries an OSC title
 * sequence, a screen clear and a UTF-8 CSI is imported, noted with an escape
 * sequence, and runs list/show/rank/compare/cite print it made visible. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rg_term.h"
#include "test_record_fixture.h"
#include "test_util.h"

static void expect_escaped(const char *in, const char *want)
{
    char *got = rg_term_escape(in);
    assert_non_null(got);
    if (strcmp(got, want)) fail_msg("rg_term_escape: got '%s', want '%s'", got, want);
    free(got);
}

static void test_escape(void **state)
{
    expect_escaped("plain text, 1.5 us", "plain text, 1.5 us");
    expect_escaped("two\nlines\tand a tab", "two\\nlines\\tand a tab");   /* a field never forges a line */
    expect_escaped("\x1b[2J\x1b]0;owned\x07", "\\x1b[2J\\x1b]0;owned\\x07");
    expect_escaped("a\rb\bc\x7f", "a\\x0db\\x08c\\x7f");
    expect_escaped("csi \xc2\x9b" "31m", "csi \\u009b31m");             /* C1 CSI as UTF-8 */
    expect_escaped("raw \x9b" "31m", "raw \\x9b31m");                   /* a lone byte: not UTF-8 */
    expect_escaped("H200 \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80", "H200 \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
    expect_escaped("nbsp \xc2\xa0", "nbsp \xc2\xa0");                   /* U+00A0 is not C1 */
    expect_escaped("overlong \xc0\xaf \xe0\x80\xaf", "overlong \\xc0\\xaf \\xe0\\x80\\xaf");
    expect_escaped("surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80");
    expect_escaped("cut \xe2\x82", "cut \\xe2\\x82");
    expect_escaped(NULL, "");
    /* issue 24: bidi controls and invisible characters made visible */
    expect_escaped("gpu\xe2\x80\xae" "002H", "gpu\\u202e002H");
    expect_escaped("H\xe2\x80\x8b" "200", "H\\u200b200");
    expect_escaped("\xd8\x9c" "x\xef\xbb\xbf", "\\u061cx\\ufeff");
    expect_escaped("\xe2\x81\xa6iso\xe2\x81\xa9 \xe2\x80\x8e\xe2\x80\x8f \xe2\x81\xa0", "\\u2066iso\\u2069 \\u200e\\u200f \\u2060");
    char *block = rg_term_escape_block("line\n\xe2\x80\xae\tx");
    assert_string_equal(block, "line\n\\u202e\tx");
    free(block);
    /* rg_term: a ring of results, each still valid after the next calls. */
    const char *a = rg_term("\x1b" "a"), *b = rg_term("\x1b" "b");
    assert_string_equal(a, "\\x1ba");
    assert_string_equal(b, "\\x1bb");
}

/* Nothing a terminal would act on: no C0 but \n and \t, no DEL, no C1 in any form. */
static void assert_terminal_safe(const char *text, const char *what)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f || (*p >= 0x80 && *p < 0xa0 && p[-1] != 0xe2) ||
            (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
            fail_msg("%s: byte 0x%02x reaches the terminal at offset %ld", what, *p, (long)(p - (const unsigned char *)text));
    }
}

static char dir[400];
static char out_text[1 << 16], err_text[1 << 14];
#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static void import_fixture(const char *name, const char *gpu, int stamp)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(fx_write_manifest(path, gpu, 3, 1.0 + stamp, stamp), 0);
    int rc = rg("runs import %s --db t.db", name);
    if (rc) fail_msg("import exited %d: %s", rc, err_text);
}

static void test_cli_output(void **state)
{
    fx_path(dir, sizeof dir, "term");
    assert_int_equal(tu_fresh_dir(dir), 0);
    const char *evil = "H200\x1b]0;owned\x07\x1b[2J\xc2\x9b" "31m";
    import_fixture("a.json", evil, 1);
    import_fixture("b.json", evil, 2);
    assert_int_equal(rg("runs note 1 \"$(printf 'look \\033[5m here')\" --db t.db"), 0);
    static const char *const cmds[] = {"runs list", "runs show 1", "runs rank", "runs compare 1 2", "runs cite 1"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = rg("%s --db t.db", cmds[i]);
        if (rc) fail_msg("%s exited %d: %s", cmds[i], rc, err_text);
        print_message("    %s\n", cmds[i]);
        assert_terminal_safe(out_text, cmds[i]);
        assert_terminal_safe(err_text, cmds[i]);
        /* runs list cuts the device to its column: its start, made visible. */
        assert_non_null(strstr(out_text, strcmp(cmds[i], "runs list") ? "H200\\x1b]0;owned\\x07" : "H200\\x1b]0;"));
    }
    assert_int_equal(rg("runs show 1 --db t.db"), 0);
    assert_non_null(strstr(out_text, "\\x1b[2J\\u009b31m"));
    assert_non_null(strstr(out_text, "look \\x1b[5m here"));
    assert_null(strstr(out_text, "$look"));   /* the note went in as text with a real ESC */
    assert_int_equal(tu_rm_rf(dir), 0);
}

/* export-solution --name/--author: text that is not UTF-8, or holds a control
 * character, is refused with one line naming the byte; nothing is written. */
static void test_export_name(void **state)
{
    fx_path(dir, sizeof dir, "export");
    assert_int_equal(tu_fresh_dir(dir), 0);
    static const struct { const char *arg, *needle; } bad[] = {
        {"--name \"$(printf 'abc\\377def')\"", "--name: byte 3 (0xff) is not UTF-8"},
        {"--name \"$(printf 'over\\300\\257long')\"", "--name: byte 4 (0xc0) is not UTF-8"},
        {"--author \"$(printf 'A \\033[2J')\"", "--author: byte 2 (0x1b) is a control character"},
        {"--name \"$(printf 'c1 \\302\\233')\"", "--name: byte 3 (0xc2) is a control character"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = rg("export-solution --out s.json %s", bad[i].arg);
        if (rc != 2 || tu_count_lines(err_text) != 1 || !strstr(err_text, bad[i].needle))
            fail_msg("%s: exit %d, '%s'; expected exit 2 and one line with '%s'", bad[i].arg, rc, err_text,
                     bad[i].needle);
        assert_terminal_safe(err_text, bad[i].arg);
    }
    assert_int_equal(tu_count_dir(dir), 2);   /* out.txt, err.txt: no s.json, no temporary */
    /* UTF-8 text is fine. */
    assert_int_equal(rg("export-solution --out s.json --name \"$(printf 'r\\303\\251sum\\303\\251')\""), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/s.json", dir);
    char *t = tu_slurp(p, NULL);
    assert_non_null(t);
    assert_non_null(strstr(t, "\"r\xc3\xa9sum\xc3\xa9\""));
    free(t);
    assert_int_equal(tu_rm_rf(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_cli_output),
        cmocka_unit_test(test_export_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
