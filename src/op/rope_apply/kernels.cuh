/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernels of the apply ops, L1/088 (rotate
// q and k) and L1/068 (its backward), and their launchers. Templates only for
// the dtypes: T is q/k's element type, C cos/sin's (float, __nv_bfloat16,
// __half); the arithmetic is float32, each output rounded once.
//
// Thread j of a row handles the pair (j, j+H) of one head's row, so a warp
// reads and writes 32 consecutive elements of each half: coalesced in both
// layouts (a head's row is contiguous in BHSD and BSHD alike), and in place is
// safe (a thread reads exactly the elements it writes).
//   rg_apply_pairs_vec: 16 bytes of each half of a head row per thread (088;
//                     068 without grad_cos/grad_sin), 32-bit indices, when the
//                     shape and pointers allow; else rg_apply_pairs: one pair
//                     of one head's row per thread, a grid-stride loop.
//   rg_apply_columns_split: 068 with grad_cos/grad_sin, 16-byte path: one
//                     block a cos/sin row, the heads split over its groups,
//                     the head sums added in shared memory (no atomics; each
//                     grad_cos/grad_sin element written once); else
//   rg_apply_columns: one pair of one cos/sin row per thread, looping over
//                     the row's batches and every head of q and k.
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

// rg_apply_pairs with VEC pairs a thread, each half of a head row read and
// written 16 bytes at a time, and 32-bit index arithmetic (the launcher picks
// it when every element index fits in 32 bits, H is a multiple of VEC and the
// pointers are aligned): H / VEC threads a head row, one division by the lane
// count and two for the cos/sin row per VEC pairs. Same arithmetic, same bits.
template <typename T, typename C, int VEC>
__global__ void rg_apply_pairs_vec(ropegrad_rope_apply_shape s, float sign, const T *q, const T *k,
                                   const C *__restrict__ cos, const C *__restrict__ sin, T *qo, T *ko)
{
    const uint32_t D = (uint32_t)s.head_dim, H = D / 2, lanes = H / VEC, S = (uint32_t)s.seq_len;
    const uint32_t q_rows = (uint32_t)(s.batch_size * s.num_heads * s.seq_len);
    const uint32_t rows = q_rows + (uint32_t)(s.batch_size * s.num_kv_heads * s.seq_len);
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride;
    const bool bshd = s.layout == ROPEGRAD_LAYOUT_BSHD;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < rows * lanes; t += gridDim.x * blockDim.x) {
        const uint32_t row = t / lanes, j = (t - row * lanes) * VEC;
        const bool is_q = row < q_rows;
        const uint32_t ri = is_q ? row : row - q_rows, heads = (uint32_t)(is_q ? s.num_heads : s.num_kv_heads);
        uint32_t b, si;
        if (bshd) {
            const uint32_t bs = ri / heads;
            b = bs / S, si = bs - b * S;
        } else {
            const uint32_t bh = ri / S;
            si = ri - bh * S, b = bh / heads;
        }
        const uint32_t xo = ri * D + j, co = b * cs_stride + si * D + j;
        const T *x = is_q ? q : k;
        float x0[VEC], x1[VEC], c0[VEC], c1[VEC], n0[VEC], n1[VEC], o0[VEC], o1[VEC];
        rg_apply_ldv<T, VEC>(x, xo, x0);
        rg_apply_ldv<T, VEC>(x, xo + H, x1);
        rg_apply_ldv<C, VEC>(cos, co, c0);
        rg_apply_ldv<C, VEC>(cos, co + H, c1);
        rg_apply_ldv<C, VEC>(sin, co, n0);
        rg_apply_ldv<C, VEC>(sin, co + H, n1);
#pragma unroll
        for (int e = 0; e < VEC; e++) rg_apply_rotate(x0[e], x1[e], c0[e], c1[e], n0[e], n1[e], sign, o0[e], o1[e]);
        T *o = is_q ? qo : ko;
        rg_apply_stv<T, VEC>(o, xo, o0);
        rg_apply_stv<T, VEC>(o, xo + H, o1);
    }
}

static inline bool rg_apply_aligned(const void *p, size_t bytes) { return ((uintptr_t)p % bytes) == 0; }

// Launches rg_apply_pairs_vec when the shape and pointers allow it, else the
// one-pair-a-thread rg_apply_pairs.
template <typename T, typename C>
static cudaError_t rg_apply_pairs_go(const ropegrad_rope_apply_shape &s, float sign, const T *x, const T *y, const C *cos,
                                     const C *sin, T *xo, T *yo, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T);
    const int64_t H = s.head_dim / 2;
    const int64_t rows = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len;
    const int64_t cs_rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    const bool fits = rows * s.head_dim < ((int64_t)1 << 31) && cs_rows * s.head_dim < ((int64_t)1 << 31);
    const bool aligned = rg_apply_aligned(x, 16) && rg_apply_aligned(y, 16) && rg_apply_aligned(xo, 16) &&
                         rg_apply_aligned(yo, 16) && rg_apply_aligned(cos, VEC * sizeof(C)) &&
                         rg_apply_aligned(sin, VEC * sizeof(C));
    if (fits && aligned && H % VEC == 0) {
        rg_apply_pairs_vec<T, C, VEC><<<rg_apply_grid(rows * (H / VEC)), 256, 0, st>>>(s, sign, x, y, cos, sin, xo, yo);
        return cudaGetLastError();
    }
    rg_apply_pairs<T, C><<<rg_apply_grid(rows * H), 256, 0, st>>>(s, sign, x, y, cos, sin, xo, yo);
    return cudaGetLastError();
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

// 068 with grad_cos/grad_sin, the fast path: one block a cos/sin row r. Its
// L = H/VEC lanes cover the row's pairs 16 bytes at a time (32-bit indices,
// the launcher's conditions as rg_apply_pairs_vec's) and its G groups split
// the heads of q and k between them (head g, g+G, ...): a B=1, S=293 row set
// runs 40x more threads than one thread a column would, enough loads in
// flight to stream. Each group's four head sums are added across groups in
// shared memory ([4][G][H] floats) and the row's grad_cos/grad_sin written
// once, contiguously. (bench/dev/apply_backward_split.cuh, bench/NOTES.md
// "068's floor was not a floor": 1.13x the flat floor against 1.85x for one
// thread a column.)
template <typename T, typename C, int VEC>
__global__ void __launch_bounds__(256) rg_apply_columns_split(ropegrad_rope_apply_shape s, const T *gq, const T *gk,
                                                              const T *__restrict__ q, const T *__restrict__ k,
                                                              const C *__restrict__ cos, const C *__restrict__ sin,
                                                              T *gqo, T *gko, C *__restrict__ gcos, C *__restrict__ gsin)
{
    extern __shared__ float rg_split_sums[];
    const uint32_t D = (uint32_t)s.head_dim, H = D / 2, L = H / VEC, G = blockDim.x / L, S = (uint32_t)s.seq_len;
    const uint32_t lane = threadIdx.x % L, g = threadIdx.x / L, j = lane * VEC, r = blockIdx.x;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride, nh = (uint32_t)s.num_heads;
    const uint32_t heads = nh + (uint32_t)s.num_kv_heads, si = r % S;
    const uint32_t b0 = cs_stride ? r / S : 0, b1 = cs_stride ? b0 + 1 : (uint32_t)s.batch_size;
    const bool bshd = s.layout == ROPEGRAD_LAYOUT_BSHD;
    float a0[VEC] = {}, a1[VEC] = {}, a2[VEC] = {}, a3[VEC] = {};
    for (uint32_t b = b0; b < b1; b++) {
        const uint32_t co = b * cs_stride + si * D + j;
        float c0[VEC], c1[VEC], n0[VEC], n1[VEC];
        rg_apply_ldv<C, VEC>(cos, co, c0);
        rg_apply_ldv<C, VEC>(cos, co + H, c1);
        rg_apply_ldv<C, VEC>(sin, co, n0);
        rg_apply_ldv<C, VEC>(sin, co + H, n1);
#pragma unroll 2
        for (uint32_t h = g; h < heads; h += G) {
            const bool is_q = h < nh;
            const uint32_t hh = is_q ? h : h - nh, hn = is_q ? nh : heads - nh;
            const uint32_t off = (bshd ? (b * S + si) * hn + hh : (b * hn + hh) * S + si) * D + j;
            const T *gp = is_q ? gq : gk, *x = is_q ? q : k;
            float g0[VEC], g1[VEC], x0[VEC], x1[VEC], o0[VEC], o1[VEC];
            rg_apply_ldv<T, VEC>(gp, off, g0);
            rg_apply_ldv<T, VEC>(gp, off + H, g1);
            rg_apply_ldv<T, VEC>(x, off, x0);
            rg_apply_ldv<T, VEC>(x, off + H, x1);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                rg_apply_rotate(g0[e], g1[e], c0[e], c1[e], n0[e], n1[e], -1.0f, o0[e], o1[e]);
                a0[e] += g0[e] * x0[e];
                a1[e] += g1[e] * x1[e];
                a2[e] -= g0[e] * x1[e];
                a3[e] += g1[e] * x0[e];
            }
            T *gx = is_q ? gqo : gko;
            rg_apply_stv<T, VEC>(gx, off, o0);
            rg_apply_stv<T, VEC>(gx, off + H, o1);
        }
    }
#pragma unroll
    for (int e = 0; e < VEC; e++) {
        rg_split_sums[(0 * G + g) * H + j + e] = a0[e];
        rg_split_sums[(1 * G + g) * H + j + e] = a1[e];
        rg_split_sums[(2 * G + g) * H + j + e] = a2[e];
        rg_split_sums[(3 * G + g) * H + j + e] = a3[e];
    }
    __syncthreads();
    for (uint32_t o = threadIdx.x; o < 4 * H; o += blockDim.x) {
        const uint32_t kk = o / H, w = o - kk * H;
        float sum = 0.0f;
        for (uint32_t gg = 0; gg < G; gg++) sum += rg_split_sums[(kk * G + gg) * H + w];
        rg_apply_st(kk < 2 ? gcos : gsin, (int64_t)r * D + (kk & 1) * H + w, sum);
    }
}

// Groups a block for rg_apply_columns_split: the most that fit 256 threads
// with L lanes each, lowered to a divisor of the head count when one lies
// above half of it, so that no group idles at the end of the row.
static inline uint32_t rg_apply_split_groups(const ropegrad_rope_apply_shape &s, uint32_t L)
{
    const uint32_t most = 256 / L, heads = (uint32_t)(s.num_heads + s.num_kv_heads);
    for (uint32_t g = most; g >= 2 && g * 2 > most; g--)
        if (heads % g == 0) return g;
    return most;
}

template <typename T, typename C>
static cudaError_t rg_apply_forward_go(const ropegrad_rope_apply_problem *p, cudaStream_t st)
{
    return rg_apply_pairs_go<T, C>(p->shape, 1.0f, (const T *)p->q, (const T *)p->k, (const C *)p->cos,
                                   (const C *)p->sin, (T *)p->q_out, (T *)p->k_out, st);
}

template <typename T, typename C>
static cudaError_t rg_apply_backward_go(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const T *gq = (const T *)p->grad_q_out, *gk = (const T *)p->grad_k_out;
    if (!p->grad_cos)
        return rg_apply_pairs_go<T, C>(s, -1.0f, gq, gk, (const C *)p->cos, (const C *)p->sin, (T *)p->grad_q,
                                       (T *)p->grad_k, st);
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    constexpr int VEC = 16 / sizeof(T);
    const int64_t all_rows = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len;
    const bool fits = all_rows * s.head_dim < ((int64_t)1 << 31) && s.batch_size * s.seq_len * s.head_dim < ((int64_t)1 << 31);
    const bool aligned = rg_apply_aligned(gq, 16) && rg_apply_aligned(gk, 16) && rg_apply_aligned(p->q, 16) &&
                         rg_apply_aligned(p->k, 16) && rg_apply_aligned(p->grad_q, 16) && rg_apply_aligned(p->grad_k, 16) &&
                         rg_apply_aligned(p->cos, VEC * sizeof(C)) && rg_apply_aligned(p->sin, VEC * sizeof(C)) &&
                         rg_apply_aligned(p->grad_cos, VEC * sizeof(C)) && rg_apply_aligned(p->grad_sin, VEC * sizeof(C));
    const uint32_t L = (uint32_t)(s.head_dim / 2 / VEC);
    if (rows > 0 && fits && aligned && (s.head_dim / 2) % VEC == 0 && L <= 256 && 256 % L == 0 && rows < ((int64_t)1 << 31)) {
        const uint32_t G = rg_apply_split_groups(s, L);
        const size_t sums = (size_t)4 * G * (size_t)(s.head_dim / 2) * sizeof(float);
        rg_apply_columns_split<T, C, VEC><<<(unsigned)rows, G * L, sums, st>>>(
            s, gq, gk, (const T *)p->q, (const T *)p->k, (const C *)p->cos, (const C *)p->sin, (T *)p->grad_q,
            (T *)p->grad_k, (C *)p->grad_cos, (C *)p->grad_sin);
        return cudaGetLastError();
    }
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
