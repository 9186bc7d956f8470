/* SPDX-License-Identifier: Apache-2.0 */
/* test_dtype.c -- include/ropegrad_dtype.h, the bf16 and fp16 widening that
 * the library, the harness's float32-reference ground truth and
 * examples/plugin-014 share: every one of the 65536 bit patterns of each
 * type, against an independent reading of the formats, and the element
 * reader's choice by dtype. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ropegrad_dtype.h"

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* binary16 read from its definition (in double, where every value is exact):
 * (-1)^s * 2^-14 * m/1024 for exponent 0, (-1)^s * 2^(e-15) * (1 + m/1024)
 * otherwise, Inf or NaN for exponent 31. */
static double f16_by_definition(uint16_t h)
{
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m / 1024.0, -14);
    else v = ldexp(1.0 + (double)m / 1024.0, e - 15);
    return s ? -v : v;
}

static void test_f16_every_pattern(void **state)
{
    (void)state;
    for (uint32_t h = 0; h <= 0xffffu; h++) {
        const float f = ropegrad_f16_to_float((uint16_t)h);
        const double want = f16_by_definition((uint16_t)h);
        if (isnan(want)) {
            /* A NaN keeps its sign and payload: the fp16 mantissa on top of float32's. */
            assert_true(isnan(f));
            assert_int_equal(float_bits(f), ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13));
        } else {
            assert_true((double)f == want);
            assert_int_equal(float_bits(f) >> 31, h >> 15);   /* -0 stays -0 */
        }
    }
}

static void test_bf16_every_pattern(void **state)
{
    (void)state;
    for (uint32_t h = 0; h <= 0xffffu; h++) {
        const float f = ropegrad_bf16_to_float((uint16_t)h);
        assert_int_equal(float_bits(f), h << 16);
        if (((h >> 7) & 0xffu) != 0xffu) {   /* finite: the value the format defines */
            const int s = h >> 15, e = (h >> 7) & 0xff, m = h & 127;
            const double v = e ? ldexp(1.0 + m / 128.0, e - 127) : ldexp(m / 128.0, -126);
            assert_true((double)f == (s ? -v : v));
        }
    }
}

static void test_element_by_dtype(void **state)
{
    (void)state;
    const uint16_t bf16[] = {0x0000, 0x3fc0, 0xc020};   /* 0, 1.5, -2.5 */
    const uint16_t f16[] = {0x0000, 0xbe00, 0x0001};    /* 0, -1.5, 2^-24 */
    const float f32[] = {0.0f, 2.25f, -0.125f};
    assert_true(ropegrad_element_to_float(bf16, ROPEGRAD_BF16, 1) == 1.5f);
    assert_true(ropegrad_element_to_float(bf16, ROPEGRAD_BF16, 2) == -2.5f);
    assert_true(ropegrad_element_to_float(f16, ROPEGRAD_F16, 1) == -1.5f);
    assert_true(ropegrad_element_to_float(f16, ROPEGRAD_F16, 2) == ldexpf(1.0f, -24));
    assert_true(ropegrad_element_to_float(f32, ROPEGRAD_F32, 1) == 2.25f);
    assert_true(ropegrad_element_to_float(f32, ROPEGRAD_F32, 2) == -0.125f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_every_pattern),
        cmocka_unit_test(test_bf16_every_pattern),
        cmocka_unit_test(test_element_by_dtype),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
