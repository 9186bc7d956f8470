/* SPDX-License-Identifier: Apache-2.0 */
/* test_inputs.c -- the counter-based input generator: determinism, rough
 * normal statistics, the positions mode's ranges, dtype rounding. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "ropegrad_dtype.h"   /* ropegrad_bf16_to_float / ropegrad_f16_to_float, to widen generated grads */

static rg_workload make_w(int index, int64_t B, int64_t S)
{
    rg_workload w;
    memset(&w, 0, sizeof w);
    w.index = index;
    w.batch_size = B;
    w.seq_len = S;
    w.head_dim = 128;
    w.attention_scaling = 0.125f;
    return w;
}

static size_t grad_bytes(const rg_inputs *in)
{
    return (size_t)(in->batch_size * in->seq_len * in->head_dim) * ropegrad_dtype_size(in->dtype);
}

static int same_inputs(const rg_inputs *a, const rg_inputs *b)
{
    const size_t n = (size_t)(a->batch_size * a->seq_len * a->head_dim);
    return !memcmp(a->grad_cos, b->grad_cos, grad_bytes(a)) && !memcmp(a->grad_sin, b->grad_sin, grad_bytes(a)) &&
           !memcmp(a->emb, b->emb, n * sizeof(float)) &&
           !memcmp(a->inv_freq, b->inv_freq, (size_t)(a->batch_size * a->head_dim / 2) * sizeof(float));
}

static void test_determinism(void **state)
{
    char err[RG_ERRLEN];
    rg_workload w = make_w(3, 2, 37);
    rg_inputs a, b, c, d;
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 200, &a, err, sizeof err), 0);
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 200, &b, err, sizeof err), 0);
    assert_true(same_inputs(&a, &b));
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 201, &c, err, sizeof err), 0);
    assert_false(!memcmp(a.grad_cos, c.grad_cos, grad_bytes(&a)));
    assert_false(!memcmp(a.emb, c.emb, 100 * sizeof(float)));
    /* Another workload index is another stream, even with the same seed and sizes. */
    rg_workload w2 = make_w(4, 2, 37);
    assert_int_equal(rg_inputs_make(&w2, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 200, &d, err, sizeof err), 0);
    assert_false(!memcmp(a.grad_sin, d.grad_sin, grad_bytes(&a)));
    /* The four tensors are different streams. */
    assert_false(!memcmp(a.grad_cos, a.grad_sin, grad_bytes(&a)));
    rg_inputs_free(&a);
    rg_inputs_free(&b);
    rg_inputs_free(&c);
    rg_inputs_free(&d);
}

/* Counter-based: element i does not depend on the tensor's size, so a prefix
 * of a longer sequence (same B=1) is the same numbers. */
static void test_counter_based_prefix(void **state)
{
    char err[RG_ERRLEN];
    rg_workload ws = make_w(0, 1, 10), wl = make_w(0, 1, 1000);
    rg_inputs s, l;
    assert_int_equal(rg_inputs_make(&ws, ROPEGRAD_F32, RG_INPUTS_NORMAL, 7, &s, err, sizeof err), 0);
    assert_int_equal(rg_inputs_make(&wl, ROPEGRAD_F32, RG_INPUTS_NORMAL, 7, &l, err, sizeof err), 0);
    assert_memory_equal(s.grad_cos, l.grad_cos, 10 * 128 * sizeof(float));
    assert_memory_equal(s.emb, l.emb, 10 * 128 * sizeof(float));
    rg_inputs_free(&s);
    rg_inputs_free(&l);
}

static void moments(const float *v, size_t n, double *mean, double *var)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++) ss += (v[i] - *mean) * (v[i] - *mean);
    *var = ss / (double)(n - 1);
}

static void test_normal_statistics(void **state)
{
    char err[RG_ERRLEN];
    rg_workload w = make_w(1, 1, 800);   /* 102400 elements per tensor */
    rg_inputs in;
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_F32, RG_INPUTS_NORMAL, 200, &in, err, sizeof err), 0);
    const size_t n = 800 * 128;
    double m, v;
    /* With 1e5 samples the standard error of the mean is ~0.003, of the variance ~0.0045. */
    moments(in.grad_cos, n, &m, &v);
    assert_true(fabs(m) < 0.02 && fabs(v - 1) < 0.03);
    moments(in.grad_sin, n, &m, &v);
    assert_true(fabs(m) < 0.02 && fabs(v - 1) < 0.03);
    moments(in.emb, n, &m, &v);
    assert_true(fabs(m) < 0.02 && fabs(v - 1) < 0.03);
    /* Tails: about 4.55% of |x| > 2 for a standard normal. */
    size_t tail = 0;
    for (size_t i = 0; i < n; i++) tail += fabsf(in.emb[i]) > 2.0f;
    assert_true(fabs((double)tail / (double)n - 0.0455) < 0.004);
    assert_int_equal(in.attention_scaling * 8, 1);
    rg_inputs_free(&in);
}

/* bf16 / f16 grads are the f32 normals rounded: widening them back lands within half an ulp. */
static void test_dtype_rounding(void **state)
{
    char err[RG_ERRLEN];
    rg_workload w = make_w(2, 1, 64);
    rg_inputs f, h, b;
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_F32, RG_INPUTS_NORMAL, 9, &f, err, sizeof err), 0);
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_F16, RG_INPUTS_NORMAL, 9, &h, err, sizeof err), 0);
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 9, &b, err, sizeof err), 0);
    const float *x = f.grad_cos;
    const uint16_t *xh = h.grad_cos, *xb = b.grad_cos;
    for (int i = 0; i < 64 * 128; i++) {
        float vh = ropegrad_f16_to_float(xh[i]), vb = ropegrad_bf16_to_float(xb[i]);
        float ax = fabsf(x[i]);
        assert_true(fabsf(vb - x[i]) <= ax * 0x1p-8f + 1e-30f);     /* bf16: 8 bits of precision */
        assert_true(fabsf(vh - x[i]) <= ax * 0x1p-11f + 0x1p-25f);   /* f16: 11 bits, subnormals below 2^-14 */
    }
    /* emb and inv_freq are float32 in every mode and do not depend on the grads' dtype. */
    assert_memory_equal(f.emb, b.emb, 64 * 128 * sizeof(float));
    rg_inputs_free(&f);
    rg_inputs_free(&h);
    rg_inputs_free(&b);
}

static void test_positions_mode(void **state)
{
    char err[RG_ERRLEN];
    rg_workload w = make_w(5, 3, 1000);
    rg_inputs in;
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_POSITIONS, 200, &in, err, sizeof err), 0);
    const int64_t B = 3, S = 1000, D = 128, H = 64;
    /* inv_freq = 1e6^(-2d/D), the same in every batch. */
    for (int64_t d = 0; d < H; d++) {
        assert_true(in.inv_freq[d] == (float)(1.0 / pow(1e6, 2.0 * d / D)));
        assert_true(in.inv_freq[2 * H + d] == in.inv_freq[d]);
    }
    assert_true(in.inv_freq[0] == 1.0f);
    assert_true(in.attention_scaling == 1.0f); /* not the workload's: real inputs at scale 1 */
    /* emb[.,.,0] is the position (inv_freq[0] = 1): integers in [0, 262144),
     * non-decreasing in s, spanning most of the range; second half = first half. */
    float maxpos = 0;
    for (int64_t b = 0; b < B; b++) {
        float prev = -1;
        for (int64_t s = 0; s < S; s++) {
            const float *e = in.emb + (b * S + s) * D;
            float pos = e[0];
            assert_true(pos >= 0 && pos < 262144 && pos == floorf(pos));
            assert_true(pos >= prev);
            prev = pos;
            if (pos > maxpos) maxpos = pos;
            for (int64_t d = 0; d < H; d++) {
                assert_true(e[d] == e[d + H]);
                assert_true(e[d] == pos * in.inv_freq[d]);
            }
        }
        assert_true(in.emb[(b * S) * D] < 263);   /* starts within one step of 0 */
    }
    assert_true(maxpos > 262000);
    rg_inputs_free(&in);
}

static void test_bad_arguments(void **state)
{
    char err[RG_ERRLEN];
    rg_inputs in;
    rg_workload w = make_w(0, 1, 4);
    assert_int_not_equal(rg_inputs_make(NULL, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
    assert_int_not_equal(rg_inputs_make(&w, (ropegrad_dtype)9, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
    assert_int_not_equal(rg_inputs_make(&w, ROPEGRAD_BF16, (rg_inputs_kind)7, 1, &in, err, sizeof err), 0);
    w.head_dim = 7;
    assert_int_not_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
    w = make_w(0, INT64_MAX / 2, 1000);
    assert_int_not_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
    assert_non_null(strstr(err, "overflow"));
}

static void test_problem(void **state)
{
    char err[RG_ERRLEN];
    rg_workload w = make_w(0, 2, 5);
    rg_inputs in;
    float out[10];
    assert_int_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
    ropegrad_rope_backward_problem p = rg_inputs_problem(&in, out);
    assert_int_equal(ropegrad_rope_backward_validate(&p), 0);
    assert_int_equal(p.inv_freq_batch_stride, 64);
    assert_ptr_equal(p.grad_position_ids, out);
    assert_true(p.attention_scaling == 0.125f);
    rg_inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_counter_based_prefix),
        cmocka_unit_test(test_normal_statistics),
        cmocka_unit_test(test_dtype_rounding),
        cmocka_unit_test(test_positions_mode),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_problem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
