/* SPDX-License-Identifier: Apache-2.0 */
/* test_check.c -- one test per rule of the protocol's tolerance check
 * (rg_check_output). Boundaries use binary-exact values (0.25, 0.5, 2.0) so
 * "just inside" and "just outside" are one float ulp apart. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define N 1000

static float out[N];
static double ref[N];

/* ref[i] = 1 + i/1000, out exact (as float), then k elements spoiled by 1.0. */
static void setup_arrays(int spoiled)
{
    for (int i = 0; i < N; i++) {
        ref[i] = (double)(float)(1.0 + i / 1000.0);
        out[i] = (float)ref[i];
    }
    for (int i = 0; i < spoiled; i++) out[i * 7 % N] += 1.0f;
}

static void test_exact_output_passes(void **state)
{
    rg_check c;
    setup_arrays(0);
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_true(c.pass);
    assert_string_equal(c.reason, "");
    assert_true(c.max_abs_err == 0 && c.max_rel_err == 0 && c.matched_ratio == 1.0);
    assert_int_equal(c.n_matched, N);
}

static void test_matched_ratio_just_above(void **state)
{
    rg_check c;
    setup_arrays(9);   /* 991/1000 >= 0.99 */
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_true(c.pass);
    assert_int_equal(c.n_matched, 991);
    assert_true(fabs(c.max_abs_err - 1.0) < 1e-6);   /* errors are reported even when it passes */
}

static void test_matched_ratio_exactly_required(void **state)
{
    rg_check c;
    setup_arrays(10);  /* 990/1000 == 0.99: ">=" passes */
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_true(c.pass);
    assert_true(c.matched_ratio == 0.99);
}

static void test_matched_ratio_just_below(void **state)
{
    rg_check c;
    setup_arrays(11);  /* 989/1000 < 0.99 */
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_false(c.pass);
    assert_int_equal(c.n_matched, 989);
    assert_non_null(strstr(c.reason, "matched ratio"));
}

static void test_nan_in_output(void **state)
{
    rg_check c;
    setup_arrays(0);
    out[500] = NAN;    /* 999/1000 matched would pass the ratio: NaN must fail anyway */
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_false(c.pass);
    assert_int_equal(c.n_nonfinite, 1);
    assert_non_null(strstr(c.reason, "NaN/Inf"));
    assert_non_null(strstr(c.reason, "output"));
}

static void test_inf_in_output(void **state)
{
    rg_check c;
    setup_arrays(0);
    out[3] = -INFINITY;
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.5, NAN, &c);
    assert_false(c.pass);
    assert_int_equal(c.n_nonfinite, 1);
    assert_true(isinf(c.max_abs_err));
}

static void test_nan_in_reference(void **state)
{
    rg_check c;
    setup_arrays(0);
    ref[7] = NAN;
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.5, NAN, &c);
    assert_false(c.pass);
    assert_non_null(strstr(c.reason, "reference"));
}

static void test_all_zero_output(void **state)
{
    rg_check c;
    /* A reference of tiny values: an all-zero output is within atol everywhere,
     * and must still fail. */
    for (int i = 0; i < N; i++) {
        ref[i] = 1e-9 * (i + 1);   /* all below atol 1e-5 */
        out[i] = 0.0f;
    }
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_false(c.pass);
    assert_true(c.matched_ratio == 1.0);
    assert_non_null(strstr(c.reason, "all zero"));
}

static void test_all_zero_output_and_reference(void **state)
{
    rg_check c;
    memset(out, 0, sizeof out);
    memset(ref, 0, sizeof ref);
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_true(c.pass);
    assert_true(c.max_rel_err == 0);   /* over |ref| > 0 elements only: none */
}

static void test_error_cap_exceeded(void **state)
{
    rg_check c;
    setup_arrays(1);   /* one element off by 1.0; 999/1000 matched */
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, 0.5, &c);
    assert_false(c.pass);
    assert_non_null(strstr(c.reason, "cap"));
}

static void test_error_cap_met(void **state)
{
    rg_check c;
    setup_arrays(1);
    rg_check_output(out, ref, N, 1e-5, 1e-5, 0.99, 1.0, &c);   /* |err| == cap: <= passes */
    assert_true(c.pass);
    assert_true(c.max_abs_err == 1.0);
}

/* ref = 2, atol = 0.25, rtol = 0.5: tolerance 1.25 exactly. */
static void test_atol_rtol_boundary(void **state)
{
    rg_check c;
    const double r[1] = {2.0};
    float o[1] = {3.25f};
    rg_check_output(o, r, 1, 0.25, 0.5, 1.0, NAN, &c);
    assert_true(c.pass);   /* |3.25-2| == 1.25: on the boundary is ok */
    o[0] = nextafterf(3.25f, 4.0f);
    rg_check_output(o, r, 1, 0.25, 0.5, 1.0, NAN, &c);
    assert_false(c.pass);
    o[0] = 0.75f;          /* below the reference, on the boundary */
    rg_check_output(o, r, 1, 0.25, 0.5, 1.0, NAN, &c);
    assert_true(c.pass);
    o[0] = nextafterf(0.75f, 0.0f);
    rg_check_output(o, r, 1, 0.25, 0.5, 1.0, NAN, &c);
    assert_false(c.pass);
}

static void test_atol_only_boundary(void **state)
{
    rg_check c;
    const double r[1] = {0.0};
    float o[1] = {0.25f};  /* rtol plays no part at ref 0 */
    rg_check_output(o, r, 1, 0.25, 0.5, 1.0, NAN, &c);
    assert_true(c.pass);
    o[0] = nextafterf(0.25f, 1.0f);
    rg_check_output(o, r, 1, 0.25, 0.5, 1.0, NAN, &c);
    assert_false(c.pass);
}

static void test_rtol_only_boundary(void **state)
{
    rg_check c;
    const double r[1] = {-8.0};
    float o[1] = {-12.0f};  /* atol 0, rtol 0.5: tolerance 4 */
    rg_check_output(o, r, 1, 0.0, 0.5, 1.0, NAN, &c);
    assert_true(c.pass);
    assert_true(c.max_rel_err == 0.5);
    o[0] = nextafterf(-12.0f, -13.0f);
    rg_check_output(o, r, 1, 0.0, 0.5, 1.0, NAN, &c);
    assert_false(c.pass);
}

/* Which rule passed a value: within rtol*|ref| alone, or only through atol
 * (a reference near zero, where max_rel_err is large on a passing row). */
static void test_abs_only_counted(void **state)
{
    rg_check c;
    const double r[3] = {1e-9, 8.0, 0.0};
    float o[3] = {1e-6f, 8.0f, 0.0f};   /* rel error ~1000 at r[0], inside atol 1e-5 */
    rg_check_output(o, r, 3, 1e-5, 1e-5, 1.0, NAN, &c);
    assert_true(c.pass);
    assert_int_equal(c.n_abs_only, 1);
    assert_true(c.max_rel_err > 100);
    o[0] = 1e-9f;   /* now within rtol alone (the float's rounding is far below it) */
    rg_check_output(o, r, 3, 1e-5, 1e-5, 1.0, NAN, &c);
    assert_int_equal(c.n_abs_only, 0);
    o[1] = 8.5f;    /* beyond both: not matched, so not counted either */
    rg_check_output(o, r, 3, 1e-5, 1e-5, 0.5, NAN, &c);
    assert_int_equal(c.n_matched, 2);
    assert_int_equal(c.n_abs_only, 0);
}

static void test_empty_and_null(void **state)
{
    rg_check c;
    rg_check_output(out, ref, 0, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_false(c.pass);
    rg_check_output(NULL, ref, 10, 1e-5, 1e-5, 0.99, NAN, &c);
    assert_false(c.pass);
    rg_check_output(out, ref, 10, 1e-5, 1e-5, 0.99, NAN, NULL);   /* must not crash */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_output_passes),
        cmocka_unit_test(test_matched_ratio_just_above),
        cmocka_unit_test(test_matched_ratio_exactly_required),
        cmocka_unit_test(test_matched_ratio_just_below),
        cmocka_unit_test(test_nan_in_output),
        cmocka_unit_test(test_inf_in_output),
        cmocka_unit_test(test_nan_in_reference),
        cmocka_unit_test(test_all_zero_output),
        cmocka_unit_test(test_all_zero_output_and_reference),
        cmocka_unit_test(test_error_cap_exceeded),
        cmocka_unit_test(test_error_cap_met),
        cmocka_unit_test(test_atol_rtol_boundary),
        cmocka_unit_test(test_atol_only_boundary),
        cmocka_unit_test(test_rtol_only_boundary),
        cmocka_unit_test(test_abs_only_counted),
        cmocka_unit_test(test_empty_and_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
