/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernels of the apply-from-positions ops (forward and
// backward, by the rotation's sign) and their launcher.
//
// The op reads no cos/sin table: per token it reads q's and k's rows once and
// writes them once, and computes each of the token's R/2 cos/sin values once,
// for every head of q and k (the position, the float32 product with inv_freq,
// scale*cos and scale*sin rounded to cos_sin_dtype: bf16 by rope_math.cuh's
// correctly rounded path, as 011 writes them; f16 and f32 from its double
// sin/cos, rounded once), and rotates with 088's arithmetic (rotate.cuh's
// rg_apply_rotate: the same bits as the table path given those values). A
// thread reads exactly the elements it writes, so in place is safe. Two
// kernels, the same bits:
//   - rg_posw_kernel, the warp kernel (below), where a head row's rotary
//     16-byte units divide a warp (bf16/f16 with R/2 a power of two from 8 to
//     256, f32 from 4 to 128; interleaved: R from 8 and 4 up): a warp a token
//     (or a group of its heads), no block barrier;
//   - rg_pos_kernel, the block kernel, for every other shape: a block covers
//     a few consecutive tokens (or one token's group of heads):
//       1. each thread loads its first two units of q/k (a unit: 16 bytes of
//          each half of a head's rotary pair columns, or 16 bytes of
//          interleaved pairs, or of the copied-through tail), so the loads are
//          in flight while
//       2. the block's threads compute the tokens' cos/sin values into shared
//          memory; after one barrier
//       3. each thread rotates its units and stores them (units beyond two a
//          thread: loaded and stored in a loop).
//     The 16-byte units need the rows' parts and the pointers aligned to them;
//     otherwise it runs on one element (rotate-half) or one pair (interleaved)
//     a unit, with element loads.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "rope_apply/rotate.cuh"
#include "rope_math.cuh"
#include "ropegrad.h"

struct rg_pos_args {
    ropegrad_rope_apply_shape s;
    int R;                 // rotary_dim
    float scale, sign;
    const void *ids;       // position_ids (when cu_seqlens is NULL)
    int bits;              // 32 or 64
    const int32_t *cu_seqlens;   // or NULL
    int nseq;
    const float *inv;
    const void *q, *k;
    void *qo, *ko;
    int tpb;               // tokens a block
    int hpb;               // heads a block (of q's then k's, numbered together)
    int groups;            // head groups a token: ceil((hq + hk) / hpb)
    int64_t blocks;        // token groups x head groups
};

// The position of token t.
static __device__ __forceinline__ int64_t rg_pos_position_dev(const rg_pos_args &a, int64_t t)
{
    if (a.cu_seqlens) {   // the last sequence j with cu_seqlens[j] <= t
        int lo = 0, hi = a.nseq;
        while (hi - lo > 1) {
            const int mid = lo + (hi - lo) / 2;
            if ((int64_t)__ldg(a.cu_seqlens + mid) <= t) lo = mid;
            else hi = mid;
        }
        return t - __ldg(a.cu_seqlens + lo);
    }
    if (a.bits == 32) return __ldg((const int32_t *)a.ids + t);
    return __ldg((const long long *)a.ids + t);
}

// double -> binary16 value with one rounding (nearest even), as the float
// holding it: rope_apply_pos.h's rg_pos_f16_rn_double, step for step.
static __device__ __forceinline__ float rg_pos_f16_rn_double_dev(double d)
{
    if (d == 0.0 || !isfinite(d)) return (float)d;
    int e;
    (void)frexp(d, &e);
    int E = e - 1;
    if (E < -14) E = -14;
    const double v = ldexp(rint(ldexp(d, 10 - E)), E - 10);
    if (fabs(v) > 65504.0) return d < 0 ? -INFINITY : INFINITY;
    return (float)v;
}

// f16 and f32 values (x = cos, y = sin) from double sin/cos, each rounded once:
// out of line, so their registers do not weigh on the bf16 path's kernels.
static __device__ __noinline__ float2 rg_pos_cos_sin_double(float x, float scale, int cdt)
{
    double sd, cd;
    rg_sincos_double(x, &sd, &cd);
    cd *= (double)scale;
    sd *= (double)scale;
    if (cdt == ROPEGRAD_F32) return make_float2(__double2float_rn(cd), __double2float_rn(sd));
    return make_float2(rg_pos_f16_rn_double_dev(cd), rg_pos_f16_rn_double_dev(sd));
}

// scale*cos(x), scale*sin(x) rounded once to cdt, as floats.
static __device__ __forceinline__ void rg_pos_cos_sin(float x, float scale, int cdt, float &c, float &s)
{
    if (cdt == ROPEGRAD_BF16) {
        uint32_t sb, cb;
        rg_sincos_bf16(x, scale, &sb, &cb);
        c = __uint_as_float(cb << 16);
        s = __uint_as_float(sb << 16);
        return;
    }
    const float2 v = rg_pos_cos_sin_double(x, scale, cdt);
    c = v.x;
    s = v.y;
}

// VEC elements of p from element i: one aligned load (PACKED) or VEC loads.
template <typename T, int VEC, bool PACKED>
static __device__ __forceinline__ rg_apply_pack<T, VEC> rg_pos_ld(const T *p, int64_t i)
{
    if constexpr (PACKED) {
        return *reinterpret_cast<const rg_apply_pack<T, VEC> *>(p + i);
    } else {
        rg_apply_pack<T, VEC> r;
#pragma unroll
        for (int e = 0; e < VEC; e++) r.v[e] = p[i + e];
        return r;
    }
}

template <typename T, int VEC, bool PACKED>
static __device__ __forceinline__ void rg_pos_st(T *p, int64_t i, const rg_apply_pack<T, VEC> &r)
{
    if constexpr (PACKED) {
        *reinterpret_cast<rg_apply_pack<T, VEC> *>(p + i) = r;
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) p[i + e] = r.v[e];
    }
}

// One unit of work, as few registers as it can be held in across the
// barrier: where it is stored, which cos/sin it takes, and its elements.
template <typename T, int VEC>
struct rg_pos_unit {
    T *o;         // where a is stored (b: o + R/2, rotate-half)
    int cs;       // index of its first pair's cos/sin in the block's shared rows; -1 copy through, -2 nothing
    rg_apply_pack<T, VEC> a, b;
};

// Unit v of head h's row of token t (uh units a head row, urot of the rotary
// part; tl the token's row in the shared cos/sin rows), loaded. Heads number
// q's then k's.
template <typename T, int VEC, bool HALF, bool PACKED>
static __device__ __forceinline__ void rg_pos_load_at(const rg_pos_args &a, int64_t t, int h, int v, int tl, int urot,
                                                      rg_pos_unit<T, VEC> &w)
{
    const ropegrad_rope_apply_shape &s = a.s;
    const int hq = (int)s.num_heads;
    const bool is_q = h < hq;
    const int64_t heads = is_q ? s.num_heads : s.num_kv_heads, hl = is_q ? h : h - hq;
    const int64_t D = s.head_dim;
    int64_t off;
    if (s.layout == ROPEGRAD_LAYOUT_BSHD) {
        off = (t * heads + hl) * D;
    } else {
        const int64_t b = t / s.seq_len, si = t - b * s.seq_len;
        off = ((b * heads + hl) * s.seq_len + si) * D;
    }
    const T *x = (const T *)(is_q ? a.q : a.k);
    T *o = (T *)(is_q ? a.qo : a.ko);
    if (v < urot) {
        const int j = v * VEC;   // HALF: pairs j.. of the halves; else elements j.., pairs j/2..
        w.o = o + off + j;
        w.cs = tl * (a.R / 2) + (HALF ? j : j / 2);
        w.a = rg_pos_ld<T, VEC, PACKED>(x + off + j, 0);
        if (HALF) w.b = rg_pos_ld<T, VEC, PACKED>(x + off + j + a.R / 2, 0);
    } else {
        const int64_t at = off + a.R + (int64_t)(v - urot) * VEC;
        w.o = o + at;
        w.cs = o == x ? -2 : -1;
        if (o != x) w.a = rg_pos_ld<T, VEC, PACKED>(x + at, 0);
    }
}

// Unit u of the block's tokens [t0, t0 + nt) and heads [h0, h0 + nh): uh units
// a head row (urot of the rotary part, the rest the tail's), loaded.
template <typename T, int VEC, bool HALF, bool PACKED>
static __device__ __forceinline__ void rg_pos_load(const rg_pos_args &a, int64_t t0, int h0, int nh, int urot, int uh,
                                                   int u, rg_pos_unit<T, VEC> &w)
{
    const int per_token = nh * uh;
    const int tl = u / per_token, rem = u - tl * per_token, hh = rem / uh, v = rem - hh * uh;
    rg_pos_load_at<T, VEC, HALF, PACKED>(a, t0 + tl, h0 + hh, v, tl, urot, w);
}

// A rotary unit rotated by its pairs' cos/sin and stored: ct, nt each pair's
// first element's values, ct1, nt1 its second's (the same values here; a
// table's two columns in the packed table ops' kernels), from the pair's
// index in the unit on (shared rows or a thread's registers).
template <typename T, int VEC, bool HALF, bool PACKED>
static __device__ __forceinline__ void rg_pos_rotate_store(const rg_pos_args &a, const float *ct, const float *nt,
                                                           const float *ct1, const float *nt1,
                                                           const rg_pos_unit<T, VEC> &w)
{
    float o0[VEC], o1[VEC];
    if constexpr (HALF) {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            rg_apply_rotate(rg_apply_ld(w.a.v, e), rg_apply_ld(w.b.v, e), ct[e], ct1[e], nt[e], nt1[e], a.sign, o0[e],
                            o1[e]);
        }
        rg_apply_pack<T, VEC> pa, pb;
#pragma unroll
        for (int e = 0; e < VEC; e++) rg_apply_st(pa.v, e, o0[e]), rg_apply_st(pb.v, e, o1[e]);
        rg_pos_st<T, VEC, PACKED>(w.o, 0, pa);
        rg_pos_st<T, VEC, PACKED>(w.o, a.R / 2, pb);
    } else {
#pragma unroll
        for (int e = 0; e < VEC / 2; e++) {
            rg_apply_rotate(rg_apply_ld(w.a.v, 2 * e), rg_apply_ld(w.a.v, 2 * e + 1), ct[e], ct1[e], nt[e], nt1[e],
                            a.sign, o0[2 * e], o0[2 * e + 1]);
        }
        rg_apply_pack<T, VEC> pa;
#pragma unroll
        for (int e = 0; e < VEC; e++) rg_apply_st(pa.v, e, o0[e]);
        rg_pos_st<T, VEC, PACKED>(w.o, 0, pa);
    }
}

// The unit rotated by the token's cos/sin and stored (or copied through, or
// left alone in place): c, n the block's shared rows for each pair's first
// element, c1, n1 for its second.
template <typename T, int VEC, bool HALF, bool PACKED>
static __device__ __forceinline__ void rg_pos_store(const rg_pos_args &a, const float *c, const float *n,
                                                    const float *c1, const float *n1, const rg_pos_unit<T, VEC> &w)
{
    if (w.cs == -2) return;
    if (w.cs == -1) {
        rg_pos_st<T, VEC, PACKED>(w.o, 0, w.a);
        return;
    }
    rg_pos_rotate_store<T, VEC, HALF, PACKED>(a, c + w.cs, n + w.cs, c1 + w.cs, n1 + w.cs, w);
}

// Units a thread loads before the cos/sin are computed: two, so that 32 bytes
// (rotate-half: 64) of q/k a thread are in flight, as 088's kernel keeps two
// heads' rows a thread (dev/rope_apply/NOTES.md, "088: heads2").
#define RG_POS_UPT 2

// Block blk's share of the work: tokens [t0, t0 + nt), heads [h0, h0 + nh)
// (q's then k's, numbered together), `units` units of uh a head row (urot of
// them the rotary part's).
struct rg_pos_block {
    int64_t t0;
    int h0, nt, nh, urot, uh, units;
};

template <int VEC, bool HALF>
static __device__ __forceinline__ rg_pos_block rg_pos_block_at(const rg_pos_args &a, int64_t blk)
{
    const int H = a.R / 2, D = (int)a.s.head_dim, heads = (int)(a.s.num_heads + a.s.num_kv_heads);
    const int64_t tokens = a.s.batch_size * a.s.seq_len, tg = blk / a.groups;
    rg_pos_block b;
    b.urot = HALF ? H / VEC : a.R / VEC;
    b.uh = b.urot + (D - a.R) / VEC;
    b.t0 = tg * a.tpb;
    b.h0 = (int)(blk - tg * a.groups) * a.hpb;
    b.nt = (int)min((int64_t)a.tpb, tokens - b.t0);
    b.nh = min(a.hpb, heads - b.h0);
    b.units = b.nt * b.nh * b.uh;
    return b;
}

// Step 1 of a block: each thread's first RG_POS_UPT units loaded into w.
template <typename T, int VEC, bool HALF, bool PACKED>
static __device__ __forceinline__ void rg_pos_load_first(const rg_pos_args &a, const rg_pos_block &b,
                                                         rg_pos_unit<T, VEC> (&w)[RG_POS_UPT])
{
#pragma unroll
    for (int i = 0; i < RG_POS_UPT; i++) {
        const int u = threadIdx.x + i * blockDim.x;
        if (u < b.units) rg_pos_load<T, VEC, HALF, PACKED>(a, b.t0, b.h0, b.nh, b.urot, b.uh, u, w[i]);
    }
}

// Step 3 of a block, after the barrier that publishes the shared rows (c, n,
// c1, n1: rg_pos_store's): w's units stored, then the thread's further units
// loaded and stored one by one; a closing barrier, as the shared rows are
// rewritten by the next block's tokens.
template <typename T, int VEC, bool HALF, bool PACKED>
static __device__ __forceinline__ void rg_pos_store_all(const rg_pos_args &a, const rg_pos_block &b,
                                                        const rg_pos_unit<T, VEC> (&w)[RG_POS_UPT], const float *c,
                                                        const float *n, const float *c1, const float *n1)
{
#pragma unroll
    for (int i = 0; i < RG_POS_UPT; i++) {
        const int u = threadIdx.x + i * blockDim.x;
        if (u < b.units) rg_pos_store<T, VEC, HALF, PACKED>(a, c, n, c1, n1, w[i]);
    }
    rg_pos_unit<T, VEC> w1;
    for (int u = threadIdx.x + RG_POS_UPT * blockDim.x; u < b.units; u += blockDim.x) {
        rg_pos_load<T, VEC, HALF, PACKED>(a, b.t0, b.h0, b.nh, b.urot, b.uh, u, w1);
        rg_pos_store<T, VEC, HALF, PACKED>(a, c, n, c1, n1, w1);
    }
    __syncthreads();
}

// The kernel: block i covers token group i / groups (tpb tokens) and head
// group i % groups (hpb heads); a grid-stride loop over blocks beyond the grid.
// Units u, u + blockDim, ... of the block are thread u's. Dynamic shared
// memory: 2 * tpb * R/2 floats. (dev/rope_apply_pos/pos_variants.cu times
// this body under other register budgets.)
template <typename T, int VEC, bool HALF, bool PACKED>
__global__ void __launch_bounds__(512) rg_pos_kernel(rg_pos_args a)
{
    extern __shared__ float rg_pos_sh[];
    const int H = a.R / 2;
    float *c = rg_pos_sh, *n = rg_pos_sh + a.tpb * H;
    for (int64_t blk = blockIdx.x; blk < a.blocks; blk += gridDim.x) {
        const rg_pos_block b = rg_pos_block_at<VEC, HALF>(a, blk);
        rg_pos_unit<T, VEC> w[RG_POS_UPT];
        rg_pos_load_first<T, VEC, HALF, PACKED>(a, b, w);
        for (int i = threadIdx.x; i < b.nt * H; i += blockDim.x) {
            const int tl = i / H, j = i - tl * H;
            const float x = (float)rg_pos_position_dev(a, b.t0 + tl) * __ldg(a.inv + j);
            rg_pos_cos_sin(x, a.scale, (int)a.s.cos_sin_dtype, c[i], n[i]);
        }
        __syncthreads();
        rg_pos_store_all<T, VEC, HALF, PACKED>(a, b, w, c, n, c, n);
    }
}

// The warp kernel (the shipped path where a head row's rotary units, urot of
// them, divide a warp: 16-byte units, urot a power of two up to 32): no block
// barrier. A warp covers one token (or one group of its heads, when there are
// too few tokens to fill the GPU); lane l handles rotary unit l % urot of
// heads l / urot, l / urot + 32 / urot, ... of it, so the warp's loads of
// each step are 32 / urot whole half rows, and the same columns for every
// head: a thread takes its pairs' cos/sin once and holds them in registers.
//   1. each thread loads its first HSTEP heads' units, so the loads are in
//      flight while
//   2. the warp's lanes fill the warp's shared rows with the token's cos/sin
//      values, SRC's way (from positions: computed, as the block kernel does;
//      the packed table ops: a gathered table row); after a warp barrier each
//      thread copies its pairs' values into registers
//   3. each thread rotates and stores its units, then loads and rotates its
//      further heads HSTEP at a time; the copied-through tail (rotary_dim <
//      head_dim) last. A thread reads exactly the elements it writes.
#define RG_POSW_THREADS 256
#define RG_POSW_WARPS (RG_POSW_THREADS / 32)
// Warps an SM that fill the GPU: below this many tokens, heads are split.
#define RG_POSW_WARPS_PER_SM 64

// SRC of the apply from positions: each value computed (rg_pos_cos_sin), two
// rows (a pair's two elements take the same values). Its launch knobs (heads a
// thread loads before it stores them, blocks an SM asked of the register
// allocation): the fastest measured, the GPU tests run with them
// (dev/rope_apply_pos/NOTES.md).
struct rg_posw_from_positions {
    static constexpr int rows = 2, hstep = 1, minb = 4;
    template <bool HALF>
    __device__ __forceinline__ void fill(const rg_pos_args &a, int64_t t, int lane, float *c, float *n, float *,
                                         float *) const
    {
        const float p = (float)rg_pos_position_dev(a, t);
        for (int i = lane; i < a.R / 2; i += 32) rg_pos_cos_sin(p * __ldg(a.inv + i), a.scale, (int)a.s.cos_sin_dtype, c[i], n[i]);
    }
};

// A step of a thread's heads: the rotary unit v0 of heads h, h + subs, ...
// (HSTEP of them, those below h1), loaded; then rotated and stored.
template <typename T, int VEC, bool HALF, int HSTEP>
static __device__ __forceinline__ void rg_posw_load_step(const rg_pos_args &a, int64_t t, int h, int subs, int h1, int v0,
                                                         int urot, rg_pos_unit<T, VEC> (&w)[HSTEP])
{
#pragma unroll
    for (int i = 0; i < HSTEP; i++)
        if (h + i * subs < h1) rg_pos_load_at<T, VEC, HALF, true>(a, t, h + i * subs, v0, 0, urot, w[i]);
}

template <typename T, int VEC, bool HALF, int HSTEP>
static __device__ __forceinline__ void rg_posw_store_step(const rg_pos_args &a, int h, int subs, int h1, const float *c,
                                                          const float *n, const float *c1, const float *n1,
                                                          const rg_pos_unit<T, VEC> (&w)[HSTEP])
{
#pragma unroll
    for (int i = 0; i < HSTEP; i++)
        if (h + i * subs < h1) rg_pos_rotate_store<T, VEC, HALF, true>(a, c, n, c1, n1, w[i]);
}

// HSTEP heads a step a thread; MINB blocks an SM asked of the register
// allocation (SRC's, by default; dev/rope_apply_pos/pos_variants.cu times the
// choices).
template <typename T, int VEC, bool HALF, typename SRC, int HSTEP = SRC::hstep, int MINB = SRC::minb>
__global__ void __launch_bounds__(RG_POSW_THREADS, MINB) rg_posw_kernel(rg_pos_args a, SRC src)
{
    extern __shared__ float rg_posw_sh[];
    constexpr bool TWO = SRC::rows == 4;   // a pair's second element's values apart
    constexpr int P = HALF ? VEC : VEC / 2;   // pairs a unit
    const int H = a.R / 2, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float *c = rg_posw_sh + warp * SRC::rows * H, *n = c + H;
    float *c1 = TWO ? n + H : c, *n1 = TWO ? c1 + H : n;
    const int urot = HALF ? H / VEC : a.R / VEC, uh = urot + ((int)a.s.head_dim - a.R) / VEC;
    const int subs = 32 / urot, sub = lane / urot, v0 = lane - sub * urot, p0 = v0 * P;
    const int heads = (int)(a.s.num_heads + a.s.num_kv_heads);
    const int64_t step = (int64_t)gridDim.x * RG_POSW_WARPS;
    for (int64_t item = (int64_t)blockIdx.x * RG_POSW_WARPS + warp; item < a.blocks; item += step) {
        const int64_t t = item / a.groups;
        const int hb = (int)(item - t * a.groups) * a.hpb, h0 = hb + sub, h1 = min(heads, hb + a.hpb);
        rg_pos_unit<T, VEC> w[HSTEP];
        rg_posw_load_step<T, VEC, HALF, HSTEP>(a, t, h0, subs, h1, v0, urot, w);
        src.template fill<HALF>(a, t, lane, c, n, c1, n1);
        __syncwarp();
        float cr[P], nr[P], cr1[P], nr1[P];
#pragma unroll
        for (int e = 0; e < P; e++) {
            cr[e] = c[p0 + e], nr[e] = n[p0 + e];
            if (TWO) cr1[e] = c1[p0 + e], nr1[e] = n1[p0 + e];
        }
        __syncwarp();   // the rows are the next item's to fill
        const float *k1 = TWO ? cr1 : cr, *m1 = TWO ? nr1 : nr;
        for (int h = h0;;) {
            rg_posw_store_step<T, VEC, HALF, HSTEP>(a, h, subs, h1, cr, nr, k1, m1, w);
            h += HSTEP * subs;
            if (h >= h1) break;
            rg_posw_load_step<T, VEC, HALF, HSTEP>(a, t, h, subs, h1, v0, urot, w);
        }
        for (int h = h0; h < h1; h += subs) {   // the tail: no cos/sin read
            for (int v = v0 + urot; v < uh; v += urot) {
                rg_pos_load_at<T, VEC, HALF, true>(a, t, h, v, 0, urot, w[0]);
                rg_pos_store<T, VEC, HALF, true>(a, c, n, c1, n1, w[0]);
            }
        }
    }
}

// The rotary units of a head row: HALF, each half's VEC-element units; else
// the rotary part's.
template <int VEC, bool HALF>
static int rg_pos_rot_units(const rg_pos_args &a)
{
    return HALF ? a.R / 2 / VEC : a.R / VEC;
}

// The warp kernel applies: 16-byte units (rg_pos_vec_ok) and urot rotary units
// a head row dividing a warp.
template <int VEC, bool HALF>
static bool rg_posw_ok(const rg_pos_args &a)
{
    const int urot = rg_pos_rot_units<VEC, HALF>(a);
    return urot >= 1 && urot <= 32 && 32 % urot == 0;
}

// Blocks that fill the GPU: below this many, heads are split into groups.
#define RG_POS_BLOCKS_PER_SM 8
// Units a block aims at (threads: RG_POS_UPT units each where it can).
#define RG_POS_BLOCK_UNITS 512

// A launch of a kernel over rg_pos_args: its grid, threads a block and dynamic shared memory.
struct rg_pos_cfg {
    unsigned grid;
    int threads;
    size_t shmem;
};

// The current device's SMs.
static cudaError_t rg_pos_sms(int *sms)
{
    int dev = 0;
    const cudaError_t e = cudaGetDevice(&dev);
    return e == cudaSuccess ? cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev) : e;
}

// Plans a's blocks (tpb, hpb, groups, blocks) for uh units a head row and
// floats_per_token floats of shared memory a token (the apply from
// positions: R; the packed table ops: more).
static cudaError_t rg_pos_plan(rg_pos_args &a, int uh, int floats_per_token, rg_pos_cfg &cfg,
                               int block_units = RG_POS_BLOCK_UNITS)
{
    int sms = 0;
    const cudaError_t e = rg_pos_sms(&sms);
    if (e != cudaSuccess) return e;
    const int heads = (int)(a.s.num_heads + a.s.num_kv_heads);
    const int64_t tokens = a.s.batch_size * a.s.seq_len, want = (int64_t)sms * RG_POS_BLOCKS_PER_SM;
    const int64_t per_token = (int64_t)heads * uh;
    // tokens a block: enough units for a block, while there are blocks enough
    // to fill the GPU, and their shared rows within 16 KB of shared memory
    int64_t tpb = per_token >= block_units ? 1 : block_units / per_token;
    if (tpb > tokens / want) tpb = tokens / want;
    if (tpb > 4096 / floats_per_token) tpb = 4096 / floats_per_token;
    if (tpb < 1) tpb = 1;
    // head groups a token: split when even one token a block leaves the GPU short
    int groups = 1;
    if (tpb == 1 && tokens < want) {
        const int64_t g = (want + tokens - 1) / tokens;
        groups = (int)(g < heads ? g : heads);
    }
    a.hpb = (heads + groups - 1) / groups;
    // a block's units in 30 bits (int indices): more head groups for rows of very many heads
    const int64_t max_hpb = ((int64_t)1 << 30) / (uh * tpb);
    if (a.hpb > max_hpb) a.hpb = (int)max_hpb;
    a.groups = (heads + a.hpb - 1) / a.hpb;
    a.tpb = (int)tpb;
    a.blocks = (tokens + tpb - 1) / tpb * a.groups;
    const int64_t units = tpb * a.hpb * uh;
    const int64_t want_threads = (units + RG_POS_UPT - 1) / RG_POS_UPT;
    cfg.threads = (int)(want_threads >= 512 ? 512 : want_threads <= 64 ? 64 : (want_threads + 31) / 32 * 32);
    cfg.grid = (unsigned)(a.blocks < (1 << 30) ? a.blocks : (1 << 30));
    cfg.shmem = (size_t)tpb * (size_t)floats_per_token * sizeof(float);
    return cudaSuccess;
}

// Plans a's warp items for the warp kernel (hpb heads of one token an item,
// groups items a token, blocks items in all), rows shared rows of R/2 floats a
// warp.
static cudaError_t rg_posw_plan(rg_pos_args &a, int urot, int rows, rg_pos_cfg &cfg)
{
    int sms = 0;
    const cudaError_t e = rg_pos_sms(&sms);
    if (e != cudaSuccess) return e;
    const int heads = (int)(a.s.num_heads + a.s.num_kv_heads), subs = 32 / urot;
    const int64_t tokens = a.s.batch_size * a.s.seq_len, want = (int64_t)sms * RG_POSW_WARPS_PER_SM;
    int64_t groups = 1;
    if (tokens < want) groups = (want + tokens - 1) / tokens;
    const int64_t max_groups = (heads + subs - 1) / subs;
    if (groups > max_groups) groups = max_groups;
    int hpb = (int)((heads + groups - 1) / groups);
    hpb = (hpb + subs - 1) / subs * subs;   // whole steps of the warp's heads
    a.hpb = hpb;
    a.groups = (heads + hpb - 1) / hpb;
    a.tpb = 1;
    a.blocks = tokens * a.groups;
    const int64_t grid = (a.blocks + RG_POSW_WARPS - 1) / RG_POSW_WARPS;
    cfg.threads = RG_POSW_THREADS;
    cfg.grid = (unsigned)(grid < (1 << 30) ? grid : (1 << 30));
    cfg.shmem = (size_t)RG_POSW_WARPS * rows * (a.R / 2) * sizeof(float);
    return cudaSuccess;
}

// Units a head row: the rotary units, then the tail's.
template <int VEC, bool HALF>
static int rg_pos_units_per_head(const rg_pos_args &a)
{
    return rg_pos_rot_units<VEC, HALF>(a) + ((int)a.s.head_dim - a.R) / VEC;
}

// The warp kernel with src's values, on a problem rg_posw_ok accepts.
template <typename T, int VEC, bool HALF, typename SRC>
static cudaError_t rg_posw_go(rg_pos_args a, const SRC &src, cudaStream_t st)
{
    rg_pos_cfg cfg;
    const cudaError_t e = rg_posw_plan(a, rg_pos_rot_units<VEC, HALF>(a), SRC::rows, cfg);
    if (e != cudaSuccess) return e;
    rg_posw_kernel<T, VEC, HALF, SRC><<<cfg.grid, cfg.threads, cfg.shmem, st>>>(a, src);
    return cudaGetLastError();
}

template <typename T, int VEC, bool HALF, bool PACKED>
static cudaError_t rg_pos_go(rg_pos_args a, cudaStream_t st)
{
    if constexpr (PACKED) {
        if (rg_posw_ok<VEC, HALF>(a)) return rg_posw_go<T, VEC, HALF>(a, rg_posw_from_positions(), st);
    }
    rg_pos_cfg cfg;
    const cudaError_t e = rg_pos_plan(a, rg_pos_units_per_head<VEC, HALF>(a), a.R, cfg);
    if (e != cudaSuccess) return e;
    rg_pos_kernel<T, VEC, HALF, PACKED><<<cfg.grid, cfg.threads, cfg.shmem, st>>>(a);
    return cudaGetLastError();
}

// The 16-byte units apply: the rotary part's units (HALF: each half's) and
// the tail whole multiples of them, the tensors aligned to them.
template <typename T>
static bool rg_pos_vec_ok(const rg_pos_args &a, bool half)
{
    constexpr int VEC = 16 / sizeof(T);
    const int D = (int)a.s.head_dim, R = a.R;
    return D % VEC == 0 && (D - R) % VEC == 0 && (half ? (R / 2) % VEC == 0 : R % VEC == 0) &&
           rg_apply_aligned(a.q, 16) && rg_apply_aligned(a.k, 16) && rg_apply_aligned(a.qo, 16) &&
           rg_apply_aligned(a.ko, 16);
}

template <typename T>
static cudaError_t rg_pos_dtype_go(const rg_pos_args &a, bool half, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T);
    const bool vec = rg_pos_vec_ok<T>(a, half);
    if (half) return vec ? rg_pos_go<T, VEC, true, true>(a, st) : rg_pos_go<T, 1, true, false>(a, st);
    return vec ? rg_pos_go<T, VEC, false, true>(a, st) : rg_pos_go<T, 2, false, false>(a, st);
}

// The launcher for a validated problem (with fewer than 2^30 heads of q and k
// together: the kernel counts them in int): sign +1 the forward, -1 the backward.
static cudaError_t rg_pos_launch(const ropegrad_rope_apply_pos_problem *p, float sign, cudaStream_t st)
{
    rg_pos_args a;
    a.s = p->shape;
    a.R = (int)(p->rotary_dim ? p->rotary_dim : p->shape.head_dim);
    a.scale = p->attention_scaling;
    a.sign = sign;
    a.ids = p->position_ids;
    a.bits = p->position_bits;
    a.cu_seqlens = p->cu_seqlens;
    a.nseq = (int)p->num_seqs;
    a.inv = p->inv_freq;
    a.q = p->q, a.k = p->k, a.qo = p->q_out, a.ko = p->k_out;
    a.tpb = a.hpb = a.groups = 1;
    a.blocks = 0;
    const bool half = p->style == ROPEGRAD_ROTARY_HALF;
    switch (p->shape.dtype) {
    case ROPEGRAD_BF16: return rg_pos_dtype_go<__nv_bfloat16>(a, half, st);
    case ROPEGRAD_F16: return rg_pos_dtype_go<__half>(a, half, st);
    default: return rg_pos_dtype_go<float>(a, half, st);
    }
}
