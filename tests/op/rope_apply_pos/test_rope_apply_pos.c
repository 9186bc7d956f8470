/* SPDX-License-Identifier: Apache-2.0 */
/* test_rope_apply_pos.c -- applying the rotary embedding from positions
 * (forward and backward) on the CPU: against the float64 references over
 * every style, rotary_dim, dtype pair, layout, GQA ratio, int32/int64
 * positions, packed sequences and positions up to 3e5 (pos_common.h); in
 * place and one thread bitwise equal to out of place on all threads; the
 * tail beyond rotary_dim copied bit for bit; equal bit for bit to 088 (and
 * the backward to 068's grad_q, grad_k) given 011's table of the same
 * positions; packed sequences equal to the same tokens' explicit positions;
 * every refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "pos_common.h"

/* bytes of heap: a copy of src, or (src NULL) 0xff bytes (NaN in every dtype). */
static void *heap(const void *src, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    assert_non_null(p);
    if (src) memcpy(p, src, bytes);
    else memset(p, 0xff, bytes);
    return p;
}

typedef int (*rp_cpu_fn)(const ropegrad_rope_apply_pos_problem *, int);

/* One op (fn, its reference ref): within bound; the tail copied; in place on
 * one thread bitwise the same. Returns the out-of-place q_out, k_out. */
static void run_op(const rp_data *d, rp_cpu_fn fn, const double *ref, const char *name, void **q_out, void **k_out)
{
    const ropegrad_dtype dt = d->p.shape.dtype;
    void *qo = heap(NULL, d->q_bytes), *ko = heap(NULL, d->k_bytes);
    ropegrad_rope_apply_pos_problem p = d->p;
    p.q_out = qo, p.k_out = ko;
    assert_int_equal(fn(&p, 0), ROPEGRAD_OK);
    assert_int_equal(rp_count_bad(name, qo, dt, ref, d->n_q), 0);
    assert_int_equal(rp_count_bad(name, ko, dt, ref + d->n_q, d->n_k), 0);
    assert_false(rp_tail_differs(d, d->q, qo, d->n_q));
    assert_false(rp_tail_differs(d, d->k, ko, d->n_k));

    ropegrad_rope_apply_pos_problem ip = d->p;
    ip.q = ip.q_out = heap(d->q, d->q_bytes);
    ip.k = ip.k_out = heap(d->k, d->k_bytes);
    assert_int_equal(fn(&ip, 1), ROPEGRAD_OK);
    assert_memory_equal(ip.q_out, qo, d->q_bytes);
    assert_memory_equal(ip.k_out, ko, d->k_bytes);
    free(ip.q_out);
    free(ip.k_out);
    *q_out = qo, *k_out = ko;
}

/* 088 (forward) and 068 (backward, grad_cos/grad_sin not wanted) on 011's
 * table of the case's positions: the same bytes as out (fwd) and grads (bwd). */
static void assert_equals_table_path(const rp_data *d, const void *qo, const void *ko, const void *gq, const void *gk)
{
    void *cos = NULL, *sin = NULL;
    assert_int_equal(rp_table(d, &cos, &sin), 0);
    ropegrad_rope_apply_shape s = d->p.shape;
    s.cos_sin_batch_stride = s.seq_len * s.head_dim;
    void *tq = heap(NULL, d->q_bytes), *tk = heap(NULL, d->k_bytes);
    ropegrad_rope_apply_problem f = {s, d->q, d->k, cos, sin, tq, tk};
    assert_int_equal(ropegrad_rope_apply_cpu(&f, 0), ROPEGRAD_OK);
    assert_memory_equal(tq, qo, d->q_bytes);
    assert_memory_equal(tk, ko, d->k_bytes);
    ropegrad_rope_apply_backward_problem b = {s, d->q, d->k, NULL, NULL, cos, sin, tq, tk, NULL, NULL};
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_OK);
    assert_memory_equal(tq, gq, d->q_bytes);
    assert_memory_equal(tk, gk, d->k_bytes);
    free(tq);
    free(tk);
    free(cos);
    free(sin);
}

static void run_case(const rp_case *c, uint64_t seed, const char *name)
{
    rp_data d;
    assert_int_equal(rp_make(&d, c, seed), 0);
    void *qo, *ko, *gq, *gk;
    run_op(&d, ropegrad_rope_apply_pos_cpu, d.ref_fwd, name, &qo, &ko);
    run_op(&d, ropegrad_rope_apply_pos_backward_cpu, d.ref_bwd, name, &gq, &gk);
    const int64_t R = rg_pos_rotary_dim(&d.p);
    if (c->style == ROPEGRAD_ROTARY_HALF && R == c->D && (c->cdt == ROPEGRAD_BF16 || c->cdt == ROPEGRAD_F32))
        assert_equals_table_path(&d, qo, ko, gq, gk);
    if (c->nseq > 0) {   /* the same tokens at their explicit positions: the same bytes */
        ropegrad_rope_apply_pos_problem p = d.p;
        p.cu_seqlens = NULL, p.num_seqs = 0, p.position_ids = d.pos64, p.position_bits = 64;
        p.q_out = heap(NULL, d.q_bytes), p.k_out = heap(NULL, d.k_bytes);
        assert_int_equal(ropegrad_rope_apply_pos_cpu(&p, 0), ROPEGRAD_OK);
        assert_memory_equal(p.q_out, qo, d.q_bytes);
        assert_memory_equal(p.k_out, ko, d.k_bytes);
        free(p.q_out);
        free(p.k_out);
    }
    free(qo);
    free(ko);
    free(gq);
    free(gk);
    rp_free(&d);
}

static void test_cases(void **state)
{
    (void)state;
    char name[64];
    for (int i = 0; i < RP_N_CASES; i++) {
        snprintf(name, sizeof name, "case %d", i);
        run_case(&rp_cases[i], 100 + (uint64_t)i, name);
    }
}

/* 088's equality on more shapes: every dtype and both layouts, GQA, at
 * head_dim 128 and 64, bf16 and f32 tables, scale 1 and not. */
static void test_table_path_equal(void **state)
{
    (void)state;
    static const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    static const ropegrad_dtype cdts[] = {ROPEGRAD_BF16, ROPEGRAD_F32};
    char name[64];
    uint64_t seed = 500;
    for (int t = 0; t < 3; t++)
        for (int cs = 0; cs < 2; cs++)
            for (int layout = 0; layout < 2; layout++) {
                const rp_case c = {2,    17, layout ? 64 : 128, 0, 8, 2, (ropegrad_layout)layout, dts[t], cdts[cs],
                                   ROPEGRAD_ROTARY_HALF, 64, 0, cs ? 1.0f : 0.8f, 131072};
                snprintf(name, sizeof name, "table dt %d cs %d layout %d", t, cs, layout);
                run_case(&c, seed++, name);
            }
}

/* The cos/sin values themselves: f32 q rows [1..1, 0..0] give out = [c, n]
 * exactly; each against the op's definition computed here in double, for
 * arguments up to 3e5 rad and beyond the fast sin/cos range (to 1e8). */
static void test_cos_sin_values(void **state)
{
    (void)state;
    static const ropegrad_dtype cdts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    enum { S = 257, D = 64, H = 32 };
    static float q[S * D], out[S * D], k[S * D], ko[S * D], inv[H];
    static int64_t pos[S];
    for (int64_t t = 0; t < S; t++)
        for (int j = 0; j < D; j++) q[t * D + j] = j < H ? 1.0f : 0.0f;
    for (int i = 0; i < H; i++) inv[i] = (float)(1.0 / pow(10000.0, (double)(2 * i) / D));
    for (int ci = 0; ci < 3; ci++)
        for (int sc = 0; sc < 4; sc++) {   /* scale 1 and not; positions to 3e5, then to 1e8 (beyond 4e6 rad) */
            const float scale = sc & 1 ? 0.7071f : 1.0f;
            for (int64_t t = 0; t < S; t++) pos[t] = t * (sc & 2 ? 389117 : 1171);
            const ropegrad_rope_apply_shape s = {1, S, D, 1, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, cdts[ci], 0};
            const ropegrad_rope_apply_pos_problem p = {s, ROPEGRAD_ROTARY_HALF, 0, pos, 64, NULL, 0, inv, scale,
                                                       q, k, out, ko};
            assert_int_equal(ropegrad_rope_apply_pos_cpu(&p, 0), ROPEGRAD_OK);
            for (int64_t t = 0; t < S; t++)
                for (int i = 0; i < H; i++) {
                    const double x = (double)((float)pos[t] * inv[i]);
                    const double c = (double)scale * cos(x), n = (double)scale * sin(x);
                    float ec, en;
                    if (cdts[ci] == ROPEGRAD_BF16)
                        ec = ropegrad_bf16_to_float(rg_bf16_rn_double(c)), en = ropegrad_bf16_to_float(rg_bf16_rn_double(n));
                    else if (cdts[ci] == ROPEGRAD_F16)
                        ec = rg_pos_f16_rn_double(c), en = rg_pos_f16_rn_double(n);   /* test_f16_rounding checks it */
                    else
                        ec = (float)c, en = (float)n;
                    if (out[t * D + i] != ec || out[t * D + i + H] != en)
                        fail_msg("cdt %d scale %g token %lld pair %d: c %.9g n %.9g, expected %.9g %.9g", ci,
                                 (double)scale, (long long)t, i, (double)out[t * D + i], (double)out[t * D + i + H],
                                 (double)ec, (double)en);
                }
        }
}

/* rg_pos_f16_rn_double against a plain double-to-f16 rounding by search,
 * including exact midpoints, subnormals and the overflow edge. */
static void test_f16_rounding(void **state)
{
    (void)state;
    static const double v[] = {1.0, 1.0 + 0x1p-11, 1.0 + 0x1p-11 + 0x1p-40, 1.0 + 3 * 0x1p-11, 65504.0, 65519.99,
                               65520.0, 0x1p-24, 0x1p-25, 0x1p-25 + 0x1p-60, 3 * 0x1p-25, 6.1e-5, -0.3333333333333,
                               1e-30, -2.0 - 0x1p-10 - 0x1p-50};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const float got = rg_pos_f16_rn_double(v[i]);
        /* nearest f16 by scanning the positive f16 values (ties: even bit pattern) */
        const double a = fabs(v[i]);
        uint16_t best = 0;
        double bd = INFINITY;
        for (uint32_t h = 0; h < 0x7c00u; h++) {
            const double dh = (double)ropegrad_f16_to_float((uint16_t)h), e = fabs(dh - a);
            if (e < bd || (e == bd && !(h & 1u))) bd = e, best = (uint16_t)h;
        }
        double want = (double)ropegrad_f16_to_float(best);
        if (a >= 65520.0) want = INFINITY;
        if (v[i] < 0) want = -want;
        if ((double)got != want) fail_msg("value %.17g: got %.17g, want %.17g", v[i], (double)got, want);
    }
}

/* Every refusal, with the code the header gives it. */
static void test_refusals(void **state)
{
    (void)state;
    static uint16_t q[4 * 64], k[4 * 64], qo[4 * 64], ko[4 * 64];
    static int64_t ids[4] = {0, 1, 2, 3};
    static int32_t cu[3] = {0, 1, 4};
    static float inv[32];
    const ropegrad_rope_apply_shape s = {1, 4, 64, 1, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, 0};
    const ropegrad_rope_apply_pos_problem ok = {s, ROPEGRAD_ROTARY_HALF, 0, ids, 64, NULL, 0, inv, 1.0f, q, k, qo, ko};
    ropegrad_rope_apply_pos_problem p;
    double ref[2 * 4 * 64];
    assert_int_equal(ropegrad_rope_apply_pos_validate(&ok), ROPEGRAD_OK);
    assert_int_equal(ropegrad_rope_apply_pos_validate(NULL), ROPEGRAD_ERR_NULL_PROBLEM);
    assert_int_equal(ropegrad_rope_apply_pos_backward_validate(NULL), ROPEGRAD_ERR_NULL_PROBLEM);
    assert_int_equal(ropegrad_rope_apply_pos_cpu(&ok, -1), ROPEGRAD_ERR_BAD_THREADS);
    assert_int_equal(ropegrad_rope_apply_pos_reference(&ok, NULL), ROPEGRAD_ERR_NULL_OUTPUT);
#define RP_EXPECT(code, stmt)                                                                                         \
    do {                                                                                                              \
        p = ok;                                                                                                       \
        stmt;                                                                                                         \
        assert_int_equal(ropegrad_rope_apply_pos_validate(&p), code);                                                 \
        assert_int_equal(ropegrad_rope_apply_pos_backward_validate(&p), code);                                        \
        assert_int_equal(ropegrad_rope_apply_pos_cpu(&p, 0), code);                                                   \
        assert_int_equal(ropegrad_rope_apply_pos_backward_cpu(&p, 0), code);                                          \
        assert_int_equal(ropegrad_rope_apply_pos_cuda(&p, NULL), code);                                               \
        assert_int_equal(ropegrad_rope_apply_pos_backward_cuda(&p, NULL), code);                                      \
    } while (0)
    RP_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.q = NULL);
    RP_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.k = NULL);
    RP_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.inv_freq = NULL);
    RP_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.position_ids = NULL);
    RP_EXPECT(ROPEGRAD_ERR_NULL_OUTPUT, p.q_out = NULL);
    RP_EXPECT(ROPEGRAD_ERR_NULL_OUTPUT, p.k_out = NULL);
    RP_EXPECT(ROPEGRAD_ERR_BAD_SIZE, p.shape.seq_len = 0);
    RP_EXPECT(ROPEGRAD_ERR_BAD_SIZE, p.shape.num_kv_heads = 0);
    RP_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.shape.head_dim = 63);
    RP_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.shape.head_dim = 2048);
    RP_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.rotary_dim = 31);
    RP_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.rotary_dim = 66);
    RP_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.rotary_dim = -2);
    RP_EXPECT(ROPEGRAD_ERR_BAD_DTYPE, p.shape.dtype = (ropegrad_dtype)7);
    RP_EXPECT(ROPEGRAD_ERR_BAD_DTYPE, p.shape.cos_sin_dtype = (ropegrad_dtype)-1);
    RP_EXPECT(ROPEGRAD_ERR_BAD_DTYPE, p.position_bits = 16);
    RP_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, p.style = (ropegrad_rotary_style)2);
    RP_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, p.shape.layout = (ropegrad_layout)2);
    RP_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, p.shape.cos_sin_batch_stride = 4 * 64);
    RP_EXPECT(ROPEGRAD_ERR_NONFINITE_SCALE, p.attention_scaling = NAN);
    RP_EXPECT(ROPEGRAD_ERR_NONFINITE_SCALE, p.attention_scaling = INFINITY);
    RP_EXPECT(ROPEGRAD_ERR_OVERFLOW, p.shape.batch_size = INT64_MAX / 2);
    RP_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.q = (const char *)q + 1);
    RP_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.k_out = (char *)ko + 1);
    RP_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.position_ids = (const char *)ids + 4);
    RP_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.inv_freq = (const float *)((const char *)inv + 2));
    /* overlaps: an output over any tensor but its own input (exactly) */
    RP_EXPECT(ROPEGRAD_ERR_OVERLAP, p.q_out = k);
    RP_EXPECT(ROPEGRAD_ERR_OVERLAP, p.q_out = q + 2);
    RP_EXPECT(ROPEGRAD_ERR_OVERLAP, p.k_out = qo);
    RP_EXPECT(ROPEGRAD_ERR_OVERLAP, p.k_out = (void *)inv);
    RP_EXPECT(ROPEGRAD_ERR_OVERLAP, p.q_out = (void *)((char *)ids + 16));
    /* packed sequences: BSHD with B = 1, num_seqs >= 1; their cu_seqlens contents checked on the CPU */
    RP_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, (p.cu_seqlens = cu, p.num_seqs = 2, p.shape.layout = ROPEGRAD_LAYOUT_BHSD));
    RP_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, (p.cu_seqlens = cu, p.num_seqs = 2, p.shape.batch_size = 2, p.shape.seq_len = 2));
    RP_EXPECT(ROPEGRAD_ERR_BAD_SIZE, (p.cu_seqlens = cu, p.num_seqs = 0));
    RP_EXPECT(ROPEGRAD_ERR_OVERLAP, (p.cu_seqlens = cu, p.num_seqs = 2, p.q_out = cu));
#undef RP_EXPECT
    p = ok;
    p.cu_seqlens = cu, p.num_seqs = 2, p.position_ids = NULL;
    assert_int_equal(ropegrad_rope_apply_pos_validate(&p), ROPEGRAD_OK);
    assert_int_equal(ropegrad_rope_apply_pos_cpu(&p, 0), ROPEGRAD_OK);
    static const int32_t bad_cu[3][3] = {{1, 2, 4}, {0, 5, 4}, {0, 1, 3}};
    for (int i = 0; i < 3; i++) {
        p.cu_seqlens = bad_cu[i];
        assert_int_equal(ropegrad_rope_apply_pos_validate(&p), ROPEGRAD_OK);   /* contents not read */
        assert_int_equal(ropegrad_rope_apply_pos_cpu(&p, 0), ROPEGRAD_ERR_BAD_SIZE);
        assert_int_equal(ropegrad_rope_apply_pos_backward_cpu(&p, 0), ROPEGRAD_ERR_BAD_SIZE);
        assert_int_equal(ropegrad_rope_apply_pos_reference(&p, ref), ROPEGRAD_ERR_BAD_SIZE);
        assert_int_equal(ropegrad_rope_apply_pos_backward_reference(&p, ref), ROPEGRAD_ERR_BAD_SIZE);
    }
    /* the reference checks no output; a valid problem's CUDA call without a GPU says so */
    p = ok;
    p.q_out = p.k_out = NULL;
    assert_int_equal(ropegrad_rope_apply_pos_reference(&p, ref), ROPEGRAD_OK);
    if (!ropegrad_cuda_available()) assert_int_equal(ropegrad_rope_apply_pos_cuda(&ok, NULL), ROPEGRAD_ERR_NO_CUDA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),       cmocka_unit_test(test_table_path_equal), cmocka_unit_test(test_cos_sin_values),
        cmocka_unit_test(test_f16_rounding), cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
