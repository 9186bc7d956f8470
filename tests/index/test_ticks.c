/* SPDX-License-Identifier: Apache-2.0 */
/* test_ticks.c -- the charts' axes (src/index/ticks.c): Heckbert's loose
 * labelling against outputs worked by hand from his algorithm, the 4-6
 * tick axis, one unit per axis (ns, µs, ms, s; SI prefixes), labels with
 * just the digits the step needs, and refusals of hostile ranges. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ticks.h"

#define MU "\xc2\xb5"   /* U+00B5 MICRO SIGN in UTF-8 */

static void expect_ticks(const rg_ticks *t, double lo, double hi, double step, int n)
{
    double tol = 1e-9 * fmax(fabs(lo), fabs(hi));
    if (fabs(t->lo - lo) > tol || fabs(t->hi - hi) > tol || fabs(t->step - step) > 1e-9 * step || t->n != n)
        fail_msg("got %.17g..%.17g by %.17g (%d ticks), want %.17g..%.17g by %.17g (%d)", t->lo, t->hi, t->step, t->n,
                 lo, hi, step, n);
}

/* Heckbert's loose_label, worked by hand: nicenum(range, no rounding) then
 * nicenum(range / (ntick - 1), rounding), floor/ceil to the step. */
static void test_heckbert_known_outputs(void **state)
{
    (void)state;
    rg_ticks t;
    char err[128];
    assert_int_equal(rg_ticks_loose(5.401, 5.411, 5, &t, err, sizeof err), 0);
    expect_ticks(&t, 5.400, 5.412, 0.002, 7);    /* range 0.01, step nicenum(0.0025) = 0.002 */
    assert_int_equal(rg_ticks_loose(518.852, 1022.3, 5, &t, err, sizeof err), 0);
    expect_ticks(&t, 400, 1200, 200, 5);         /* range nicenum(503.4) = 1000, step 200 */
    assert_int_equal(rg_ticks_loose(0, 1, 5, &t, err, sizeof err), 0);
    expect_ticks(&t, 0, 1, 0.2, 6);
    assert_int_equal(rg_ticks_loose(105, 543, 5, &t, err, sizeof err), 0);
    expect_ticks(&t, 100, 600, 100, 6);          /* range 500, step nicenum(125) = 100 */
    assert_int_equal(rg_ticks_loose(1e-300, 3e-300, 5, &t, err, sizeof err), 0);
    expect_ticks(&t, 1e-300, 3e-300, 5e-301, 5); /* tiny: the same digits, 600 decades down */
    assert_int_equal(rg_ticks_loose(0, 1e300, 5, &t, err, sizeof err), 0);
    expect_ticks(&t, 0, 1e300, 2e299, 6);        /* huge */
    assert_int_equal(rg_ticks_loose(5401, 5411, 5, &t, err, sizeof err), 0);
    expect_ticks(&t, 5400, 5412, 2, 7);          /* the history chart's 5.401..5.411 us, in ns */
}

/* The axis: Heckbert's at 5 ticks, else at 4 or 6, so 4 to 6 ticks. */
static void test_axis_four_to_six(void **state)
{
    (void)state;
    rg_ticks t;
    char err[128];
    assert_int_equal(rg_axis_ticks(5401, 5411, &t, err, sizeof err), 0);
    expect_ticks(&t, 5400, 5415, 5, 4);          /* 7 at five: four ticks by 5 ns instead */
    assert_int_equal(rg_axis_ticks(518852, 1022300, &t, err, sizeof err), 0);
    expect_ticks(&t, 400000, 1200000, 200000, 5);
    assert_int_equal(rg_axis_ticks(0, 4800, &t, err, sizeof err), 0);   /* the H200's peak, GB/s */
    expect_ticks(&t, 0, 5000, 1000, 6);
    /* 8.77e-6 wide, ends off the grid: 7 by 2e-6 or 3 by 5e-6, no 1-2-5 step between. */
    assert_int_equal(rg_axis_ticks(5.4795555358302632, 5.479564306554332, &t, err, sizeof err), 0);
    expect_ticks(&t, 5.479554, 5.479566, 2e-6, 7);
    /* A sweep: every axis is loose (covers the data), round, 3-7 ticks, and
     * 4-6 for nearly all. */
    uint64_t s = 88172645463325252ull;
    int in_band = 0;
    for (int i = 0; i < 20000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double a = ldexp((double)(s >> 11), -53) * pow(10, (double)(s % 13) - 3);
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double b = a + ldexp((double)(s >> 11), -53) * a * pow(10, -(double)(s % 6));
        if (rg_axis_ticks(a, b, &t, err, sizeof err)) fail_msg("%.17g..%.17g: %s", a, b, err);
        if (t.n < 3 || t.n > 7) fail_msg("%.17g..%.17g: %d ticks", a, b, t.n);
        in_band += t.n >= 4 && t.n <= 6;
        assert_true(t.lo <= a && t.hi >= b);
        double m = t.step / pow(10, floor(log10(t.step) + 1e-9));
        assert_true(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9);
        assert_true(fabs(t.lo / t.step - round(t.lo / t.step)) < 1e-6);   /* the ends are multiples of the step */
        assert_true(fabs(rg_tick_at(&t, t.n - 1) - t.hi) <= 1e-9 * t.hi);
    }
    print_message("4-6 ticks: %d of 20000 axes\n", in_band);
    assert_true(in_band >= 19000);
}

static void test_one_value_widened(void **state)
{
    (void)state;
    rg_ticks t;
    assert_int_equal(rg_axis_ticks(5406, 5406, &t, NULL, 0), 0);
    assert_true(t.lo < 5406 && t.hi > 5406 && t.n >= 4 && t.n <= 6);
    assert_int_equal(rg_axis_ticks(0, 0, &t, NULL, 0), 0);
    expect_ticks(&t, 0, 1, 0.2, 6);
}

static void test_refused(void **state)
{
    (void)state;
    rg_ticks t;
    char err[128];
    const double bad[][2] = {{NAN, 1},     {0, NAN},     {0, INFINITY}, {-INFINITY, 1}, {-1, 5}, {-5, -1},
                             {3, 2},       {0, DBL_MAX}, {0, 5e-324},   {1e15, 1e15 + 0.125}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        t.n = 99;
        if (rg_axis_ticks(bad[i][0], bad[i][1], &t, err, sizeof err) != 2)
            fail_msg("%g..%g accepted", bad[i][0], bad[i][1]);
        assert_int_equal(t.n, 0);
        assert_non_null(strstr(err, "axis ticks: "));
    }
    assert_int_equal(rg_ticks_loose(0, 1, 1, &t, err, sizeof err), 2);    /* ntick outside 2..8 */
    assert_int_equal(rg_ticks_loose(0, 1, 99, &t, err, sizeof err), 2);
    assert_int_equal(rg_ticks_loose(0, 1, 5, NULL, err, sizeof err), 2);
    assert_true(isnan(rg_tick_at(&t, 0)));                                /* no ticks: no tick 0 */
    assert_true(isnan(rg_tick_at(NULL, 0)));
}

/* Every label of the axis [lo, hi] (ns, or GB/s with to_base 1e9). */
static void labels_of(double lo, double hi, double to_base, const char *base, char out[][48], int *n)
{
    rg_ticks t;
    rg_axis_unit u;
    char err[128];
    assert_int_equal(rg_axis_ticks(lo, hi, &t, err, sizeof err), 0);
    if (rg_axis_unit_pick(&t, to_base, base, &u, err, sizeof err)) fail_msg("%s", err);
    for (int k = 0; k < t.n; k++) rg_axis_label(out[k], 48, rg_tick_at(&t, k), &u);
    *n = t.n;
}

static void test_units_and_labels(void **state)
{
    (void)state;
    char l[RG_TICKS_MAX][48];
    int n;
    labels_of(5401, 5411, 1e-9, "s", l, &n);            /* the 5.401..5.411 us */
    assert_int_equal(n, 4);
    assert_string_equal(l[0], "5.400 " MU "s");
    assert_string_equal(l[1], "5.405 " MU "s");
    assert_string_equal(l[3], "5.415 " MU "s");
    labels_of(518852, 1022300, 1e-9, "s", l, &n);       /* the 518.852..1022.300 us: one unit, ms */
    assert_int_equal(n, 5);
    assert_string_equal(l[0], "0.4 ms");
    assert_string_equal(l[3], "1.0 ms");
    assert_string_equal(l[4], "1.2 ms");
    labels_of(120, 780, 1e-9, "s", l, &n);              /* below a microsecond: ns, whole numbers */
    assert_string_equal(l[0], "0 ns");
    assert_string_equal(l[1], "200 ns");
    assert_string_equal(l[n - 1], "800 ns");
    labels_of(150000, 790000, 1e-9, "s", l, &n);        /* 0.15..0.79 ms: µs, no ".000" */
    assert_string_equal(l[1], "200 " MU "s");
    labels_of(2e9, 4.3e12, 1e-9, "s", l, &n);           /* an hour: seconds, never ks */
    assert_string_equal(l[1], "1000 s");
    labels_of(0, 4800, 1e9, "B/s", l, &n);              /* bandwidth in GB/s: TB/s on this axis */
    assert_string_equal(l[0], "0 TB/s");
    assert_string_equal(l[5], "5 TB/s");
    labels_of(0, 1, 1, "", l, &n);                      /* no unit: no trailing space */
    assert_string_equal(l[1], "0.2");
    for (int k = 0; k < n; k++) assert_null(strstr(l[k], "us"));
}

static void test_unit_refusals(void **state)
{
    (void)state;
    rg_ticks t, none = {0};
    rg_axis_unit u;
    char err[128], s[48];
    assert_int_equal(rg_axis_ticks(1, 2, &t, err, sizeof err), 0);
    assert_int_equal(rg_axis_unit_pick(&none, 1e-9, "s", &u, err, sizeof err), 2);   /* no ticks */
    assert_int_equal(rg_axis_unit_pick(&t, 0, "s", &u, err, sizeof err), 2);
    assert_int_equal(rg_axis_unit_pick(&t, NAN, "s", &u, err, sizeof err), 2);
    assert_int_equal(rg_axis_unit_pick(&t, 1e-9, NULL, &u, err, sizeof err), 2);
    assert_int_equal(rg_axis_unit_pick(&t, 1e-9, "a-very-long-unit", &u, err, sizeof err), 2);
    assert_int_equal(rg_axis_unit_pick(&t, 1e-9, "s", NULL, err, sizeof err), 2);
    assert_int_equal(rg_axis_unit_pick(&t, 1e-9, "s", &u, err, sizeof err), 0);
    rg_axis_label(s, sizeof s, NAN, &u);
    assert_string_equal(s, "");
    rg_axis_label(s, sizeof s, 1, NULL);
    assert_string_equal(s, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heckbert_known_outputs), cmocka_unit_test(test_axis_four_to_six),
        cmocka_unit_test(test_one_value_widened),      cmocka_unit_test(test_refused),
        cmocka_unit_test(test_units_and_labels),       cmocka_unit_test(test_unit_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
