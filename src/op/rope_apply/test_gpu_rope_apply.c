/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_rope_apply.c -- the apply ops' CUDA paths (L1/088 forward, L1/068
 * backward) against their float64 references, on the cases of the CPU test
 * (rope_apply_common.h: both layouts, every dtype pair, GQA, shared and
 * per-batch cos/sin, odd head_dims) plus one of the suites' shapes; outputs
 * poisoned with NaN first; in place and 068 without grad_cos/grad_sin equal
 * to the plain call; host pointers refused. Skips (exit 77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_common.h"

#ifdef ROPEGRAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #x, cudaGetErrorString(e_));                     \
    } while (0)

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

static void *host_copy(const void *dev, size_t bytes)
{
    void *p = malloc(bytes);
    assert_non_null(p);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(p, dev, bytes, cudaMemcpyDeviceToHost));
    return p;
}

/* Device output dev (bytes) equal to host values h. */
static void assert_dev_equal(const void *dev, const void *h, size_t bytes)
{
    void *x = host_copy(dev, bytes);
    assert_memory_equal(x, h, bytes);
    free(x);
}

static void forward_case(const ra_data *d, void *const din[RA_N], const char *name)
{
    void *qo = dev_poisoned(d->bytes[RA_Q]), *ko = dev_poisoned(d->bytes[RA_K]);
    ropegrad_rope_apply_problem p = ra_forward_problem(d, din, qo, ko);
    assert_int_equal(ropegrad_rope_apply_cuda(&p, NULL), ROPEGRAD_OK);
    void *hq = host_copy(qo, d->bytes[RA_Q]), *hk = host_copy(ko, d->bytes[RA_K]);
    assert_int_equal(ra_count_bad(name, hq, d->s.dtype, d->ref_fwd, d->n_q, 2), 0);
    assert_int_equal(ra_count_bad(name, hk, d->s.dtype, d->ref_fwd + d->n_q, d->n_k, 2), 0);
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

static void run_case(const ra_case *c, uint64_t seed, const char *name)
{
    ra_data d;
    assert_int_equal(ra_make(&d, c, seed), 0);
    void *din[RA_N];
    for (int i = 0; i < RA_N; i++) din[i] = dev_copy(d.in[i], d.bytes[i]);
    forward_case(&d, din, name);
    backward_case(&d, din, name);
    for (int i = 0; i < RA_N; i++) cudaFree(din[i]);
    ra_free(&d);
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

static void test_host_pointers_refused(void **state)
{
    (void)state;
    float q[128], k[128], c[128], s[128], qo[128], ko[128];
    memset(q, 0, sizeof q);
    const ropegrad_rope_apply_shape sh = {1, 1, 128, 1, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 0};
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
