/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_output.c -- what the record commands print for people: times in
 * µs or ms (one formatter, src/cli/runs_format.c, compiled into this test),
 * `runs list` in 100 columns with a problem column, names cut with "…",
 * `verify` naming the object that failed on its row, and `verify --json`. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs_format.h"
#include "test_record_fixture.h"
#include "test_util.h"

#define PUBLIC RG_SOURCE_DIR "/tests/data/kernelindex/run-01a03529.manifest.json"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 14];
#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "cli_output");
    return tu_fresh_dir(dir);
}

static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(dir);
}

/* Columns of a line: UTF-8 characters, not bytes. */
static int cols(const char *s, size_t len)
{
    int c = 0;
    for (size_t i = 0; i < len; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static void test_time_units(void **state)
{
    (void)state;
    char b[32];
    const struct { double ns; const char *want; } cases[] = {
        {20.6, "0.0206 µs"},      {4933, "4.933 µs"},      {49330, "49.33 µs"},   {493300, "493.3 µs"},
        {999940, "999.9 µs"},     {999960, "1.000 ms"},    {1200370, "1.200 ms"}, {12003700, "12.00 ms"},
        {120037000, "120.0 ms"}, {1.20037e9, "1.200 s"},  {3.6e12, "3600 s"},    {NAN, "-"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rg_cli_time(b, sizeof b, cases[i].ns);
        if (strcmp(b, cases[i].want)) fail_msg("%g ns: \"%s\", want \"%s\"", cases[i].ns, b, cases[i].want);
    }
    /* Field widths count columns: "µ" is two bytes. */
    assert_int_equal(rg_cli_w("4.933 µs", 12), 13);
    /* Cut to a width with an ellipsis, on a character boundary. */
    assert_string_equal(rg_cli_fit(b, sizeof b, "L1/014", 7), "L1/014");
    assert_string_equal(rg_cli_fit(b, sizeof b, "rope_forward_bf16", 7), "rope_f…");
    assert_string_equal(rg_cli_fit(b, sizeof b, "µµµµµµµµ", 4), "µµµ…");
}

/* runs show: the primary measurement and the workload table in µs/ms, no
 * exponent, no raw nanoseconds. */
static void test_show_times(void **state)
{
    (void)state;
    assert_int_equal(rg("runs import %s --db o.db", PUBLIC), 0);
    assert_int_equal(rg("bench --backend cpu --workloads 2 --iterations 3 --warmup 1 --rounds 1 --record --db o.db"), 0);
    for (int id = 1; id <= 2; id++) {
        assert_int_equal(rg("runs show %d --db o.db", id), 0);
        if (strstr(out_text, "e+0") || strstr(out_text, " ns ")) fail_msg("runs show %d:\n%s", id, out_text);
        assert_non_null(strstr(out_text, "  Primary measurement  "));
    }
    assert_int_equal(rg("runs show 1 --db o.db"), 0);
    assert_non_null(strstr(out_text, "Primary measurement  5.406 µs mean\n"));
}

/* A copy of PUBLIC in dir as name, with from replaced by to (once). */
static void tampered(const char *name, const char *from, const char *to)
{
    size_t n;
    char *text = tu_slurp(PUBLIC, &n);
    assert_non_null(text);
    char *p = strstr(text, from);
    assert_non_null(p);
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
    fclose(f);
    free(text);
}

/* runs list: every line within 100 columns, a problem column with the
 * problem's short id, a long definition cut with "…". */
static void test_list_fits(void **state)
{
    (void)state;
    tampered("long.json", "\"benchmark\": \"014_rotary_embedding_with_attention_scaling_backward\"",
             "\"benchmark\": \"rotary_embedding_operation_with_a_very_long_name_indeed\"");
    assert_int_equal(rg("runs import %s --db l.db", PUBLIC), 0);
    assert_int_equal(rg("runs import long.json --db l.db"), 0);
    assert_int_equal(rg("runs list --db l.db"), 0);
    assert_true(strncmp(out_text, "  id problem device        implementation  ", 42) == 0);
    int rows = 0;
    for (char *l = out_text, *e; *l; l = e + 1) {
        e = strchr(l, '\n');
        if (!e) break;
        if (cols(l, (size_t)(e - l)) > 100) fail_msg("wider than 100 columns: %.*s", (int)(e - l), l);
        if (strncmp(l, "   1 L1/014  ", 13) == 0 || strncmp(l, "   2 rotar…  ", 14) == 0) rows++;
    }
    if (rows != 2) fail_msg("runs list rows:\n%s", out_text);
    assert_non_null(strstr(out_text, "5.406 µs mean"));
    assert_non_null(strstr(out_text, "12.86x"));
    assert_non_null(strstr(out_text, "sol-execbench #6579"));
    assert_null(strstr(out_text, "e+0"));
}

/* The row that starts with role (after two spaces), or NULL. */
static const char *row(const char *role)
{
    char want[64];
    snprintf(want, sizeof want, "\n  %-15s ", role);
    const char *r = strstr(out_text, want);
    return r ? r + strlen(want) : NULL;
}

/* verify names the object that failed on its own row and exits 1; an
 * untampered file still exits 0 with every row matching. */
static void test_verify_names_failure(void **state)
{
    (void)state;
    assert_int_equal(rg("verify %s", PUBLIC), 0);
    assert_non_null(strstr(out_text, "verify: ok"));
    assert_null(strstr(out_text, "MISMATCH"));
    assert_null(strstr(out_text, "FAILS"));
    /* An edited environment object: its row says MISMATCH with both digests,
     * the run's row points at it, the others still match. */
    tampered("env.json", "\"evaluation_stack\"", "\"evaluation_stack2\"");
    assert_int_equal(rg("verify env.json"), 1);
    assert_non_null(row("environment"));
    assert_true(!strncmp(row("environment"), "MISMATCH: the run names", 23));
    assert_non_null(strstr(out_text, "the object in the file hashes to"));
    assert_true(!strncmp(row("run"), "FAILS: names a MISMATCH below", 29));
    assert_true(!strncmp(row("protocol"), "matches", 7));
    assert_null(strstr(out_text, "verify: ok"));
    assert_int_equal(tu_count_lines(err_text), 1);
    /* A figure of the run edited: the run's row fails and says which. */
    assert_int_equal(rg("bench --backend cpu --workloads 2 --iterations 3 --warmup 1 --rounds 1 --manifest m.json"), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/m.json", dir);
    size_t n;
    char *text = tu_slurp(path, &n);
    assert_non_null(text);
    char *p = strstr(text, "\"median\": ");
    assert_non_null(p);
    p += strlen("\"median\": ");
    *p = *p == '9' ? '1' : (char)(*p + 1);
    snprintf(path, sizeof path, "%s/fig.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    assert_int_equal(rg("verify fig.json"), 1);
    assert_true(!strncmp(row("run"), "FAILS its checks", 16));
    assert_non_null(strstr(out_text, "workloads[0].median does not follow"));
    assert_true(!strncmp(row("workload"), "matches", 7));
    /* Not the run digest asked for. */
    assert_int_equal(rg("verify m.json --run-digest sha256:%064d", 0), 1);
    assert_true(!strncmp(row("run"), "MISMATCH: not the one expected", 30));
    assert_non_null(strstr(out_text, "expected (--run-digest)"));
}

/* The object named name in verify --json's document d. */
static const cJSON *object(const cJSON *d, const char *name)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(d, "objects"))
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "name")), name)) return o;
    fail_msg("no object %s", name);
    return NULL;
}

/* verify --json: one document with each object's name, expected and
 * computed digest and ok; the same exit status as the text. */
static void test_verify_json(void **state)
{
    (void)state;
    assert_int_equal(rg("verify --json %s", PUBLIC), 0);
    cJSON *d = cJSON_Parse(out_text);
    assert_non_null(d);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "ok")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "objects")), 5);
    const cJSON *p = object(d, "protocol");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "expected")),
                        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "computed")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "ok")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(object(d, "workload"), "ok")));   /* not in the file */
    cJSON_Delete(d);

    tampered("env.json", "\"evaluation_stack\"", "\"evaluation_stack2\"");
    assert_int_equal(rg("verify env.json --json"), 1);
    d = cJSON_Parse(out_text);
    assert_non_null(d);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "ok")));
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "exit")), 1);
    const cJSON *e = object(d, "environment");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(e, "ok")));
    assert_string_not_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "expected")),
                            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "computed")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(object(d, "run"), "ok")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(object(d, "protocol"), "ok")));
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "error")), "environment digest"));
    cJSON_Delete(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_units),
        cmocka_unit_test_setup_teardown(test_show_times, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_fits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_names_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_json, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
