/* SPDX-License-Identifier: Apache-2.0 */
// rope_apply_kernels.cuh -- the CUDA kernels of the apply ops, L1/088 (rotate
// q and k) and L1/068 (its backward), and their launchers. Templates only for
// the dtypes: T is q/k's element type, C cos/sin's (float, __nv_bfloat16,
// __half); the arithmetic is float32, each output rounded once.
//
// Thread j of a row handles the pair (j, j+H) of one head's row, so a warp
// reads and writes 32 consecutive elements of each half: coalesced in both
// layouts (a head's row is contiguous in BHSD and BSHD alike), and in place is
// safe (a thread reads exactly the elements it writes).
//   rg_apply_pairs:   one pair of one head's row per thread (088; 068 without
//                     grad_cos/grad_sin), a grid-stride loop over every pair.
//   rg_apply_columns: 068 with grad_cos/grad_sin: one pair of one cos/sin row
//                     per thread, looping over the row's batches and every
//                     head of q and k (the head sum stays in registers, no
//                     atomics; each grad_cos/grad_sin element written once).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "ropegrad.h"

static __device__ __forceinline__ float rg_apply_ld(const float *p, int64_t i) { return p[i]; }
static __device__ __forceinline__ float rg_apply_ld(const __nv_bfloat16 *p, int64_t i) { return __bfloat162float(p[i]); }
static __device__ __forceinline__ float rg_apply_ld(const __half *p, int64_t i) { return __half2float(p[i]); }
static __device__ __forceinline__ void rg_apply_st(float *p, int64_t i, float v) { p[i] = v; }
static __device__ __forceinline__ void rg_apply_st(__nv_bfloat16 *p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
static __device__ __forceinline__ void rg_apply_st(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }

// Element offset of the head row at memory-order row index ri of a tensor with
// `heads` heads, and the offset of its cos/sin row.
static __device__ __forceinline__ int64_t rg_apply_cs_of_row(const ropegrad_rope_apply_shape &s, int64_t heads, int64_t ri)
{
    int64_t b, si;
    if (s.layout == ROPEGRAD_LAYOUT_BSHD) {
        const int64_t bs = ri / heads;
        b = bs / s.seq_len;
        si = bs - b * s.seq_len;
    } else {
        const int64_t bh = ri / s.seq_len;
        si = ri - bh * s.seq_len;
        b = bh / heads;
    }
    return b * s.cos_sin_batch_stride + si * s.head_dim;
}

static __device__ __forceinline__ int64_t rg_apply_head_row_dev(const ropegrad_rope_apply_shape &s, int64_t heads, int64_t b,
                                                                int64_t h, int64_t si)
{
    if (s.layout == ROPEGRAD_LAYOUT_BSHD) return ((b * s.seq_len + si) * heads + h) * s.head_dim;
    return ((b * heads + h) * s.seq_len + si) * s.head_dim;
}

// The pair (j, j+H) of x*c + sign*rotate_half(x)*n: sign +1 is 088's out, -1
// 068's grad_x. One product rounded, the other fused into the sum, spelled out
// so that every kernel (and every contraction choice) gives the same bits.
static __device__ __forceinline__ void rg_apply_rotate(float x0, float x1, float c0, float c1, float n0, float n1,
                                                       float sign, float &o0, float &o1)
{
    o0 = __fmaf_rn(-sign * x1, n0, __fmul_rn(x0, c0));
    o1 = __fmaf_rn(sign * x0, n1, __fmul_rn(x1, c1));
}

template <typename T, typename C>
__global__ void rg_apply_pairs(ropegrad_rope_apply_shape s, float sign, const T *q, const T *k,
                               const C *__restrict__ cos, const C *__restrict__ sin, T *qo, T *ko)
{
    const int64_t H = s.head_dim / 2;
    const int64_t q_rows = s.batch_size * s.num_heads * s.seq_len;
    const int64_t pairs = (q_rows + s.batch_size * s.num_kv_heads * s.seq_len) * H;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < pairs; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / H, j = i - row * H;
        const bool is_q = row < q_rows;
        const int64_t ri = is_q ? row : row - q_rows;
        const T *x = is_q ? q : k;
        T *o = is_q ? qo : ko;
        const int64_t xo = ri * s.head_dim, co = rg_apply_cs_of_row(s, is_q ? s.num_heads : s.num_kv_heads, ri);
        const float x0 = rg_apply_ld(x, xo + j), x1 = rg_apply_ld(x, xo + j + H);
        const float c0 = rg_apply_ld(cos, co + j), c1 = rg_apply_ld(cos, co + j + H);
        const float n0 = rg_apply_ld(sin, co + j), n1 = rg_apply_ld(sin, co + j + H);
        float o0, o1;
        rg_apply_rotate(x0, x1, c0, c1, n0, n1, sign, o0, o1);
        rg_apply_st(o, xo + j, o0);
        rg_apply_st(o, xo + j + H, o1);
    }
}

// The pair (j, j+H) of one head: its gradient written, its share of the sums added.
template <typename T>
static __device__ __forceinline__ void rg_apply_grad_pair(const T *g, const T *x, T *gx, int64_t off, int64_t j, int64_t H,
                                                          float c0, float c1, float n0, float n1, float acc[4])
{
    const float g0 = rg_apply_ld(g, off + j), g1 = rg_apply_ld(g, off + j + H);
    const float x0 = rg_apply_ld(x, off + j), x1 = rg_apply_ld(x, off + j + H);
    float o0, o1;
    rg_apply_rotate(g0, g1, c0, c1, n0, n1, -1.0f, o0, o1);
    rg_apply_st(gx, off + j, o0);
    rg_apply_st(gx, off + j + H, o1);
    acc[0] += g0 * x0;
    acc[1] += g1 * x1;
    acc[2] -= g0 * x1;
    acc[3] += g1 * x0;
}

template <typename T, typename C>
__global__ void rg_apply_columns(ropegrad_rope_apply_shape s, const T *gq, const T *gk,
                                 const T *__restrict__ q, const T *__restrict__ k, const C *__restrict__ cos,
                                 const C *__restrict__ sin, T *gqo, T *gko, C *__restrict__ gcos, C *__restrict__ gsin)
{
    const int64_t H = s.head_dim / 2;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * H; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / H, j = i - r * H, si = r % s.seq_len;
        const int64_t b0 = s.cos_sin_batch_stride ? r / s.seq_len : 0, b1 = s.cos_sin_batch_stride ? b0 + 1 : s.batch_size;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t b = b0; b < b1; b++) {
            const int64_t co = b * s.cos_sin_batch_stride + si * s.head_dim;
            const float c0 = rg_apply_ld(cos, co + j), c1 = rg_apply_ld(cos, co + j + H);
            const float n0 = rg_apply_ld(sin, co + j), n1 = rg_apply_ld(sin, co + j + H);
            for (int64_t h = 0; h < s.num_heads; h++)
                rg_apply_grad_pair(gq, q, gqo, rg_apply_head_row_dev(s, s.num_heads, b, h, si), j, H, c0, c1, n0, n1, acc);
            for (int64_t h = 0; h < s.num_kv_heads; h++)
                rg_apply_grad_pair(gk, k, gko, rg_apply_head_row_dev(s, s.num_kv_heads, b, h, si), j, H, c0, c1, n0, n1, acc);
        }
        rg_apply_st(gcos, r * s.head_dim + j, acc[0]);
        rg_apply_st(gcos, r * s.head_dim + j + H, acc[1]);
        rg_apply_st(gsin, r * s.head_dim + j, acc[2]);
        rg_apply_st(gsin, r * s.head_dim + j + H, acc[3]);
    }
}

// Blocks for n threads of work: a grid-stride loop covers any remainder.
static inline unsigned rg_apply_grid(int64_t n)
{
    const int64_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 1 ? 1 : blocks > (1 << 20) ? (1 << 20) : blocks);
}

template <typename T, typename C>
static cudaError_t rg_apply_forward_go(const ropegrad_rope_apply_problem *p, cudaStream_t st)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const int64_t pairs = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len * (s.head_dim / 2);
    rg_apply_pairs<T, C><<<rg_apply_grid(pairs), 256, 0, st>>>(s, 1.0f, (const T *)p->q, (const T *)p->k, (const C *)p->cos,
                                                            (const C *)p->sin, (T *)p->q_out, (T *)p->k_out);
    return cudaGetLastError();
}

template <typename T, typename C>
static cudaError_t rg_apply_backward_go(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const T *gq = (const T *)p->grad_q_out, *gk = (const T *)p->grad_k_out;
    if (!p->grad_cos) {
        const int64_t pairs = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len * (s.head_dim / 2);
        rg_apply_pairs<T, C><<<rg_apply_grid(pairs), 256, 0, st>>>(s, -1.0f, gq, gk, (const C *)p->cos, (const C *)p->sin,
                                                                (T *)p->grad_q, (T *)p->grad_k);
        return cudaGetLastError();
    }
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    rg_apply_columns<T, C><<<rg_apply_grid(rows * (s.head_dim / 2)), 256, 0, st>>>(
        s, gq, gk, (const T *)p->q, (const T *)p->k, (const C *)p->cos, (const C *)p->sin, (T *)p->grad_q, (T *)p->grad_k,
        (C *)p->grad_cos, (C *)p->grad_sin);
    return cudaGetLastError();
}

// The launchers for a validated problem: the dtype pair picks the instance.
template <typename T>
static cudaError_t rg_apply_forward_cs(const ropegrad_rope_apply_problem *p, cudaStream_t st)
{
    switch (p->shape.cos_sin_dtype) {
    case ROPEGRAD_BF16: return rg_apply_forward_go<T, __nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_forward_go<T, __half>(p, st);
    default: return rg_apply_forward_go<T, float>(p, st);
    }
}

static cudaError_t rg_rope_apply_launch(const ropegrad_rope_apply_problem *p, cudaStream_t st)
{
    switch (p->shape.dtype) {
    case ROPEGRAD_BF16: return rg_apply_forward_cs<__nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_forward_cs<__half>(p, st);
    default: return rg_apply_forward_cs<float>(p, st);
    }
}

template <typename T>
static cudaError_t rg_apply_backward_cs(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    switch (p->shape.cos_sin_dtype) {
    case ROPEGRAD_BF16: return rg_apply_backward_go<T, __nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_backward_go<T, __half>(p, st);
    default: return rg_apply_backward_go<T, float>(p, st);
    }
}

static cudaError_t rg_rope_apply_backward_launch(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    switch (p->shape.dtype) {
    case ROPEGRAD_BF16: return rg_apply_backward_cs<__nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_backward_cs<__half>(p, st);
    default: return rg_apply_backward_cs<float>(p, st);
    }
}
