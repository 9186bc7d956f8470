/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_kernel.c -- the CUDA path against the float64 reference.
 *
 * Skips (exit 77, with the reason) when libropegrad was built without CUDA or
 * no GPU is usable. Otherwise, for ropegrad_rope_backward_cuda:
 *   - every head_dim family (2, 6, 16, 64, 128, 256, 1024), bf16/f16/f32 grads,
 *     per-batch and shared (stride 0) inv_freq, S=1, B=1, odd S;
 *   - misaligned-by-one-element tensors (kernels must fall back, never fault);
 *   - real training inputs (emb = position * inv_freq, theta 1e6, positions up
 *     to 262144, scale 1): max abs error vs float64 <= 4e-6;
 *   - the output buffer is poisoned with NaN first: every element must be written;
 * and one launch over more than 2^31 elements, two streams launched
 * concurrently, and argument errors (host pointers, bad sizes).
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ropegrad.h"

#ifdef ROPEGRAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "op/gpu_test_util.h"

/* ---- deterministic inputs (splitmix64 + Box-Muller) ---- */
static uint64_t sm_state;
static uint64_t splitmix64(void)
{
    uint64_t z = (sm_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform01(void) { return ((splitmix64() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static float normal(void)
{
    return (float)(sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01()));
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}
static uint16_t f32_to_f16(float f)
{
    /* Values here are small normals: a plain conversion suffices (no NaN/Inf). */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    int32_t exp = (int32_t)((u >> 23) & 0xff) - 127 + 15;
    uint32_t man = u & 0x7fffffu;
    if (exp <= 0) return (uint16_t)sign; /* flush tiny values to zero */
    if (exp >= 31) return (uint16_t)(sign | 0x7bffu);
    uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)h;
}

typedef struct host_case {
    int64_t B, S, D;
    ropegrad_dtype dt;
    int shared_inv;
    int positions; /* emb: 0 random normal, 1 real positions, 2 huge arguments */
    void *gc, *gs;
    float *emb, *inv;
} host_case;

static void fill_grad(void *dst, ropegrad_dtype dt, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = normal();
        if (dt == ROPEGRAD_BF16) ((uint16_t *)dst)[i] = f32_to_bf16(v);
        else if (dt == ROPEGRAD_F16) ((uint16_t *)dst)[i] = f32_to_f16(v);
        else ((float *)dst)[i] = v;
    }
}

static void make_case(host_case *c, int64_t B, int64_t S, int64_t D, ropegrad_dtype dt, int shared_inv,
                      int positions, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->B = B, c->S = S, c->D = D, c->dt = dt, c->shared_inv = shared_inv, c->positions = positions;
    sm_state = seed;
    const int64_t n = B * S * D, H = D / 2;
    const size_t esz = ropegrad_dtype_size(dt);
    /* One spare element on each buffer so the misaligned variant can shift by one. */
    c->gc = calloc((size_t)n + 2, esz);
    c->gs = calloc((size_t)n + 2, esz);
    c->emb = calloc((size_t)n + 2, sizeof(float));
    c->inv = calloc((size_t)(B * H) + 2, sizeof(float));
    assert_non_null(c->gc);
    assert_non_null(c->gs);
    assert_non_null(c->emb);
    assert_non_null(c->inv);
    fill_grad(c->gc, dt, n);
    fill_grad(c->gs, dt, n);
    if (positions == 1) {
        for (int64_t b = 0; b < B; b++)
            for (int64_t d = 0; d < H; d++) c->inv[b * H + d] = (float)pow(1e6, -2.0 * (double)d / (double)D);
        for (int64_t b = 0; b < B; b++)
            for (int64_t s = 0; s < S; s++) {
                double pos = (double)((s * 262143) / (S > 1 ? S - 1 : 1));
                for (int64_t d = 0; d < H; d++) {
                    float e = (float)(pos * (double)c->inv[b * H + d]);
                    c->emb[(b * S + s) * D + d] = e;
                    c->emb[(b * S + s) * D + d + H] = e;
                }
            }
    } else if (positions == 2) {
        /* Arguments from 1e-3 to 1e9 radians, log-uniform, so most threads hold
         * some value past the fast paths' 4e6 limit next to ordinary ones. */
        for (int64_t i = 0; i < n; i++) {
            double mag = pow(10.0, -3.0 + 12.0 * (0.5 + 0.5 * tanh(normal())));
            c->emb[i] = (float)(normal() < 0 ? -mag : mag);
        }
        for (int64_t i = 0; i < B * H; i++) c->inv[i] = normal();
    } else {
        for (int64_t i = 0; i < n; i++) c->emb[i] = normal();
        for (int64_t i = 0; i < B * H; i++) c->inv[i] = normal();
    }
}

static void free_case(host_case *c)
{
    free(c->gc);
    free(c->gs);
    free(c->emb);
    free(c->inv);
}

/* Copies a case to the device (shifted by `shift` elements for misalignment
 * tests), runs the CUDA path on a NaN-poisoned output, and returns max |out-ref|
 * relative to (1e-5 + 1e-5*|ref|): <= 1 means every element is within the
 * suite's tolerance. *max_abs gets the max abs error. */
static double run_case(const host_case *c, int shift, float scale, double *max_abs)
{
    const int64_t n = c->B * c->S * c->D, rows = c->B * c->S, H = c->D / 2;
    const size_t esz = ropegrad_dtype_size(c->dt);
    const int64_t ninv = c->shared_inv ? H : c->B * H;
    char *dgc, *dgs, *demb, *dinv;
    float *dout;
    CK(cudaMalloc((void **)&dgc, ((size_t)n + 2) * esz));
    CK(cudaMalloc((void **)&dgs, ((size_t)n + 2) * esz));
    CK(cudaMalloc((void **)&demb, ((size_t)n + 2) * 4));
    CK(cudaMalloc((void **)&dinv, ((size_t)ninv + 2) * 4));
    CK(cudaMalloc((void **)&dout, ((size_t)rows + 1) * 4));
    CK(cudaMemcpy(dgc + shift * esz, c->gc, (size_t)n * esz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dgs + shift * esz, c->gs, (size_t)n * esz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(demb + shift * 4, c->emb, (size_t)n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dinv + shift * 4, c->inv, (size_t)ninv * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, ((size_t)rows + 1) * 4)); /* NaN everywhere */

    ropegrad_rope_backward_problem p = {
        .batch_size = c->B, .seq_len = c->S, .head_dim = c->D, .grad_dtype = c->dt,
        .grad_cos = dgc + shift * esz, .grad_sin = dgs + shift * esz,
        .emb = (const float *)(demb + shift * 4), .inv_freq = (const float *)(dinv + shift * 4),
        .inv_freq_batch_stride = c->shared_inv ? 0 : H, .attention_scaling = scale,
        .grad_position_ids = dout + shift};
    int rc = ropegrad_rope_backward_cuda(&p, NULL);
    if (rc) fail_msg("ropegrad_rope_backward_cuda: %s", ropegrad_strerror(rc));
    CK(cudaDeviceSynchronize());

    float *out = malloc((size_t)rows * 4);
    double *ref = malloc((size_t)rows * 8);
    assert_non_null(out);
    assert_non_null(ref);
    CK(cudaMemcpy(out, dout + shift, (size_t)rows * 4, cudaMemcpyDeviceToHost));
    ropegrad_rope_backward_problem hp = p;
    hp.grad_cos = c->gc, hp.grad_sin = c->gs, hp.emb = c->emb, hp.inv_freq = c->inv;
    hp.grad_position_ids = NULL;
    assert_int_equal(ropegrad_rope_backward_reference(&hp, ref), 0);
    double worst = 0, mabs = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (!isfinite(out[r])) fail_msg("row %lld not written or not finite", (long long)r);
        double err = fabs((double)out[r] - ref[r]);
        if (err > mabs) mabs = err;
        double q = err / (1e-5 + 1e-5 * fabs(ref[r]));
        if (q > worst) worst = q;
    }
    free(out);
    free(ref);
    cudaFree(dgc), cudaFree(dgs), cudaFree(demb), cudaFree(dinv), cudaFree(dout);
    *max_abs = mabs;
    return worst;
}

static void test_shapes_dtypes_layouts(void **state)
{
    static const int64_t dims[] = {2, 6, 16, 64, 128, 256, 1024};
    static const int64_t shapes[][2] = {{1, 1}, {1, 37}, {3, 129}, {2, 1}};
    /* Under compute-sanitizer (ROPEGRAD_TEST_QUICK) every dtype and layout
     * still runs, on two of the four shapes. */
    const size_t nshapes = getenv("ROPEGRAD_TEST_QUICK") ? 2 : sizeof shapes / sizeof shapes[0];
    static const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    int cases = 0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
        for (size_t si = 0; si < nshapes; si++)
            for (size_t ti = 0; ti < 3; ti++)
                for (int shared = 0; shared < 2; shared++) {
                    host_case c;
                    make_case(&c, shapes[si][0], shapes[si][1], dims[di], dts[ti], shared, 0,
                              1000 + di * 97 + si * 13 + ti * 3 + (uint64_t)shared);
                    for (int shift = 0; shift < 2; shift++) {
                        double mabs, q = run_case(&c, shift, 0.0883883f, &mabs);
                        if (q > 1.0)
                            fail_msg("D=%lld B=%lld S=%lld dt=%d shared=%d shift=%d: "
                                     "error %.3g x tolerance (max abs %.3g)",
                                     (long long)c.D, (long long)c.B, (long long)c.S, (int)c.dt, shared, shift, q,
                                     mabs);
                        cases++;
                    }
                    free_case(&c);
                }
    print_message("checked %d (shape, dtype, layout, alignment) cases\n", cases);
}

static void test_suite_shapes(void **state)
{
    /* The hot case at suite sizes, including rows that leave a partial warp. */
    static const int64_t shapes[][2] = {{1, 128}, {1, 131}, {4, 293}, {16, 613}, {2, 3637}, {64, 128}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        host_case c;
        make_case(&c, shapes[si][0], shapes[si][1], 128, ROPEGRAD_BF16, 0, 0, 77 + si);
        double mabs, q = run_case(&c, 0, 0.0883883f, &mabs);
        if (q > 1.0) fail_msg("B=%lld S=%lld: %.3g x tolerance", (long long)c.B, (long long)c.S, q);
        free_case(&c);
    }
}

/* B > 65535: kernels 14's and 12's grids cannot hold the batch, so the default falls back
 * to kernel 10 (shipped for this); every dtype, both alignments. */
static void test_batch_fallback(void **state)
{
    static const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    for (int ti = 0; ti < 3; ti++) {
        host_case c;
        make_case(&c, 65537, 2, 128, dts[ti], 0, 0, 5150 + (uint64_t)ti);
        for (int shift = 0; shift < 2; shift++) {
            double mabs, q = run_case(&c, shift, 0.0883883f, &mabs);
            if (q > 1.0)
                fail_msg("B=65537 dt=%d shift %d: %.3g x tolerance (max abs %.3g)", (int)c.dt, shift, q, mabs);
        }
        free_case(&c);
    }
}

static void test_real_positions(void **state)
{
    static const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    for (int ti = 0; ti < 3; ti++) {
        host_case c;
        make_case(&c, 2, 4099, 128, dts[ti], ti == 1, 1, 4242 + (uint64_t)ti);
        double mabs;
        (void)run_case(&c, 0, 1.0f, &mabs);
        print_message("real positions dt=%d: max abs err %.3g\n", (int)c.dt, mabs);
        if (mabs > 4e-6) fail_msg("real positions dt=%d: max abs err %.3g > 4e-6", (int)c.dt, mabs);
        free_case(&c);
    }
}

/* Huge arguments (up to 1e9 rad) mixed with ordinary ones in every row: each
 * kernel's out-of-range path (double-precision sincos) must take over for the
 * values, threads or warps that need it and give the same accuracy. */
static void test_large_arguments(void **state)
{
    static const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F32};
    for (int ti = 0; ti < 2; ti++) {
        host_case c;
        make_case(&c, 3, 517, 128, dts[ti], 0, 2, 9090 + (uint64_t)ti);
        int64_t big = 0;
        for (int64_t i = 0; i < c.B * c.S * c.D; i++) big += fabsf(c.emb[i]) > 4e6f;
        assert_true(big > c.B * c.S * c.D / 10); /* the slow path really is exercised */
        double mabs, q = run_case(&c, 0, 0.0883883f, &mabs);
        if (q > 1.0) fail_msg("large arguments dt=%d: %.3g x tolerance (max abs %.3g)", (int)c.dt, q, mabs);
        free_case(&c);
    }
}

/* More than 2^31 elements in one launch. The data is a periodic pattern of
 * P = 3*2^18 elements (not a divisor of 2^32, so a 32-bit index that wrapped
 * would land on different data), so row r's inputs are the pattern at
 * (r*D) mod P and its expected value repeats every P/D rows per batch: the
 * float64 reference of 2 x P/D rows checks every one of the ~17M outputs. */
static void test_beyond_2e31(void **state)
{
    const int64_t D = 128, H = 64, P = 3 << 18, period = P / D, B = 2, S = 8500000;
    const int64_t n = B * S * D, rows = B * S;
    assert_true(n > 2147483648LL);
    if (getenv("ROPEGRAD_TEST_QUICK")) {
        print_message("SKIP beyond-2^31 case: ROPEGRAD_TEST_QUICK is set (e.g. under compute-sanitizer)\n");
        skip();
    }
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const size_t need = (size_t)n * (2 + 2 + 4) + (size_t)rows * 4 + (1 << 20);
    if (free_b < need + (1ull << 30)) {
        print_message("SKIP beyond-2^31 case: needs %.1f GB of device memory, %.1f GB free\n", need / 1e9,
                      free_b / 1e9);
        skip();
    }
    host_case c;
    make_case(&c, 1, P / D, D, ROPEGRAD_BF16, 0, 0, 31337); /* the pattern: P elements */
    float inv[2 * 64];
    for (int i = 0; i < 2 * 64; i++) inv[i] = normal();
    char *dgc, *dgs, *demb;
    float *dinv, *dout;
    CK(cudaMalloc((void **)&dgc, (size_t)n * 2));
    CK(cudaMalloc((void **)&dgs, (size_t)n * 2));
    CK(cudaMalloc((void **)&demb, (size_t)n * 4));
    CK(cudaMalloc((void **)&dinv, sizeof inv));
    CK(cudaMalloc((void **)&dout, (size_t)rows * 4));
    CK(cudaMemcpy(dinv, inv, sizeof inv, cudaMemcpyHostToDevice));
    for (int64_t off = 0; off < n; off += P) {
        const int64_t cnt = (n - off) < P ? (n - off) : P;
        CK(cudaMemcpy(dgc + off * 2, c.gc, (size_t)cnt * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dgs + off * 2, c.gs, (size_t)cnt * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(demb + off * 4, c.emb, (size_t)cnt * 4, cudaMemcpyHostToDevice));
    }
    CK(cudaMemset(dout, 0xff, (size_t)rows * 4));
    ropegrad_rope_backward_problem p = {.batch_size = B, .seq_len = S, .head_dim = D, .grad_dtype = ROPEGRAD_BF16,
                          .grad_cos = dgc, .grad_sin = dgs, .emb = (const float *)demb, .inv_freq = dinv,
                          .inv_freq_batch_stride = H, .attention_scaling = 0.125f, .grad_position_ids = dout};
    assert_int_equal(ropegrad_rope_backward_cuda(&p, NULL), 0);
    CK(cudaDeviceSynchronize());
    float *out = malloc((size_t)rows * 4);
    double ref[2][3 << 11];
    assert_non_null(out);
    CK(cudaMemcpy(out, dout, (size_t)rows * 4, cudaMemcpyDeviceToHost));
    for (int b = 0; b < 2; b++) {
        ropegrad_rope_backward_problem hp = {.batch_size = 1, .seq_len = period, .head_dim = D, .grad_dtype = ROPEGRAD_BF16,
                               .grad_cos = c.gc, .grad_sin = c.gs, .emb = c.emb, .inv_freq = inv + b * H,
                               .inv_freq_batch_stride = H, .attention_scaling = 0.125f};
        assert_int_equal(ropegrad_rope_backward_reference(&hp, ref[b]), 0);
    }
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t b = r / S;
        const double want = ref[b][r % period]; /* (r*D mod P)/D == r mod period */
        const double err = fabs((double)out[r] - want);
        if (!(err <= 1e-5 + 1e-5 * fabs(want))) {
            if (bad++ < 5) print_message("row %lld: got %.9g want %.9g\n", (long long)r, out[r], want);
        }
    }
    free(out);
    free_case(&c);
    cudaFree(dgc), cudaFree(dgs), cudaFree(demb), cudaFree(dinv), cudaFree(dout);
    if (bad) fail_msg("%lld of %lld rows wrong beyond 2^31 elements", (long long)bad, (long long)rows);
}

/* Two streams, launched back to back from one thread, then compared with the
 * same launches made serially: results must be bit-identical. */
static void test_two_streams(void **state)
{
    host_case c[2];
    make_case(&c[0], 8, 4093, 128, ROPEGRAD_BF16, 0, 0, 5);
    make_case(&c[1], 16, 613, 128, ROPEGRAD_BF16, 0, 0, 6);
    cudaStream_t st[2];
    ropegrad_rope_backward_problem p[2];
    float *dout[2], *h_conc[2], *h_serial[2];
    void *bufs[2][4];
    for (int i = 0; i < 2; i++) {
        CK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
        const int64_t n = c[i].B * c[i].S * 128, rows = c[i].B * c[i].S;
        CK(cudaMalloc(&bufs[i][0], (size_t)n * 2));
        CK(cudaMalloc(&bufs[i][1], (size_t)n * 2));
        CK(cudaMalloc(&bufs[i][2], (size_t)n * 4));
        CK(cudaMalloc(&bufs[i][3], (size_t)c[i].B * 64 * 4));
        CK(cudaMalloc((void **)&dout[i], (size_t)rows * 4));
        CK(cudaMemcpy(bufs[i][0], c[i].gc, (size_t)n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(bufs[i][1], c[i].gs, (size_t)n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(bufs[i][2], c[i].emb, (size_t)n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(bufs[i][3], c[i].inv, (size_t)c[i].B * 64 * 4, cudaMemcpyHostToDevice));
        p[i] = (ropegrad_rope_backward_problem){.batch_size = c[i].B, .seq_len = c[i].S, .head_dim = 128,
                                  .grad_dtype = ROPEGRAD_BF16, .grad_cos = bufs[i][0], .grad_sin = bufs[i][1],
                                  .emb = bufs[i][2], .inv_freq = bufs[i][3], .inv_freq_batch_stride = 64,
                                  .attention_scaling = 0.0883883f, .grad_position_ids = dout[i]};
        h_conc[i] = malloc((size_t)rows * 4);
        h_serial[i] = malloc((size_t)rows * 4);
        assert_non_null(h_conc[i]);
        assert_non_null(h_serial[i]);
    }
    for (int i = 0; i < 2; i++) {
        CK(cudaMemset(dout[i], 0xff, (size_t)(c[i].B * c[i].S) * 4));
        assert_int_equal(ropegrad_rope_backward_cuda(&p[i], NULL), 0);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h_serial[i], dout[i], (size_t)(c[i].B * c[i].S) * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemset(dout[i], 0xff, (size_t)(c[i].B * c[i].S) * 4));
    }
    CK(cudaDeviceSynchronize());
    for (int rep = 0; rep < 20; rep++)
        for (int i = 0; i < 2; i++) assert_int_equal(ropegrad_rope_backward_cuda(&p[i], st[i]), 0);
    for (int i = 0; i < 2; i++) {
        CK(cudaStreamSynchronize(st[i]));
        CK(cudaMemcpy(h_conc[i], dout[i], (size_t)(c[i].B * c[i].S) * 4, cudaMemcpyDeviceToHost));
        assert_memory_equal(h_conc[i], h_serial[i], (size_t)(c[i].B * c[i].S) * 4);
        for (int j = 0; j < 4; j++) cudaFree(bufs[i][j]);
        cudaFree(dout[i]);
        cudaStreamDestroy(st[i]);
        free(h_conc[i]);
        free(h_serial[i]);
        free_case(&c[i]);
    }
}

/* Eight host threads, each with its own stream and its own problem, call the
 * CUDA path at once, many times; every result must equal, bit for bit, the
 * serial launch of the same problem. */
typedef struct thread_job {
    ropegrad_rope_backward_problem p;
    cudaStream_t st;
    int rc;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    for (int rep = 0; rep < 50 && j->rc == 0; rep++) j->rc = ropegrad_rope_backward_cuda(&j->p, j->st);
    if (j->rc == 0 && cudaStreamSynchronize(j->st) != cudaSuccess) j->rc = -1;
    return NULL;
}

static void test_eight_host_threads(void **state)
{
    enum { T = 8 };
    host_case c[T];
    thread_job jobs[T];
    void *bufs[T][5];
    float *serial[T], *conc[T];
    for (int i = 0; i < T; i++) {
        make_case(&c[i], 1 + i, 300 + 97 * i, 128, i % 3 == 2 ? ROPEGRAD_F32 : ROPEGRAD_BF16, i & 1, 0, 900 + i);
        const int64_t n = c[i].B * c[i].S * 128, rows = c[i].B * c[i].S;
        const size_t esz = ropegrad_dtype_size(c[i].dt), ninv = c[i].shared_inv ? 64 : (size_t)c[i].B * 64;
        CK(cudaMalloc(&bufs[i][0], (size_t)n * esz));
        CK(cudaMalloc(&bufs[i][1], (size_t)n * esz));
        CK(cudaMalloc(&bufs[i][2], (size_t)n * 4));
        CK(cudaMalloc(&bufs[i][3], ninv * 4));
        CK(cudaMalloc(&bufs[i][4], (size_t)rows * 4));
        CK(cudaMemcpy(bufs[i][0], c[i].gc, (size_t)n * esz, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(bufs[i][1], c[i].gs, (size_t)n * esz, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(bufs[i][2], c[i].emb, (size_t)n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(bufs[i][3], c[i].inv, ninv * 4, cudaMemcpyHostToDevice));
        jobs[i].p = (ropegrad_rope_backward_problem){.batch_size = c[i].B, .seq_len = c[i].S, .head_dim = 128,
                                       .grad_dtype = c[i].dt, .grad_cos = bufs[i][0], .grad_sin = bufs[i][1],
                                       .emb = bufs[i][2], .inv_freq = bufs[i][3],
                                       .inv_freq_batch_stride = c[i].shared_inv ? 0 : 64,
                                       .attention_scaling = 0.5f, .grad_position_ids = bufs[i][4]};
        jobs[i].rc = 0;
        CK(cudaStreamCreateWithFlags(&jobs[i].st, cudaStreamNonBlocking));
        serial[i] = malloc((size_t)rows * 4);
        conc[i] = malloc((size_t)rows * 4);
        assert_non_null(serial[i]);
        assert_non_null(conc[i]);
        CK(cudaMemset(bufs[i][4], 0xff, (size_t)rows * 4));
        assert_int_equal(ropegrad_rope_backward_cuda(&jobs[i].p, NULL), 0);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(serial[i], bufs[i][4], (size_t)rows * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemset(bufs[i][4], 0xff, (size_t)rows * 4));
    }
    CK(cudaDeviceSynchronize());
    pthread_t th[T];
    for (int i = 0; i < T; i++) assert_int_equal(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) {
        const int64_t rows = c[i].B * c[i].S;
        assert_int_equal(jobs[i].rc, 0);
        CK(cudaMemcpy(conc[i], bufs[i][4], (size_t)rows * 4, cudaMemcpyDeviceToHost));
        assert_memory_equal(conc[i], serial[i], (size_t)rows * 4);
        for (int k = 0; k < 5; k++) cudaFree(bufs[i][k]);
        cudaStreamDestroy(jobs[i].st);
        free(serial[i]);
        free(conc[i]);
        free_case(&c[i]);
    }
}

static void test_argument_errors(void **state)
{
    float host_buf[256] = {0}, host_out[1] = {0};   /* an output of its own: not ROPEGRAD_ERR_OVERLAP */
    ropegrad_rope_backward_problem p = {.batch_size = 1, .seq_len = 1, .head_dim = 128, .grad_dtype = ROPEGRAD_F32,
                          .grad_cos = host_buf, .grad_sin = host_buf, .emb = host_buf, .inv_freq = host_buf,
                          .inv_freq_batch_stride = 64, .attention_scaling = 1.0f, .grad_position_ids = host_out};
    assert_int_equal(ropegrad_rope_backward_cuda(&p, NULL), ROPEGRAD_ERR_NOT_DEVICE_POINTER);
    assert_int_equal(ropegrad_rope_backward_cuda(NULL, NULL), ROPEGRAD_ERR_NULL_PROBLEM);
    p.head_dim = 3;
    assert_int_equal(ropegrad_rope_backward_cuda(&p, NULL), ROPEGRAD_ERR_BAD_HEAD_DIM);
}

#endif /* ROPEGRAD_HAVE_CUDA */

int main(void)
{
#ifndef ROPEGRAD_HAVE_CUDA
    printf("SKIP test_gpu_kernel: libropegrad was built without CUDA (no nvcc)\n");
    return 77;
#else
    if (!ropegrad_cuda_available()) {
        printf("SKIP test_gpu_kernel: no usable GPU on this machine\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argument_errors),   cmocka_unit_test(test_suite_shapes),
        cmocka_unit_test(test_real_positions),    cmocka_unit_test(test_large_arguments),
        cmocka_unit_test(test_batch_fallback),
        cmocka_unit_test(test_shapes_dtypes_layouts),
        cmocka_unit_test(test_two_streams),       cmocka_unit_test(test_eight_host_threads),
        cmocka_unit_test(test_beyond_2e31),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
