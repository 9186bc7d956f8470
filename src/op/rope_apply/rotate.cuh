/* SPDX-License-Identifier: Apache-2.0 */
// rotate.cuh -- what the CUDA kernels of the apply ops share, L1/088 (rotate
// q and k: kernels.cuh) and L1/068 (its backward:
// src/op/rope_apply_backward/kernels.cuh): element access, the rotation of a
// pair, and the rotation kernels both launch. Templates only for the dtypes:
// T is q/k's element type, C cos/sin's (float, __nv_bfloat16, __half); the
// arithmetic is float32, each output rounded once.
//
// Thread j of a row handles the pair (j, j+H) of one head's row, so a warp
// reads and writes 32 consecutive elements of each half: coalesced in both
// layouts (a head's row is contiguous in BHSD and BSHD alike), and in place is
// safe (a thread reads exactly the elements it writes).
//   rg_apply_pairs_heads2: 16 bytes of each half of a head row per thread,
//                     two heads of the same batch and position a thread, the
//                     cos/sin column loaded once for both (088; 068 without
//                     grad_cos/grad_sin), 32-bit indices, when the shape and
//                     pointers allow; else rg_apply_pairs: one pair of one
//                     head's row per thread, a grid-stride loop. (One head a
//                     thread, rg_apply_pairs_vec, is in dev/rope_apply/.)
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

// Blocks for n threads of work: a grid-stride loop covers any remainder.
static inline unsigned rg_apply_grid(int64_t n)
{
    const int64_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 1 ? 1 : blocks > (1 << 20) ? (1 << 20) : blocks);
}

// VEC consecutive elements as one aligned load or store (16 bytes for q/k).
template <typename X, int VEC>
struct alignas(sizeof(X) * VEC) rg_apply_pack {
    X v[VEC];
};

template <typename X, int VEC>
static __device__ __forceinline__ void rg_apply_ldv(const X *p, uint32_t i, float (&f)[VEC])
{
    const rg_apply_pack<X, VEC> pk = *reinterpret_cast<const rg_apply_pack<X, VEC> *>(p + i);
#pragma unroll
    for (int e = 0; e < VEC; e++) f[e] = rg_apply_ld(pk.v, e);
}

template <typename X, int VEC>
static __device__ __forceinline__ void rg_apply_stv(X *p, uint32_t i, const float (&f)[VEC])
{
    rg_apply_pack<X, VEC> pk;
#pragma unroll
    for (int e = 0; e < VEC; e++) rg_apply_st(pk.v, e, f[e]);
    *reinterpret_cast<rg_apply_pack<X, VEC> *>(p + i) = pk;
}

static inline bool rg_apply_aligned(const void *p, size_t bytes) { return ((uintptr_t)p % bytes) == 0; }

// VEC consecutive elements as one aligned load, kept packed (converted to
// float where used: 2-byte types then hold half the registers).
template <typename X, int VEC>
static __device__ __forceinline__ rg_apply_pack<X, VEC> rg_apply_ldp(const X *p, uint32_t i)
{
    return *reinterpret_cast<const rg_apply_pack<X, VEC> *>(p + i);
}

// One head row's VEC pairs at xo (its two halves x0, x1, packed) rotated by
// the cos/sin column (c0, c1, n0, n1, packed) and stored to o.
template <typename T, typename C, int VEC>
static __device__ __forceinline__ void rg_apply_rotate_store(T *o, uint32_t xo, uint32_t H, const rg_apply_pack<T, VEC> &x0,
                                                             const rg_apply_pack<T, VEC> &x1, const rg_apply_pack<C, VEC> &c0,
                                                             const rg_apply_pack<C, VEC> &c1, const rg_apply_pack<C, VEC> &n0,
                                                             const rg_apply_pack<C, VEC> &n1, float sign)
{
    float o0[VEC], o1[VEC];
#pragma unroll
    for (int e = 0; e < VEC; e++)
        rg_apply_rotate(rg_apply_ld(x0.v, e), rg_apply_ld(x1.v, e), rg_apply_ld(c0.v, e), rg_apply_ld(c1.v, e),
                        rg_apply_ld(n0.v, e), rg_apply_ld(n1.v, e), sign, o0[e], o1[e]);
    rg_apply_stv<T, VEC>(o, xo, o0);
    rg_apply_stv<T, VEC>(o, xo + H, o1);
}

// 088's 16-byte kernel, two heads a thread (dev/rope_apply/NOTES.md "088: heads2";
// one head a thread, rg_apply_pairs_vec, is in
// dev/rope_apply/apply_forward_variants.cuh): a unit is one 16-byte column of
// one cos/sin row for heads 2i and 2i+1 of the same batch and position (the
// last alone when the count is odd), so the column's cos and sin are loaded
// once for both, and both heads' loads go out before either's stores (each
// thread reads exactly the elements it writes: in place is safe). Units run
// q's then k's; within a tensor they follow memory: (b, pair, s, lane) in
// BHSD, (b, s, pair, lane) in BSHD. 32-bit indices (rg_apply_vec_ok); the
// arithmetic of rg_apply_pairs, the same bits.
template <typename T, typename C, int VEC>
__global__ void rg_apply_pairs_heads2(ropegrad_rope_apply_shape s, float sign, const T *q, const T *k,
                                      const C *__restrict__ cos, const C *__restrict__ sin, T *qo, T *ko)
{
    const uint32_t D = (uint32_t)s.head_dim, H = D / 2, lanes = H / VEC, S = (uint32_t)s.seq_len, B = (uint32_t)s.batch_size;
    const uint32_t hq = (uint32_t)s.num_heads, hk = (uint32_t)s.num_kv_heads, pq = (hq + 1) / 2, pk = (hk + 1) / 2;
    const uint32_t q_units = B * pq * S * lanes, units = q_units + B * pk * S * lanes;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride;
    const bool bshd = s.layout == ROPEGRAD_LAYOUT_BSHD;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < units; t += gridDim.x * blockDim.x) {
        const bool is_q = t < q_units;
        const uint32_t u = is_q ? t : t - q_units, row = u / lanes, j = (u - row * lanes) * VEC;
        const uint32_t heads = is_q ? hq : hk, pairs = is_q ? pq : pk;
        uint32_t b, si, pi;
        if (bshd) {
            const uint32_t bs = row / pairs;
            pi = row - bs * pairs, b = bs / S, si = bs - b * S;
        } else {
            const uint32_t bp = row / S;
            si = row - bp * S, b = bp / pairs, pi = bp - b * pairs;
        }
        const uint32_t h = 2 * pi, step = bshd ? D : S * D;
        const bool two = h + 1 < heads;
        const uint32_t xo = (bshd ? (b * S + si) * heads + h : (b * heads + h) * S + si) * D + j;
        const uint32_t co = b * cs_stride + si * D + j;
        const T *x = is_q ? q : k;
        const rg_apply_pack<C, VEC> c0 = rg_apply_ldp<C, VEC>(cos, co), c1 = rg_apply_ldp<C, VEC>(cos, co + H);
        const rg_apply_pack<C, VEC> n0 = rg_apply_ldp<C, VEC>(sin, co), n1 = rg_apply_ldp<C, VEC>(sin, co + H);
        const rg_apply_pack<T, VEC> a0 = rg_apply_ldp<T, VEC>(x, xo), a1 = rg_apply_ldp<T, VEC>(x, xo + H);
        rg_apply_pack<T, VEC> b0 = a0, b1 = a1;
        if (two) b0 = rg_apply_ldp<T, VEC>(x, xo + step), b1 = rg_apply_ldp<T, VEC>(x, xo + step + H);
        T *o = is_q ? qo : ko;
        rg_apply_rotate_store<T, C, VEC>(o, xo, H, a0, a1, c0, c1, n0, n1, sign);
        if (two) rg_apply_rotate_store<T, C, VEC>(o, xo + step, H, b0, b1, c0, c1, n0, n1, sign);
    }
}

// The 16-byte kernel (rg_apply_pairs_heads2) applies:
// every element index in 32 bits, H a multiple of VEC, the pointers aligned.
template <typename T, typename C>
static bool rg_apply_vec_ok(const ropegrad_rope_apply_shape &s, const T *x, const T *y, const C *cos, const C *sin,
                            const T *xo, const T *yo)
{
    constexpr int VEC = 16 / sizeof(T);
    const int64_t rows = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len;
    const int64_t cs_rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    const bool fits = rows * s.head_dim < ((int64_t)1 << 31) && cs_rows * s.head_dim < ((int64_t)1 << 31);
    const bool aligned = rg_apply_aligned(x, 16) && rg_apply_aligned(y, 16) && rg_apply_aligned(xo, 16) &&
                         rg_apply_aligned(yo, 16) && rg_apply_aligned(cos, VEC * sizeof(C)) &&
                         rg_apply_aligned(sin, VEC * sizeof(C));
    return fits && aligned && (s.head_dim / 2) % VEC == 0;
}

// rg_apply_pairs_heads2 on a problem rg_apply_vec_ok accepts.
template <typename T, typename C>
static cudaError_t rg_apply_heads2_launch(const ropegrad_rope_apply_shape &s, float sign, const T *x, const T *y,
                                          const C *cos, const C *sin, T *xo, T *yo, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T);
    const int64_t pairs = s.batch_size * ((s.num_heads + 1) / 2 + (s.num_kv_heads + 1) / 2) * s.seq_len;
    rg_apply_pairs_heads2<T, C, VEC><<<rg_apply_grid(pairs * (s.head_dim / 2 / VEC)), 256, 0, st>>>(s, sign, x, y, cos, sin,
                                                                                                 xo, yo);
    return cudaGetLastError();
}

// Launches rg_apply_pairs_heads2 when the shape and pointers allow it, else the
// one-pair-a-thread rg_apply_pairs.
template <typename T, typename C>
static cudaError_t rg_apply_pairs_go(const ropegrad_rope_apply_shape &s, float sign, const T *x, const T *y, const C *cos,
                                     const C *sin, T *xo, T *yo, cudaStream_t st)
{
    const int64_t H = s.head_dim / 2;
    const int64_t rows = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len;
    if (rg_apply_vec_ok<T, C>(s, x, y, cos, sin, xo, yo)) return rg_apply_heads2_launch<T, C>(s, sign, x, y, cos, sin, xo, yo, st);
    rg_apply_pairs<T, C><<<rg_apply_grid(rows * H), 256, 0, st>>>(s, sign, x, y, cos, sin, xo, yo);
    return cudaGetLastError();
}
