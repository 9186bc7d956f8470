/* SPDX-License-Identifier: Apache-2.0 */
// apply_backward_staged.cuh -- development candidates for 068's kernel with
// grad_cos/grad_sin, after the split variants of apply_backward_split.cuh
// (dev/rope_apply/apply_floor.cu times each beside the shipped kernel and the flat
// floor and checks it against the shipped kernel). Variant 9 ships,
// generalized to every dtype and head_dim, as rg_apply_columns_staged
// (src/op/rope_apply_backward/kernels.cuh; dev/rope_backward/NOTES.md "068: the staged kernel
// ships"); this fp32, head_dim 128 copy stays to compare against it.
//
// What the split kernel (shipped before it: rg_apply_columns_split, "even"
// groups, now the staged kernel's fallback) pays
// beyond the flat floor, from the H200 runs of 2026-12-02
// (results/ops/apply-floor-068.txt):
//  - serial rounds: a group loops over its heads (4 of 40 with 10 groups), and
//    since grad_q may alias q's gradient input (in place), the compiler cannot
//    hoist head h+G's loads above head h's stores: each head is one memory
//    latency in sequence, only 4 16-byte loads a thread in flight;
//  - wave quantization: 75 registers (80 allocated) hold 5 blocks of 160
//    threads an SM; the streamed variant (91 registers) holds 2 blocks of 256,
//    264 a wave, and B=1, S=293 (293 rows) then takes 1.36x the floor against
//    1.13x for the same kernel at 74 registers: the shape of the grid matters
//    as much as the loop.
// The candidates here (variants 8-11 of apply_floor's list; 12-19, the shipped
// staged kernel's launch and knobs, are apply_backward_knobs.cuh's):
//  8 prefetch  the shipped kernel with head h+G's four loads issued before
//              head h's arithmetic and stores (registers double-buffered): two
//              heads' loads in flight a thread and half the serial rounds.
//  9 staged    one block a cos/sin row; the row's gradient and input head rows
//              are copied to shared memory by cp.async (LDGSTS: no registers
//              held while in flight), in stages of G heads, each its own
//              commit group, all issued at the start: every byte of the row is
//              in flight at once, and the block computes stage s (a head a
//              group) as soon as it has landed while later stages still fly,
//              so stores interleave with loads. Registers stay low (shared
//              memory sets the occupancy: 40 heads = 40 KiB, 5 blocks an SM).
//              Reduction: the two groups of a warp folded by one shuffle, the
//              warps' sums added in shared memory.
// 10 staged+ef 9 with an L2 evict-first policy on the copies (q, k and the
//              gradients are read once): whether keeping them from displacing
//              other lines (the flush's dirty lines, the kernel's own outputs)
//              helps. Stores stay default (the streamed stores of the split
//              variants cost 10-25% on the large workloads).
// 11 pick      a launch heuristic over the measured variants, by shape: rows
//              that fit one wave of the streamed split kernel -> "stream"
//              (B=2/S=128 and B=1/S=256: 1.14x and 1.12x against the shipped
//              1.25x, 1.21x); rows that fit one wave of the plain split kernel
//              -> "split" (B=1/S=293: 1.13x against 1.15x); anything larger ->
//              the shipped kernel (then the split one; now the staged one). Waves from the occupancy API, so registers
//              and shared memory are the compiler's, not assumed. From the
//              2026-12-02 figures it would have given about 1.10x on the
//              geomean (variants 9/10 are not in it: revise it once timed).
// fp32 only (the suite's dtype), head_dim 128 for 9/10 (a warp copies one
// 512-byte head row per step), 16-byte alignment assumed (cudaMalloc'd); other
// shapes return cudaErrorInvalidValue.
#pragma once

#include <algorithm>

#include "apply_backward_knobs.cuh"
#include "apply_backward_split.cuh"

// ---- 8: prefetch -----------------------------------------------------------------------
// The element offset of head hd (q's heads first, then k's) of batch b at row si.
static __device__ __forceinline__ uint32_t dev_head_off(uint32_t b, uint32_t hd, uint32_t si, uint32_t S, uint32_t nh,
                                                        uint32_t nkv, bool bshd, uint32_t D)
{
    const bool is_q = hd < nh;
    const uint32_t hh = is_q ? hd : hd - nh, hn = is_q ? nh : nkv;
    return (bshd ? (b * S + si) * hn + hh : (b * hn + hh) * S + si) * D;
}

template <int VEC>
struct dev_head_data {
    float g0[VEC], g1[VEC], x0[VEC], x1[VEC];
};

template <int VEC>
static __device__ __forceinline__ void dev_load_head(const float *gp, const float *x, uint32_t off, uint32_t H,
                                                     dev_head_data<VEC> &d)
{
    rg_apply_ldv<float, VEC>(gp, off, d.g0);
    rg_apply_ldv<float, VEC>(gp, off + H, d.g1);
    rg_apply_ldv<float, VEC>(x, off, d.x0);
    rg_apply_ldv<float, VEC>(x, off + H, d.x1);
}

// The pair columns (j.., j+H..) of one cos/sin row.
template <int VEC>
static __device__ __forceinline__ void dev_load_cos_sin(const float *cos, const float *sin, uint32_t co, uint32_t H,
                                                        float (&c0)[VEC], float (&c1)[VEC], float (&n0)[VEC],
                                                        float (&n1)[VEC])
{
    rg_apply_ldv<float, VEC>(cos, co, c0);
    rg_apply_ldv<float, VEC>(cos, co + H, c1);
    rg_apply_ldv<float, VEC>(sin, co, n0);
    rg_apply_ldv<float, VEC>(sin, co + H, n1);
}

// One head's rotation (the shipped kernel's bits), its gradient stored, its
// four products added to the sums.
template <int VEC>
static __device__ __forceinline__ void dev_rotate_head(const dev_head_data<VEC> &d, const float (&c0)[VEC],
                                                       const float (&c1)[VEC], const float (&n0)[VEC],
                                                       const float (&n1)[VEC], float *gx, uint32_t off, uint32_t H,
                                                       float (&acc)[4][VEC])
{
    float o0[VEC], o1[VEC];
    rg_apply_grad_vec<VEC>(d.g0, d.g1, d.x0, d.x1, c0, c1, n0, n1, o0, o1, acc);
    rg_apply_stv<float, VEC>(gx, off, o0);
    rg_apply_stv<float, VEC>(gx, off + H, o1);
}

// The block's per-group sums ([4][VEC] a thread) added across its G groups in
// shared memory, in group order, and the row's grad_cos/grad_sin written (the
// shipped kernels' rg_apply_sum_groups; D = 2H).
template <int VEC>
static __device__ __forceinline__ void dev_sums_by_group(float *red, const float (&acc)[4][VEC], uint32_t G, uint32_t g,
                                                         uint32_t j, uint32_t H, uint32_t D, uint32_t r, float *gcos,
                                                         float *gsin)
{
    (void)D;
    rg_apply_sum_groups<float, VEC>(red, acc, G, g, j, H, r, gcos, gsin);
}

template <int VEC>
__global__ void __launch_bounds__(256) dev_apply_prefetch(ropegrad_rope_apply_shape s, const float *gq, const float *gk,
                                                          const float *__restrict__ q, const float *__restrict__ k,
                                                          const float *__restrict__ cos, const float *__restrict__ sin,
                                                          float *gqo, float *gko, float *__restrict__ gcos,
                                                          float *__restrict__ gsin)
{
    extern __shared__ float dev_prefetch_red[];   // [4][G][H]
    const uint32_t D = (uint32_t)s.head_dim, H = D / 2, L = H / VEC, G = blockDim.x / L, S = (uint32_t)s.seq_len;
    const uint32_t lane = threadIdx.x % L, g = threadIdx.x / L, j = lane * VEC, r = blockIdx.x;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride, nh = (uint32_t)s.num_heads;
    const uint32_t nkv = (uint32_t)s.num_kv_heads, heads = nh + nkv, si = r % S;
    const uint32_t b0 = cs_stride ? r / S : 0, b1 = cs_stride ? b0 + 1 : (uint32_t)s.batch_size;
    const bool bshd = s.layout == ROPEGRAD_LAYOUT_BSHD;
    float acc[4][VEC] = {};
    for (uint32_t b = b0; b < b1; b++) {
        float c0[VEC], c1[VEC], n0[VEC], n1[VEC];
        dev_load_cos_sin<VEC>(cos, sin, b * cs_stride + si * D + j, H, c0, c1, n0, n1);
        uint32_t h = g;
        if (h >= heads) continue;
        dev_head_data<VEC> cur;
        uint32_t off = dev_head_off(b, h, si, S, nh, nkv, bshd, D) + j;
        dev_load_head<VEC>(h < nh ? gq : gk, h < nh ? q : k, off, H, cur);
        for (;;) {
            // Head h+G's loads go out before head h's stores (distinct
            // addresses, so in place stays safe: each thread still reads
            // exactly the elements it writes).
            const uint32_t hn = h + G;
            const bool more = hn < heads;
            dev_head_data<VEC> nxt;
            uint32_t noff = 0;
            if (more) {
                noff = dev_head_off(b, hn, si, S, nh, nkv, bshd, D) + j;
                dev_load_head<VEC>(hn < nh ? gq : gk, hn < nh ? q : k, noff, H, nxt);
            }
            dev_rotate_head<VEC>(cur, c0, c1, n0, n1, h < nh ? gqo : gko, off, H, acc);
            if (!more) break;
            cur = nxt;
            off = noff;
            h = hn;
        }
    }
    dev_sums_by_group<VEC>(dev_prefetch_red, acc, G, g, j, H, D, r, gcos, gsin);
}

// ---- 9, 10: staged through shared memory by cp.async -------------------------------------
static __device__ __forceinline__ uint64_t dev_evict_first_policy()
{
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}

// 16 bytes global -> shared, L2 only (.cg), optionally with an L2 cache policy.
template <bool EF>
static __device__ __forceinline__ void dev_cp16(void *smem, const void *gmem, uint64_t pol)
{
    const uint32_t sa = (uint32_t)__cvta_generic_to_shared(smem);
    if (EF)
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(sa), "l"(gmem), "l"(pol)
                     : "memory");
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem) : "memory");
}

// The shipped kernel's commit and wait (src/op/rope_apply_backward/kernels.cuh).
static __device__ __forceinline__ void dev_cp_commit() { rg_apply_cp_commit(); }
static __device__ __forceinline__ void dev_cp_wait(uint32_t pending) { rg_apply_cp_wait(pending); }

// Where a batch's head rows start for cos/sin row si, and the step between
// heads (q's heads, then k's): element offsets.
struct dev_head_rows {
    uint32_t q_base, q_step, k_base, k_step, nh;
    __device__ __forceinline__ uint32_t of(uint32_t hd) const
    {
        return hd < nh ? q_base + hd * q_step : k_base + (hd - nh) * k_step;
    }
};

static __device__ __forceinline__ dev_head_rows dev_rows_of(const ropegrad_rope_apply_shape &s, uint32_t b, uint32_t si,
                                                           uint32_t D)
{
    const uint32_t S = (uint32_t)s.seq_len, nh = (uint32_t)s.num_heads, nkv = (uint32_t)s.num_kv_heads;
    if (s.layout == ROPEGRAD_LAYOUT_BSHD) return {(b * S + si) * nh * D, D, (b * S + si) * nkv * D, D, nh};
    return {(b * nh * S + si) * D, S * D, (b * nkv * S + si) * D, S * D, nh};
}

static __device__ __forceinline__ void dev_unpack4(const float4 v, float (&f)[4])
{
    f[0] = v.x, f[1] = v.y, f[2] = v.z, f[3] = v.w;
}

// head_dim 128: a head row is 32 16-byte chunks, one a lane of a warp. Block:
// G groups of 16 lanes (G even, so a warp holds two groups), 4 pairs a lane.
// MAXT, MINB: the launch bounds, so that registers do not cap the blocks an SM
// below what shared memory allows (40 heads: 41 KiB, 5 blocks of 224 threads
// at 56 registers; 64-72 heads: 3 blocks of 256).
template <bool EF, int MAXT, int MINB>
__global__ void __launch_bounds__(MAXT, MINB) dev_apply_staged(ropegrad_rope_apply_shape s, const float *gq, const float *gk,
                                                           const float *q, const float *k, const float *__restrict__ cos,
                                                           const float *__restrict__ sin, float *gqo, float *gko,
                                                           float *__restrict__ gcos, float *__restrict__ gsin)
{
    constexpr uint32_t D = 128, H = 64, L = 16, C = 32, VEC = 4;
    extern __shared__ float4 dev_stage[];   // [heads][2][C] (a head's gradient row, then its input row), cos row, sin row
    const uint32_t tid = threadIdx.x, lane = tid % L, g = tid / L, G = blockDim.x / L, W = blockDim.x / 32;
    const uint32_t warp = tid / 32, wl = tid % 32, j = lane * VEC, r = blockIdx.x, S = (uint32_t)s.seq_len;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride, nh = (uint32_t)s.num_heads;
    const uint32_t heads = nh + (uint32_t)s.num_kv_heads, si = r % S, stages = (heads + G - 1) / G;
    const uint32_t b0 = cs_stride ? r / S : 0, b1 = cs_stride ? b0 + 1 : (uint32_t)s.batch_size;
    const uint64_t pol = EF ? dev_evict_first_policy() : 0;
    float acc[4][VEC] = {};
    for (uint32_t b = b0; b < b1; b++) {
        const dev_head_rows hr = dev_rows_of(s, b, si, D);
        // Every stage's copies issued now, one commit group a stage: warp w
        // copies rows w, w+W, ... of the stage (row 2u: head u's gradient,
        // 2u+1: its input; stage 0 also the cos and sin rows), a 16-byte
        // chunk a lane. cos/sin go through shared memory too, so that no
        // registers hold them across the stages.
        float4 *cs_rows = &dev_stage[2 * heads * C];
        for (uint32_t st = 0; st < stages; st++) {
            const uint32_t h0 = st * G, nrows = 2 * (min(heads, h0 + G) - h0) + (st == 0 ? 2 : 0);
            for (uint32_t row = warp; row < nrows; row += W) {
                if (st == 0 && row >= nrows - 2) {
                    const float *src = row == nrows - 2 ? cos : sin;
                    dev_cp16<EF>(&cs_rows[(row - (nrows - 2)) * C + wl], src + b * cs_stride + si * D + wl * 4, pol);
                    continue;
                }
                const uint32_t hd = h0 + row / 2;
                const float *src = (row & 1) ? (hd < nh ? q : k) : (hd < nh ? gq : gk);
                dev_cp16<EF>(&dev_stage[(2 * hd + (row & 1)) * C + wl], src + hr.of(hd) + wl * 4, pol);
            }
            dev_cp_commit();
        }
        for (uint32_t st = 0; st < stages; st++) {
            dev_cp_wait(stages - 1 - st);
            __syncthreads();   // every thread's copies of stage st have landed
            const uint32_t hd = st * G + g;
            if (hd < heads) {
                float c0[VEC], c1[VEC], n0[VEC], n1[VEC];
                dev_unpack4(cs_rows[lane], c0);
                dev_unpack4(cs_rows[lane + L], c1);
                dev_unpack4(cs_rows[C + lane], n0);
                dev_unpack4(cs_rows[C + lane + L], n1);
                const float4 *row = &dev_stage[2 * hd * C];
                dev_head_data<VEC> d;
                dev_unpack4(row[lane], d.g0);
                dev_unpack4(row[lane + L], d.g1);
                dev_unpack4(row[C + lane], d.x0);
                dev_unpack4(row[C + lane + L], d.x1);
                dev_rotate_head<VEC>(d, c0, c1, n0, n1, hd < nh ? gqo : gko, hr.of(hd) + j, H, acc);
            }
        }
        __syncthreads();   // the stage buffer is free again (next batch, or the sums)
    }
    // The two groups of a warp (lanes 0-15 and 16-31) folded, then the W warps' sums in shared memory.
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int e = 0; e < (int)VEC; e++) acc[kk][e] += __shfl_xor_sync(0xffffffffu, acc[kk][e], 16);
    float *red = reinterpret_cast<float *>(dev_stage);   // [4][W][H]
    if (wl < L)
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int e = 0; e < (int)VEC; e++) red[(kk * W + warp) * H + j + e] = acc[kk][e];
    __syncthreads();
    for (uint32_t o = tid; o < 4 * H; o += blockDim.x) {
        const uint32_t kk = o / H, w = o % H;
        float sum = 0.0f;
        for (uint32_t ww = 0; ww < W; ww++) sum += red[(kk * W + ww) * H + w];
        (kk < 2 ? gcos : gsin)[(size_t)r * D + (kk & 1) * H + w] = sum;
    }
}

// Groups a block for the staged kernel: as many stages as 16 groups need, the
// groups then spread evenly over them (rounded up to even: two groups a warp).
static uint32_t dev_staged_groups(uint32_t heads)
{
    const uint32_t stages = (heads + 15) / 16, g = (heads + stages - 1) / stages;
    return g + (g & 1);
}

// Shared memory of the staged kernel: the larger of a batch's head rows (both
// tensors) with the cos and sin rows, and the sums [4][W][H].
static size_t dev_staged_smem(uint32_t heads, uint32_t G)
{
    return std::max((size_t)(heads + 1) * 2 * 128 * 4, (size_t)4 * (G / 2) * 64 * 4);
}

template <bool EF>
static cudaError_t dev_staged_go(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const uint32_t heads = (uint32_t)(s.num_heads + s.num_kv_heads), G = dev_staged_groups(heads);
    const size_t smem = dev_staged_smem(heads, G);
    const int64_t all_rows = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len;
    if (s.head_dim != 128 || smem > 200 * 1024 || all_rows * 128 >= ((int64_t)1 << 31)) return cudaErrorInvalidValue;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    auto kern = G * 16 <= 224 ? dev_apply_staged<EF, 224, 5> : dev_apply_staged<EF, 256, 3>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) e = cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    if (e != cudaSuccess) return e;
    kern<<<(unsigned)rows, G * 16, smem, st>>>(s, (const float *)p->grad_q_out, (const float *)p->grad_k_out,
                                              (const float *)p->q, (const float *)p->k, (const float *)p->cos,
                                              (const float *)p->sin, (float *)p->grad_q, (float *)p->grad_k,
                                              (float *)p->grad_cos, (float *)p->grad_sin);
    return cudaGetLastError();
}

static cudaError_t dev_prefetch_go(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    constexpr int VEC = 4;
    const uint32_t H = (uint32_t)s.head_dim / 2, L = H / VEC;
    const int64_t all_rows = s.batch_size * (s.num_heads + s.num_kv_heads) * s.seq_len;
    if (H % VEC || L > 256 || 256 % L || all_rows * s.head_dim >= ((int64_t)1 << 31)) return cudaErrorInvalidValue;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    const uint32_t G = dev_split_groups(s, L, 1);   // the shipped kernel's groups ("even")
    dev_apply_prefetch<VEC><<<(unsigned)rows, G * L, (size_t)4 * G * H * sizeof(float), st>>>(
        s, (const float *)p->grad_q_out, (const float *)p->grad_k_out, (const float *)p->q, (const float *)p->k,
        (const float *)p->cos, (const float *)p->sin, (float *)p->grad_q, (float *)p->grad_k, (float *)p->grad_cos,
        (float *)p->grad_sin);
    return cudaGetLastError();
}

// ---- 11: pick --------------------------------------------------------------------------
// Blocks of the split kernel (G = 256/L groups, STREAM or not) resident on the
// whole GPU at once, from the occupancy API (0 if it cannot say).
template <bool STREAM>
static int64_t dev_split_wave(uint32_t H)
{
    int dev = 0, sms = 0, per_sm = 0;
    const uint32_t L = H / 4, G = 256 / L;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dev_apply_columns_split<float, float, 4, STREAM>, (int)(G * L),
                                                      (size_t)4 * G * H * sizeof(float)) != cudaSuccess)
        return 0;
    return (int64_t)sms * per_sm;
}

static cudaError_t dev_pick_go(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    const ropegrad_rope_apply_shape &s = p->shape;
    const int64_t rows = s.cos_sin_batch_stride ? s.batch_size * s.seq_len : s.seq_len;
    const uint32_t H = (uint32_t)s.head_dim / 2;
    if (s.head_dim == 128 && rows <= dev_split_wave<true>(H)) return dev_apply_backward_split(p, st, 2);    // stream
    if (s.head_dim == 128 && rows <= dev_split_wave<false>(H)) return dev_apply_backward_split(p, st, 0);   // split
    return rg_rope_apply_backward_launch(p, st);
}

// ---- every variant apply_floor times: 0-7 the split ones, 8-11 these, 12-19 the shipped
// staged kernel's launch and knobs (apply_backward_knobs.cuh) --------------------------------
static const char *const dev_apply_variant_names[] = {
    "split",        "even",       "stream", "even+stream", "split/2rows", "even/2rows", "stream/2rows", "even+stream/2rows",
    "prefetch",     "staged",     "staged+ef", "pick", "rg-staged", "rg-staged/smem=", "rg-staged/G-even",
    "knob warpcopy", "knob warpsum", "knob warpcopy+sum", "rg-staged/hd128", "knob hd128"};
constexpr int dev_apply_variant_count = (int)(sizeof dev_apply_variant_names / sizeof dev_apply_variant_names[0]);

static cudaError_t dev_apply_backward_variant(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st, int variant)
{
    if (p->shape.dtype != ROPEGRAD_F32 || p->shape.cos_sin_dtype != ROPEGRAD_F32 || !p->grad_cos) return cudaErrorInvalidValue;
    switch (variant) {
    case 8: return dev_prefetch_go(p, st);
    case 9: return dev_staged_go<false>(p, st);
    case 10: return dev_staged_go<true>(p, st);
    case 11: return dev_pick_go(p, st);
    default:
        if (variant >= 12) return dev_knob_variant(p, st, variant);   // InvalidValue past the list
        return variant >= 0 && variant < 8 ? dev_apply_backward_split(p, st, variant) : cudaErrorInvalidValue;
    }
}
