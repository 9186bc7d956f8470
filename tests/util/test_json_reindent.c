/* SPDX-License-Identifier: Apache-2.0 */
/* test_json_reindent.c -- rg_json_reindent writes what rg_json_print(doc, 1) writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "record.h"

/* rg_json_reindent(rg_json_print(doc, 0)) is rg_json_print(doc, 1), byte for byte. */
static void same_as_print(const char *json)
{
    char err[256];
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    char *compact = rg_json_print(doc, 0, err, sizeof err);
    char *pretty = rg_json_print(doc, 1, err, sizeof err);
    assert_non_null(compact);
    assert_non_null(pretty);
    char *re = rg_json_reindent(compact, strlen(compact), err, sizeof err);
    if (!re) fail_msg("%s: %s", compact, err);
    if (strcmp(re, pretty)) fail_msg("reindented:\n%s\nprinted:\n%s", re, pretty);
    free(re);
    free(compact);
    free(pretty);
    cJSON_Delete(doc);
}

static void test_same_as_print(void **state)
{
    (void)state;
    same_as_print("{}");
    same_as_print("[]");
    same_as_print("3");
    same_as_print("\"x\"");
    same_as_print("{\"a\": 1, \"b\": [1, 2.5, -3e-9, 1e300], \"c\": {}, \"d\": [], \"e\": [{}, [], [[]]]}");
    same_as_print("{\"s\": \"a: b, {c} [d] \\\"q\\\" \\\\ \\n \\u0001 \xe2\x82\xac\", \"t\": [true, false, null]}");
    same_as_print("{\"nested\": {\"deeper\": {\"deepest\": [1, {\"k\": \"v\"}]}}, \"z\": 0.1}");
    same_as_print("[[1, [2, [3, [4]]]], {\"\": \"\"}]");
    char deep[512];   /* 150 levels: indents wider than one copy of reindent's spaces */
    memset(deep, '[', 150);
    deep[150] = '1';
    memset(deep + 151, ']', 150);
    deep[301] = 0;
    same_as_print(deep);
}

/* A real manifest: the one the registry test fixtures record. */
static void test_manifest(void **state)
{
    (void)state;
    same_as_print("{\"schemaVersion\": \"1\", \"run\": {\"spec\": {\"observedAt\": \"2026-01-01T00:00:00Z\", "
                  "\"workloads\": [{\"index\": 0, \"samples_ns\": [5401.25, 5402.5, 5403.125]}]}, "
                  "\"metadata\": {\"title\": \"x\", \"tags\": []}}}");
}

/* Whitespace between tokens (a text not written by rg_json_print) is dropped. */
static void test_whitespace(void **state)
{
    (void)state;
    char err[256];
    const char *in = " { \"a\" :\n [ 1 ,\t2 ] , \"b\" : { } } ";
    char *re = rg_json_reindent(in, strlen(in), err, sizeof err);
    assert_non_null(re);
    assert_string_equal(re, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}\n");
    free(re);
}

static void test_refused(void **state)
{
    (void)state;
    char err[256];
    const char *bad[] = {"{\"a\": 1", "{\"a\": \"unended}", "]", "{\"a\": [1}}", "[[1]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        char *re = rg_json_reindent(bad[i], strlen(bad[i]), err, sizeof err);
        if (re) fail_msg("%s: indented as %s", bad[i], re);
        assert_true(strlen(err) > 0);
    }
    char deep[512];
    memset(deep, '[', 205);
    memset(deep + 205, ']', 205);
    deep[410] = 0;
    assert_null(rg_json_reindent(deep, strlen(deep), err, sizeof err));
    assert_null(rg_json_reindent(NULL, 0, err, sizeof err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_print),
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_whitespace),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
