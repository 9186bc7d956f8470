/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_rope_apply.c -- the apply ops' CUDA paths (L1/088 forward, L1/068
 * backward) against their float64 references, on the cases of the CPU test
 * (rope_apply_common.h: both layouts, every dtype pair, GQA, shared and
 * per-batch cos/sin, odd head_dims) plus one of the suites' shapes, then
 * 068's staged kernel on every dtype pair, layout and sharing at head_dim
 * 128, 64 and 80, and each of its fallbacks; outputs poisoned with NaN first;
 * in place and 068 without grad_cos/grad_sin equal to the plain call; every
 * case again in the interleaved style and with partial rotary (the generic
 * kernel: rope_apply/styled.cuh; the rest of each row copied bit for bit);
 * host pointers refused. Skips (exit 77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_common.h"

#ifdef ROPEGRAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "op/gpu_test_util.h"

static void *dev_poisoned(size_t bytes)
{
    void *p = NULL;
    CK(cudaMalloc(&p, bytes));
    CK(cudaMemset(p, 0xff, bytes));
    return p;
}

static void *dev_copy(const void *host, size_t bytes)
{
    void *p = NULL;
    CK(cudaMalloc(&p, bytes));
    CK(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
}

static void forward_case(const ra_data *d, void *const din[RA_N], const char *name)
{
    void *qo = dev_poisoned(d->bytes[RA_Q]), *ko = dev_poisoned(d->bytes[RA_K]);
    ropegrad_rope_apply_problem p = ra_forward_problem(d, din, qo, ko);
    assert_int_equal(ropegrad_rope_apply_cuda(&p, NULL), ROPEGRAD_OK);
    void *hq = host_copy(qo, d->bytes[RA_Q]), *hk = host_copy(ko, d->bytes[RA_K]);
    assert_int_equal(ra_count_bad(name, hq, d->s.dtype, d->ref_fwd, d->n_q, 2), 0);
    assert_int_equal(ra_count_bad(name, hk, d->s.dtype, d->ref_fwd + d->n_q, d->n_k, 2), 0);
    assert_false(ra_tail_differs(d, d->in[RA_Q], hq, d->n_q));
    assert_false(ra_tail_differs(d, d->in[RA_K], hk, d->n_k));
    /* in place: q and k overwritten with the same values */
    void *in[RA_N];
    memcpy(in, din, sizeof in);
    in[RA_Q] = dev_copy(d->in[RA_Q], d->bytes[RA_Q]);
    in[RA_K] = dev_copy(d->in[RA_K], d->bytes[RA_K]);
    ropegrad_rope_apply_problem ip = ra_forward_problem(d, in, in[RA_Q], in[RA_K]);
    assert_int_equal(ropegrad_rope_apply_cuda(&ip, NULL), ROPEGRAD_OK);
    assert_dev_equal(in[RA_Q], hq, d->bytes[RA_Q]);
    assert_dev_equal(in[RA_K], hk, d->bytes[RA_K]);
    cudaFree(in[RA_Q]);
    cudaFree(in[RA_K]);
    cudaFree(qo);
    cudaFree(ko);
    free(hq);
    free(hk);
}

static void backward_case(const ra_data *d, void *const din[RA_N], const char *name)
{
    void *gq = dev_poisoned(d->bytes[RA_Q]), *gk = dev_poisoned(d->bytes[RA_K]);
    void *gc = dev_poisoned(d->gcs_bytes), *gs = dev_poisoned(d->gcs_bytes);
    ropegrad_rope_apply_backward_problem p = ra_backward_problem(d, din, gq, gk, gc, gs);
    assert_int_equal(ropegrad_rope_apply_backward_cuda(&p, NULL), ROPEGRAD_OK);
    void *hq = host_copy(gq, d->bytes[RA_Q]), *hk = host_copy(gk, d->bytes[RA_K]);
    void *hc = host_copy(gc, d->gcs_bytes), *hs = host_copy(gs, d->gcs_bytes);
    const double *ref = d->ref_bwd;
    assert_int_equal(ra_count_bad(name, hq, d->s.dtype, ref, d->n_q, 2), 0);
    assert_int_equal(ra_count_bad(name, hk, d->s.dtype, ref + d->n_q, d->n_k, 2), 0);
    ref += d->n_q + d->n_k;
    assert_int_equal(ra_count_bad(name, hc, d->s.cos_sin_dtype, ref, d->n_gcs, ra_gcs_terms(d)), 0);
    assert_int_equal(ra_count_bad(name, hs, d->s.cos_sin_dtype, ref + d->n_gcs, d->n_gcs, ra_gcs_terms(d)), 0);
    assert_false(ra_tail_differs(d, d->in[RA_GQ], hq, d->n_q));
    assert_false(ra_tail_differs(d, d->in[RA_GK], hk, d->n_k));
    /* in place, then without grad_cos/grad_sin (q, k NULL): the same grad_q, grad_k */
    void *in[RA_N];
    memcpy(in, din, sizeof in);
    for (int pass = 0; pass < 2; pass++) {
        in[RA_GQ] = dev_copy(d->in[RA_GQ], d->bytes[RA_GQ]);
        in[RA_GK] = dev_copy(d->in[RA_GK], d->bytes[RA_GK]);
        if (pass) in[RA_Q] = in[RA_K] = NULL;
        ropegrad_rope_apply_backward_problem ip =
            ra_backward_problem(d, in, in[RA_GQ], in[RA_GK], pass ? NULL : gc, pass ? NULL : gs);
        assert_int_equal(ropegrad_rope_apply_backward_cuda(&ip, NULL), ROPEGRAD_OK);
        assert_dev_equal(in[RA_GQ], hq, d->bytes[RA_Q]);
        assert_dev_equal(in[RA_GK], hk, d->bytes[RA_K]);
        cudaFree(in[RA_GQ]);
        cudaFree(in[RA_GK]);
    }
    cudaFree(gq);
    cudaFree(gk);
    cudaFree(gc);
    cudaFree(gs);
    free(hq);
    free(hk);
    free(hc);
    free(hs);
}

/* One case in style st, its device inputs each `shift` bytes past a
 * cudaMalloc'd base: 0 leaves them 16-byte aligned; 4 (one element or two, of
 * any dtype) leaves them element-aligned only, so the 16-byte kernels give way
 * to the one-pair and one-column ones. */
static void run_styled_at(const ra_case *c, ra_style st, uint64_t seed, const char *name, size_t shift)
{
    ra_data d;
    assert_int_equal(ra_make_styled(&d, c, st, seed), 0);
    void *base[RA_N], *din[RA_N];
    for (int i = 0; i < RA_N; i++) {
        CK(cudaMalloc(&base[i], d.bytes[i] + shift));
        din[i] = (char *)base[i] + shift;
        CK(cudaMemcpy(din[i], d.in[i], d.bytes[i], cudaMemcpyHostToDevice));
    }
    forward_case(&d, din, name);
    backward_case(&d, din, name);
    for (int i = 0; i < RA_N; i++) cudaFree(base[i]);
    ra_free(&d);
}

static void run_case_at(const ra_case *c, uint64_t seed, const char *name, size_t shift)
{
    run_styled_at(c, (ra_style){ROPEGRAD_ROTARY_HALF, 0}, seed, name, shift);
}

static void run_case(const ra_case *c, uint64_t seed, const char *name)
{
    run_case_at(c, seed, name, 0);
}

static void test_cases(void **state)
{
    (void)state;
    char name[64];
    for (int i = 0; i < RA_N_CASES; i++) {
        snprintf(name, sizeof name, "cuda case %d", i);
        run_case(&ra_cases[i], 100 + (uint64_t)i, name);
    }
    /* the suites' workload 0 shapes: 088 B4 Hq24 Hk6 S293, 068 B1 Hq32 Hk8 S293 (per-batch cos/sin) */
    const ra_case suite088 = {4, 293, 128, 24, 6, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 0};
    const ra_case suite068 = {1, 293, 128, 32, 8, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 1};
    run_case(&suite088, 7, "cuda 088 shape");
    run_case(&suite068, 8, "cuda 068 shape");
}

/* 068's staged kernel (kernels.cuh rg_apply_columns_staged) on every dtype
 * pair, layout and cos/sin sharing, at head_dim 128, 64 and 80: 16-byte rows
 * and cudaMalloc'd pointers, 40+8 heads (GQA) in 2-3 stages (at most 256/(D/8)
 * groups a stage: 16, 32, 25), B=2 so that shared cos/sin sum two batches,
 * 5 or 10 rows (within one wave on any GPU, so never handed to the split kernel).
 * Every output element against the float64 reference (backward_case), in
 * place against the out-of-place result bit for bit. */
static void test_staged_dtypes(void **state)
{
    (void)state;
    static const ropegrad_dtype dts[] = {ROPEGRAD_F32, ROPEGRAD_BF16, ROPEGRAD_F16};
    static const int64_t dims[] = {128, 64, 80};
    char name[96];
    uint64_t seed = 1000;
    for (int t = 0; t < 3; t++)
        for (int c = 0; c < 3; c++)
            for (int layout = 0; layout < 2; layout++)
                for (int per_batch = 0; per_batch < 2; per_batch++)
                    for (int di = 0; di < 3; di++) {
                        const ra_case rc = {2, 5, dims[di], 40, 8, (ropegrad_layout)layout, dts[t], dts[c], per_batch};
                        snprintf(name, sizeof name, "staged dt %d cs %d layout %d per_batch %d D %lld", (int)dts[t],
                                 (int)dts[c], layout, per_batch, (long long)dims[di]);
                        run_case(&rc, seed++, name);
                    }
}

/* The other sides of 068's launcher, each checked the same way:
 *  - staged with 9 stages (144 heads at D=128: more commit groups in flight
 *    than cp.async.wait_group's immediate names, so the wait is the clamped one)
 *    and head_dim 72 (H/4 lanes a group, 9; the split kernel cannot take it);
 *  - the split kernel where the staged one's rows exceed shared memory (240
 *    heads of fp32 at D=128: 246,784 bytes, above every GPU's opt-in limit);
 *  - the split kernel where one wave of it holds the rows and the staged
 *    kernel's does not (the suite's workload 6, B=1, 64+8 heads, S=512, on the
 *    H200: kernels.cuh rg_apply_split_one_wave);
 *  - the one-column kernel: inputs 4 bytes off 16-byte alignment, and head_dim 36
 *    (H not a multiple of 4). */
static void test_staged_stages_and_fallbacks(void **state)
{
    (void)state;
    const ra_case many_f32 = {1, 3, 128, 136, 8, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F32, 0};
    const ra_case many_bf16 = {2, 3, 128, 136, 8, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_F32, 0};
    const ra_case d72 = {2, 5, 72, 6, 2, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_F16, 1};
    const ra_case too_big = {1, 3, 128, 224, 16, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 1};
    const ra_case wave = {1, 512, 128, 64, 8, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 1};
    const ra_case shifted = {2, 7, 128, 8, 2, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_BF16, 0};
    const ra_case d36 = {2, 5, 36, 4, 2, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F16, ROPEGRAD_F32, 1};
    run_case(&many_f32, 11, "staged 9 stages f32");
    run_case(&many_bf16, 12, "staged 9 stages bf16, shared cos/sin");
    run_case(&d72, 13, "staged head_dim 72");
    run_case(&too_big, 14, "split: rows beyond shared memory");
    run_case(&wave, 15, "split: one wave (suite workload 6)");
    run_case_at(&shifted, 16, "columns: inputs off 16-byte alignment", 4);
    run_case(&d36, 17, "columns: head_dim 36");
}

/* The interleaved style and partial rotary: every case of the CPU test in
 * each variant (ra_styled_case), then the suites' workload 0 shapes with
 * rotary_dim 64 and 50, in both styles, and inputs off 16-byte alignment. */
static void test_styles(void **state)
{
    (void)state;
    char name[96];
    for (int i = 0; i < RA_N_CASES; i++)
        for (int v = 1; v < 4; v++) {
            const ra_style st = ra_variant(ra_cases[i].D, v);
            if (st.style == ROPEGRAD_ROTARY_HALF && st.R == 0) continue;
            snprintf(name, sizeof name, "cuda case %d style %d rotary_dim %d", i, (int)st.style, (int)st.R);
            run_styled_at(&ra_cases[i], st, 300 + (uint64_t)(4 * i + v), name, 0);
        }
    static const int64_t rs[] = {0, 64, 50};
    const ra_case c088 = {4, 293, 128, 24, 6, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_BF16, 0};
    const ra_case c068 = {1, 293, 128, 32, 8, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F32, 1};
    const ra_case shifted = {2, 7, 128, 8, 2, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F16, ROPEGRAD_BF16, 0};
    for (int il = 0; il < 2; il++)
        for (int r = 0; r < 3; r++) {
            if (il == 0 && r == 0) continue;
            const ra_style st = {il ? ROPEGRAD_ROTARY_INTERLEAVED : ROPEGRAD_ROTARY_HALF, rs[r]};
            snprintf(name, sizeof name, "cuda 088 shape style %d rotary_dim %d", il, (int)rs[r]);
            run_styled_at(&c088, st, 40 + (uint64_t)r, name, 0);
            snprintf(name, sizeof name, "cuda 068 shape style %d rotary_dim %d", il, (int)rs[r]);
            run_styled_at(&c068, st, 50 + (uint64_t)r, name, 0);
            snprintf(name, sizeof name, "cuda shifted style %d rotary_dim %d", il, (int)rs[r]);
            run_styled_at(&shifted, st, 60 + (uint64_t)r, name, 4);
        }
}

static void test_host_pointers_refused(void **state)
{
    (void)state;
    float q[128], k[128], c[128], s[128], qo[128], ko[128];
    memset(q, 0, sizeof q);
    const ropegrad_rope_apply_shape sh = {1, 1, 128, 1, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 0, ROPEGRAD_ROTARY_HALF, 0};
    ropegrad_rope_apply_problem p = {sh, q, k, c, s, qo, ko};
    assert_int_equal(ropegrad_rope_apply_cuda(&p, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
    ropegrad_rope_apply_backward_problem b = {sh, q, k, NULL, NULL, c, s, qo, ko, NULL, NULL};
    assert_int_equal(ropegrad_rope_apply_backward_cuda(&b, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
}

int main(void)
{
    if (!ropegrad_cuda_available()) {
        printf("skip: no usable CUDA device\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_staged_dtypes),
        cmocka_unit_test(test_staged_stages_and_fallbacks),
        cmocka_unit_test(test_styles),
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
