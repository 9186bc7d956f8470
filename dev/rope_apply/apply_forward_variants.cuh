/* SPDX-License-Identifier: Apache-2.0 */
// apply_forward_variants.cuh -- development variants of 088's kernel (q and k
// rotated: out = x*cos + rotate_half(x)*sin), not shipped: dev/rope_apply/apply_floor.cu
// times each beside the shipped kernel, the one-head-a-thread rg_apply_pairs_vec (below) and the floor (af_floor088)
// and checks its outputs against the shipped kernel's (issue 27: faster than
// torch.compile on every workload; B=32, S=4096 is the one where it is not:
// README "figures:apply-table", results/ops/apply-floor-088.txt).
//
// Where the shipped kernel can lose 1-4% against the floor on the large,
// bandwidth-bound shapes (from its source and ptxas -v, sm_90, CUDA 13.0; not
// from a profile):
//  - occupancy: rg_apply_pairs_vec<float, float, 4> takes 35 registers, 40
//    allocated at 256-thread blocks: 6 blocks, 1536 threads an SM (75%). The
//    floor takes 30: 8 blocks, 2048 threads. Bytes of q/k in flight an SM are
//    about even (1536 x 32 against 2048 x 16), but the shipped kernel has a
//    quarter fewer warps to cover its cos/sin L2 hits, its three 32-bit
//    divisions a unit and its block turnover with.
//  - one unit a thread (a 16-byte column of both halves of one head row: two
//    16-byte loads from DRAM, four from L2), then the thread exits: ~164k
//    blocks on B=32, S=4096, the SM refilled block by block.
//  - cache policy: q and k are read once, out written once; cos/sin (S*D*8
//    bytes, 4 MiB at S=4096) are read again by every head. Default loads let
//    the q/k stream age cos/sin out of L2 between heads (a 4 MiB table and
//    8 MiB of q/qo between its rereads fit the 50 MB L2, so this is the
//    smaller suspect).
//  - L2 -> SM traffic: each 16 bytes of x bring 16 of cos and 16 of sin from
//    L2, three times q/k's bytes over that path. The floor does the same, so a
//    variant beating the floor here says the floor is not one.
//  - not the store policy (068's streamed __stcs stores cost 10-25% on its
//    large workloads: NOTES.md) and not the load width (16 bytes).
//
// What torch.compile (Inductor) most likely generates for the suite's
// reference (q*cos + rotate_half(q)*sin, the same for k; reasoned from how
// Inductor lowers pointwise ops, not read from its output): a Triton kernel a
// tensor (q_out and k_out have different numels: two launches, unless combo
// kernels join them), flattened to B*H*S*D elements, XBLOCK around 1024 at 4
// warps: 8 elements a thread as two 16-byte loads of x (32 bytes, as the
// shipped kernel), the rotate_half partner as masked loads at x+64 / x-64
// (tl.where on x%128 < 64: the same lines, L1 hits), cos/sin at
// (x/128 % S)*128 + x%128 with eviction_policy='evict_last' (Inductor's hint
// for a broadcast load), a non-persistent grid of numel/XBLOCK 128-thread
// blocks, divisions by the constant 128 and one by S. Its differences from the
// shipped kernel are then the cos/sin policy, the block size, the index math
// and the registers it leaves (occupancy), not the bytes a thread.
//
// The variants (llm.c style; fp32 q/k and cos/sin, BHSD, head_dim a multiple
// of 8, cos/sin [S,D] or [B,S,D], every element index under 2^31, 16-byte
// aligned pointers; anything else is cudaErrorInvalidValue). The rotation is
// rg_apply_rotate, so every output has the shipped kernel's bits. Registers
// (ptxas -v, sm_90, CUDA 13.0) in brackets; 0-4 use the shipped kernel's
// mapping and index math (BHSD) in dev88_flat_body, and 2-4 take 33 registers:
// 6 blocks an SM, as the shipped kernel's 35.
//  0 occ8       the shipped mapping (a 16-byte column of one head row a thread,
//               q's rows then k's, grid rows*lanes/256) under
//               __launch_bounds__(256, 8) [32, 4 bytes spilled]: 8 blocks an SM
//               as the floor. Tests the occupancy item alone.
//  1 2units     two units a thread [46: 5 blocks an SM]: a block covers 512
//               consecutive units, both units' loads issued before either's
//               stores (4 loads of 16 bytes from DRAM in flight a thread), half
//               the blocks.
//  2 waves      the shipped mapping in a persistent grid-stride loop, the grid
//               whole waves (SMs x resident blocks from the occupancy API):
//               no block turnover, no partial last wave; each sweep of the grid
//               moves one contiguous stretch of memory.
//  3 ef         q/k loaded with an L2 evict_first policy (read once), cos/sin
//               and the stores default: the q/k stream stops aging cos/sin and
//               the output's dirty lines out of L2.
//  4 ef+cs-last 3 and cos/sin loaded with an L2 evict_last policy (Inductor's
//               hint for broadcast loads). Caution: evict_last lines may survive
//               the timer's 2x-L2 memset between launches; a gain here the size
//               of cos/sin's share of the bytes is that, not the kernel.
//  5 heads2     one thread a column of one cos/sin row for two heads of the same
//               batch (rows si of heads h, h+1: S*D apart) [54: 4 blocks an SM]:
//               cos/sin loaded once for both (half the L2 -> SM traffic of the
//               table), four 16-byte loads of x in flight, a warp on two head
//               streams at a time.
//  6 rg-heads2  5 as the library has it (kernels.cuh rg_apply_pairs_heads2:
//               every dtype pair and layout, odd head counts), launched
//               directly: what the library launches (shipped 2026-12-02).
//  7 pairs-vec  the 16-byte kernel shipped before it (rg_apply_pairs_vec,
//               defined in this file now), launched directly: the one-head-a-
//               thread baseline.
#pragma once

#include <algorithm>

#include "rope_apply/kernels.cuh"

// 7 pairs-vec: the kernel 088 shipped before rg_apply_pairs_heads2 (kept as
// the one-head-a-thread baseline apply_floor times): rg_apply_pairs with VEC pairs a thread, each half of a head row read and
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

// The shape as the kernels use it, worked out on the host. A unit is a
// 16-byte column (4 pairs) of one head row; `lanes` of them a row.
struct dev88_dims {
    uint32_t D, H, lanes, S, hq, hk, cs_stride;
    uint32_t q_rows, units;            // q's head rows; units of q and k (the flat kernels)
    uint32_t gq, gk, q_head_units, head_units; // head groups of q and k; units of dev88_heads
};

// Where one unit of the flat order lives: q's rows, then k's, as the shipped
// kernel orders them and with its index arithmetic (BHSD).
struct dev88_unit {
    uint32_t xo, co;
    bool is_q;
};

static __device__ __forceinline__ dev88_unit dev88_locate(const dev88_dims &d, uint32_t t)
{
    const uint32_t row = t / d.lanes, j = (t - row * d.lanes) * 4;
    const bool is_q = row < d.q_rows;
    const uint32_t ri = is_q ? row : row - d.q_rows, bh = ri / d.S, si = ri - bh * d.S;
    const uint32_t b = bh / (is_q ? d.hq : d.hk);
    return {ri * d.D + j, b * d.cs_stride + si * d.D + j, is_q};
}

// Load policies: 0 default (the shipped kernel's), 1 q/k evict_first, 2 q/k
// evict_first and cos/sin evict_last.
struct dev88_policies {
    uint64_t x, table;
};

template <int POL>
static __device__ __forceinline__ dev88_policies dev88_make_policies()
{
    dev88_policies p = {0, 0};
    if (POL >= 1) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p.x));
    if (POL >= 2) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p.table));
    return p;
}

// 16 bytes of q/k (coherent load: the output may be the input) or of cos/sin
// (non-coherent, as the shipped kernel's __restrict__ gives), with an L2
// cache policy when HINT.
template <bool HINT, bool TABLE>
static __device__ __forceinline__ void dev88_ld4(const float *p, uint32_t i, uint64_t pol, float (&f)[4])
{
    if (!HINT) {
        rg_apply_ldv<float, 4>(p, i, f);
    } else if (TABLE) {
        asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=f"(f[0]), "=f"(f[1]), "=f"(f[2]), "=f"(f[3])
                     : "l"(p + i), "l"(pol));
    } else {
        asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=f"(f[0]), "=f"(f[1]), "=f"(f[2]), "=f"(f[3])
                     : "l"(p + i), "l"(pol));
    }
}

// One head row's column: x's two halves, and its rotation stored.
struct dev88_x {
    float x0[4], x1[4];
};
struct dev88_table {
    float c0[4], c1[4], n0[4], n1[4];
};

template <int POL>
static __device__ __forceinline__ void dev88_load_x(const float *x, uint32_t xo, uint32_t H, const dev88_policies &p,
                                                    dev88_x &v)
{
    dev88_ld4<(POL >= 1), false>(x, xo, p.x, v.x0);
    dev88_ld4<(POL >= 1), false>(x, xo + H, p.x, v.x1);
}

template <int POL>
static __device__ __forceinline__ void dev88_load_table(const float *cos, const float *sin, uint32_t co, uint32_t H,
                                                        const dev88_policies &p, dev88_table &t)
{
    dev88_ld4<(POL >= 2), true>(cos, co, p.table, t.c0);
    dev88_ld4<(POL >= 2), true>(cos, co + H, p.table, t.c1);
    dev88_ld4<(POL >= 2), true>(sin, co, p.table, t.n0);
    dev88_ld4<(POL >= 2), true>(sin, co + H, p.table, t.n1);
}

static __device__ __forceinline__ void dev88_store(float *o, uint32_t xo, uint32_t H, const dev88_x &v, const dev88_table &t)
{
    float o0[4], o1[4];
#pragma unroll
    for (int e = 0; e < 4; e++) rg_apply_rotate(v.x0[e], v.x1[e], t.c0[e], t.c1[e], t.n0[e], t.n1[e], 1.0f, o0[e], o1[e]);
    rg_apply_stv<float, 4>(o, xo, o0);
    rg_apply_stv<float, 4>(o, xo + H, o1);
}

// ---- 0-4: the flat order (the shipped kernel's units) -------------------------------------
// UNITS units a thread (a block's UNITS*256 consecutive units, every load
// before any store), POL the load policy. Grid-stride: the launcher's grid may
// be smaller than the work (waves).
template <int UNITS, int POL>
static __device__ __forceinline__ void dev88_flat_body(const dev88_dims &d, const float *q, const float *k,
                                                       const float *__restrict__ cos, const float *__restrict__ sin,
                                                       float *qo, float *ko)
{
    const dev88_policies pol = dev88_make_policies<POL>();
    for (uint32_t t0 = blockIdx.x * 256u * UNITS + threadIdx.x; t0 < d.units; t0 += gridDim.x * 256u * UNITS) {
        dev88_unit u[UNITS];
        dev88_x v[UNITS];
        dev88_table t[UNITS];
#pragma unroll
        for (int n = 0; n < UNITS; n++) {
            const uint32_t i = t0 + n * 256u;
            u[n] = dev88_locate(d, n == 0 || i < d.units ? i : t0);
            dev88_load_x<POL>(u[n].is_q ? q : k, u[n].xo, d.H, pol, v[n]);
            dev88_load_table<POL>(cos, sin, u[n].co, d.H, pol, t[n]);
        }
#pragma unroll
        for (int n = 0; n < UNITS; n++)
            if (n == 0 || t0 + n * 256u < d.units) dev88_store(u[n].is_q ? qo : ko, u[n].xo, d.H, v[n], t[n]);
    }
}

// No __launch_bounds__, as the shipped kernel: with any bound (even (1024, 1))
// ptxas spends registers on scheduling (46 for one unit against 33 without).
template <int UNITS, int POL>
__global__ void dev88_flat(dev88_dims d, const float *q, const float *k, const float *__restrict__ cos,
                           const float *__restrict__ sin, float *qo, float *ko)
{
    dev88_flat_body<UNITS, POL>(d, q, k, cos, sin, qo, ko);
}

// 0: 8 blocks of 256 an SM asked of ptxas (at most 32 registers).
__global__ void __launch_bounds__(256, 8) dev88_flat_occ8(dev88_dims d, const float *q, const float *k,
                                                          const float *__restrict__ cos, const float *__restrict__ sin,
                                                          float *qo, float *ko)
{
    dev88_flat_body<1, 0>(d, q, k, cos, sin, qo, ko);
}

// ---- 5: HPT heads a thread -----------------------------------------------------------------
// Unit t: q's (batch, head group, row, lane), then k's; the group's heads
// h = g*HPT .. g*HPT+HPT-1 (those below the head count) share the cos/sin
// column, loaded once. Every head's loads before any store.
template <int HPT>
__global__ void dev88_heads(dev88_dims d, const float *q, const float *k, const float *__restrict__ cos,
                            const float *__restrict__ sin, float *qo, float *ko)
{
    const dev88_policies pol = dev88_make_policies<0>();
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < d.head_units; t += gridDim.x * blockDim.x) {
        const bool is_q = t < d.q_head_units;
        const uint32_t tt = is_q ? t : t - d.q_head_units, row = tt / d.lanes, j = (tt - row * d.lanes) * 4;
        const uint32_t bg = row / d.S, si = row - bg * d.S, groups = is_q ? d.gq : d.gk, b = bg / groups;
        const uint32_t h0 = (bg - b * groups) * HPT, heads = is_q ? d.hq : d.hk;
        dev88_table tab;
        dev88_load_table<0>(cos, sin, b * d.cs_stride + si * d.D + j, d.H, pol, tab);
        dev88_x v[HPT];
        uint32_t xo[HPT];
#pragma unroll
        for (int e = 0; e < HPT; e++) {
            const uint32_t h = h0 + e < heads ? h0 + e : heads - 1;
            xo[e] = ((b * heads + h) * d.S + si) * d.D + j;
            dev88_load_x<0>(is_q ? q : k, xo[e], d.H, pol, v[e]);
        }
#pragma unroll
        for (int e = 0; e < HPT; e++)
            if (h0 + e < heads) dev88_store(is_q ? qo : ko, xo[e], d.H, v[e], tab);
    }
}

// ---- the launcher --------------------------------------------------------------------------
static const char *const dev88_variant_names[] = {"occ8",   "2units",    "waves",    "ef",
                                                   "ef+cs-last", "heads2", "rg-heads2", "pairs-vec"};
constexpr int dev88_variant_count = (int)(sizeof dev88_variant_names / sizeof dev88_variant_names[0]);
constexpr int dev88_heads_per_thread = 2;

// Whether the variants take p: fp32, BHSD, head_dim a multiple of 8, cos/sin
// [S,D] or [B,S,D], 32-bit element indices, 16-byte aligned pointers.
static bool dev88_supported(const ropegrad_rope_apply_problem *p)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    if (s.dtype != ROPEGRAD_F32 || s.cos_sin_dtype != ROPEGRAD_F32 || s.layout != ROPEGRAD_LAYOUT_BHSD) return false;
    if (s.head_dim <= 0 || s.head_dim % 8 || s.batch_size <= 0 || s.seq_len <= 0 || s.num_heads <= 0 || s.num_kv_heads <= 0)
        return false;
    if (s.cos_sin_batch_stride != 0 && s.cos_sin_batch_stride != s.seq_len * s.head_dim) return false;
    const int64_t elems = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len * s.head_dim;
    const int64_t cs_elems = (s.cos_sin_batch_stride ? s.batch_size : 1) * s.seq_len * s.head_dim;
    if (elems >= ((int64_t)1 << 31) || cs_elems >= ((int64_t)1 << 31)) return false;
    for (const void *x : {p->q, p->k, p->cos, p->sin, (const void *)p->q_out, (const void *)p->k_out})
        if (!x || !rg_apply_aligned(x, 16)) return false;
    return true;
}

static dev88_dims dev88_dims_of(const ropegrad_rope_apply_shape &s)
{
    dev88_dims d;
    d.D = (uint32_t)s.head_dim, d.H = d.D / 2, d.lanes = d.H / 4, d.S = (uint32_t)s.seq_len;
    d.hq = (uint32_t)s.num_heads, d.hk = (uint32_t)s.num_kv_heads, d.cs_stride = (uint32_t)s.cos_sin_batch_stride;
    const uint32_t B = (uint32_t)s.batch_size;
    d.q_rows = B * d.hq * d.S;
    d.units = (d.q_rows + B * d.hk * d.S) * d.lanes;
    const uint32_t hpt = dev88_heads_per_thread;
    d.gq = (d.hq + hpt - 1) / hpt, d.gk = (d.hk + hpt - 1) / hpt;
    d.q_head_units = B * d.gq * d.S * d.lanes;
    d.head_units = d.q_head_units + B * d.gk * d.S * d.lanes;
    return d;
}

// Blocks of 256 threads for n units at `per` units a thread (at least one).
static unsigned dev88_blocks(uint32_t n, uint32_t per)
{
    const uint32_t threads = (n + per - 1) / per;
    return threads ? (threads + 255) / 256 : 1;
}

// Whole waves of a kernel at 256 threads: SMs x resident blocks an SM (0 on error).
template <typename K>
static unsigned dev88_wave_blocks(K kernel)
{
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0) != cudaSuccess)
        return 0;
    return (unsigned)(sms * per_sm);
}

static cudaError_t dev88_forward_variant(const ropegrad_rope_apply_problem *p, cudaStream_t st, int variant)
{
    if (!p || variant < 0 || variant >= dev88_variant_count || !dev88_supported(p)) return cudaErrorInvalidValue;
    const dev88_dims d = dev88_dims_of(p->shape);
    const float *q = (const float *)p->q, *k = (const float *)p->k, *c = (const float *)p->cos, *n = (const float *)p->sin;
    float *qo = (float *)p->q_out, *ko = (float *)p->k_out;
    switch (variant) {
    case 0: dev88_flat_occ8<<<dev88_blocks(d.units, 1), 256, 0, st>>>(d, q, k, c, n, qo, ko); break;
    case 1: dev88_flat<2, 0><<<dev88_blocks(d.units, 2), 256, 0, st>>>(d, q, k, c, n, qo, ko); break;
    case 2: {
        const unsigned wave = dev88_wave_blocks(dev88_flat<1, 0>);
        if (!wave) return cudaErrorInvalidValue;
        dev88_flat<1, 0><<<std::min(wave, dev88_blocks(d.units, 1)), 256, 0, st>>>(d, q, k, c, n, qo, ko);
        break;
    }
    case 3: dev88_flat<1, 1><<<dev88_blocks(d.units, 1), 256, 0, st>>>(d, q, k, c, n, qo, ko); break;
    case 4: dev88_flat<1, 2><<<dev88_blocks(d.units, 1), 256, 0, st>>>(d, q, k, c, n, qo, ko); break;
    case 6: return rg_apply_heads2_launch<float, float>(p->shape, 1.0f, q, k, c, n, qo, ko, st);
    case 7: {
        const ropegrad_rope_apply_shape &s = p->shape;
        const uint32_t units = (uint32_t)(s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len) * d.lanes;
        rg_apply_pairs_vec<float, float, 4><<<rg_apply_grid(units), 256, 0, st>>>(s, 1.0f, q, k, c, n, qo, ko);
        break;
    }
    default:
        dev88_heads<dev88_heads_per_thread><<<dev88_blocks(d.head_units, 1), 256, 0, st>>>(d, q, k, c, n, qo, ko);
        break;
    }
    return cudaGetLastError();
}
