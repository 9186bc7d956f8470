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

// 011, head_dim/2 % 4 == 0, 16-byte aligned output and inv_freq: TPR = H/4
// threads per row; thread k covers j = 4k..4k+3 and writes (cos, sin) pairs
// for j and j+H (2 x 16 bytes).
// HC: H as a compile-time constant (64, head_dim 128: the row index is a
// shift), or 0 for any H.
template <int HC>
static __global__ void __launch_bounds__(256) rg_rope_forward_vec(const int64_t *__restrict__ pos,
                                                                  const float *__restrict__ inv, float scale,
                                                                  uint16_t *__restrict__ out, int64_t rows, int Hr)
{
    const int H = HC ? HC : Hr;
    const int tpr = H >> 2;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / tpr;
    const int k = (int)(t - r * tpr);
    if (r >= rows) return;
    const float p = (float)__ldg(pos + r);
    const float4 f = __ldg((const float4 *)inv + k);
    uint32_t s0, c0, s1, c1, s2, c2, s3, c3;
    rg_sincos_bf16(p * f.x, scale, &s0, &c0);
    rg_sincos_bf16(p * f.y, scale, &s1, &c1);
    rg_sincos_bf16(p * f.z, scale, &s2, &c2);
    rg_sincos_bf16(p * f.w, scale, &s3, &c3);
    const uint4 v = make_uint4(rg_pack2(c0, s0), rg_pack2(c1, s1), rg_pack2(c2, s2), rg_pack2(c3, s3));
    uint4 *o = (uint4 *)(out + r * (int64_t)(4 * H));   // 2*D bf16 per row
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

// 012, head_dim/2 % 8 == 0, 16-byte aligned pointers: TPR = H/8 threads per
// row; thread k reads freqs 8k..8k+7 (2 x 16 bytes) and writes 16 bytes of cos
// and of sin at j and at j+H.
template <int HC>
static __global__ void __launch_bounds__(256) rg_cos_sin_vec(const float *__restrict__ freqs, float scale,
                                                             uint16_t *__restrict__ cos_out,
                                                             uint16_t *__restrict__ sin_out, int64_t rows, int Hr)
{
    const int H = HC ? HC : Hr;
    const int tpr = H >> 3;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / tpr;
    const int k = (int)(t - r * tpr);
    if (r >= rows) return;
    const float4 *in = (const float4 *)(freqs + r * (int64_t)H) + 2 * k;
    const float4 a = __ldg(in), b = __ldg(in + 1);
    uint32_t s[8], c[8];
    rg_sincos_bf16(a.x, scale, &s[0], &c[0]);
    rg_sincos_bf16(a.y, scale, &s[1], &c[1]);
    rg_sincos_bf16(a.z, scale, &s[2], &c[2]);
    rg_sincos_bf16(a.w, scale, &s[3], &c[3]);
    rg_sincos_bf16(b.x, scale, &s[4], &c[4]);
    rg_sincos_bf16(b.y, scale, &s[5], &c[5]);
    rg_sincos_bf16(b.z, scale, &s[6], &c[6]);
    rg_sincos_bf16(b.w, scale, &s[7], &c[7]);
    const uint4 cv = make_uint4(rg_pack2(c[0], c[1]), rg_pack2(c[2], c[3]), rg_pack2(c[4], c[5]), rg_pack2(c[6], c[7]));
    const uint4 sv = make_uint4(rg_pack2(s[0], s[1]), rg_pack2(s[2], s[3]), rg_pack2(s[4], s[5]), rg_pack2(s[6], s[7]));
    uint4 *oc = (uint4 *)(cos_out + r * (int64_t)(2 * H)), *os = (uint4 *)(sin_out + r * (int64_t)(2 * H));
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

static inline bool rg_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// Launchers: the problem is validated by the caller.
static cudaError_t rg_rope_forward_launch(const ropegrad_rope_forward_problem *p, cudaStream_t st)
{
    const int64_t rows = p->batch_size * p->seq_len;
    const int H = (int)(p->head_dim / 2);
    const int threads = 256;
    if (H % 4 == 0 && rg_aligned16(p->inv_freq) && rg_aligned16(p->cos_sin)) {
        const int64_t n = rows * (H / 4);
        const unsigned grid = (unsigned)((n + threads - 1) / threads);
        if (H == 64)
            rg_rope_forward_vec<64><<<grid, threads, 0, st>>>(p->position_ids, p->inv_freq, p->attention_scaling,
                                                              p->cos_sin, rows, H);
        else
            rg_rope_forward_vec<0><<<grid, threads, 0, st>>>(p->position_ids, p->inv_freq, p->attention_scaling,
                                                             p->cos_sin, rows, H);
    } else {
        const int64_t n = rows * H;
        rg_rope_forward_any<<<(unsigned)((n + threads - 1) / threads), threads, 0, st>>>(
            p->position_ids, p->inv_freq, p->attention_scaling, p->cos_sin, rows, H);
    }
    return cudaGetLastError();
}

static cudaError_t rg_cos_sin_launch(const ropegrad_cos_sin_problem *p, cudaStream_t st)
{
    const int64_t rows = p->batch_size * p->seq_len;
    const int H = (int)(p->head_dim / 2);
    const int threads = 256;
    if (H % 8 == 0 && rg_aligned16(p->freqs) && rg_aligned16(p->cos) && rg_aligned16(p->sin)) {
        const int64_t n = rows * (H / 8);
        const unsigned grid = (unsigned)((n + threads - 1) / threads);
        if (H == 64)
            rg_cos_sin_vec<64><<<grid, threads, 0, st>>>(p->freqs, p->attention_scaling, p->cos, p->sin, rows, H);
        else
            rg_cos_sin_vec<0><<<grid, threads, 0, st>>>(p->freqs, p->attention_scaling, p->cos, p->sin, rows, H);
    } else {
        const int64_t n = rows * H;
        rg_cos_sin_any<<<(unsigned)((n + threads - 1) / threads), threads, 0, st>>>(
            p->freqs, p->attention_scaling, p->cos, p->sin, rows, H);
    }
    return cudaGetLastError();
}
