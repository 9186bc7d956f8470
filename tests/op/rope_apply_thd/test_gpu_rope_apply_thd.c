/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_rope_apply_thd.c -- applying the rotary embedding to packed
 * sequences from one table (forward and backward) on the GPU: on the CPU
 * test's cases (thd_common.h) and shapes that take each side of the launcher
 * (16-byte units and the element fallback, several tokens a block, a token's
 * heads split over blocks), every output against the float64 reference with
 * the outputs poisoned first and against the CPU path (one unit in the
 * last place apart at most), in place bitwise equal to out of place, the tail beyond
 * rotary_dim copied bit for bit; the gathered table values bit for bit the
 * CPU path's (rows that read them out exactly); the outputs bit for bit 088's
 * and 068's CUDA paths on the table gathered per token by hand; positions
 * beyond the table read no memory outside it and leave the other tokens
 * right; host pointers refused. Skips (exit 77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "thd_common.h"

#ifdef ROPEGRAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "op/gpu_test_util.h"

typedef int (*rt_cuda_fn)(const ropegrad_rope_apply_thd_problem *, void *);
typedef int (*rt_cpu_fn)(const ropegrad_rope_apply_thd_problem *, int);

/* The case's problem with device tensors: q, k, the table, cu_seqlens or
 * position_ids (q and k `shift` bytes off their allocation). */
typedef struct rt_dev {
    ropegrad_rope_apply_thd_problem p;
    void *base[6];
} rt_dev;

static void rt_dev_make(rt_dev *v, const rt_data *d, size_t shift)
{
    v->p = d->p;
    const int64_t T = d->p.shape.seq_len;
    v->p.q = dev_at(d->q, d->q_bytes, shift, &v->base[0]);
    v->p.k = dev_at(d->k, d->k_bytes, shift, &v->base[1]);
    v->p.cos = dev_at(d->cos, d->table_bytes, 0, &v->base[2]);
    v->p.sin = dev_at(d->sin, d->table_bytes, 0, &v->base[3]);
    v->base[4] = v->base[5] = NULL;
    if (d->p.cu_seqlens)
        v->p.cu_seqlens = dev_at(d->cu, (size_t)(d->p.num_seqs + 1) * sizeof(int32_t), 0, &v->base[4]);
    else
        v->p.position_ids = dev_at(d->ids, (size_t)T * (size_t)(d->p.position_bits / 8), 0, &v->base[5]);
}

static void rt_dev_free(rt_dev *v)
{
    for (int i = 0; i < 6; i++) cudaFree(v->base[i]);
}

/* Element i of x (dtype dt) as an integer ordered like the values it holds:
 * neighbouring values are neighbouring integers (sign-magnitude to two's complement). */
static int64_t ordered_bits(const void *x, ropegrad_dtype dt, int64_t i)
{
    if (dt == ROPEGRAD_F32) {
        uint32_t u;
        memcpy(&u, (const char *)x + (size_t)i * 4, 4);
        return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
    }
    const uint16_t h = ((const uint16_t *)x)[i];
    return (h & 0x8000u) ? -(int64_t)(h & 0x7fffu) : (int64_t)h;
}

/* Elements of a (CUDA) and b (CPU) more than one unit in the last place of
 * dt apart, beyond the header's absolute 2e-6 (the CPU rounds both products,
 * the GPU fuses one into the sum: their float32 results differ by at most
 * 2.4e-7, so the rounded outputs by at most one step of dt); prints the first. */
static int64_t count_apart(const char *what, const void *a, const void *b, ropegrad_dtype dt, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t d = ordered_bits(a, dt, i) - ordered_bits(b, dt, i);
        const double x = (double)ropegrad_element_to_float(a, dt, i), y = (double)ropegrad_element_to_float(b, dt, i);
        if (d > 1 || d < -1) {
            if (fabs(x - y) <= 2e-6) continue;
            if (!bad) printf("%s: element %lld is %.9g on the GPU, %.9g on the CPU\n", what, (long long)i, x, y);
            bad++;
        }
    }
    return bad;
}

/* One op on the device: within bound, near the CPU path's, the tail copied,
 * in place the same bytes. Returns the host copies of q_out, k_out. */
static void run_op(const rt_data *d, const rt_dev *v, size_t shift, rt_cuda_fn fn, rt_cpu_fn cpu, const double *ref,
                   const char *name, void **hq, void **hk)
{
    const ropegrad_dtype dt = d->p.shape.dtype;
    void *bq, *bk;
    ropegrad_rope_apply_thd_problem p = v->p;
    p.q_out = dev_at(NULL, d->q_bytes, shift, &bq);
    p.k_out = dev_at(NULL, d->k_bytes, shift, &bk);
    assert_int_equal(fn(&p, NULL), ROPEGRAD_OK);
    *hq = host_copy(p.q_out, d->q_bytes);
    *hk = host_copy(p.k_out, d->k_bytes);
    assert_int_equal(rp_count_bad(name, *hq, dt, ref, d->n_q), 0);
    assert_int_equal(rp_count_bad(name, *hk, dt, ref + d->n_q, d->n_k), 0);
    assert_false(rt_tail_differs(d, d->q, *hq, d->n_q));
    assert_false(rt_tail_differs(d, d->k, *hk, d->n_k));
    cudaFree(bq);
    cudaFree(bk);
    /* the CPU path */
    ropegrad_rope_apply_thd_problem cp = d->p;
    cp.q_out = malloc(d->q_bytes), cp.k_out = malloc(d->k_bytes);
    assert_non_null(cp.q_out);
    assert_non_null(cp.k_out);
    assert_int_equal(cpu(&cp, 0), ROPEGRAD_OK);
    assert_int_equal(count_apart(name, *hq, cp.q_out, dt, d->n_q), 0);
    assert_int_equal(count_apart(name, *hk, cp.k_out, dt, d->n_k), 0);
    free(cp.q_out);
    free(cp.k_out);
    /* in place */
    void *iq, *ik;
    ropegrad_rope_apply_thd_problem ip = v->p;
    ip.q = ip.q_out = dev_at(d->q, d->q_bytes, shift, &iq);
    ip.k = ip.k_out = dev_at(d->k, d->k_bytes, shift, &ik);
    assert_int_equal(fn(&ip, NULL), ROPEGRAD_OK);
    assert_dev_equal(ip.q_out, *hq, d->q_bytes);
    assert_dev_equal(ip.k_out, *hk, d->k_bytes);
    cudaFree(iq);
    cudaFree(ik);
}

/* 088 and 068 (no grad_cos/grad_sin) on the device with the table gathered
 * per token by hand: the same bytes. */
static void assert_equals_table_path(const rt_data *d, const rt_dev *v, const void *qo, const void *ko, const void *gq,
                                     const void *gk)
{
    void *cos = NULL, *sin = NULL, *bc, *bs, *bq, *bk;
    assert_int_equal(rt_gather(d, &cos, &sin), 0);
    const ropegrad_rope_apply_shape *s = &d->p.shape;
    const size_t cs_bytes = (size_t)(s->seq_len * rg_apply_rotary_dim(s)) * ropegrad_dtype_size(s->cos_sin_dtype);
    void *dc = dev_at(cos, cs_bytes, 0, &bc), *ds = dev_at(sin, cs_bytes, 0, &bs);
    void *tq = dev_at(NULL, d->q_bytes, 0, &bq), *tk = dev_at(NULL, d->k_bytes, 0, &bk);
    ropegrad_rope_apply_problem f = {*s, v->p.q, v->p.k, dc, ds, tq, tk};
    assert_int_equal(ropegrad_rope_apply_cuda(&f, NULL), ROPEGRAD_OK);
    assert_dev_equal(tq, qo, d->q_bytes);
    assert_dev_equal(tk, ko, d->k_bytes);
    ropegrad_rope_apply_backward_problem b = {*s, v->p.q, v->p.k, NULL, NULL, dc, ds, tq, tk, NULL, NULL};
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

static void run_case_at(const rt_case *c, uint64_t seed, const char *name, size_t shift)
{
    rt_data d;
    assert_int_equal(rt_make(&d, c, seed), 0);
    rt_dev v;
    rt_dev_make(&v, &d, shift);
    void *qo, *ko, *gq, *gk;
    run_op(&d, &v, shift, ropegrad_rope_apply_thd_cuda, ropegrad_rope_apply_thd_cpu, d.ref_fwd, name, &qo, &ko);
    run_op(&d, &v, shift, ropegrad_rope_apply_thd_backward_cuda, ropegrad_rope_apply_thd_backward_cpu, d.ref_bwd, name,
           &gq, &gk);
    if (shift == 0) assert_equals_table_path(&d, &v, qo, ko, gq, gk);
    free(qo);
    free(ko);
    free(gq);
    free(gk);
    rt_dev_free(&v);
    rt_free(&d);
}

static void test_cases(void **state)
{
    (void)state;
    char name[64];
    for (int i = 0; i < RT_N_CASES; i++) {
        snprintf(name, sizeof name, "cuda case %d", i);
        run_case_at(&rt_cases[i], 100 + (uint64_t)i, name, 0);
        /* one element off 16-byte alignment: the element fallback */
        snprintf(name, sizeof name, "cuda case %d shifted", i);
        run_case_at(&rt_cases[i], 100 + (uint64_t)i, name, ropegrad_dtype_size(rt_cases[i].dt));
    }
}

/* The launcher's sides: Hugging Face shapes (Qwen3-4B / Llama 32+8 heads,
 * bf16, packed: one token a block), a token's heads over several blocks (one
 * token, many heads), several tokens a block (few small heads). */
static void test_launch_shapes(void **state)
{
    (void)state;
    static const rt_case cs[] = {
        {3000, 128, 0, 32, 8, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 6, 64, 1},
        {2000, 128, 0, 32, 8, ROPEGRAD_BF16, ROPEGRAD_F32, ROPEGRAD_ROTARY_HALF, 0, 64, 32768},
        {1, 128, 0, 64, 8, ROPEGRAD_F16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 1, 32, 1},
        {3, 256, 128, 48, 48, ROPEGRAD_F32, ROPEGRAD_F32, ROPEGRAD_ROTARY_INTERLEAVED, 0, 32, 99},
        {2800, 16, 0, 1, 1, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 0, 32, 300000},
        {1500, 8, 4, 2, 1, ROPEGRAD_F32, ROPEGRAD_F16, ROPEGRAD_ROTARY_INTERLEAVED, 11, 64, 1},
        {1000, 128, 64, 16, 2, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 9, 32, 1},
    };
    char name[64];
    for (int i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
        snprintf(name, sizeof name, "cuda shape %d", i);
        run_case_at(&cs[i], 300 + (uint64_t)i, name, 0);
    }
}

/* The gathered values: f32 rows whose pairs hold (1, 0) give out[a] = cos[a]
 * and out[b] = sin[b] of the token's row exactly, so the CUDA path's rows
 * are compared with the CPU path's bit for bit: every cos/sin dtype, both
 * styles, cu_seqlens, int32 and int64 position_ids. */
static void test_gathered_bits(void **state)
{
    (void)state;
    static const ropegrad_dtype cdts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    uint64_t seed = 900;
    for (int ci = 0; ci < 3; ci++)
        for (int style = 0; style < 2; style++)
            for (int mode = 0; mode < 3; mode++) {   /* cu_seqlens; int32, int64 position_ids */
                const rt_case c = {333, 128, style ? 64 : 0, 1, 1, ROPEGRAD_F32, cdts[ci], (ropegrad_rotary_style)style,
                                   mode == 0 ? 4 : 0, mode == 1 ? 32 : 64, mode == 0 ? 1 : 5000};
                rt_data d;
                assert_int_equal(rt_make(&d, &c, seed++), 0);
                float *q = d.q;
                const int64_t R = rt_rotary_dim(&c);
                for (int64_t r = 0; r < d.n_q / c.D; r++)
                    for (int j = 0; j < R; j++)
                        q[r * c.D + j] = style ? (j % 2 == 0 ? 1.0f : 0.0f) : (j < R / 2 ? 1.0f : 0.0f);
                float *hq = malloc(d.q_bytes), *hk = malloc(d.k_bytes);
                assert_non_null(hq);
                assert_non_null(hk);
                ropegrad_rope_apply_thd_problem p = d.p;
                p.q_out = hq, p.k_out = hk;
                assert_int_equal(ropegrad_rope_apply_thd_cpu(&p, 0), ROPEGRAD_OK);
                rt_dev v;
                rt_dev_make(&v, &d, 0);
                void *bq, *bk;
                v.p.q_out = dev_at(NULL, d.q_bytes, 0, &bq);
                v.p.k_out = dev_at(NULL, d.k_bytes, 0, &bk);
                assert_int_equal(ropegrad_rope_apply_thd_cuda(&v.p, NULL), ROPEGRAD_OK);
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
                rt_dev_free(&v);
                rt_free(&d);
            }
}

/* Positions beyond the table (and negative ones): the CUDA path clamps them
 * (ropegrad.h: those tokens' outputs unspecified), reads nothing outside the
 * table (no CUDA error) and rotates every other token right. */
static void test_positions_beyond_table(void **state)
{
    (void)state;
    const rt_case c = {300, 128, 0, 4, 2, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 0, 64, 64};
    rt_data d;
    assert_int_equal(rt_make(&d, &c, 77), 0);
    int64_t *ids = d.ids;
    for (int64_t t = 0; t < c.T; t += 7) ids[t] = t % 2 ? (int64_t)1 << 40 : -3;
    rt_dev v;
    rt_dev_make(&v, &d, 0);
    void *bq, *bk;
    v.p.q_out = dev_at(NULL, d.q_bytes, 0, &bq);
    v.p.k_out = dev_at(NULL, d.k_bytes, 0, &bk);
    assert_int_equal(ropegrad_rope_apply_thd_cuda(&v.p, NULL), ROPEGRAD_OK);
    uint16_t *hq = host_copy(v.p.q_out, d.q_bytes);
    CK(cudaGetLastError());
    const int64_t row = c.hq * c.D;
    for (int64_t t = 0; t < c.T; t++) {
        if (t % 7 == 0) continue;
        assert_int_equal(rp_count_bad("beyond the table", hq + t * row, c.dt, d.ref_fwd + t * row, row), 0);
    }
    free(hq);
    cudaFree(bq);
    cudaFree(bk);
    rt_dev_free(&v);
    rt_free(&d);
}

static void test_host_pointers_refused(void **state)
{
    (void)state;
    static float q[128], k[128], qo[128], ko[128], cos[128], sin[128];
    static int64_t ids[1];
    const ropegrad_rope_apply_shape sh = {1, 1, 128, 1, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F32, 0, ROPEGRAD_ROTARY_HALF, 0};
    ropegrad_rope_apply_thd_problem p = {sh, cos, sin, 1, NULL, 0, ids, 64, q, k, qo, ko};
    assert_int_equal(ropegrad_rope_apply_thd_cuda(&p, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
    assert_int_equal(ropegrad_rope_apply_thd_backward_cuda(&p, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
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
        cmocka_unit_test(test_gathered_bits),
        cmocka_unit_test(test_positions_beyond_table),
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
