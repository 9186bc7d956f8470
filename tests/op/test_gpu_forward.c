/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_forward.c -- the forward ops' CUDA paths (011, 012) against their
 * float64 references: every element the nearest bf16 (so max abs error no
 * worse than a plain float32 evaluation) on real positions (llama3 to 131071,
 * theta 1e6 to 262143, different per batch), random and huge arguments, every
 * head_dim family, misaligned pointers (the general kernel), outputs poisoned
 * with NaN first; host pointers refused. 012's fast kernel (version 1):
 * every value within 0.5 + 2^-12 bf16 ulp, differing from the default kernel
 * only where that is not the nearest. Skips (exit 77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "forward_common.h"

#ifdef ROPEGRAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "op/gpu_test_util.h"

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

/* 012 on the device with kernel version `kernel`; out receives 2*B*S*D bf16 (cos then sin). */
static void gpu012_run(const fc_case *c, size_t offset, int kernel, uint16_t *out)
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
    assert_int_equal(ropegrad_cos_sin_cuda_kernel(&p, kernel, NULL), 0);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out, dcos, (size_t)n * 4, cudaMemcpyDeviceToHost));
    cudaFree(dfr);
    cudaFree(dout);
}

static void gpu012(const fc_case *c, size_t offset, fc_result *res)
{
    uint16_t *out = malloc((size_t)(2 * c->B * c->S * c->D) * 2);
    assert_non_null(out);
    gpu012_run(c, offset, 0, out);
    fc_check_012(c, out, res);
    free(out);
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

/* Kernel 1 ("fast"): every value within 0.5 + 2^-12 bf16 ulp of the exact
 * one on every input family, scale and shape (head_dim 128 aligned takes the
 * fast kernel; anything else the default kernel, nearest everywhere), and
 * where it is not the nearest bf16 the default kernel's output is. The cases
 * at 1000 rows (2 values a thread) and at 16000 (4) must each show some values
 * not the nearest: else that geometry of the fast kernel did not run (the
 * default kernel rounds every value to the nearest). */
static void test_fast_kernel(void **state)
{
    (void)state;
    const double bound = 0.5 + 1.0 / 4096;
    int64_t fast_not_nearest = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t off = 0; off <= 2; off += 2) {
            fc_case c;
            fc_make(&c, cases[k].B, cases[k].S, cases[k].D, cases[k].kind, cases[k].scale, 500 + k);
            const int64_t n = 2 * c.B * c.S * c.D;
            uint16_t *fast = malloc((size_t)n * 2);
            assert_non_null(fast);
            gpu012_run(&c, off, ROPEGRAD_COS_SIN_KERNEL_FAST, fast);
            fc_ulps u;
            fc_ulps_012(&c, fast, &u);
            printf("cuda 012 fast, case %zu offset %zu (B=%lld S=%lld D=%lld kind %d scale %g): max %.6f ulp, "
                   "not nearest %lld/%lld\n", k, off, (long long)c.B, (long long)c.S, (long long)c.D, c.kind,
                   (double)c.scale, u.max_ulps, (long long)u.n_not_nearest, (long long)u.n);
            assert_true(u.max_ulps <= bound);
            if (c.D != 128 || off) assert_int_equal(u.n_not_nearest, 0);   /* the default kernel ran */
            fast_not_nearest += u.n_not_nearest;
            free(fast);
            fc_free(&c);
        }
    int64_t per_geometry[2] = {0, 0};   /* not nearest at 1000 rows (2 values a thread), 16000 (4) */
    for (int kind = FC_RANDOM; kind <= FC_LAST; kind++)
        for (int si = 0; si < 4; si++) {
            fc_case c;
            const int64_t B = si < 2 ? 16 : 1;
            fc_make(&c, B, 1000, 128, kind, si % 2 ? 0.7071f : 1.0f, 1100 + (uint64_t)kind);
            const int64_t n = 2 * c.B * c.S * c.D;
            uint16_t *fast = malloc((size_t)n * 2), *def = malloc((size_t)n * 2);
            assert_non_null(fast);
            assert_non_null(def);
            gpu012_run(&c, 0, ROPEGRAD_COS_SIN_KERNEL_FAST, fast);
            gpu012_run(&c, 0, 0, def);
            fc_ulps u;
            fc_ulps_012(&c, fast, &u);
            int64_t differ = 0;
            for (int64_t i = 0; i < n; i++) differ += fast[i] != def[i];
            printf("cuda 012 fast, kind %d scale %g, %lld rows: max %.6f ulp, not nearest %lld/%lld, differs from "
                   "the default kernel %lld\n", kind, (double)c.scale, (long long)(B * 1000), u.max_ulps,
                   (long long)u.n_not_nearest, (long long)u.n, (long long)differ);
            assert_true(u.max_ulps <= bound);
            assert_int_equal(differ, u.n_not_nearest);   /* the default kernel is the nearest everywhere */
            fast_not_nearest += u.n_not_nearest;
            per_geometry[B == 1] += u.n_not_nearest;
            free(fast);
            free(def);
            fc_free(&c);
        }
    printf("cuda 012 fast: %lld values not the nearest bf16 over all cases (16000 rows: %lld, 1000 rows: %lld)\n",
           (long long)fast_not_nearest, (long long)per_geometry[0], (long long)per_geometry[1]);
    assert_true(per_geometry[0] > 0);   /* both geometries of the fast kernel ran */
    assert_true(per_geometry[1] > 0);
    /* an unknown kernel version is refused before any device work */
    fc_case c;
    fc_make(&c, 1, 2, 128, FC_RANDOM, 1.0f, 3);
    uint16_t *dout;
    float *dfr;
    CK(cudaMalloc((void **)&dout, 1024));
    CK(cudaMalloc((void **)&dfr, 512));
    ropegrad_cos_sin_problem p = {1, 2, 128, dfr, 1.0f, dout, dout + 256};
    assert_int_equal(ropegrad_cos_sin_cuda_kernel(&p, 2, NULL), ROPEGRAD_ERR_BAD_KERNEL);
    cudaFree(dout);
    cudaFree(dfr);
    fc_free(&c);
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
        cmocka_unit_test(test_fast_kernel),
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
