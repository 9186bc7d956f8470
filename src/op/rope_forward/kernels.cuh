/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernels of L1/011 (position ids -> cos_sin) and
// their launcher; L1/012's (freqs -> cos, sin) are src/op/cos_sin/kernels.cuh,
// made the same way. Self-contained with rope_math.cuh: `ropegrad
// export-solution` embeds this very file. The
// device math (range-reduced sin/cos, correctly rounded bf16) is rope_math.cuh.
//
// Both ops write far more than they read (011: 8 B in, 512 B out per row at
// head_dim 128; 012: 256 B in, 512 B out), and the halves j and j+H of a row
// are equal: each value is computed once and stored twice. A thread computes
// VPT consecutive frequencies (1, 2 or 4 for 011; 2 or 4 for 012, chosen by
// size: dev/rope_forward/NOTES.md) and writes whole runs of them. Each value: the float
// sin/cos (rg_sincos_core), the test of whether its bf16 rounding is certain
// (rg_sincos_scaled), one cvt per (cos, sin) pair; the thread then redoes the
// few uncertain values in double inline (one branch per thread; the test flags
// 8.9e-5 of the pairs over every float argument at scale 1, 2.3e-4 at 0.7071:
// results/sincos-bound.txt), and sends the whole thread out of line only
// for an argument beyond 4e6 rad, a NaN/Inf or a huge scale. scale == 1 (the common case) is
// compiled apart. 011 from RG_FWD_LOOP_ROWS rows: warps looping over rows,
// the uncertain values redone after the loop (rg_rope_forward_loop). A general
// kernel (one thread per frequency, scalar stores) takes any even head_dim and
// any alignment.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "ropegrad.h"
#include "rope_math.cuh"

// The out-of-line path of a thread with an argument beyond the fast range (or
// a huge scale): every value in double (rg_sincos_double_far where needed). 011:
// VPT (cos | sin << 16) words at o and o + H words.
template <int VPT>
static __device__ __noinline__ void rg_rope_forward_far(const int64_t *pos, const float *inv, float scale, uint32_t *o,
                                                        int H)
{
    const float p = (float)*pos;
    for (int i = 0; i < VPT; i++) {
        const uint32_t w = rg_sincos_bf16_double(p * inv[i], scale);
        o[i] = w;
        o[i + H] = w;
    }
}

// The common path of VPT values at position p: their words (w), whether an
// argument or the scale leaves the fast range (far), and the mask of values
// whose bf16 rounding the test leaves uncertain (returned).
template <int VPT, bool S1>
static __device__ __forceinline__ uint32_t rg_rope_forward_common(float p, const float *f, float scale,
                                                                  rg_wordvec<VPT> &w, bool &far)
{
    uint32_t amb = 0;
    far = !(fabsf(scale) <= 1.0e30f);
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        const float x = p * f[i];
        float vs, vc;
        if (rg_sincos_scaled<S1>(x, scale, &vs, &vc)) amb |= 1u << i;
        far |= !(fabsf(x) <= RG_SINCOS_FAST_MAX);
        w.w[i] = rg_pack_bf16x2(vc, vs);
    }
    return amb;
}

// One thread's VPT (cos | sin << 16) words for position p: false if an
// argument is beyond the fast range (or scale is huge), for the caller to take
// the out-of-line path; the uncertain roundings are redone here in double.
// When a thread has one value (011's small problems) the refinement decides
// each rounding by one compare against the bf16 midpoint next to the float
// value (rg_sincos_bf16_refine_side: a shorter chain); with more values per
// thread, keeping the floats alive for it costs registers and so occupancy on
// the large problems, and the values are redone from scratch in double
// (rg_sincos_bf16_scratch) (dev/rope_forward/NOTES.md, results/dev/
// forward-2026-12-01-run12.txt, probe-ops-2026-12-01-k14-fix.txt). 012's
// kernel: the same up to 2 values per thread.
template <int VPT, bool S1>
static __device__ __forceinline__ bool rg_rope_forward_words(float p, const float *f, float scale, rg_wordvec<VPT> &w)
{
    bool far;
    if constexpr (VPT == 1) {
        const float x = p * f[0];
        float vs, vc;
        const bool amb = rg_sincos_scaled<S1>(x, scale, &vs, &vc);
        far = !(fabsf(scale) <= 1.0e30f) || !(fabsf(x) <= RG_SINCOS_FAST_MAX);
        w.w[0] = rg_pack_bf16x2(vc, vs);
        if (far) return false;
        if (amb) w.w[0] = rg_sincos_bf16_refine_side<S1>(x, scale, vc, vs);
        return true;
    } else {
        const uint32_t amb = rg_rope_forward_common<VPT, S1>(p, f, scale, w, far);
        if (far) return false;
        if (amb) {
#pragma unroll
            for (int i = 0; i < VPT; i++)
                if (amb >> i & 1) w.w[i] = rg_sincos_bf16_scratch<S1>(p * f[i], scale);
        }
        return true;
    }
}

// 011, head_dim 128, pointers aligned to the vectors: 64/VPT threads per row;
// thread k covers j = VPT*k .. VPT*k+VPT-1 and writes their (cos, sin) pairs at
// j and at j+64 (2 stores of 4*VPT bytes). S1: scale == 1. rows*64/VPT < 2^31.
template <int VPT, bool S1>
static __global__ void __launch_bounds__(256) rg_rope_forward_vec(const int64_t *__restrict__ pos,
                                                                  const float *__restrict__ inv, float scale,
                                                                  uint32_t *__restrict__ out, int rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int t = blockIdx.x * 256 + threadIdx.x;
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    const float p = (float)__ldg(pos + r);
    float f[VPT];
    rg_load_floats<VPT>(inv + VPT * k, f);
    uint32_t *o = out + (size_t)r * (2 * H) + VPT * k;   // a row: 2*H words (cos | sin << 16)
    rg_wordvec<VPT> w;
    if (!rg_rope_forward_words<VPT, S1>(p, f, scale, w)) {
        rg_rope_forward_far<VPT>(pos + r, inv + VPT * k, scale, o, H);
        return;
    }
    rg_store_words<VPT>(o, w);
    rg_store_words<VPT>(o + H, w);
}

// 011's large problems (RG_FWD_LOOP_ROWS rows and more), head_dim 128, 4
// values per lane: a warp loops over RPW (<= 32) consecutive rows, two a step
// (16 lanes a row), with the positions loaded once, a lane each, before the
// loop and taken by shuffle; a grid of RG_FWD_LOOP_WPS warps per SM, so the
// stores stream out while later rows compute, with no second wave of blocks.
// Each step stores its words at once; a value the rounding test flags is only
// noted (a bit per value: 16 steps of 4) and redone in double after the loop,
// where its word is stored again. So the loop body is the common path alone,
// and a refinement delays no later row. Bit for bit rg_rope_forward_vec's
// output (dev/rope_forward/dev_forward.cu checks it, as version 19); faster on 011's three
// largest workloads (dev/rope_forward/NOTES.md).
template <bool S1>
static __global__ void __launch_bounds__(256) rg_rope_forward_loop(const int64_t *__restrict__ pos,
                                                                   const float *__restrict__ inv, float scale,
                                                                   uint32_t *__restrict__ out, int rows, int rpw)
{
    constexpr int VPT = 4, H = 64, RPS = 2;
    const int lane = threadIdx.x & 31, k = lane & 15, sub = lane >> 4;
    const int r0 = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * rpw;
    if (r0 >= rows) return;   // whole warps: the loop shuffles
    const int rend = min(r0 + rpw, rows);
    float f[VPT];
    rg_load_floats<VPT>(inv + VPT * k, f);
    const float pl = r0 + lane < rend ? (float)__ldg(pos + r0 + lane) : 0.0f;
    uint64_t defer = 0;
    int step = 0;
#pragma unroll 1
    for (int r = r0; r < rend; r += RPS, step++) {
        const int rr = r + sub;
        const float p = __shfl_sync(0xffffffffu, pl, (rr - r0) & 31);
        if (rr >= rend) continue;
        uint32_t *o = out + (size_t)rr * (2 * H) + VPT * k;
        rg_wordvec<VPT> w;
        bool far;
        const uint32_t amb = rg_rope_forward_common<VPT, S1>(p, f, scale, w, far);
        if (far) {
            rg_rope_forward_far<VPT>(pos + rr, inv + VPT * k, scale, o, H);
            continue;
        }
        rg_store_words<VPT>(o, w);
        rg_store_words<VPT>(o + H, w);
        defer |= (uint64_t)amb << (step * VPT);
    }
#pragma unroll 1
    while (defer) {
        const int b = __ffsll((long long)defer) - 1;
        defer &= defer - 1;
        const int rr = r0 + (b / VPT) * RPS + sub, i = b % VPT;
        const float fi = i == 0 ? f[0] : i == 1 ? f[1] : i == 2 ? f[2] : f[3];
        const uint32_t wd = rg_sincos_bf16_scratch<S1>((float)__ldg(pos + rr) * fi, scale);
        uint32_t *o = out + (size_t)rr * (2 * H) + VPT * k + i;
        o[0] = wd;
        o[H] = wd;
    }
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

// Values per thread by size, from dev/rope_forward/dev_forward.cu on the H200 (one run,
// results/dev/): the small problems are latency-bound (fewer values per
// thread: a shorter chain), the large ones issue-bound (more per thread: less
// per-thread overhead).
// RG_FWD_VPT2_ROWS, RG_FWD_VPT4_ROWS: the row counts from which the values
// per thread step up (1 -> 2 -> 4).
#define RG_FWD_VPT2_ROWS 4096
#define RG_FWD_VPT4_ROWS 24576
// RG_FWD_LOOP_ROWS: from how many rows 011 takes rg_rope_forward_loop, with
// RG_FWD_LOOP_WPS warps per SM.
#define RG_FWD_LOOP_ROWS 12288
#define RG_FWD_LOOP_WPS 16
static inline int rg_rope_forward_vpt(int64_t rows)
{
    return rows < RG_FWD_VPT2_ROWS ? 1 : rows < RG_FWD_VPT4_ROWS ? 2 : 4;
}

template <int VPT>
static void rg_rope_forward_go(const ropegrad_rope_forward_problem *p, int rows, cudaStream_t st)
{
    const unsigned grid = (unsigned)(((int64_t)rows * (64 / VPT) + 255) / 256);
    uint32_t *out = (uint32_t *)p->cos_sin;
    if (p->attention_scaling == 1.0f)
        rg_rope_forward_vec<VPT, true><<<grid, 256, 0, st>>>(p->position_ids, p->inv_freq, 1.0f, out, rows);
    else
        rg_rope_forward_vec<VPT, false><<<grid, 256, 0, st>>>(p->position_ids, p->inv_freq, p->attention_scaling, out,
                                                              rows);
}

// The vector kernels' conditions: head_dim 128, 32-bit thread indices, and
// pointers aligned to their widest access.
#define RG_FWD_MAX_ROWS (INT32_MAX / 64)

// Launchers: the problem is validated by the caller.
static cudaError_t rg_rope_forward_launch(const ropegrad_rope_forward_problem *p, cudaStream_t st)
{
    const int64_t rows = p->batch_size * p->seq_len;
    const int H = (int)(p->head_dim / 2);
    const int vpt = rg_rope_forward_vpt(rows);
    if (H == 64 && rows >= RG_FWD_LOOP_ROWS && rows <= RG_FWD_MAX_ROWS && rg_aligned(p->inv_freq, 16) &&
        rg_aligned(p->cos_sin, 16)) {
        int dev = 0, sms = 0;
        cudaError_t e = cudaGetDevice(&dev);
        if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (e != cudaSuccess) return e;
        const int64_t warps_want = (int64_t)sms * RG_FWD_LOOP_WPS;
        int64_t rpw = (rows + warps_want - 1) / warps_want;
        rpw = rpw < 2 ? 2 : rpw > 32 ? 32 : (rpw + 1) / 2 * 2;   // whole steps of two rows, a position per lane
        const int64_t warps = (rows + rpw - 1) / rpw;
        const unsigned grid = (unsigned)((warps * 32 + 255) / 256);
        uint32_t *out = (uint32_t *)p->cos_sin;
        if (p->attention_scaling == 1.0f)
            rg_rope_forward_loop<true><<<grid, 256, 0, st>>>(p->position_ids, p->inv_freq, 1.0f, out, (int)rows, (int)rpw);
        else
            rg_rope_forward_loop<false><<<grid, 256, 0, st>>>(p->position_ids, p->inv_freq, p->attention_scaling, out,
                                                             (int)rows, (int)rpw);
    } else if (H == 64 && rows <= RG_FWD_MAX_ROWS && rg_aligned(p->inv_freq, 4 * vpt) && rg_aligned(p->cos_sin, 4 * vpt)) {
        if (vpt == 1) rg_rope_forward_go<1>(p, (int)rows, st);
        else if (vpt == 2) rg_rope_forward_go<2>(p, (int)rows, st);
        else rg_rope_forward_go<4>(p, (int)rows, st);
    } else {
        const int64_t n = rows * H;
        rg_rope_forward_any<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(p->position_ids, p->inv_freq,
                                                                        p->attention_scaling, p->cos_sin, rows, H);
    }
    return cudaGetLastError();
}

