/* SPDX-License-Identifier: Apache-2.0 */
// apply_backward_knobs.cuh -- why 068's staged kernel as shipped before
// h-068warp (rg_apply_columns_staged with group copies and group sums,
// src/op/rope_apply/kernels.cuh then) measured slower than its dev copy
// (bench/dev/apply_backward_staged.cuh variant 9) in
// bench/results/dev/12-shipped-068-088-variants/apply-floor-068.txt: 1.117x
// the flat floor on the geomean against 1.079x. By the launcher's own rules
// (bench/NOTES.md "068: the shipped staged kernel against its dev copy") the
// shipped launcher picks the staged kernel on 15 of the 16 workloads, so the
// gap is in what differed between the two kernels and their launches:
//  - the launch: the shipped launcher sets the kernel's dynamic shared memory
//    limit to the device's opt-in maximum (the dev one to what it uses), and
//    its group count G was not rounded to even (72 heads: 15 groups, 240
//    threads, the last warp half empty; the dev kernel: 16, 256);
//  - the copies: the old shipped kernel spread a stage's rows over the groups
//    (a row copied by one group's 16 lanes, two 16-byte chunks a lane:
//    dev_knob_issue_by_group below), the dev kernel over the warps (a warp a
//    row, one chunk a lane);
//  - the sums: the old shipped kernel added [4][G][H] in shared memory, every
//    group's sums stored as 16 scalar stores a thread (lanes 4 words apart:
//    bank conflicts) and each output read back G times (14 at 40 heads); the
//    dev kernel folds the two groups of a warp by one shuffle and adds W =
//    G/2 warps' sums (7 reads an output), on the block's tail, while its
//    shared memory is still held.
// Variant 19 (warp copies, warp sums, head_dim 128 at compile time) measured
// fastest of these (bench/NOTES.md "Measured: 088's heads2 ships, ...") and
// is now the shipped kernel (bench/NOTES.md "068: variant 19 as the shipped
// kernel"): kernels.cuh's rg_apply_stage_copy and rg_apply_sum_warps are
// the knobs' warp copies and warp sums, and its block rounds G to whole warps
// (even at head_dim 128). The old group copies stay here as dev code
// (dev_knob_issue_by_group; the group sums, rg_apply_sum_groups, are still
// the split kernel's), so that dev_knob_staged<..., false, false, HD> is the
// kernel shipped before.
// bench/apply_floor.cu times each alone (variants 12-20 of its 068 list):
//  12 rg-staged           the shipped kernel and block, launched directly
//                         (always staged: the launcher minus its pick); since
//                         h-068warp the warp-copy, warp-sum kernel (HD 0);
//  13 rg-staged/smem=     12 with the dynamic shared memory limit set to what
//                         the launch uses (the dev launcher's);
//  14 rg-staged/G-even    12 with G rounded up to even (the dev rule); since
//                         h-068warp the shipped block rounds G to whole warps,
//                         even at head_dim 128, so this is 12's launch again;
//  15 knob warpcopy       dev_knob_staged (G even, as 14, whole warps): the
//                         old shipped kernel with the dev kernel's copies (a
//                         warp a row), the old shipped (group) sums;
//  16 knob warpsum        the old group copies, the dev kernel's (warp) sums;
//  17 knob warpcopy+sum   both: the dev kernel's work in the shipped kernel's
//                         generic form (should time as variant 9; measured
//                         1.107x the floor against 9's 1.085x, 2026-12-02);
//                         since h-068warp the shipped kernel's code at HD 0,
//                         as 12;
//  18 rg-staged/hd128     12 with head_dim a compile-time constant (the dev
//                         copy's D = 128: its divisions by L, strides and
//                         loops then constants); since h-068warp the shipped
//                         kernel's HD 128 instance, what the launcher runs on
//                         the suite (where it picks the staged kernel);
//  19 knob hd128          17 with head_dim 128 at compile time: the kernel
//                         h-068warp ships, through the knobs (a check: it
//                         should time as 18);
//  20 old staged/hd128    the kernel shipped before h-068warp, with its block
//                         (G not rounded) and HD 128: dev_knob_staged with
//                         group copies and group sums, what "ropegrad" timed
//                         in bench/results/ops/apply-floor-068.txt (where the
//                         launcher picked the staged kernel).
// Any dtype pair and head_dim 8..256 a power of two (the shipped kernel's
// rg_apply_staged_applies; else cudaErrorInvalidValue); the apply_floor suite
// is fp32, head_dim 128.
#pragma once

#include "rope_apply/kernels.cuh"

// The old shipped kernel's copies of a stage (rg_apply_stage_issue until
// h-068warp): group g's share, as one commit group: the stage's rows g, g+G,
// ... (row 2u the gradient row of its head u, 2u+1 that head's input row; the
// first stage adds the cos and the sin row), its L lanes over a row's 16-byte
// chunks. buf holds head hd's two rows at chunk 2*hd*RC, then cos, then sin.
template <typename T, typename C>
static __device__ __forceinline__ void dev_knob_issue_by_group(uint4 *buf, const rg_apply_head_rows &hr, const T *gq,
                                                               const T *gk, const T *q, const T *k, const C *cos_row,
                                                               const C *sin_row, uint32_t D, uint32_t heads, uint32_t h0,
                                                               uint32_t G, uint32_t g, uint32_t lane, uint32_t L)
{
    const uint32_t RC = D * (uint32_t)sizeof(T) / 16, CC = D * (uint32_t)sizeof(C) / 16;
    const uint32_t head_rows = 2 * (min(heads, h0 + G) - h0), rows = head_rows + (h0 == 0 ? 2 : 0);
    for (uint32_t row = g; row < rows; row += G) {
        if (row >= head_rows) {
            const uint4 *src = reinterpret_cast<const uint4 *>(row == head_rows ? cos_row : sin_row);
            uint4 *dst = buf + 2 * heads * RC + (row - head_rows) * CC;
            for (uint32_t c = lane; c < CC; c += L) rg_apply_cp16(dst + c, src + c);
            continue;
        }
        const uint32_t hd = h0 + row / 2;
        const T *x = (row & 1) ? (hd < hr.nh ? q : k) : (hd < hr.nh ? gq : gk);
        const uint4 *src = reinterpret_cast<const uint4 *>(x + hr.of(hd));
        uint4 *dst = buf + (2 * hd + (row & 1)) * RC;
        for (uint32_t c = lane; c < RC; c += L) rg_apply_cp16(dst + c, src + c);
    }
    rg_apply_cp_commit();
}

// A stage's copies: the shipped rg_apply_stage_copy (a warp a row) when
// WARP_COPY, else the old dev_knob_issue_by_group (rows over groups).
template <typename T, typename C, bool WARP_COPY>
static __device__ __forceinline__ void dev_knob_issue(uint4 *buf, const rg_apply_head_rows &hr, const T *gq, const T *gk,
                                                      const T *q, const T *k, const C *cos_row, const C *sin_row, uint32_t D,
                                                      uint32_t heads, uint32_t h0, uint32_t G, uint32_t g, uint32_t lane,
                                                      uint32_t L)
{
    if constexpr (!WARP_COPY) {
        dev_knob_issue_by_group<T, C>(buf, hr, gq, gk, q, k, cos_row, sin_row, D, heads, h0, G, g, lane, L);
    } else {
        rg_apply_stage_copy<T, C>(buf, hr, gq, gk, q, k, cos_row, sin_row, D, heads, h0, G);
    }
}

// The block's sums: the shipped rg_apply_sum_warps when WARP_SUM, else the
// group sums (rg_apply_sum_groups: the old shipped kernel's, still the split
// kernel's).
template <typename C, int VEC, bool WARP_SUM>
static __device__ __forceinline__ void dev_knob_sums(float *red, float (&acc)[4][VEC], uint32_t G, uint32_t g, uint32_t j,
                                                     uint32_t H, uint32_t L, uint32_t r, C *__restrict__ gcos,
                                                     C *__restrict__ gsin)
{
    if constexpr (!WARP_SUM) {
        rg_apply_sum_groups<C, VEC>(red, acc, G, g, j, H, r, gcos, gsin);
    } else {
        rg_apply_sum_warps<C, VEC>(red, acc, j, H, L, r, gcos, gsin);
    }
}

// The staged kernel with the two knobs (and its HD); the rest is
// rg_apply_columns_staged's code. <true, true> is the shipped kernel (since
// h-068warp), <false, false> the one shipped before.
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

// The blocks the variants launch with: the shipped launcher's
// (rg_apply_staged_block_of: G rounded to whole warps), that with G rounded
// up to even (variant 14's dev rule; the same block at head_dim 128 and below),
// or the rule shipped before h-068warp (G not rounded, variant 20).
enum dev_knob_rule { DEV_KNOB_SHIPPED, DEV_KNOB_EVEN, DEV_KNOB_OLD };

// The shared memory of the group sums [4][G][H] (rg_apply_sum_groups), which
// the shipped block (sized for the warps' sums) may lack.
static void dev_knob_group_sums(const ropegrad_rope_apply_shape &s, rg_apply_staged_block *blk)
{
    const size_t sums = (size_t)4 * blk->G * (size_t)(s.head_dim / 2) * sizeof(float);
    blk->smem = blk->smem > sums ? blk->smem : sums;
}

// The block for p under `rule`; false where the staged kernel does not apply
// (rg_apply_staged_applies, the shipped conditions, for every rule).
template <typename T, typename C>
static bool dev_knob_block(const ropegrad_rope_apply_backward_problem *p, dev_knob_rule rule, rg_apply_staged_block *blk)
{
    int dev = 0, smem_max = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        !rg_apply_staged_applies<T, C>(p, smem_max, blk))
        return false;
    if (rule == DEV_KNOB_EVEN && blk->G % 2) {
        blk->G += 1;
        dev_knob_group_sums(p->shape, blk);
    }
    if (rule == DEV_KNOB_OLD) {   // the old rg_apply_staged_block_of: heads spread evenly over the stages' groups
        const int64_t heads = p->shape.num_heads + p->shape.num_kv_heads, most = 256 / blk->L;
        const int64_t stages = (heads + most - 1) / most;
        blk->G = (uint32_t)((heads + stages - 1) / stages);
        blk->smem = (size_t)heads * 2 * (size_t)p->shape.head_dim * sizeof(T) + 2 * (size_t)p->shape.head_dim * sizeof(C);
        dev_knob_group_sums(p->shape, blk);
    }
    return blk->smem <= (size_t)smem_max;
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
static cudaError_t dev_shipped_staged_go(const ropegrad_rope_apply_backward_problem *p, bool exact_smem, dev_knob_rule rule,
                                         cudaStream_t st)
{
    rg_apply_staged_block blk;
    if (!dev_knob_block<T, C>(p, rule, &blk) || (HD && p->shape.head_dim != HD)) return cudaErrorInvalidValue;
    if (blk.G * blk.L <= 224)
        return dev_knob_launch<T, C>(rg_apply_columns_staged<T, C, 224, 5, HD>, p, blk, exact_smem, st);
    return dev_knob_launch<T, C>(rg_apply_columns_staged<T, C, 256, 3, HD>, p, blk, exact_smem, st);
}

// Variants 15-17, 19 and 20: dev_knob_staged with the shipped launch
// attributes; the shipped block (whole warps: a warp's copies and shuffles
// need all 32 lanes; G even at head_dim 128, as variant 14's), or the old one
// (variant 20: group copies and sums only), with room for the group sums
// where they are asked for.
template <typename T, typename C, bool WARP_COPY, bool WARP_SUM, int HD = 0>
static cudaError_t dev_knob_staged_go(const ropegrad_rope_apply_backward_problem *p, dev_knob_rule rule, cudaStream_t st)
{
    rg_apply_staged_block blk;
    const bool warps = WARP_COPY || WARP_SUM;
    if (!dev_knob_block<T, C>(p, rule, &blk) || (warps && (blk.G * blk.L) % 32) || (HD && p->shape.head_dim != HD))
        return cudaErrorInvalidValue;
    if (!WARP_SUM) dev_knob_group_sums(p->shape, &blk);
    if (blk.G * blk.L <= 224)
        return dev_knob_launch<T, C>(dev_knob_staged<T, C, 224, 5, WARP_COPY, WARP_SUM, HD>, p, blk, false, st);
    return dev_knob_launch<T, C>(dev_knob_staged<T, C, 256, 3, WARP_COPY, WARP_SUM, HD>, p, blk, false, st);
}

// Variant v (12-20) on fp32 problems (apply_floor's suite).
static cudaError_t dev_knob_variant(const ropegrad_rope_apply_backward_problem *p, cudaStream_t st, int v)
{
    switch (v) {
    case 12: return dev_shipped_staged_go<float, float>(p, false, DEV_KNOB_SHIPPED, st);
    case 13: return dev_shipped_staged_go<float, float>(p, true, DEV_KNOB_SHIPPED, st);
    case 14: return dev_shipped_staged_go<float, float>(p, false, DEV_KNOB_EVEN, st);
    case 15: return dev_knob_staged_go<float, float, true, false>(p, DEV_KNOB_SHIPPED, st);
    case 16: return dev_knob_staged_go<float, float, false, true>(p, DEV_KNOB_SHIPPED, st);
    case 17: return dev_knob_staged_go<float, float, true, true>(p, DEV_KNOB_SHIPPED, st);
    case 18: return dev_shipped_staged_go<float, float, 128>(p, false, DEV_KNOB_SHIPPED, st);
    case 19: return dev_knob_staged_go<float, float, true, true, 128>(p, DEV_KNOB_SHIPPED, st);
    case 20: return dev_knob_staged_go<float, float, false, false, 128>(p, DEV_KNOB_OLD, st);
    default: return cudaErrorInvalidValue;
    }
}
