/* SPDX-License-Identifier: Apache-2.0 */
// forward_kernels.cuh -- the CUDA kernels of the forward ops, L1/011 (position
// ids -> cos_sin) and L1/012 (freqs -> cos, sin), and their launchers. The
// device math (range-reduced sin/cos, correctly rounded bf16) is rope_math.cuh.
//
// Both ops write far more than they read (011: 8 B in, 512 B out per row at
// head_dim 128; 012: 256 B in, 512 B out), and the halves j and j+H of a row
// are equal: each value is computed once and stored twice. A thread computes
// 4 (011) or 8 (012) consecutive frequencies and writes whole 16-byte runs.
// A general kernel (one thread per frequency, scalar stores) takes any even
// head_dim and any alignment.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "ropegrad.h"
#include "rope_math.cuh"

static __device__ __forceinline__ uint32_t rg_pack2(uint32_t lo, uint32_t hi) { return lo | (hi << 16); }

// Vectors of N 32-bit words for the packed stores.
template <int N> struct rg_vec;
template <> struct rg_vec<1> { typedef uint32_t t; };
template <> struct rg_vec<2> { typedef uint2 t; };
template <> struct rg_vec<4> { typedef uint4 t; };

template <int N>
static __device__ __forceinline__ typename rg_vec<N>::t rg_pack_words(const uint32_t *w)
{
    typename rg_vec<N>::t v;
    memcpy(&v, w, sizeof v);   // registers only: N is a constant
    return v;
}

// 011, head_dim/2 % VPT == 0, pointers aligned to the vectors: TPR = H/VPT
// threads per row; thread k covers j = VPT*k .. VPT*k+VPT-1 and writes their
// (cos, sin) pairs at j and at j+H (2 stores of 4*VPT bytes). VPT 4 (16-byte
// stores) for large problems, 2 for small ones, where more threads shorten
// each thread's chain of sincos. HC: H as a compile-time constant (64) or 0.
template <int HC, int VPT>
static __global__ void __launch_bounds__(256) rg_rope_forward_vec(const int64_t *__restrict__ pos,
                                                                  const float *__restrict__ inv, float scale,
                                                                  uint16_t *__restrict__ out, int64_t rows, int Hr)
{
    typedef typename rg_vec<VPT>::t V;
    const int H = HC ? HC : Hr;
    const int tpr = H / VPT;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / tpr;
    const int k = (int)(t - r * tpr);
    if (r >= rows) return;
    const float p = (float)__ldg(pos + r);
    float f[VPT];
    if (VPT == 4) {
        const float4 q = __ldg((const float4 *)inv + k);
        f[0] = q.x, f[1] = q.y, f[VPT > 2 ? 2 : 0] = q.z, f[VPT > 3 ? 3 : 0] = q.w;
    } else {
        const float2 q = __ldg((const float2 *)inv + k);
        f[0] = q.x, f[1] = q.y;
    }
    uint32_t w[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        uint32_t sv, cv;
        rg_sincos_bf16(p * f[i], scale, &sv, &cv);
        w[i] = rg_pack2(cv, sv);
    }
    const V v = rg_pack_words<VPT>(w);
    V *o = (V *)(out + r * (int64_t)(4 * H));   // 2*D bf16 per row
    o[k] = v;
    o[k + tpr] = v;
}

// 011, any even head_dim: one thread per (row, j < H).
static __global__ void rg_rope_forward_any(const int64_t *__restrict__ pos, const float *__restrict__ inv,
                                           float scale, uint16_t *__restrict__ out, int64_t rows, int H)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / H;
    const int j = (int)(t - r * H);
    if (r >= rows) return;
    uint32_t s, c;
    rg_sincos_bf16((float)pos[r] * inv[j], scale, &s, &c);
    uint16_t *o = out + r * (int64_t)(4 * H);
    o[2 * j] = (uint16_t)c;
    o[2 * j + 1] = (uint16_t)s;
    o[2 * (j + H)] = (uint16_t)c;
    o[2 * (j + H) + 1] = (uint16_t)s;
}

// 012, head_dim/2 % VPT == 0, aligned pointers: TPR = H/VPT threads per row;
// thread k reads freqs VPT*k .. +VPT-1 and writes 2*VPT bytes of cos and of
// sin at j and at j+H. VPT 8 (16-byte stores) for large problems, 4 or 2 for
// smaller ones.
template <int HC, int VPT>
static __global__ void __launch_bounds__(256) rg_cos_sin_vec(const float *__restrict__ freqs, float scale,
                                                             uint16_t *__restrict__ cos_out,
                                                             uint16_t *__restrict__ sin_out, int64_t rows, int Hr)
{
    typedef typename rg_vec<VPT / 2>::t V;
    const int H = HC ? HC : Hr;
    const int tpr = H / VPT;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / tpr;
    const int k = (int)(t - r * tpr);
    if (r >= rows) return;
    const float *in = freqs + r * (int64_t)H + VPT * k;
    float f[VPT];
    if (VPT == 8) {
        const float4 a = __ldg((const float4 *)in), b = __ldg((const float4 *)in + 1);
        f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
        f[4 % VPT] = b.x, f[5 % VPT] = b.y, f[6 % VPT] = b.z, f[7 % VPT] = b.w;
    } else if (VPT == 4) {
        const float4 a = __ldg((const float4 *)in);
        f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
    } else {
        const float2 a = __ldg((const float2 *)in);
        f[0] = a.x, f[1] = a.y;
    }
    uint32_t s[VPT], c[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++) rg_sincos_bf16(f[i], scale, &s[i], &c[i]);
    uint32_t cw[VPT / 2], sw[VPT / 2];
#pragma unroll
    for (int i = 0; i < VPT / 2; i++) {
        cw[i] = rg_pack2(c[2 * i], c[2 * i + 1]);
        sw[i] = rg_pack2(s[2 * i], s[2 * i + 1]);
    }
    const V cv = rg_pack_words<VPT / 2>(cw), sv = rg_pack_words<VPT / 2>(sw);
    V *oc = (V *)(cos_out + r * (int64_t)(2 * H)), *os = (V *)(sin_out + r * (int64_t)(2 * H));
    oc[k] = cv;
    oc[k + tpr] = cv;
    os[k] = sv;
    os[k + tpr] = sv;
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

static inline bool rg_aligned(const void *p, unsigned a) { return ((uintptr_t)p % a) == 0; }

// Rows below which a problem is latency-bound: fewer values per thread then.
#define RG_FWD_SMALL_ROWS 8192

template <int VPT>
static void rg_rope_forward_go(const ropegrad_rope_forward_problem *p, int64_t rows, int H, cudaStream_t st)
{
    const int64_t n = rows * (H / VPT);
    const unsigned grid = (unsigned)((n + 255) / 256);
    if (H == 64)
        rg_rope_forward_vec<64, VPT><<<grid, 256, 0, st>>>(p->position_ids, p->inv_freq, p->attention_scaling,
                                                           p->cos_sin, rows, H);
    else
        rg_rope_forward_vec<0, VPT><<<grid, 256, 0, st>>>(p->position_ids, p->inv_freq, p->attention_scaling,
                                                          p->cos_sin, rows, H);
}

template <int VPT>
static void rg_cos_sin_go(const ropegrad_cos_sin_problem *p, int64_t rows, int H, cudaStream_t st)
{
    const int64_t n = rows * (H / VPT);
    const unsigned grid = (unsigned)((n + 255) / 256);
    if (H == 64)
        rg_cos_sin_vec<64, VPT><<<grid, 256, 0, st>>>(p->freqs, p->attention_scaling, p->cos, p->sin, rows, H);
    else
        rg_cos_sin_vec<0, VPT><<<grid, 256, 0, st>>>(p->freqs, p->attention_scaling, p->cos, p->sin, rows, H);
}

// Launchers: the problem is validated by the caller.
static cudaError_t rg_rope_forward_launch(const ropegrad_rope_forward_problem *p, cudaStream_t st)
{
    const int64_t rows = p->batch_size * p->seq_len;
    const int H = (int)(p->head_dim / 2);
    const bool small = rows < RG_FWD_SMALL_ROWS;
    if (!small && H % 4 == 0 && rg_aligned(p->inv_freq, 16) && rg_aligned(p->cos_sin, 16)) {
        rg_rope_forward_go<4>(p, rows, H, st);
    } else if (H % 2 == 0 && rg_aligned(p->inv_freq, 8) && rg_aligned(p->cos_sin, 8)) {
        rg_rope_forward_go<2>(p, rows, H, st);
    } else {
        const int64_t n = rows * H;
        rg_rope_forward_any<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(p->position_ids, p->inv_freq,
                                                                        p->attention_scaling, p->cos_sin, rows, H);
    }
    return cudaGetLastError();
}

static cudaError_t rg_cos_sin_launch(const ropegrad_cos_sin_problem *p, cudaStream_t st)
{
    const int64_t rows = p->batch_size * p->seq_len;
    const int H = (int)(p->head_dim / 2);
    const bool a16 = rg_aligned(p->freqs, 16) && rg_aligned(p->cos, 16) && rg_aligned(p->sin, 16);
    const bool a8 = rg_aligned(p->freqs, 8) && rg_aligned(p->cos, 4) && rg_aligned(p->sin, 4);
    if (rows >= RG_FWD_SMALL_ROWS && H % 8 == 0 && a16) {
        rg_cos_sin_go<8>(p, rows, H, st);
    } else if (rows >= RG_FWD_SMALL_ROWS / 4 && H % 4 == 0 && a16) {
        rg_cos_sin_go<4>(p, rows, H, st);
    } else if (H % 2 == 0 && a8) {
        rg_cos_sin_go<2>(p, rows, H, st);
    } else {
        const int64_t n = rows * H;
        rg_cos_sin_any<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(p->freqs, p->attention_scaling, p->cos, p->sin,
                                                                   rows, H);
    }
    return cudaGetLastError();
}
