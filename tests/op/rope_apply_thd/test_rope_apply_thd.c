/* SPDX-License-Identifier: Apache-2.0 */
/* test_rope_apply_thd.c -- applying the rotary embedding to packed sequences
 * from one table (forward and backward) on the CPU: against the float64
 * references over every style, rotary_dim, dtype pair, GQA ratio, cu_seqlens
 * and int32/int64 position_ids (thd_common.h); in place and one thread
 * bitwise equal to out of place on all threads; the tail beyond rotary_dim
 * copied bit for bit; equal bit for bit to 088 (and the backward to 068's
 * grad_q, grad_k) on the table gathered per token by hand, the references
 * equal exactly; cu_seqlens equal to the same tokens' explicit positions;
 * positions beyond the table, bad cu_seqlens and every other refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "thd_common.h"

/* bytes of heap: a copy of src, or (src NULL) 0xff bytes (NaN in every dtype). */
static void *heap(const void *src, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    assert_non_null(p);
    if (src) memcpy(p, src, bytes);
    else memset(p, 0xff, bytes);
    return p;
}

typedef int (*rt_cpu_fn)(const ropegrad_rope_apply_thd_problem *, int);

/* One op (fn, its reference ref): within bound; the tail copied; in place on
 * one thread bitwise the same. Returns the out-of-place q_out, k_out. */
static void run_op(const rt_data *d, rt_cpu_fn fn, const double *ref, const char *name, void **q_out, void **k_out)
{
    const ropegrad_dtype dt = d->p.shape.dtype;
    void *qo = heap(NULL, d->q_bytes), *ko = heap(NULL, d->k_bytes);
    ropegrad_rope_apply_thd_problem p = d->p;
    p.q_out = qo, p.k_out = ko;
    assert_int_equal(fn(&p, 0), ROPEGRAD_OK);
    assert_int_equal(rp_count_bad(name, qo, dt, ref, d->n_q), 0);
    assert_int_equal(rp_count_bad(name, ko, dt, ref + d->n_q, d->n_k), 0);
    assert_false(rt_tail_differs(d, d->q, qo, d->n_q));
    assert_false(rt_tail_differs(d, d->k, ko, d->n_k));

    ropegrad_rope_apply_thd_problem ip = d->p;
    ip.q = ip.q_out = heap(d->q, d->q_bytes);
    ip.k = ip.k_out = heap(d->k, d->k_bytes);
    assert_int_equal(fn(&ip, 1), ROPEGRAD_OK);
    assert_memory_equal(ip.q_out, qo, d->q_bytes);
    assert_memory_equal(ip.k_out, ko, d->k_bytes);
    free(ip.q_out);
    free(ip.k_out);
    *q_out = qo, *k_out = ko;
}

/* 088 (forward) and 068 (backward, grad_cos/grad_sin not wanted) on the
 * per-token table gathered by hand: the same bytes as out (fwd) and grads
 * (bwd); their references the same doubles. */
static void assert_equals_table_path(const rt_data *d, const void *qo, const void *ko, const void *gq, const void *gk)
{
    void *cos = NULL, *sin = NULL;
    assert_int_equal(rt_gather(d, &cos, &sin), 0);
    void *tq = heap(NULL, d->q_bytes), *tk = heap(NULL, d->k_bytes);
    ropegrad_rope_apply_problem f = rt_table_problem(d, cos, sin);
    f.q_out = tq, f.k_out = tk;
    assert_int_equal(ropegrad_rope_apply_cpu(&f, 0), ROPEGRAD_OK);
    assert_memory_equal(tq, qo, d->q_bytes);
    assert_memory_equal(tk, ko, d->k_bytes);
    double *ref = malloc((size_t)(d->n_q + d->n_k) * sizeof(double));
    assert_non_null(ref);
    assert_int_equal(ropegrad_rope_apply_reference(&f, ref), ROPEGRAD_OK);
    assert_memory_equal(ref, d->ref_fwd, (size_t)(d->n_q + d->n_k) * sizeof(double));
    ropegrad_rope_apply_backward_problem b = {d->p.shape, d->q, d->k, NULL, NULL, cos, sin, tq, tk, NULL, NULL};
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_OK);
    assert_memory_equal(tq, gq, d->q_bytes);
    assert_memory_equal(tk, gk, d->k_bytes);
    free(ref);
    free(tq);
    free(tk);
    free(cos);
    free(sin);
}

static void run_case(const rt_case *c, uint64_t seed, const char *name)
{
    rt_data d;
    assert_int_equal(rt_make(&d, c, seed), 0);
    void *qo, *ko, *gq, *gk;
    run_op(&d, ropegrad_rope_apply_thd_cpu, d.ref_fwd, name, &qo, &ko);
    run_op(&d, ropegrad_rope_apply_thd_backward_cpu, d.ref_bwd, name, &gq, &gk);
    assert_equals_table_path(&d, qo, ko, gq, gk);
    if (c->nseq > 0) {   /* the same tokens at their explicit positions: the same bytes */
        ropegrad_rope_apply_thd_problem p = d.p;
        p.cu_seqlens = NULL, p.num_seqs = 0, p.position_ids = d.pos64, p.position_bits = 64;
        p.q_out = heap(NULL, d.q_bytes), p.k_out = heap(NULL, d.k_bytes);
        assert_int_equal(ropegrad_rope_apply_thd_cpu(&p, 0), ROPEGRAD_OK);
        assert_memory_equal(p.q_out, qo, d.q_bytes);
        assert_memory_equal(p.k_out, ko, d.k_bytes);
        free(p.q_out);
        free(p.k_out);
    }
    free(qo);
    free(ko);
    free(gq);
    free(gk);
    rt_free(&d);
}

static void test_cases(void **state)
{
    (void)state;
    char name[64];
    for (int i = 0; i < RT_N_CASES; i++) {
        snprintf(name, sizeof name, "case %d", i);
        run_case(&rt_cases[i], 100 + (uint64_t)i, name);
    }
}

/* The reference itself: a hand-rotated element of a tiny case (q [2,1,4],
 * k [2,1,4], rotate-half, table rows 1 and 0 by cu_seqlens {0, 1, 2}... ), so
 * a reference reading the wrong row, column or sign fails here. */
static void test_reference_by_hand(void **state)
{
    (void)state;
    static const float q[8] = {1, 2, 3, 4, 5, 6, 7, 8}, k[8] = {-1, 0.5f, 2, -3, 1, 1, 1, 1};
    static const float cos[8] = {0.5f, 0.25f, -1, 2, 0.75f, 0.125f, 3, -2};   /* [2, 4] */
    static const float sin[8] = {1, -1, 0.5f, 0.25f, -0.5f, 2, 1.5f, 1};
    static const int32_t ids[2] = {1, 0};
    const ropegrad_rope_apply_shape s = {1, 2, 4, 1, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F32, 0,
                                         ROPEGRAD_ROTARY_HALF, 0};
    ropegrad_rope_apply_thd_problem p = {s, cos, sin, 2, NULL, 0, ids, 32, q, k, NULL, NULL};
    double out[16];
    assert_int_equal(ropegrad_rope_apply_thd_reference(&p, out), ROPEGRAD_OK);
    /* token 0 of q at row 1: pairs (0, 2), (1, 3) */
    assert_true(out[0] == 1.0 * 0.75 - 3.0 * -0.5);
    assert_true(out[2] == 3.0 * 3.0 + 1.0 * 1.5);
    assert_true(out[1] == 2.0 * 0.125 - 4.0 * 2.0);
    assert_true(out[3] == 4.0 * -2.0 + 2.0 * 1.0);
    /* token 1 of k (q's 8 values first) at row 0, backward: the other sign */
    assert_int_equal(ropegrad_rope_apply_thd_backward_reference(&p, out), ROPEGRAD_OK);
    assert_true(out[8 + 4] == 1.0 * 0.5 + 1.0 * 1.0);
    assert_true(out[8 + 6] == 1.0 * -1.0 - 1.0 * 0.5);
    /* interleaved: pairs (0, 1), (2, 3) */
    p.shape.style = ROPEGRAD_ROTARY_INTERLEAVED;
    assert_int_equal(ropegrad_rope_apply_thd_reference(&p, out), ROPEGRAD_OK);
    assert_true(out[0] == 1.0 * 0.75 - 2.0 * -0.5);
    assert_true(out[1] == 2.0 * 0.125 + 1.0 * 2.0);
}

static void test_refusals(void **state)
{
    (void)state;
    static uint16_t q[4 * 64], k[4 * 64], qo[4 * 64], ko[4 * 64], cos[4 * 64], sin[4 * 64];
    static int64_t ids[4] = {0, 1, 2, 3};
    static int32_t ids32[4] = {3, 2, 1, 0};
    static int32_t cu[3] = {0, 1, 4};
    const ropegrad_rope_apply_shape s = {1,    4, 64, 1, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16,
                                         0,    ROPEGRAD_ROTARY_HALF, 0};
    const ropegrad_rope_apply_thd_problem ok = {s, cos, sin, 4, NULL, 0, ids, 64, q, k, qo, ko};
    ropegrad_rope_apply_thd_problem p;
    double ref[2 * 4 * 64];
    assert_int_equal(ropegrad_rope_apply_thd_validate(&ok), ROPEGRAD_OK);
    assert_int_equal(ropegrad_rope_apply_thd_validate(NULL), ROPEGRAD_ERR_NULL_PROBLEM);
    assert_int_equal(ropegrad_rope_apply_thd_backward_validate(NULL), ROPEGRAD_ERR_NULL_PROBLEM);
    assert_int_equal(ropegrad_rope_apply_thd_cpu(&ok, -1), ROPEGRAD_ERR_BAD_THREADS);
    assert_int_equal(ropegrad_rope_apply_thd_reference(&ok, NULL), ROPEGRAD_ERR_NULL_OUTPUT);
#define RT_EXPECT(code, stmt)                                                                                         \
    do {                                                                                                              \
        p = ok;                                                                                                       \
        stmt;                                                                                                         \
        assert_int_equal(ropegrad_rope_apply_thd_validate(&p), code);                                                 \
        assert_int_equal(ropegrad_rope_apply_thd_backward_validate(&p), code);                                        \
        assert_int_equal(ropegrad_rope_apply_thd_cpu(&p, 0), code);                                                   \
        assert_int_equal(ropegrad_rope_apply_thd_backward_cpu(&p, 0), code);                                          \
        assert_int_equal(ropegrad_rope_apply_thd_cuda(&p, NULL), code);                                               \
        assert_int_equal(ropegrad_rope_apply_thd_backward_cuda(&p, NULL), code);                                      \
    } while (0)
    RT_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.q = NULL);
    RT_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.k = NULL);
    RT_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.cos = NULL);
    RT_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.sin = NULL);
    RT_EXPECT(ROPEGRAD_ERR_NULL_POINTER, p.position_ids = NULL);
    RT_EXPECT(ROPEGRAD_ERR_NULL_OUTPUT, p.q_out = NULL);
    RT_EXPECT(ROPEGRAD_ERR_NULL_OUTPUT, p.k_out = NULL);
    RT_EXPECT(ROPEGRAD_ERR_BAD_SIZE, p.shape.seq_len = 0);
    RT_EXPECT(ROPEGRAD_ERR_BAD_SIZE, p.shape.num_kv_heads = 0);
    RT_EXPECT(ROPEGRAD_ERR_BAD_SIZE, p.table_len = 0);
    RT_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.shape.head_dim = 63);
    RT_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.shape.rotary_dim = 31);
    RT_EXPECT(ROPEGRAD_ERR_BAD_HEAD_DIM, p.shape.rotary_dim = 66);
    RT_EXPECT(ROPEGRAD_ERR_BAD_DTYPE, p.shape.dtype = (ropegrad_dtype)7);
    RT_EXPECT(ROPEGRAD_ERR_BAD_DTYPE, p.shape.cos_sin_dtype = (ropegrad_dtype)-1);
    RT_EXPECT(ROPEGRAD_ERR_BAD_DTYPE, p.position_bits = 16);
    RT_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, p.shape.style = (ropegrad_rotary_style)2);
    /* thd: BSHD, one batch, one table for every token */
    RT_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, p.shape.layout = ROPEGRAD_LAYOUT_BHSD);
    RT_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, (p.shape.batch_size = 2, p.shape.seq_len = 2));
    RT_EXPECT(ROPEGRAD_ERR_UNSUPPORTED, p.shape.cos_sin_batch_stride = 4 * 64);
    RT_EXPECT(ROPEGRAD_ERR_OVERFLOW, p.table_len = INT64_MAX / 8);
    RT_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.q = (const char *)q + 1);
    RT_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.cos = (const char *)cos + 1);
    RT_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.k_out = (char *)ko + 1);
    RT_EXPECT(ROPEGRAD_ERR_MISALIGNED, p.position_ids = (const char *)ids + 4);
    /* overlaps: an output over any tensor but its own input (exactly) */
    RT_EXPECT(ROPEGRAD_ERR_OVERLAP, p.q_out = k);
    RT_EXPECT(ROPEGRAD_ERR_OVERLAP, p.q_out = q + 2);
    RT_EXPECT(ROPEGRAD_ERR_OVERLAP, p.k_out = qo);
    RT_EXPECT(ROPEGRAD_ERR_OVERLAP, p.k_out = sin + 8);
    RT_EXPECT(ROPEGRAD_ERR_OVERLAP, p.q_out = (void *)((char *)ids + 16));
    RT_EXPECT(ROPEGRAD_ERR_BAD_SIZE, (p.cu_seqlens = cu, p.num_seqs = 0));
    RT_EXPECT(ROPEGRAD_ERR_OVERLAP, (p.cu_seqlens = cu, p.num_seqs = 2, p.q_out = cu));
#undef RT_EXPECT
    /* contents: never read by validate; read and refused by the CPU and reference paths */
    typedef struct {
        const int32_t *cu;
        const void *ids;
        int bits;
        int64_t table_len;
    } contents;
    static const int32_t bad_cu[3][3] = {{1, 2, 4}, {0, 5, 4}, {0, 1, 3}};
    static const int64_t far[4] = {0, 1, 4, 2}, neg[4] = {0, -1, 2, 3};
    static const int32_t far32[4] = {0, 1, 2, 1000};
    const contents bad[] = {
        {bad_cu[0], NULL, 64, 4}, {bad_cu[1], NULL, 64, 4}, {bad_cu[2], NULL, 64, 4},
        {cu, NULL, 64, 2},     /* a sequence of 3 tokens, positions 0..2, on a table of 2 rows */
        {NULL, far, 64, 4},    /* position 4 on a table of 4 rows */
        {NULL, neg, 64, 4},    {NULL, far32, 32, 1000},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = ok;
        p.cu_seqlens = bad[i].cu, p.num_seqs = bad[i].cu ? 2 : 0, p.position_ids = bad[i].ids;
        p.position_bits = bad[i].bits, p.table_len = bad[i].table_len;
        assert_int_equal(ropegrad_rope_apply_thd_validate(&p), ROPEGRAD_OK);
        assert_int_equal(ropegrad_rope_apply_thd_cpu(&p, 0), ROPEGRAD_ERR_BAD_SIZE);
        assert_int_equal(ropegrad_rope_apply_thd_backward_cpu(&p, 0), ROPEGRAD_ERR_BAD_SIZE);
        assert_int_equal(ropegrad_rope_apply_thd_reference(&p, ref), ROPEGRAD_ERR_BAD_SIZE);
        assert_int_equal(ropegrad_rope_apply_thd_backward_reference(&p, ref), ROPEGRAD_ERR_BAD_SIZE);
    }
    /* the edges that are fine: the last row, a sequence exactly the table's length, int32 ids */
    p = ok;
    p.cu_seqlens = cu, p.num_seqs = 2, p.position_ids = NULL, p.table_len = 3;
    assert_int_equal(ropegrad_rope_apply_thd_cpu(&p, 0), ROPEGRAD_OK);
    p = ok;
    p.position_ids = ids32, p.position_bits = 32;
    assert_int_equal(ropegrad_rope_apply_thd_cpu(&p, 0), ROPEGRAD_OK);
    /* the reference checks no output; a valid problem's CUDA call without a GPU says so */
    p = ok;
    p.q_out = p.k_out = NULL;
    assert_int_equal(ropegrad_rope_apply_thd_reference(&p, ref), ROPEGRAD_OK);
    if (!ropegrad_cuda_available()) assert_int_equal(ropegrad_rope_apply_thd_cuda(&ok, NULL), ROPEGRAD_ERR_NO_CUDA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_reference_by_hand),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
