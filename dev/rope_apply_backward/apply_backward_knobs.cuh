/* SPDX-License-Identifier: Apache-2.0 */
// apply_backward_knobs.cuh -- why 068's shipped staged kernel
// (rg_apply_columns_staged, src/op/rope_apply_backward/kernels.cuh) measured slower
// than its dev copy (dev/rope_apply_backward/apply_backward_staged.cuh variant 9) in
// results/dev/12-shipped-068-088-variants/apply-floor-068.txt: 1.117x
// the flat floor on the geomean against 1.079x. By the launcher's own rules
// (NOTES.md "068: the shipped staged kernel against its dev copy") the
// shipped launcher picks the staged kernel on 15 of the 16 workloads, so the
// gap is in what differs between the two kernels and their launches:
//  - the launch: the shipped launcher sets the kernel's dynamic shared memory
//    limit to the device's opt-in maximum (the dev one to what it uses), and
//    its group count G is not rounded to even (72 heads: 15 groups, 240
//    threads, the last warp half empty; the dev kernel: 16, 256);
//  - the copies: the shipped kernel spreads a stage's rows over the groups (a
//    row is copied by one group's 16 lanes, two 16-byte chunks a lane), the
//    dev kernel over the warps (a warp a row, one chunk a lane);
//  - the sums: the shipped kernel adds [4][G][H] in shared memory, every
//    group's sums stored as 16 scalar stores a thread (lanes 4 words apart:
//    bank conflicts) and each output read back G times (14 at 40 heads); the
//    dev kernel folds the two groups of a warp by one shuffle and adds W =
//    G/2 warps' sums (7 reads an output), on the block's tail, while its
//    shared memory is still held.
// dev/rope_apply/apply_floor.cu times each alone (variants 12-17 of its 068 list):
//  12 rg-staged           the shipped kernel and block, launched directly
//                         (always staged: the launcher minus its pick);
//  13 rg-staged/smem=     12 with the dynamic shared memory limit set to what
//                         the launch uses (the dev launcher's);
//  14 rg-staged/G-even    12 with G rounded up to even (the dev rule);
//  15 knob warpcopy       the kernel below (G even, as 14, whole warps): the
//                         shipped kernel with the dev kernel's copies (a warp
//                         a row), the shipped sums;
//  16 knob warpsum        the shipped copies, the dev kernel's sums;
//  17 knob warpcopy+sum   both: the dev kernel's work in the shipped kernel's
//                         generic form (should time as variant 9; measured
//                         1.107x the floor against 9's 1.085x, 2026-12-02);
//  18 rg-staged/hd128     12 with head_dim a compile-time constant (the dev
//                         copy's D = 128: its divisions by L, strides and
//                         loops then constants);
//  19 knob hd128          17 with head_dim 128 at compile time.
// Any dtype pair and head_dim a multiple of 8 with H/4 lanes dividing 32 where
// the warp sums are asked for (else cudaErrorInvalidValue); the apply_floor
// suite is fp32, head_dim 128.
#pragma once

#include "rope_apply_backward/kernels.cuh"

// The dev kernel's copies of a stage: its rows spread over the warps, a
// warp's lanes over a row's 16-byte chunks (whole warps: the launcher checks).
template <typename T, typename C>
static __device__ __forceinline__ void dev_knob_issue_by_warp(uint4 *buf, const rg_apply_head_rows &hr, const T *gq,
                                                              const T *gk, const T *q, const T *k, const C *cos_row,
                                                              const C *sin_row, uint32_t D, uint32_t heads, uint32_t h0,
                                                              uint32_t G)
{
    const uint32_t RC = D * (uint32_t)sizeof(T) / 16, CC = D * (uint32_t)sizeof(C) / 16;
    const uint32_t head_rows = 2 * (min(heads, h0 + G) - h0), rows = head_rows + (h0 == 0 ? 2 : 0);
    const uint32_t warp = threadIdx.x / 32, W = (blockDim.x + 31) / 32, wl = threadIdx.x % 32;
    for (uint32_t row = warp; row < rows; row += W) {
        const bool table = row >= head_rows;
        const uint32_t hd = h0 + row / 2, chunks = table ? CC : RC;
        const T *x = (row & 1) ? (hd < hr.nh ? q : k) : (hd < hr.nh ? gq : gk);
        const uint4 *src = table ? reinterpret_cast<const uint4 *>(row == head_rows ? cos_row : sin_row)
                                 : reinterpret_cast<const uint4 *>(x + hr.of(hd));
        uint4 *dst = table ? buf + 2 * heads * RC + (row - head_rows) * CC : buf + (2 * hd + (row & 1)) * RC;
        for (uint32_t c = wl; c < chunks; c += 32) rg_apply_cp16(dst + c, src + c);
    }
    rg_apply_cp_commit();
}

// A stage's copies: dev_knob_issue_by_warp when WARP_COPY, else the shipped
// rg_apply_stage_issue (rows over groups).
template <typename T, typename C, bool WARP_COPY>
static __device__ __forceinline__ void dev_knob_issue(uint4 *buf, const rg_apply_head_rows &hr, const T *gq, const T *gk,
                                                      const T *q, const T *k, const C *cos_row, const C *sin_row, uint32_t D,
                                                      uint32_t heads, uint32_t h0, uint32_t G, uint32_t g, uint32_t lane,
                                                      uint32_t L)
{
    if constexpr (!WARP_COPY) {
        rg_apply_stage_issue<T, C>(buf, hr, gq, gk, q, k, cos_row, sin_row, D, heads, h0, G, g, lane, L);
    } else {
        dev_knob_issue_by_warp<T, C>(buf, hr, gq, gk, q, k, cos_row, sin_row, D, heads, h0, G);
    }
}

// The dev kernel's sums: the groups of a warp (32/L of them) folded by
// shuffles, then the warps' sums [4][W][H] added in warp order; needs 32 % L
// == 0 and whole warps (the launcher checks).
template <typename C, int VEC>
static __device__ __forceinline__ void dev_knob_sums_by_warp(float *red, float (&acc)[4][VEC], uint32_t j, uint32_t H,
                                                             uint32_t L, uint32_t r, C *__restrict__ gcos, C *__restrict__ gsin)
{
    for (uint32_t o = L; o < 32; o *= 2)
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int e = 0; e < VEC; e++) acc[kk][e] += __shfl_xor_sync(0xffffffffu, acc[kk][e], o);
    const uint32_t warp = threadIdx.x / 32, W = blockDim.x / 32;
    if (threadIdx.x % 32 < L)
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int e = 0; e < VEC; e++) red[(kk * W + warp) * H + j + e] = acc[kk][e];
    __syncthreads();
    for (uint32_t o = threadIdx.x; o < 4 * H; o += blockDim.x) {
        const uint32_t kk = o / H, w = o - kk * H;
        float sum = 0.0f;
        for (uint32_t ww = 0; ww < W; ww++) sum += red[(kk * W + ww) * H + w];
        rg_apply_st(kk < 2 ? gcos : gsin, (int64_t)r * (2 * H) + (kk & 1) * H + w, sum);
    }
}

// The block's sums: dev_knob_sums_by_warp when WARP_SUM, else the shipped
// rg_apply_sum_groups.
template <typename C, int VEC, bool WARP_SUM>
static __device__ __forceinline__ void dev_knob_sums(float *red, float (&acc)[4][VEC], uint32_t G, uint32_t g, uint32_t j,
                                                     uint32_t H, uint32_t L, uint32_t r, C *__restrict__ gcos,
                                                     C *__restrict__ gsin)
{
    if constexpr (!WARP_SUM) {
        rg_apply_sum_groups<C, VEC>(red, acc, G, g, j, H, r, gcos, gsin);
    } else {
        dev_knob_sums_by_warp<C, VEC>(red, acc, j, H, L, r, gcos, gsin);
    }
}

// rg_apply_columns_staged with the two knobs (and its HD); the rest is its code.
template <typename T, typename C, int MAXT, int MINB, bool WARP_COPY, bool WARP_SUM, int HD = 0>
__global__ void __launch_bounds__(MAXT, MINB)
    dev_knob_staged(ropegrad_rope_apply_shape s, const T *gq, const T *gk, const T *q, const T *k,
                    const C *__restrict__ cos, const C *__restrict__ sin, T *gqo, T *gko, C *__restrict__ gcos,
                    C *__restrict__ gsin)
{
    constexpr int VEC = 4;
    extern __shared__ uint4 dev_knob_buf[];
    const uint32_t D = HD ? (uint32_t)HD : (uint32_t)s.head_dim, H = D / 2, L = H / VEC, G = blockDim.x / L, S = (uint32_t)s.seq_len;
    const uint32_t lane = threadIdx.x % L, g = threadIdx.x / L, j = lane * VEC, r = blockIdx.x;
    const uint32_t cs_stride = (uint32_t)s.cos_sin_batch_stride, nh = (uint32_t)s.num_heads;
    const uint32_t heads = nh + (uint32_t)s.num_kv_heads, si = r % S, stages = (heads + G - 1) / G;
    const uint32_t b0 = cs_stride ? r / S : 0, b1 = cs_stride ? b0 + 1 : (uint32_t)s.batch_size;
    const T *rows = reinterpret_cast<const T *>(dev_knob_buf);
    const C *cs = reinterpret_cast<const C *>(rows + 2 * heads * D);
    float acc[4][VEC] = {};
    for (uint32_t b = b0; b < b1; b++) {
        const rg_apply_head_rows hr = rg_apply_rows_at(s, b, si);
        const uint32_t co = b * cs_stride + si * D;
        for (uint32_t st = 0; st < stages; st++)
            dev_knob_issue<T, C, WARP_COPY>(dev_knob_buf, hr, gq, gk, q, k, cos + co, sin + co, D, heads, st * G, G, g,
                                            lane, L);
        for (uint32_t st = 0; st < stages; st++) {
            rg_apply_cp_wait(stages - 1 - st);
            __syncthreads();
            const uint32_t hd = st * G + g;
            if (hd >= heads) continue;
            float c0[VEC], c1[VEC], n0[VEC], n1[VEC], g0[VEC], g1[VEC], x0[VEC], x1[VEC], o0[VEC], o1[VEC];
            rg_apply_ldv<C, VEC>(cs, j, c0);
            rg_apply_ldv<C, VEC>(cs, j + H, c1);
            rg_apply_ldv<C, VEC>(cs, D + j, n0);
            rg_apply_ldv<C, VEC>(cs, D + j + H, n1);
            const T *row = rows + 2 * hd * D;
            rg_apply_ldv<T, VEC>(row, j, g0);
            rg_apply_ldv<T, VEC>(row, j + H, g1);
            rg_apply_ldv<T, VEC>(row, D + j, x0);
            rg_apply_ldv<T, VEC>(row, D + j + H, x1);
            rg_apply_grad_vec<VEC>(g0, g1, x0, x1, c0, c1, n0, n1, o0, o1, acc);
            T *gx = hd < nh ? gqo : gko;
            const uint32_t off = hr.of(hd) + j;
            rg_apply_stv<T, VEC>(gx, off, o0);
            rg_apply_stv<T, VEC>(gx, off + H, o1);
        }
        __syncthreads();
    }
    dev_knob_sums<C, VEC, WARP_SUM>(reinterpret_cast<float *>(dev_knob_buf), acc, G, g, j, H, L, r, gcos, gsin);
}

// The shipped launcher's block for p (rg_apply_staged_block_of), with G
// rounded up to even when `even` (and the shared memory for it); false where
// the staged kernel does not apply (rg_apply_staged_applies).
template <typename T, typename C>
static bool dev_knob_block(const ropegrad_rope_apply_backward_problem *p, bool even, rg_apply_staged_block *blk)
{
    int dev = 0, smem_max = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        !rg_apply_staged_applies<T, C>(p, smem_max, blk))
        return false;
    if (even && blk->G % 2) {
        blk->G += 1;
        const size_t sums = (size_t)4 * blk->G * (p->shape.head_dim / 2) * sizeof(float);
        blk->smem = blk->smem > sums ? blk->smem : sums;
    }
    return true;
}

// Launches kernel `kern` on p's rows with block blk: its dynamic shared memory
// limit set to the device's opt-in maximum (the shipped launcher's) or to
// blk.smem (EXACT: the dev launcher's), the largest carveout.
template <typename T, typename C, typename K>
static cudaError_t dev_knob_launch(K kern, const ropegrad_rope_apply_backward_problem *p, const rg_apply_staged_block &blk,
                                   bool exact, cudaStream_t st)
{
    int dev = 0, smem_max = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess && blk.smem > (size_t)smem_max) e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, exact ? (int)blk.smem : smem_max);
    if (e == cudaSuccess) e = cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    if (e != cudaSuccess) return e;
    kern<<<(unsigned)rg_apply_cs_rows_of(p->shape), blk.G * blk.L, blk.smem, st>>>(
        p->shape, (const T *)p->grad_q_out, (const T *)p->grad_k_out, (const T *)p->q, (const T *)p->k, (const C *)p->cos,
        (const C *)p->sin, (T *)p->grad_q, (T *)p->grad_k, (C *)p->grad_cos, (C *)p->grad_sin);
    return cudaGetLastError();
}

// Variants 12-14 and 18: the shipped kernel (launch bounds as its launcher
// picks them; HD 128: head_dim a compile-time constant, the dev copy's).
template <typename T, typename C, int HD = 0>
static cudaError_t dev_shipped_staged_go(const ropegrad_rope_apply_backward_problem *p, bool exact_smem, bool even,
                                         cudaStream_t st)
{
    rg_apply_staged_block blk;
    if (!dev_knob_block<T, C>(p, even, &blk) || (HD && p->shape.head_dim != HD)) return cudaErrorInvalidValue;
    if (blk.G * blk.L <= 224)
        return dev_knob_launch<T, C>(rg_apply_columns_staged<T, C, 224, 5, HD>, p, blk, exact_smem, st);
    return dev_knob_launch<T, C>(rg_apply_columns_staged<T, C, 256, 3, HD>, p, blk, exact_smem, st);
}

// Variants 15-17 and 19: dev_knob_staged, G even (so whole warps: a warp's
// copies and shuffles need all 32 lanes), the shipped launch attributes.
template <typename T, typename C, bool WARP_COPY, bool WARP_SUM, int HD = 0>
static cudaError_t dev_knob_staged_go(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st)
{
    rg_apply_staged_block blk;
    if (!dev_knob_block<T, C>(p, true, &blk) || (blk.G * blk.L) % 32 || (WARP_SUM && 32 % blk.L) ||
        (HD && p->shape.head_dim != HD))
        return cudaErrorInvalidValue;
    if (blk.G * blk.L <= 224)
        return dev_knob_launch<T, C>(dev_knob_staged<T, C, 224, 5, WARP_COPY, WARP_SUM, HD>, p, blk, false, st);
    return dev_knob_launch<T, C>(dev_knob_staged<T, C, 256, 3, WARP_COPY, WARP_SUM, HD>, p, blk, false, st);
}

// Variant v (12-17) on fp32 problems (apply_floor's suite).
static cudaError_t dev_knob_variant(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st, int v)
{
    switch (v) {
    case 12: return dev_shipped_staged_go<float, float>(p, false, false, st);
    case 13: return dev_shipped_staged_go<float, float>(p, true, false, st);
    case 14: return dev_shipped_staged_go<float, float>(p, false, true, st);
    case 15: return dev_knob_staged_go<float, float, true, false>(p, st);
    case 16: return dev_knob_staged_go<float, float, false, true>(p, st);
    case 17: return dev_knob_staged_go<float, float, true, true>(p, st);
    case 18: return dev_shipped_staged_go<float, float, 128>(p, false, false, st);
    case 19: return dev_knob_staged_go<float, float, true, true, 128>(p, st);
    default: return cudaErrorInvalidValue;
    }
}
