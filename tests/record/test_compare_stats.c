/* SPDX-License-Identifier: Apache-2.0 */
/* test_compare_stats.c -- the distribution-free comparison behind compare, rank and runs check
 * (src/record/stats/compare_stats.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "compare_stats.h"

/* Deterministic samples: t * (1 + spread * u), u uniform in [-1, 1) from a 64-bit LCG. */
static void samples(double *x, int n, double t, double spread, uint64_t seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
        x[i] = t * (1 + spread * u);
    }
}

static void test_normal_quantile(void **state)
{
    (void)state;
    assert_true(fabs(rg_normal_quantile(0.975) - 1.959963984540054) < 1e-9);
    assert_true(fabs(rg_normal_quantile(0.5)) < 1e-12);
    assert_true(fabs(rg_normal_quantile(0.005) + 2.575829303548901) < 1e-9);
    assert_true(isnan(rg_normal_quantile(0)));
    assert_true(isnan(rg_normal_quantile(1)));
}

static void test_mann_whitney_known_value(void **state)
{
    (void)state;
    /* Fully separated 3 vs 3: U = 9, z = (4.5 - 0.5) / sqrt(5.25), p = erfc(z / sqrt 2) = 0.0809 */
    double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    rg_shift s;
    assert_int_equal(rg_shift_estimate(a, 3, b, 3, 0.95, &s), 0);
    assert_true(s.u == 9);
    assert_true(fabs(s.p - 0.08086) < 1e-4);
    /* the 9 pairwise ratios b_j / a_i sorted: 4/3 5/3 2 2 5/2 3 4 5 6; their median is 5/2 */
    assert_true(fabs(s.ratio - 2.5) < 1e-12);
    /* 3 x 3 samples are too few for a 95% interval */
    assert_true(s.lo == 0 && isinf(s.hi));
    assert_int_equal(rg_shift_verdict(&s, RG_STATS_ALPHA, RG_STATS_THRESHOLD), RG_VERDICT_SAME);
}

static void test_same_distribution_is_same(void **state)
{
    (void)state;
    double a[50], b[50];
    samples(a, 50, 1000, 0.05, 1);
    samples(b, 50, 1000, 0.05, 2);
    rg_shift s;
    assert_int_equal(rg_shift_estimate(a, 50, b, 50, RG_STATS_CONF, &s), 0);
    assert_true(s.p > RG_STATS_ALPHA);
    assert_true(s.lo < 1 && s.hi > 1);
    assert_int_equal(rg_shift_verdict(&s, RG_STATS_ALPHA, RG_STATS_THRESHOLD), RG_VERDICT_SAME);
}

static void test_twenty_percent_slower_is_slow(void **state)
{
    (void)state;
    double a[50], b[50];
    samples(a, 50, 1000, 0.03, 7);
    for (int i = 0; i < 50; i++) b[i] = a[i] * 1.2;
    rg_shift s;
    assert_int_equal(rg_shift_estimate(a, 50, b, 50, RG_STATS_CONF, &s), 0);
    assert_true(fabs(s.ratio - 1.2) < 1e-9);   /* the Hodges-Lehmann estimate of an exact scaled copy */
    assert_true(s.lo > 1.15 && s.hi < 1.25);
    assert_true(s.p < 1e-10);
    assert_int_equal(rg_shift_verdict(&s, RG_STATS_ALPHA, RG_STATS_THRESHOLD), RG_VERDICT_SLOW);
    /* and the other way round */
    assert_int_equal(rg_shift_estimate(b, 50, a, 50, RG_STATS_CONF, &s), 0);
    assert_true(fabs(s.ratio - 1 / 1.2) < 1e-9);
    assert_int_equal(rg_shift_verdict(&s, RG_STATS_ALPHA, RG_STATS_THRESHOLD), RG_VERDICT_FAST);
}

static void test_small_real_change_is_same_and_unclear_in_between(void **state)
{
    (void)state;
    double a[200], b[200];
    /* 2% slower, little noise: significant, but the whole interval is inside +-5% */
    samples(a, 200, 1000, 0.01, 3);
    samples(b, 200, 1020, 0.01, 4);
    rg_shift s;
    assert_int_equal(rg_shift_estimate(a, 200, b, 200, RG_STATS_CONF, &s), 0);
    assert_true(s.p < RG_STATS_ALPHA);
    assert_true(s.lo > 1.0 && s.hi < 1.05);
    assert_int_equal(rg_shift_verdict(&s, RG_STATS_ALPHA, RG_STATS_THRESHOLD), RG_VERDICT_SAME);
    /* 5% slower: significant, and the interval straddles the threshold: the data cannot say */
    samples(b, 200, 1050, 0.01, 4);
    assert_int_equal(rg_shift_estimate(a, 200, b, 200, RG_STATS_CONF, &s), 0);
    assert_true(s.p < RG_STATS_ALPHA);
    assert_true(s.lo < 1.05 && s.hi > 1.05);
    assert_int_equal(rg_shift_verdict(&s, RG_STATS_ALPHA, RG_STATS_THRESHOLD), RG_VERDICT_UNCLEAR);
}

static void test_all_ties(void **state)
{
    (void)state;
    double a[10], b[10];
    for (int i = 0; i < 10; i++) a[i] = b[i] = 5;
    rg_shift s;
    assert_int_equal(rg_shift_estimate(a, 10, b, 10, RG_STATS_CONF, &s), 0);
    assert_true(s.p == 1 && s.ratio == 1);
    assert_int_equal(rg_shift_verdict(&s, RG_STATS_ALPHA, RG_STATS_THRESHOLD), RG_VERDICT_SAME);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    double a[3] = {1, 2, 3}, bad[3] = {1, NAN, 3}, neg[3] = {1, -2, 3};
    rg_shift s;
    assert_int_equal(rg_shift_estimate(NULL, 3, a, 3, 0.95, &s), -1);
    assert_int_equal(rg_shift_estimate(a, 0, a, 3, 0.95, &s), -1);
    assert_int_equal(rg_shift_estimate(a, 3, bad, 3, 0.95, &s), -1);
    assert_int_equal(rg_shift_estimate(a, 3, neg, 3, 0.95, &s), -1);
    assert_int_equal(rg_shift_estimate(a, 3, a, 3, 1.0, &s), -1);
    assert_int_equal(rg_shift_estimate(a, 3, a, 3, 0.95, NULL), -1);
    double lo, hi;
    assert_int_equal(rg_median_interval(bad, 3, 0.95, &lo, &hi), -1);
    assert_int_equal(rg_median_interval(a, 3, 0.95, NULL, &hi), -1);
    int r[2];
    double l2[2] = {2, 1}, h2[2] = {1, 2};
    assert_int_equal(rg_rank_intervals(2, l2, h2, r), -1);   /* lo > hi */
    assert_int_equal(rg_shift_verdict(NULL, 0.01, 0.05), RG_VERDICT_UNCLEAR);
}

static void test_median_interval(void **state)
{
    (void)state;
    double x[50];
    for (int i = 0; i < 50; i++) x[i] = 50 - i;   /* 1..50, unsorted */
    double lo, hi;
    assert_int_equal(rg_median_interval(x, 50, 0.95, &lo, &hi), 0);
    /* the binomial(50, 1/2) interval: order statistics 18 and 33 */
    assert_true(lo == 18 && hi == 33);
    assert_int_equal(rg_median_interval(x, 3, 0.95, &lo, &hi), 0);
    assert_true(lo == 0 && isinf(hi));   /* three samples support no 95% interval */
}

static void test_rank_intervals_tie_overlaps(void **state)
{
    (void)state;
    double lo[] = {1.0, 1.5, 4.0, 3.9}, hi[] = {2.0, 3.0, 5.0, 4.5};
    int r[4];
    assert_int_equal(rg_rank_intervals(4, lo, hi, r), 0);
    assert_int_equal(r[0], 1);
    assert_int_equal(r[1], 1);   /* overlaps #1: tied */
    assert_int_equal(r[2], 3);   /* overlaps run 3's interval but both are above the first two */
    assert_int_equal(r[3], 3);
    assert_int_equal(rg_rank_intervals(0, NULL, NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_quantile),
        cmocka_unit_test(test_mann_whitney_known_value),
        cmocka_unit_test(test_same_distribution_is_same),
        cmocka_unit_test(test_twenty_percent_slower_is_slow),
        cmocka_unit_test(test_small_real_change_is_same_and_unclear_in_between),
        cmocka_unit_test(test_all_ties),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_median_interval),
        cmocka_unit_test(test_rank_intervals_tie_overlaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
