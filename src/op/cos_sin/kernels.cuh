/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernels of L1/012 (freqs -> cos, sin bf16) and their
// launcher, made as 011's (src/op/rope_forward/kernels.cuh says how: each value
// computed once and stored at j and j+H, the float sin/cos and its rounding
// test, the uncertain values redone in double, the far arguments out of line).
// Self-contained with rope_math.cuh: `ropegrad export-solution` embeds this
// very file.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "ropegrad.h"
#include "rope_math.cuh"

// 012's out-of-line path (see rg_rope_forward_far): VPT values of freqs row x,
// VPT/2 words of cos and of sin at oc/os and + H/2 words.
template <int VPT>
static __device__ __noinline__ void rg_cos_sin_far(const float *x, float scale, uint32_t *oc, uint32_t *os, int H)
{
    for (int i = 0; i < VPT; i += 2) {
        const uint32_t a = rg_sincos_bf16_double(x[i], scale), b = rg_sincos_bf16_double(x[i + 1], scale);
        const uint32_t cw = (a & 0xffffu) | (b << 16), sw = (a >> 16) | (b & 0xffff0000u);
        oc[i / 2] = cw, oc[i / 2 + H / 2] = cw;
        os[i / 2] = sw, os[i / 2 + H / 2] = sw;
    }
}

// VPT values of cos and of sin (float) packed into VPT/2 words of bf16 pairs each.
template <int VPT>
static __device__ __forceinline__ void rg_cos_sin_pack(const float *vc, const float *vs, rg_wordvec<VPT / 2> &cw,
                                                       rg_wordvec<VPT / 2> &sw)
{
#pragma unroll
    for (int i = 0; i < VPT / 2; i++) {
        cw.w[i] = rg_pack_bf16x2(vc[2 * i], vc[2 * i + 1]);
        sw.w[i] = rg_pack_bf16x2(vs[2 * i], vs[2 * i + 1]);
    }
}

// A thread's words of cos and of sin, at j and at j+64 (32 words further).
template <int VPT>
static __device__ __forceinline__ void rg_cos_sin_store(uint32_t *oc, uint32_t *os, const rg_wordvec<VPT / 2> &cw,
                                                        const rg_wordvec<VPT / 2> &sw)
{
    rg_store_words<VPT / 2>(oc, cw);
    rg_store_words<VPT / 2>(oc + 32, cw);
    rg_store_words<VPT / 2>(os, sw);
    rg_store_words<VPT / 2>(os + 32, sw);
}

// 012, head_dim 128, aligned pointers: 64/VPT threads per row; thread k reads
// freqs VPT*k .. +VPT-1 and writes 2*VPT bytes of cos and of sin at j and at
// j+64. S1: scale == 1. rows*64/VPT < 2^31.
template <int VPT, bool S1>
static __global__ void __launch_bounds__(256) rg_cos_sin_vec(const float *__restrict__ freqs, float scale,
                                                             uint32_t *__restrict__ cos_out,
                                                             uint32_t *__restrict__ sin_out, int rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int t = blockIdx.x * 256 + threadIdx.x;
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    const float *in = freqs + (size_t)r * H + VPT * k;
    float f[VPT];
    rg_load_floats<VPT>(in, f);
    uint32_t *oc = cos_out + (size_t)r * H + (VPT / 2) * k, *os = sin_out + (size_t)r * H + (VPT / 2) * k;
    uint32_t amb = 0;
    bool far = !(fabsf(scale) <= 1.0e30f);
    float vs[VPT], vc[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        if (rg_sincos_scaled<S1>(f[i], scale, &vs[i], &vc[i])) amb |= 1u << i;
        far |= !(fabsf(f[i]) <= RG_SINCOS_FAST_MAX);
    }
    rg_wordvec<VPT / 2> cw, sw;
    rg_cos_sin_pack<VPT>(vc, vs, cw, sw);
    if (far) {
        rg_cos_sin_far<VPT>(in, scale, oc, os, H);
        return;
    }
    if (amb) {
#pragma unroll
        for (int i = 0; i < VPT; i++)
            if (amb >> i & 1) {
                const int sh = (i & 1) * 16;
                const uint32_t wd = VPT <= 2 ? rg_sincos_bf16_refine_side<S1>(f[i], scale, vc[i], vs[i])
                                             : rg_sincos_bf16_scratch<S1>(f[i], scale);
                cw.w[i / 2] = (cw.w[i / 2] & ~(0xffffu << sh)) | ((wd & 0xffffu) << sh);
                sw.w[i / 2] = (sw.w[i / 2] & ~(0xffffu << sh)) | ((wd >> 16) << sh);
            }
    }
    rg_cos_sin_store<VPT>(oc, os, cw, sw);
}

// 012's fast kernel (kernel 1, "fast"), head_dim 128, aligned pointers: VPT
// values a thread (64/VPT threads a row, a 4*VPT-byte load, 2*VPT-byte stores),
// rg_sincos_core times the scale and one rounding to bf16, without the
// rounding test and its refinement. Each output is then within 0.5 +
// 6 * 2^-16 of a bf16 ulp of the exact value at scale 1 (rg_sincos_core's
// error is below RG_SINCOS_ULPS float ulps, 16 bits below a bf16 ulp, and
// twice that where the value and the exact one straddle a power of two), 0.5 +
// 14 * 2^-16 times a scale: the nearest bf16 but for the rare value within
// that margin of a midpoint (about 2 in 10^5 on real positions). On a small
// problem the correctly rounded kernel's few refined values (~460 cycles in
// double) end its last warps late; this one has no such tail (dev/cos_sin/NOTES.md).
// S1: scale == 1. rows*64/VPT < 2^31.
template <int VPT, bool S1>
static __global__ void __launch_bounds__(256) rg_cos_sin_fast(const float *__restrict__ freqs, float scale,
                                                              uint32_t *__restrict__ cos_out,
                                                              uint32_t *__restrict__ sin_out, int rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int t = blockIdx.x * 256 + threadIdx.x;
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    const float *in = freqs + (size_t)r * H + VPT * k;
    float f[VPT];
    rg_load_floats<VPT>(in, f);
    uint32_t *oc = cos_out + (size_t)r * H + (VPT / 2) * k, *os = sin_out + (size_t)r * H + (VPT / 2) * k;
    bool far = !(fabsf(scale) <= 1.0e30f);
    float vs[VPT], vc[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        rg_sincos_core(f[i], &vs[i], &vc[i]);
        if (!S1) vs[i] *= scale, vc[i] *= scale;
        far |= !(fabsf(f[i]) <= RG_SINCOS_FAST_MAX);
    }
    if (far) {   // beyond the core's range (or a huge scale): the correctly rounded double path
        rg_cos_sin_far<VPT>(in, scale, oc, os, H);
        return;
    }
    rg_wordvec<VPT / 2> cw, sw;
    rg_cos_sin_pack<VPT>(vc, vs, cw, sw);
    rg_cos_sin_store<VPT>(oc, os, cw, sw);
}

// 012, any even head_dim.
static __global__ void rg_cos_sin_any(const float *__restrict__ freqs, float scale, uint16_t *__restrict__ cos_out,
                                      uint16_t *__restrict__ sin_out, int64_t rows, int H)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / H;
    const int j = (int)(t - r * H);
    if (r >= rows) return;
    uint32_t s, c;
    rg_sincos_bf16(freqs[r * H + j], scale, &s, &c);
    const int64_t o = r * (int64_t)(2 * H) + j;
    cos_out[o] = (uint16_t)c;
    cos_out[o + H] = (uint16_t)c;
    sin_out[o] = (uint16_t)s;
    sin_out[o + H] = (uint16_t)s;
}

// Values per thread by size, from dev/rope_forward/dev_forward.cu on the H200 (one run,
// results/dev/): 2 on the small problems (latency-bound: a shorter
// chain), 4 from RG_CS_VPT4_ROWS rows (issue-bound: less per-thread overhead).
#define RG_CS_VPT4_ROWS 4097
static inline int rg_cos_sin_vpt(int64_t rows) { return rows < RG_CS_VPT4_ROWS ? 2 : 4; }

template <int VPT>
static void rg_cos_sin_go(const ropegrad_cos_sin_problem *p, int rows, cudaStream_t st)
{
    const unsigned grid = (unsigned)(((int64_t)rows * (64 / VPT) + 255) / 256);
    uint32_t *c = (uint32_t *)p->cos, *s = (uint32_t *)p->sin;
    if (p->attention_scaling == 1.0f) rg_cos_sin_vec<VPT, true><<<grid, 256, 0, st>>>(p->freqs, 1.0f, c, s, rows);
    else rg_cos_sin_vec<VPT, false><<<grid, 256, 0, st>>>(p->freqs, p->attention_scaling, c, s, rows);
}

// The vector kernels' conditions: head_dim 128, 32-bit thread indices, and
// pointers aligned to their widest access.
#define RG_FWD_MAX_ROWS (INT32_MAX / 64)

// The fast kernel's values per thread by size, from dev/rope_forward/dev_forward.cu on
// the H200 (6-plain/2 against 6-plain/4, results/dev/17-012-fast-geometry/):
// 2 up to 1024 rows (the grid then fills the 132 SMs: 4 would leave half of
// them idle), 4 above (half the blocks of 2: on 2048 rows ~10% faster).
static inline int rg_cos_sin_fast_vpt(int64_t rows) { return rows <= 1024 ? 2 : 4; }

template <int VPT>
static void rg_cos_sin_fast_go(const ropegrad_cos_sin_problem *p, int rows, cudaStream_t st)
{
    const unsigned grid = (unsigned)(((int64_t)rows * (64 / VPT) + 255) / 256);
    uint32_t *c = (uint32_t *)p->cos, *s = (uint32_t *)p->sin;
    if (p->attention_scaling == 1.0f) rg_cos_sin_fast<VPT, true><<<grid, 256, 0, st>>>(p->freqs, 1.0f, c, s, rows);
    else rg_cos_sin_fast<VPT, false><<<grid, 256, 0, st>>>(p->freqs, p->attention_scaling, c, s, rows);
}

// Kernel 0 (the default): every value the bf16 nearest the exact one. Kernel 1
// ("fast", ROPEGRAD_COS_SIN_KERNEL_FAST): rg_cos_sin_fast where its conditions
// hold (head_dim 128, 32-bit thread indices, freqs aligned to 4*VPT bytes and
// cos/sin to 2*VPT), else kernel 0, which is within its bound too.
static cudaError_t rg_cos_sin_launch_kernel(const ropegrad_cos_sin_problem *p, int kernel, cudaStream_t st)
{
    const int64_t rows = p->batch_size * p->seq_len;
    const int H = (int)(p->head_dim / 2);
    const bool vec = H == 64 && rows <= RG_FWD_MAX_ROWS;
    const int fvpt = rg_cos_sin_fast_vpt(rows);
    const unsigned fa = 4u * (unsigned)fvpt;
    if (kernel == ROPEGRAD_COS_SIN_KERNEL_FAST && vec && rg_aligned(p->freqs, fa) && rg_aligned(p->cos, fa / 2) &&
        rg_aligned(p->sin, fa / 2)) {
        if (fvpt == 2) rg_cos_sin_fast_go<2>(p, (int)rows, st);
        else rg_cos_sin_fast_go<4>(p, (int)rows, st);
        return cudaGetLastError();
    }
    const int vpt = rg_cos_sin_vpt(rows);
    const unsigned a = 4u * (unsigned)vpt;   // freqs: VPT floats; cos/sin: VPT/2 words
    if (vec && rg_aligned(p->freqs, a) && rg_aligned(p->cos, a / 2) && rg_aligned(p->sin, a / 2)) {
        if (vpt == 2) rg_cos_sin_go<2>(p, (int)rows, st);
        else rg_cos_sin_go<4>(p, (int)rows, st);
    } else {
        const int64_t n = rows * H;
        rg_cos_sin_any<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(p->freqs, p->attention_scaling, p->cos, p->sin,
                                                                   rows, H);
    }
    return cudaGetLastError();
}

// Kernel 0.
static cudaError_t rg_cos_sin_launch(const ropegrad_cos_sin_problem *p, cudaStream_t st)
{
    return rg_cos_sin_launch_kernel(p, 0, st);
}
