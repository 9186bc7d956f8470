/* SPDX-License-Identifier: Apache-2.0 */
/* test_suite.c -- the suite loaders on the bundled suite and on malformed
 * fixtures (tests/data/suite_*): every error names the file, the line for
 * workload.jsonl, and the field. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define DATA RG_SOURCE_DIR "/tests/data"

static void test_bundled_suite(void **state)
{
    rg_suite s;
    char err[RG_ERRLEN] = "";
    assert_int_equal(rg_suite_load(RG_SOURCE_DIR "/suites/014-rope_backward", &s, err, sizeof err), 0);
    assert_string_equal(s.name, "014_rotary_embedding_with_attention_scaling_backward");
    assert_int_equal(s.head_dim, 128);
    assert_int_equal(s.grad_dtype, ROPEGRAD_BF16);
    assert_int_equal(s.n_workloads, 16);
    /* Line 1: B=32 S=256 scale 0.0883883; line 3: B=1 S=128 scale 0.125; line 15: B=64 S=8192. */
    assert_int_equal(s.workloads[0].index, 0);
    assert_string_equal(s.workloads[0].uuid, "80418e26-ee3d-5ceb-b175-0a7b83f1f47a");
    assert_int_equal(s.workloads[0].batch_size, 32);
    assert_int_equal(s.workloads[0].seq_len, 256);
    assert_int_equal(s.workloads[0].head_dim, 128);
    assert_float_equal(s.workloads[0].attention_scaling, 0.0883883f, 0);
    assert_int_equal(s.workloads[2].batch_size, 1);
    assert_int_equal(s.workloads[2].seq_len, 128);
    assert_float_equal(s.workloads[2].attention_scaling, 0.125f, 0);
    assert_int_equal(s.workloads[14].batch_size, 64);
    assert_int_equal(s.workloads[14].seq_len, 8192);
    assert_int_equal(s.workloads[15].index, 15);
    assert_true(s.workloads[5].max_atol == 1e-5 && s.workloads[5].max_rtol == 1e-5);
    assert_true(s.workloads[5].required_matched_ratio == 0.99);   /* the default */
    assert_true(isnan(s.workloads[5].max_error_cap));              /* absent */
    /* b200-figures.json */
    assert_true(s.have_figures);
    assert_string_equal(s.figures_gpu, "B200");
    assert_int_equal(s.figures_warmup, 10);
    assert_int_equal(s.figures_iterations, 50);
    assert_int_equal(s.figures_seed, 200);
    assert_true(s.workloads[14].sol_ms == 0.0443);
    assert_true(s.workloads[14].baseline_ms == 0.133792);
    assert_true(s.workloads[2].sol_ms == 0.0004);
    /* rg_workload_bytes: B*S*(2*D*2 + D/2*4 + 4) + B*(D/2)*4 for bf16. */
    assert_true(rg_workload_bytes(&s.workloads[2], ROPEGRAD_BF16) == 128.0 * (512 + 256 + 4) + 256.0);
    assert_true(rg_workload_bytes(&s.workloads[2], ROPEGRAD_F32) == 128.0 * (1024 + 256 + 4) + 256.0);
    rg_suite_free(&s);
    assert_null(s.workloads);
}

static void test_fixture_ok_with_optional_fields(void **state)
{
    rg_suite s;
    char err[RG_ERRLEN] = "";
    assert_int_equal(rg_suite_load(DATA "/suite_ok", &s, err, sizeof err), 0);
    assert_int_equal(s.n_workloads, 2);
    assert_true(s.workloads[1].required_matched_ratio == 0.95);
    assert_true(s.workloads[1].max_error_cap == 0.001);
    assert_true(s.have_figures);
    assert_string_equal(s.figures_gpu, "H200");
    assert_int_equal(s.figures_warmup, 3);
    assert_int_equal(s.figures_iterations, 7);
    assert_int_equal(s.figures_seed, 11);
    assert_true(s.workloads[1].sol_ms == 0.002);
    rg_suite_free(&s);
}

/* Loads a fixture that must fail and checks the message contains each needle. */
static void expect_error(const char *dir, const char *n1, const char *n2, const char *n3)
{
    rg_suite s;
    char err[RG_ERRLEN] = "";
    assert_int_not_equal(rg_suite_load(dir, &s, err, sizeof err), 0);
    print_message("    %s\n", err);
    assert_null(strchr(err, '\n'));          /* one line */
    assert_non_null(strstr(err, n1));
    if (n2) assert_non_null(strstr(err, n2));
    if (n3) assert_non_null(strstr(err, n3));
    assert_null(s.workloads);
}

static void test_bad_json(void **state)
{
    expect_error(DATA "/suite_bad_json", "suite_bad_json/workload.jsonl:3:", "invalid JSON", NULL);
}

static void test_missing_field(void **state)
{
    expect_error(DATA "/suite_missing_field", "suite_missing_field/workload.jsonl:2:", "'axes.batch_size'",
                 "missing");
}

static void test_wrong_type(void **state)
{
    expect_error(DATA "/suite_wrong_type", "suite_wrong_type/workload.jsonl:3:", "'axes.batch_size'",
                 "must be a positive integer");
}

static void test_negative_size(void **state)
{
    expect_error(DATA "/suite_negative_size", "workload.jsonl:2:", "'axes.seq_len'", "positive integer");
}

static void test_fractional_size(void **state)
{
    expect_error(DATA "/suite_fractional_size", "workload.jsonl:1:", "'axes.batch_size'", "positive integer");
}

static void test_overflow(void **state)
{
    expect_error(DATA "/suite_overflow", "workload.jsonl:1:", "overflows", NULL);
}

static void test_bad_tolerance(void **state)
{
    expect_error(DATA "/suite_bad_tolerance", "workload.jsonl:2:", "'tolerance.required_matched_ratio'", "[0, 1]");
}

static void test_missing_tolerance(void **state)
{
    expect_error(DATA "/suite_missing_tolerance", "workload.jsonl:1:", "'tolerance.max_atol'", "missing");
}

static void test_empty_file(void **state)
{
    expect_error(DATA "/suite_empty", "suite_empty/workload.jsonl", "no workloads", NULL);
}

static void test_missing_definition(void **state)
{
    expect_error(DATA "/suite_no_definition", "suite_no_definition/definition.json", "cannot open", NULL);
}

static void test_bad_definition_json(void **state)
{
    expect_error(DATA "/suite_bad_definition", "suite_bad_definition/definition.json", "invalid JSON", NULL);
}

/* A definition no op of ropegrad implements: refused, and its (hostile) name
 * shown with control characters replaced, on one line. */
static void test_unknown_op(void **state)
{
    (void)state;
    expect_error(DATA "/suite_unknown_op", "definition.json", "no op of ropegrad", "013_other?line?[31m");
}

static void test_bad_dtype(void **state)
{
    expect_error(DATA "/suite_bad_dtype", "definition.json", "'inputs.emb.dtype'", "float32");
}

static void test_figures_mismatch(void **state)
{
    expect_error(DATA "/suite_bad_figures", "suite_bad_figures/b200-figures.json", "per_workload[1]", "seq_len 9");
}

static void test_missing_dir(void **state)
{
    expect_error(DATA "/no_such_suite", "no_such_suite/definition.json", "cannot open", NULL);
}

/* A line over 1 MiB is refused before it is parsed (built at run time: no
 * megabyte fixture in the repository). */
static void test_overlong_line(void **state)
{
    char dir[] = "/tmp/rg_suite_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], cmd[600];
    snprintf(cmd, sizeof cmd, "cp %s/suite_ok/definition.json %s/", DATA, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/workload.jsonl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"uuid\": \"a\", \"axes\": {\"batch_size\": 1, \"seq_len\": 4}, \"inputs\": {\"attention_scaling\": "
          "{\"value\": 1}}, \"tolerance\": {\"max_atol\": 0, \"max_rtol\": 0}}\n", f);
    fputs("{\"uuid\": \"", f);
    for (int i = 0; i < (1 << 20) + 10; i++) fputc('x', f);
    fputs("\"}\n", f);
    fclose(f);
    rg_suite s;
    char err[RG_ERRLEN] = "";
    assert_int_not_equal(rg_suite_load(dir, &s, err, sizeof err), 0);
    print_message("    %s\n", err);
    assert_non_null(strstr(err, "workload.jsonl:2:"));
    assert_non_null(strstr(err, "longer than"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Blank lines (e.g. a trailing one) are not workloads; indices stay dense. */
static void test_blank_lines(void **state)
{
    char dir[] = "/tmp/rg_suite_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], cmd[600];
    snprintf(cmd, sizeof cmd, "cp %s/suite_ok/definition.json %s/ && (head -1 %s/suite_ok/workload.jsonl; echo; "
             "tail -1 %s/suite_ok/workload.jsonl; echo) > %s/workload.jsonl",
             DATA, dir, DATA, DATA, dir);
    assert_int_equal(system(cmd), 0);
    rg_suite s;
    char err[RG_ERRLEN] = "";
    snprintf(path, sizeof path, "%s", dir);
    assert_int_equal(rg_suite_load(path, &s, err, sizeof err), 0);
    assert_int_equal(s.n_workloads, 2);
    assert_int_equal(s.workloads[1].index, 1);
    assert_string_equal(s.workloads[1].uuid, "ok-b");
    rg_suite_free(&s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundled_suite),
        cmocka_unit_test(test_fixture_ok_with_optional_fields),
        cmocka_unit_test(test_bad_json),
        cmocka_unit_test(test_missing_field),
        cmocka_unit_test(test_wrong_type),
        cmocka_unit_test(test_negative_size),
        cmocka_unit_test(test_fractional_size),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_bad_tolerance),
        cmocka_unit_test(test_missing_tolerance),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_missing_definition),
        cmocka_unit_test(test_bad_definition_json),
        cmocka_unit_test(test_bad_dtype),
        cmocka_unit_test(test_unknown_op),
        cmocka_unit_test(test_figures_mismatch),
        cmocka_unit_test(test_missing_dir),
        cmocka_unit_test(test_overlong_line),
        cmocka_unit_test(test_blank_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
