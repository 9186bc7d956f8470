/* SPDX-License-Identifier: Apache-2.0 */
/* test_flush_gap.c -- the GPU idle gap before a timed call
 * (src/harness/flush_gap.h), on synthetic CUPTI timestamps: a flush memset
 * ending at t=100 and the call's kernel starting at t=130 is a 30 ns gap
 * (0.03 us); an activity still running at the start, or ending after it,
 * does not count; nothing ended before: no gap; the median over iterations
 * skips those without one, and is NAN when none has one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "flush_gap.h"

static void test_gap_after_the_memset(void **state)
{
    (void)state;
    /* An earlier kernel (ends 40), the flush memset [60, 100], the call's kernel [130, 150]. */
    const uint64_t ends[] = {40, 100, 150};
    double gap = -1;
    assert_int_equal(rg_gap_before(ends, 3, 130, &gap), 0);
    assert_true(gap == 30.0);
    const double gaps[] = {gap};
    assert_true(fabs(rg_gap_median_us(gaps, 1) - 0.03) < 1e-12);
    /* An end at the very start counts (gap 0); the call's own end does not. */
    assert_int_equal(rg_gap_before(ends, 3, 100, &gap), 0);
    assert_true(gap == 0.0);
}

static void test_no_prior_activity(void **state)
{
    (void)state;
    const uint64_t ends[] = {150, 400};   /* only the call itself, and something after it */
    double gap = -1;
    assert_int_equal(rg_gap_before(ends, 2, 130, &gap), 1);
    assert_true(gap == -1);               /* untouched */
    assert_int_equal(rg_gap_before(NULL, 0, 130, &gap), 1);
    assert_true(isnan(rg_gap_median_us(NULL, 0)));
    const double none[] = {NAN, NAN};
    assert_true(isnan(rg_gap_median_us(none, 2)));
}

static void test_median_over_iterations(void **state)
{
    (void)state;
    /* Iteration gaps 30, 5000, 700 ns and one without a gap: the median of the three, 0.7 us. */
    const double gaps[] = {30, NAN, 5000, 700};
    assert_true(fabs(rg_gap_median_us(gaps, 4) - 0.7) < 1e-12);
    const double two[] = {1000, 2000};
    assert_true(fabs(rg_gap_median_us(two, 2) - 1.5) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gap_after_the_memset),
        cmocka_unit_test(test_no_prior_activity),
        cmocka_unit_test(test_median_over_iterations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
