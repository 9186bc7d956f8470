/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_rope_apply_pos.c -- applying the rotary embedding from positions
 * (forward and backward) on the GPU: on the CPU test's cases (pos_common.h)
 * and shapes that take each side of the launcher (16-byte units and the
 * element fallback, several tokens a block, a token's heads split over
 * blocks), every output against the float64 reference with the outputs
 * poisoned first, in place bitwise equal to out of place, the tail beyond
 * rotary_dim copied bit for bit; the cos/sin values bit for bit the CPU
 * path's (rows that read them out exactly); the outputs bit for bit 088's
 * and 068's CUDA paths given 011's table of the same positions (both paths
 * round the same products the same way); host pointers refused. Skips (exit
 * 77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "pos_common.h"

#ifdef ROPEGRAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "op/gpu_test_util.h"

typedef int (*rp_cuda_fn)(const ropegrad_rope_apply_pos_problem *, void *);

/* The case's problem with device tensors: q, k, positions or cu_seqlens and
 * inv_freq (q and k `shift` bytes off their allocation). */
typedef struct rp_dev {
    ropegrad_rope_apply_pos_problem p;
    void *base[5];
} rp_dev;

static void rp_dev_make(rp_dev *v, const rp_data *d, size_t shift)
{
    v->p = d->p;
    const int64_t tokens = d->p.shape.batch_size * d->p.shape.seq_len;
    v->p.q = dev_at(d->q, d->q_bytes, shift, &v->base[0]);
    v->p.k = dev_at(d->k, d->k_bytes, shift, &v->base[1]);
    v->base[2] = v->base[3] = NULL;
    if (d->p.cu_seqlens)
        v->p.cu_seqlens = dev_at(d->cu, (size_t)(d->p.num_seqs + 1) * sizeof(int32_t), 0, &v->base[2]);
    else
        v->p.position_ids = dev_at(d->ids, (size_t)tokens * (size_t)(d->p.position_bits / 8), 0, &v->base[3]);
    v->p.inv_freq = dev_at(d->inv, (size_t)(rg_pos_rotary_dim(&d->p) / 2) * sizeof(float), 0, &v->base[4]);
}

static void rp_dev_free(rp_dev *v)
{
    for (int i = 0; i < 5; i++) cudaFree(v->base[i]);
}

/* One op on the device: within bound, the tail copied, in place the same
 * bytes. Returns the host copies of q_out, k_out. */
static void run_op(const rp_data *d, const rp_dev *v, size_t shift, rp_cuda_fn fn, const double *ref, const char *name,
                   void **hq, void **hk)
{
    const ropegrad_dtype dt = d->p.shape.dtype;
    void *bq, *bk;
    ropegrad_rope_apply_pos_problem p = v->p;
    p.q_out = dev_at(NULL, d->q_bytes, shift, &bq);
    p.k_out = dev_at(NULL, d->k_bytes, shift, &bk);
    assert_int_equal(fn(&p, NULL), ROPEGRAD_OK);
    *hq = host_copy(p.q_out, d->q_bytes);
    *hk = host_copy(p.k_out, d->k_bytes);
    assert_int_equal(rp_count_bad(name, *hq, dt, ref, d->n_q), 0);
    assert_int_equal(rp_count_bad(name, *hk, dt, ref + d->n_q, d->n_k), 0);
    assert_false(rp_tail_differs(d, d->q, *hq, d->n_q));
    assert_false(rp_tail_differs(d, d->k, *hk, d->n_k));
    cudaFree(bq);
    cudaFree(bk);
    /* in place */
    void *iq, *ik;
    ropegrad_rope_apply_pos_problem ip = v->p;
    ip.q = ip.q_out = dev_at(d->q, d->q_bytes, shift, &iq);
    ip.k = ip.k_out = dev_at(d->k, d->k_bytes, shift, &ik);
    assert_int_equal(fn(&ip, NULL), ROPEGRAD_OK);
    assert_dev_equal(ip.q_out, *hq, d->q_bytes);
    assert_dev_equal(ip.k_out, *hk, d->k_bytes);
    cudaFree(iq);
    cudaFree(ik);
}

/* 088 and 068 (no grad_cos/grad_sin) on the device with 011's table in the
 * case's style and rotary_dim (rp_table): the same bytes. */
static void assert_equals_table_path(const rp_data *d, const rp_dev *v, const void *qo, const void *ko, const void *gq,
                                     const void *gk)
{
    void *cos = NULL, *sin = NULL, *bc, *bs, *bq, *bk;
    assert_int_equal(rp_table(d, &cos, &sin), 0);
    ropegrad_rope_apply_shape s = d->p.shape;
    const int64_t R = rg_pos_rotary_dim(&d->p);
    s.style = d->p.style, s.rotary_dim = d->p.rotary_dim;
    s.cos_sin_batch_stride = s.seq_len * R;
    const size_t cs_bytes = (size_t)(s.batch_size * s.seq_len * R) * ropegrad_dtype_size(s.cos_sin_dtype);
    void *dc = dev_at(cos, cs_bytes, 0, &bc), *ds = dev_at(sin, cs_bytes, 0, &bs);
    void *tq = dev_at(NULL, d->q_bytes, 0, &bq), *tk = dev_at(NULL, d->k_bytes, 0, &bk);
    ropegrad_rope_apply_problem f = {s, v->p.q, v->p.k, dc, ds, tq, tk};
    assert_int_equal(ropegrad_rope_apply_cuda(&f, NULL), ROPEGRAD_OK);
    assert_dev_equal(tq, qo, d->q_bytes);
    assert_dev_equal(tk, ko, d->k_bytes);
    ropegrad_rope_apply_backward_problem b = {s, v->p.q, v->p.k, NULL, NULL, dc, ds, tq, tk, NULL, NULL};
    assert_int_equal(ropegrad_rope_apply_backward_cuda(&b, NULL), ROPEGRAD_OK);
    assert_dev_equal(tq, gq, d->q_bytes);
    assert_dev_equal(tk, gk, d->k_bytes);
    cudaFree(bc);
    cudaFree(bs);
    cudaFree(bq);
    cudaFree(bk);
    free(cos);
    free(sin);
}

static void run_case_at(const rp_case *c, uint64_t seed, const char *name, size_t shift)
{
    rp_data d;
    assert_int_equal(rp_make(&d, c, seed), 0);
    rp_dev v;
    rp_dev_make(&v, &d, shift);
    void *qo, *ko, *gq, *gk;
    run_op(&d, &v, shift, ropegrad_rope_apply_pos_cuda, d.ref_fwd, name, &qo, &ko);
    run_op(&d, &v, shift, ropegrad_rope_apply_pos_backward_cuda, d.ref_bwd, name, &gq, &gk);
    if (shift == 0 && (c->cdt == ROPEGRAD_BF16 || c->cdt == ROPEGRAD_F32))
        assert_equals_table_path(&d, &v, qo, ko, gq, gk);
    free(qo);
    free(ko);
    free(gq);
    free(gk);
    rp_dev_free(&v);
    rp_free(&d);
}

static void test_cases(void **state)
{
    (void)state;
    char name[64];
    for (int i = 0; i < RP_N_CASES; i++) {
        snprintf(name, sizeof name, "cuda case %d", i);
        run_case_at(&rp_cases[i], 100 + (uint64_t)i, name, 0);
        /* one element off 16-byte alignment: the element fallback */
        snprintf(name, sizeof name, "cuda case %d shifted", i);
        run_case_at(&rp_cases[i], 100 + (uint64_t)i, name, ropegrad_dtype_size(rp_cases[i].dt));
    }
}

/* The launcher's sides: Hugging Face shapes (Qwen3-4B 32+8 heads, Llama 32+8,
 * bf16, both layouts: one token a block), a token's heads over several blocks
 * (one token, many heads), several tokens a block (few small heads), packed
 * sequences, 088's equality on each where it applies. */
static void test_launch_shapes(void **state)
{
    (void)state;
    static const rp_case cs[] = {
        {2, 300, 128, 0, 32, 8, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 64, 0, 1.0f, 32768},
        {2, 300, 128, 0, 32, 8, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 64, 0, 1.0f, 32768},
        {1, 1, 128, 0, 64, 8, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 64, 0, 1.0f, 300000},
        {1, 3, 256, 128, 48, 48, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F32, ROPEGRAD_ROTARY_INTERLEAVED, 32, 0, 1.0f, 99},
        {4, 700, 16, 0, 1, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 32, 0, 1.0f, 300000},
        {3, 500, 8, 4, 2, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F16, ROPEGRAD_ROTARY_INTERLEAVED, 64, 0, 0.9f, 5000},
        {1, 1000, 128, 64, 16, 2, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 32, 9, 1.0f, 0},
        {1, 777, 64, 0, 4, 4, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_F32, ROPEGRAD_ROTARY_HALF, 64, 3, 1.0f, 0},
    };
    char name[64];
    for (int i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
        snprintf(name, sizeof name, "cuda shape %d", i);
        run_case_at(&cs[i], 300 + (uint64_t)i, name, 0);
    }
}

/* The cos/sin values: f32 rows whose pairs hold (1, 0) give out = the
 * token's c and n exactly (x*c and 0*n are exact, in either rounding order),
 * so the CUDA path's values are compared with the CPU path's bit for bit:
 * every cos/sin dtype, both styles, scales 1 and not, int32 and int64
 * positions up to 3e5, packed sequences, and positions up to 1e8 (arguments
 * beyond the fast sin/cos range, 4e6 rad: the far paths). */
static void test_cos_sin_bits(void **state)
{
    (void)state;
    static const ropegrad_dtype cdts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    uint64_t seed = 900;
    for (int ci = 0; ci < 3; ci++)
        for (int style = 0; style < 2; style++)
            for (int mode = 0; mode < 4; mode++) {   /* int64, int32 positions; packed sequences; far */
                const rp_case c = {mode == 2 ? 1 : 2, 333, 128, 0, 1, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, cdts[ci],
                                   (ropegrad_rotary_style)style, mode == 1 ? 32 : 64, mode == 2 ? 4 : 0,
                                   style ? 0.7071f : 1.0f, mode == 3 ? 100000000 : 300000};
                rp_data d;
                assert_int_equal(rp_make(&d, &c, seed++), 0);
                float *q = d.q;
                for (int64_t r = 0; r < d.n_q / c.D; r++)
                    for (int j = 0; j < c.D; j++)
                        q[r * c.D + j] = style ? (j % 2 == 0 ? 1.0f : 0.0f) : (j < c.D / 2 ? 1.0f : 0.0f);
                float *hq = malloc(d.q_bytes), *hk = malloc(d.k_bytes);
                assert_non_null(hq);
                assert_non_null(hk);
                ropegrad_rope_apply_pos_problem p = d.p;
                p.q_out = hq, p.k_out = hk;
                assert_int_equal(ropegrad_rope_apply_pos_cpu(&p, 0), ROPEGRAD_OK);
                rp_dev v;
                rp_dev_make(&v, &d, 0);
                void *bq, *bk;
                v.p.q_out = dev_at(NULL, d.q_bytes, 0, &bq);
                v.p.k_out = dev_at(NULL, d.k_bytes, 0, &bk);
                assert_int_equal(ropegrad_rope_apply_pos_cuda(&v.p, NULL), ROPEGRAD_OK);
                float *gq = host_copy(v.p.q_out, d.q_bytes);
                for (int64_t i = 0; i < d.n_q; i++)
                    if (memcmp(&gq[i], &hq[i], sizeof(float)))
                        fail_msg("cdt %d style %d mode %d: element %lld is %.9g on the GPU, %.9g on the CPU", ci, style,
                                 mode, (long long)i, (double)gq[i], (double)hq[i]);
                free(gq);
                free(hq);
                free(hk);
                cudaFree(bq);
                cudaFree(bk);
                rp_dev_free(&v);
                rp_free(&d);
            }
}

static void test_host_pointers_refused(void **state)
{
    (void)state;
    static float q[128], k[128], qo[128], ko[128], inv[64];
    static int64_t ids[1];
    const ropegrad_rope_apply_shape sh = {1, 1, 128, 1, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_BF16, 0, ROPEGRAD_ROTARY_HALF, 0};
    ropegrad_rope_apply_pos_problem p = {sh, ROPEGRAD_ROTARY_HALF, 0, ids, 64, NULL, 0, inv, 1.0f, q, k, qo, ko};
    assert_int_equal(ropegrad_rope_apply_pos_cuda(&p, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
    assert_int_equal(ropegrad_rope_apply_pos_backward_cuda(&p, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
}

int main(void)
{
    if (!ropegrad_cuda_available()) {
        printf("skip: no usable CUDA device\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_launch_shapes),
        cmocka_unit_test(test_cos_sin_bits),
        cmocka_unit_test(test_host_pointers_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    printf("skip: libropegrad was built without CUDA\n");
    return 77;
}
#endif
