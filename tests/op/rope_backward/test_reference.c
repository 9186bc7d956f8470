/* SPDX-License-Identifier: Apache-2.0 */
/* test_reference.c -- the float64 reference against cases worked out by hand,
 * the validation every entry point shares, and the error strings.
 *
 * The reference is what every other path is checked against, so its own
 * checks must not go through any other implementation: expected values here
 * are either exact by construction (emb = 0, so cos = 1 and sin = 0) or the
 * formula written out term by term for head_dim 4. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ropegrad.h"

/* A valid problem over caller-owned arrays (f32 grads, shared inv_freq). */
static ropegrad_rope_backward_problem make_problem(int64_t B, int64_t S, int64_t D, const void *gc, const void *gs,
                                     const float *emb, const float *inv, float *out)
{
    ropegrad_rope_backward_problem p;
    memset(&p, 0, sizeof p);
    p.batch_size = B;
    p.seq_len = S;
    p.head_dim = D;
    p.grad_dtype = ROPEGRAD_F32;
    p.grad_cos = gc;
    p.grad_sin = gs;
    p.emb = emb;
    p.inv_freq = inv;
    p.inv_freq_batch_stride = 0;
    p.attention_scaling = 1.0f;
    p.grad_position_ids = out;
    return p;
}

/* ---- hand-computed values ------------------------------------------------- */

/* head_dim 2 (H = 1), emb = 0: out = scale * inv * ((gs0+gs1)*1 - (gc0+gc1)*0)
 * = 2 * 0.5 * (3 + 4) = 7, exactly. emb[1] is never read: NaN proves it. */
static void test_head_dim_2_exact(void **state)
{
    (void)state;
    const float gc[2] = {1.0f, 2.0f}, gs[2] = {3.0f, 4.0f};
    const float emb[2] = {0.0f, NAN}, inv[1] = {0.5f};
    ropegrad_rope_backward_problem p = make_problem(1, 1, 2, gc, gs, emb, inv, NULL);
    p.attention_scaling = 2.0f;
    double out = -1.0;
    assert_int_equal(ropegrad_rope_backward_reference(&p, &out), ROPEGRAD_OK);
    assert_true(out == 7.0);
}

/* head_dim 4 (H = 2), every term written out:
 *   scale * ( inv0*((gs0+gs2)*cos e0 - (gc0+gc2)*sin e0)
 *           + inv1*((gs1+gs3)*cos e1 - (gc1+gc3)*sin e1) ) */
static void test_head_dim_4_formula(void **state)
{
    (void)state;
    const float gc[4] = {0.25f, -1.5f, 2.0f, 0.75f}, gs[4] = {1.0f, 3.0f, -0.5f, 0.125f};
    const float emb[4] = {0.5f, -1.25f, NAN, NAN}, inv[2] = {1.0f, 0.0625f};
    ropegrad_rope_backward_problem p = make_problem(1, 1, 4, gc, gs, emb, inv, NULL);
    p.attention_scaling = -0.25f;
    double out = 0.0;
    assert_int_equal(ropegrad_rope_backward_reference(&p, &out), ROPEGRAD_OK);
    const double want = -0.25 * (1.0 * ((1.0 - 0.5) * cos(0.5) - (0.25 + 2.0) * sin(0.5)) +
                                 0.0625 * ((3.0 + 0.125) * cos(-1.25) - (-1.5 + 0.75) * sin(-1.25)));
    assert_true(fabs(out - want) <= 1e-15 * fabs(want));
}

/* Two batches, two positions, each batch with its own inv_freq (stride H = 1),
 * then the same data with one shared vector (stride 0). emb = 0 everywhere so
 * out[b,s] = scale * inv[b] * (gs[b,s,0] + gs[b,s,1]), exactly. */
static void test_batches_and_stride(void **state)
{
    (void)state;
    const float gc[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    const float gs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const float emb[8] = {0, NAN, 0, NAN, 0, NAN, 0, NAN};
    const float inv[2] = {2.0f, 10.0f};
    ropegrad_rope_backward_problem p = make_problem(2, 2, 2, gc, gs, emb, inv, NULL);
    double out[4];
    p.inv_freq_batch_stride = 1;
    assert_int_equal(ropegrad_rope_backward_reference(&p, out), ROPEGRAD_OK);
    assert_true(out[0] == 2.0 * 3 && out[1] == 2.0 * 7 && out[2] == 10.0 * 11 && out[3] == 10.0 * 15);
    p.inv_freq_batch_stride = 0;
    assert_int_equal(ropegrad_rope_backward_reference(&p, out), ROPEGRAD_OK);
    assert_true(out[0] == 2.0 * 3 && out[1] == 2.0 * 7 && out[2] == 2.0 * 11 && out[3] == 2.0 * 15);
}

/* The 16-bit grads are widened exactly: bf16 and f16 encodings of the same
 * values give the f32 answer. f16 0x0001 is the smallest subnormal, 2^-24. */
static void test_half_dtypes_exact(void **state)
{
    (void)state;
    /* values: gc = {1, 2}, gs = {0.5, -3} -> out = inv * (0.5 - 3) = -2.5 * inv */
    const uint16_t gc_bf16[2] = {0x3F80, 0x4000}, gs_bf16[2] = {0x3F00, 0xC040};
    const uint16_t gc_f16[2] = {0x3C00, 0x4000}, gs_f16[2] = {0x3800, 0xC200};
    const float emb[2] = {0.0f, NAN}, inv[1] = {4.0f};
    double out = 0.0;
    ropegrad_rope_backward_problem p = make_problem(1, 1, 2, gc_bf16, gs_bf16, emb, inv, NULL);
    p.grad_dtype = ROPEGRAD_BF16;
    assert_int_equal(ropegrad_rope_backward_reference(&p, &out), ROPEGRAD_OK);
    assert_true(out == -10.0);
    p = make_problem(1, 1, 2, gc_f16, gs_f16, emb, inv, NULL);
    p.grad_dtype = ROPEGRAD_F16;
    assert_int_equal(ropegrad_rope_backward_reference(&p, &out), ROPEGRAD_OK);
    assert_true(out == -10.0);
    /* f16 subnormals: gs = {2^-24, 3 * 2^-24} (0x0001, 0x0003) -> 4 * 2^-24 * inv */
    const uint16_t gs_sub[2] = {0x0001, 0x0003};
    p.grad_sin = gs_sub;
    assert_int_equal(ropegrad_rope_backward_reference(&p, &out), ROPEGRAD_OK);
    assert_true(out == ldexp(16.0, -24));
}

/* ---- validation ------------------------------------------------------------ */

/* Backing storage for the validation tests: never read by validate, but the
 * pointers must be real and aligned. */
static float vbuf[64];
static float vout[8];

static ropegrad_rope_backward_problem valid_problem(void)
{
    return make_problem(2, 3, 4, vbuf, vbuf + 8, vbuf + 16, vbuf + 32, vout);
}

/* Validation never reads a tensor, but it does compare their declared byte
 * ranges (ROPEGRAD_ERR_OVERLAP): a huge problem is given addresses far apart
 * (never dereferenced), each range fitting before the next up to 2^61 bytes. */
static void far_apart(ropegrad_rope_backward_problem *p)
{
    p->grad_cos = (const void *)(uintptr_t)((uint64_t)1 << 12);
    p->grad_sin = (const void *)(uintptr_t)(((uint64_t)1 << 61) + (1 << 12));
    p->emb = (const float *)(uintptr_t)(((uint64_t)1 << 62) + (1 << 12));
    p->grad_position_ids = (float *)(uintptr_t)(((uint64_t)1 << 63) + (1 << 12));
    p->inv_freq = (const float *)(uintptr_t)(((uint64_t)1 << 63) + ((uint64_t)1 << 61) + (1 << 12));
}

static void test_validate_ok(void **state)
{
    (void)state;
    ropegrad_rope_backward_problem p = valid_problem();
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    p.head_dim = 2;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    p.head_dim = ROPEGRAD_MAX_HEAD_DIM;   /* larger than the buffers: their ranges must lie apart */
    far_apart(&p);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    /* Validation looks at sizes only, so a huge (2^40-row) problem is valid. */
    p.batch_size = (int64_t)1 << 20;
    p.seq_len = (int64_t)1 << 20;
    p.head_dim = 128;
    p.inv_freq_batch_stride = 64;
    far_apart(&p);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    p = valid_problem();
    p.grad_dtype = ROPEGRAD_BF16;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    p.grad_dtype = ROPEGRAD_F16;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    p.attention_scaling = -1e30f;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
}

static void test_validate_null(void **state)
{
    (void)state;
    assert_int_equal(ropegrad_rope_backward_validate(NULL), ROPEGRAD_ERR_NULL_PROBLEM);
    double out;
    assert_int_equal(ropegrad_rope_backward_reference(NULL, &out), ROPEGRAD_ERR_NULL_PROBLEM);
    ropegrad_rope_backward_problem p = valid_problem();
    p.grad_cos = NULL;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_NULL_POINTER);
    p = valid_problem();
    p.grad_sin = NULL;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_NULL_POINTER);
    p = valid_problem();
    p.emb = NULL;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_NULL_POINTER);
    p = valid_problem();
    p.inv_freq = NULL;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_NULL_POINTER);
    assert_int_equal(ropegrad_rope_backward_reference(&p, &out), ROPEGRAD_ERR_NULL_POINTER);
    p = valid_problem();
    p.grad_position_ids = NULL;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_NULL_OUTPUT);
    /* The reference writes to its own array: grad_position_ids may be NULL,
     * but its out argument may not. */
    assert_int_equal(ropegrad_rope_backward_reference(&p, NULL), ROPEGRAD_ERR_NULL_OUTPUT);
}

static void test_validate_sizes(void **state)
{
    (void)state;
    const int64_t bad_sizes[] = {0, -1, INT64_MIN};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        ropegrad_rope_backward_problem p = valid_problem();
        p.batch_size = bad_sizes[i];
        assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_BAD_SIZE);
        p = valid_problem();
        p.seq_len = bad_sizes[i];
        assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_BAD_SIZE);
    }
    const int64_t bad_dims[] = {0, 1, 3, 127, -2, ROPEGRAD_MAX_HEAD_DIM + 1, ROPEGRAD_MAX_HEAD_DIM + 2, INT64_MAX};
    for (size_t i = 0; i < sizeof bad_dims / sizeof bad_dims[0]; i++) {
        ropegrad_rope_backward_problem p = valid_problem();
        p.head_dim = bad_dims[i];
        assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_BAD_HEAD_DIM);
    }
}

static void test_validate_overflow(void **state)
{
    (void)state;
    ropegrad_rope_backward_problem p = valid_problem();
    /* B*S itself overflows int64 */
    p.batch_size = INT64_MAX / 2;
    p.seq_len = 3;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_OVERFLOW);
    /* B*S fits, B*S*D*4 bytes does not */
    p.batch_size = (int64_t)1 << 30;
    p.seq_len = (int64_t)1 << 29;
    p.head_dim = 1024;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_OVERFLOW);
    /* the same rows with a small head_dim fit */
    p.head_dim = 2;
    far_apart(&p);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    /* the last batch's inv_freq offset (B-1)*stride + H overflows */
    p = valid_problem();
    p.batch_size = 1000;
    p.inv_freq_batch_stride = INT64_MAX / 100;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_OVERFLOW);
}

static void test_validate_dtype_stride_scale(void **state)
{
    (void)state;
    ropegrad_rope_backward_problem p = valid_problem();
    p.grad_dtype = (ropegrad_dtype)3;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_BAD_DTYPE);
    p.grad_dtype = (ropegrad_dtype)-1;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_BAD_DTYPE);
    p = valid_problem();
    p.inv_freq_batch_stride = -1;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_BAD_STRIDE);
    const float bad_scales[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        p = valid_problem();
        p.attention_scaling = bad_scales[i];
        assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_NONFINITE_SCALE);
    }
}

static void test_validate_misaligned(void **state)
{
    (void)state;
    const char *base = (const char *)vbuf;
    ropegrad_rope_backward_problem p = valid_problem();
    p.grad_cos = base + 1;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_MISALIGNED);
    /* 2-byte aligned is enough for 16-bit grads, not for f32 ones */
    p = valid_problem();
    p.grad_sin = base + 2;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_MISALIGNED);
    p.grad_dtype = ROPEGRAD_BF16;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_OK);
    p.grad_sin = base + 3;
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_MISALIGNED);
    p = valid_problem();
    p.emb = (const float *)(const void *)(base + 2);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_MISALIGNED);
    p = valid_problem();
    p.inv_freq = (const float *)(const void *)(base + 1);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_MISALIGNED);
    p = valid_problem();
    p.grad_position_ids = (float *)(void *)((char *)vout + 2);
    assert_int_equal(ropegrad_rope_backward_validate(&p), ROPEGRAD_ERR_MISALIGNED);
}

/* Every entry point that takes a problem runs the same checks. */
static void test_entry_points_validate(void **state)
{
    (void)state;
    ropegrad_rope_backward_problem p = valid_problem();
    p.head_dim = 3;
    double out;
    assert_int_equal(ropegrad_rope_backward_reference(&p, &out), ROPEGRAD_ERR_BAD_HEAD_DIM);
    assert_int_equal(ropegrad_rope_backward_cpu(&p, 1), ROPEGRAD_ERR_BAD_HEAD_DIM);
    p = valid_problem();
    assert_int_equal(ropegrad_rope_backward_cpu(&p, -1), ROPEGRAD_ERR_BAD_THREADS);
}

/* ---- strings ----------------------------------------------------------------- */

static void test_strerror(void **state)
{
    (void)state;
    const char *unknown = ropegrad_strerror(-12345);
    assert_non_null(unknown);
    assert_true(strlen(unknown) > 0);
    assert_string_equal(ropegrad_strerror(ROPEGRAD_ERR__COUNT), unknown);
    assert_string_equal(ropegrad_strerror(1 << 30), unknown);
    for (int code = 0; code < ROPEGRAD_ERR__COUNT; code++) {
        const char *msg = ropegrad_strerror(code);
        assert_non_null(msg);
        assert_true(strlen(msg) > 0);
        /* every known code has its own message, none falls to the default */
        assert_string_not_equal(msg, unknown);
        for (int other = 0; other < code; other++) assert_string_not_equal(msg, ropegrad_strerror(other));
    }
}

static void test_version_and_dtype_size(void **state)
{
    (void)state;
    const char *v = ropegrad_version();
    assert_non_null(v);
    assert_true(strlen(v) >= 5 && strchr(v, '.') != NULL);
    assert_int_equal(ropegrad_dtype_size(ROPEGRAD_BF16), 2);
    assert_int_equal(ropegrad_dtype_size(ROPEGRAD_F16), 2);
    assert_int_equal(ropegrad_dtype_size(ROPEGRAD_F32), 4);
    assert_int_equal(ropegrad_dtype_size((ropegrad_dtype)7), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_dim_2_exact),
        cmocka_unit_test(test_head_dim_4_formula),
        cmocka_unit_test(test_batches_and_stride),
        cmocka_unit_test(test_half_dtypes_exact),
        cmocka_unit_test(test_validate_ok),
        cmocka_unit_test(test_validate_null),
        cmocka_unit_test(test_validate_sizes),
        cmocka_unit_test(test_validate_overflow),
        cmocka_unit_test(test_validate_dtype_stride_scale),
        cmocka_unit_test(test_validate_misaligned),
        cmocka_unit_test(test_entry_points_validate),
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_version_and_dtype_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
