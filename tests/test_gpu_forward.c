/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_forward.c -- the forward ops' CUDA paths (011, 012) against their
 * float64 references: every element the nearest bf16 (so max abs error no
 * worse than a plain float32 evaluation) on real positions (llama3 to 131071,
 * theta 1e6 to 262143, different per batch), random and huge arguments, every
 * head_dim family, misaligned pointers (the general kernel), outputs poisoned
 * with NaN first; host pointers refused. Skips (exit 77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "forward_common.h"

#ifdef ROPEGRAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #x, cudaGetErrorString(e_));                     \
    } while (0)

/* offset: bytes added to every device pointer (2 = misaligned for 16-byte
 * access but aligned for the element types). */
static void gpu011(const fc_case *c, size_t offset, fc_result *res)
{
    const int64_t rows = c->B * c->S, D = c->D, n = rows * D * 2;
    char *dpos, *dinv, *dout;
    CK(cudaMalloc((void **)&dpos, (size_t)rows * 8 + 16));
    CK(cudaMalloc((void **)&dinv, (size_t)D / 2 * 4 + 16));
    CK(cudaMalloc((void **)&dout, (size_t)n * 2 + 16));
    const size_t opos = offset ? 8 : 0, oinv = offset ? 4 : 0;
    CK(cudaMemcpy(dpos + opos, c->pos, (size_t)rows * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dinv + oinv, c->inv, (size_t)D / 2 * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, (size_t)n * 2 + 16));
    ropegrad_rope_forward_problem p = {c->B, c->S, D, (const int64_t *)(dpos + opos), (const float *)(dinv + oinv),
                                       c->scale, (uint16_t *)(dout + offset)};
    assert_int_equal(ropegrad_rope_forward_cuda(&p, NULL), 0);
    CK(cudaDeviceSynchronize());
    uint16_t *out = malloc((size_t)n * 2);
    assert_non_null(out);
    CK(cudaMemcpy(out, dout + offset, (size_t)n * 2, cudaMemcpyDeviceToHost));
    fc_check_011(c, out, res);
    free(out);
    cudaFree(dpos);
    cudaFree(dinv);
    cudaFree(dout);
}

static void gpu012(const fc_case *c, size_t offset, fc_result *res)
{
    const int64_t rows = c->B * c->S, D = c->D, H = D / 2, n = rows * D;
    char *dfr, *dout;
    CK(cudaMalloc((void **)&dfr, (size_t)(rows * H) * 4 + 16));
    CK(cudaMalloc((void **)&dout, (size_t)n * 4 + 32));
    const size_t ofr = offset ? 4 : 0;
    CK(cudaMemcpy(dfr + ofr, c->freqs, (size_t)(rows * H) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, (size_t)n * 4 + 32));
    uint16_t *dcos = (uint16_t *)(dout + offset), *dsin = dcos + n;
    ropegrad_cos_sin_problem p = {c->B, c->S, D, (const float *)(dfr + ofr), c->scale, dcos, dsin};
    assert_int_equal(ropegrad_cos_sin_cuda(&p, NULL), 0);
    CK(cudaDeviceSynchronize());
    uint16_t *out = malloc((size_t)n * 4);
    assert_non_null(out);
    CK(cudaMemcpy(out, dcos, (size_t)n * 4, cudaMemcpyDeviceToHost));
    fc_check_012(c, out, res);
    free(out);
    cudaFree(dfr);
    cudaFree(dout);
}

static const struct {
    int64_t B, S, D;
    int kind;
    float scale;
} cases[] = {
    {64, 541, 128, FC_LLAMA3, 1.0f},     /* the suites' largest shape, real llama3 positions */
    {4, 8192, 128, FC_THETA_1E6, 1.0f},  /* theta 1e6, positions to 262143 */
    {3, 77, 128, FC_LLAMA3, 0.7071f},
    {2, 1500, 128, FC_THETA_1E6, 1.0f},  /* 012's middle-size path (4 values per thread) */
    {2, 33, 2, FC_THETA_1E6, 1.0f},
    {1, 9, 6, FC_LLAMA3, 1.0f},
    {3, 17, 16, FC_LLAMA3, 1.0f},
    {1, 5, 1024, FC_THETA_1E6, 2.0f},
    {2, 64, 130, FC_LLAMA3, 1.0f},
    {1, 1, 128, FC_LLAMA3, 1.0f},
};

static void test_forward_ops(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t off = 0; off <= 2; off += 2) {
            fc_case c;
            fc_make(&c, cases[k].B, cases[k].S, cases[k].D, cases[k].kind, cases[k].scale, 500 + k);
            fc_result r11, r12;
            gpu011(&c, off, &r11);
            gpu012(&c, off, &r12);
            fc_assert_case("cuda", k, off, &c, &r11, &r12);
            fc_free(&c);
        }
    /* 011 from 12288 rows takes the loop kernel (rows in a loop per warp, the
     * flagged values redone after it): 14000 rows with every 97th position
     * beyond the fast range (negative, or to 3e9), so its out-of-line path
     * runs inside the loop too, at scale 1 and not. */
    for (int si = 0; si < 2; si++) {
        fc_case c;
        fc_make(&c, 2, 7000, 128, FC_THETA_1E6, si ? 0.7071f : 1.0f, 700 + (uint64_t)si);
        for (int64_t r = 5; r < c.B * c.S; r += 97) c.pos[r] = r % 3 ? (int64_t)5000000 * (r % 5 + 1) : -3000000000LL + r;
        fc_result r11;
        gpu011(&c, 0, &r11);
        printf("cuda 011 loop kernel, scale %g, %lld rows with far positions: max err %.3e, not nearest %lld/%lld\n",
               (double)c.scale, (long long)(c.B * c.S), r11.max_err, (long long)r11.n_not_nearest, (long long)r11.n);
        assert_int_equal(r11.n_not_nearest, 0);
        fc_free(&c);
    }
    /* 8000 rows and 2000: the kernel takes 4 values per thread for the first
     * and 2 for the second, each with its own refinement of uncertain roundings. */
    for (int kind = FC_RANDOM; kind <= FC_LAST; kind++)
        for (int64_t B = 8; B >= 2; B -= 6) {
            fc_case c;
            fc_make(&c, B, 1000, 128, kind, 1.0f, 900 + (uint64_t)kind);
            fc_result r;
            gpu012(&c, 0, &r);
            printf("cuda 012 kind %d, %lld rows: max err %.3e, not nearest %lld/%lld\n", kind, (long long)(B * 1000),
                   r.max_err, (long long)r.n_not_nearest, (long long)r.n);
            assert_int_equal(r.n_not_nearest, 0);
            fc_free(&c);
        }
}

static void test_host_pointers_refused(void **state)
{
    (void)state;
    int64_t pos[2] = {0, 1};
    float inv[64] = {0};
    uint16_t out[2 * 256];
    ropegrad_rope_forward_problem p = {1, 2, 128, pos, inv, 1.0f, out};
    assert_int_equal(ropegrad_rope_forward_cuda(&p, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
    float fr[128] = {0};
    ropegrad_cos_sin_problem q = {1, 2, 128, fr, 1.0f, out, out + 256};
    assert_int_equal(ropegrad_cos_sin_cuda(&q, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
}

int main(void)
{
    if (!ropegrad_cuda_available()) {
        printf("skip: no usable CUDA device\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_ops),
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
