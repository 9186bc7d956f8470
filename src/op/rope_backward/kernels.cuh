/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernel ropegrad ships for the 014 backward (version
// 14, "14-2d-ept4") and the three fallbacks its dispatch needs, with the launcher.
// Self-contained: the library compiles it through cuda.cu, and `ropegrad
// export-solution` embeds this very file in the SOL-ExecBench solution, so the
// kernel measured there is the kernel built here. The development versions are
// in dev/rope_backward/ with their measurements (NOTES.md).
//
// The op, with H = D/2, for every row r = b*S + s:
//   out[r] = scale * sum_{d<H} inv[b,d] * ((gs[d]+gs[d+H])*cos(e[d]) - (gc[d]+gc[d+H])*sin(e[d]))
//
// Two numbers first (H200, D = 128, bf16): a row moves 2*256 B of grads + 256 B
// of emb (first half only) + 4 B out = 772 B; the memory floor is rows*772 B over
// ~4.49 TB/s (measured streaming read). Arithmetic is 64 sincos per row, ~25
// instructions each: at 1.05e12 warp-instr/s that is ~1/3 of the memory time on
// the largest workload, so the big cases are bandwidth-bound if the loads are
// wide and plentiful, and the small ones (128 rows) are pure latency: one DRAM
// round trip, the launch, and the reduction.
//
// Versions shipped (rg_cuda_launch picks one; ropegrad_rope_backward_cuda runs it):
//  14 2d-ept4    a group of 2*TPR = H/4 threads per row, each thread 4
//                consecutive d's (and the matching d+H's): 8-byte grad loads
//                (bf16/f16; 16 B for f32) and 16-byte emb and inv_freq loads
//                that skip L1; rg_sincos_mufu; a (rows/16, batch) grid of
//                256-thread blocks, one row per thread group, no division, no
//                loop.
//  12 vec-2d     the same with 8 d's per thread (16-byte loads that ask L2 for
//                256-byte runs) and blocks shrunk for small problems: the
//                fallback for 128 < H <= 256.
//   0 default    14 where it applies (D/2 a multiple of 8 and at most 128,
//                16-byte aligned pointers and stride, B <= 65535); 12 for H up
//                to 256 under the same conditions; else 10 (12's loads and
//                arithmetic on a 1-D grid) where only B is too large; else 2
//                (one warp per row, scalar loads: any even D, any dtype, any
//                alignment, any stride).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "ropegrad.h"

#include "rope_math.cuh"


// Batch of row r: a 64-bit division is a ~40-instruction software routine on
// the GPU; while rows fit in 32 bits (every realistic case) use the 32-bit one.
static __device__ __forceinline__ int64_t rg_batch_of(int64_t r, int64_t S)
{
    if (((uint64_t)r | (uint64_t)S) >> 32 == 0) return (int64_t)((uint32_t)r / (uint32_t)S);
    return r / S;
}

// ---------------------------------------------------------------------------
// Element access
// ---------------------------------------------------------------------------
static __device__ __forceinline__ float rg_bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
static __device__ __forceinline__ float rg_bf16_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

static __device__ __forceinline__ float rg_f16_bits(uint32_t h)
{
    float f;
    asm("{ .reg .b16 t; cvt.u16.u32 t, %1; cvt.f32.f16 %0, t; }" : "=f"(f) : "r"(h));
    return f;
}

static __device__ __forceinline__ float rg_grad_at(const void *base, int dt, int64_t i)
{
    if (dt == ROPEGRAD_F32) return ((const float *)base)[i];
    const uint32_t h = ((const uint16_t *)base)[i];
    return dt == ROPEGRAD_BF16 ? __uint_as_float(h << 16) : rg_f16_bits(h);
}

// Streaming 16-byte load: read-only path, no L1 allocation (each byte is used
// once), a hint that L2 should fetch the whole 256-byte sector run (each row's
// grads are 256 contiguous bytes, so the neighbours are wanted next).
static __device__ __forceinline__ uint4 rg_ld_stream(const void *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// ---------------------------------------------------------------------------
// Kernel 2: one warp per row. Lanes stride over d, so a warp's loads are
// coalesced whatever D, dtype or alignment; a butterfly shuffle sums the lanes.
// This is the general path for everything the vector kernels do not specialize.
// ---------------------------------------------------------------------------
static __global__ void rg_k2_warp(ropegrad_rope_backward_problem p)
{
    const int64_t rows = p.batch_size * p.seq_len;
    const int64_t D = p.head_dim, H = D / 2;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) {
        const float *inv = p.inv_freq + rg_batch_of(r, p.seq_len) * p.inv_freq_batch_stride;
        const int64_t base = r * D;
        float acc = 0.f;
        for (int64_t d = lane; d < H; d += 32) {
            float s, c;
            rg_sincos(p.emb[base + d], &s, &c);
            const float gc = rg_grad_at(p.grad_cos, p.grad_dtype, base + d) +
                             rg_grad_at(p.grad_cos, p.grad_dtype, base + d + H);
            const float gs = rg_grad_at(p.grad_sin, p.grad_dtype, base + d) +
                             rg_grad_at(p.grad_sin, p.grad_dtype, base + d + H);
            acc = fmaf(inv[d], fmaf(gs, c, -gc * s), acc);
        }
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
    }
}

// ---------------------------------------------------------------------------
// Kernels 10 and 12: TPR threads per row, each thread owning EPT = 8 consecutive
// d's (and the matching d+H's). For D = 128 bf16 that is 8 threads per row, 4
// rows per warp, and six independent 16-byte loads per thread (gc lo/hi, gs
// lo/hi, emb x2) plus two L1/L2-resident 16-byte loads of inv_freq.
// T: 2 for bf16/f16 grads, 4 for f32 (bytes per element).
// ---------------------------------------------------------------------------
#define RG_EPT 8
static constexpr int rg_k10_block = 256;

template <int ESZ>
struct rg_grad_chunk {
    uint4 v[ESZ * RG_EPT / 16];
};

struct rg_row_regs {
    rg_grad_chunk<4> gc_lo, gc_hi, gs_lo, gs_hi;  // sized for f32; bf16 uses half
    uint4 e[2];
};

template <int ESZ>
static __device__ __forceinline__ void rg_load_row(const ropegrad_rope_backward_problem &p, int64_t r, int j, rg_row_regs &R)
{
    const int64_t D = p.head_dim, H = D >> 1;
    const int64_t g = r * D + (int64_t)j * RG_EPT;  // element index of this thread's first d
    const char *gc = (const char *)p.grad_cos + g * ESZ;
    const char *gs = (const char *)p.grad_sin + g * ESZ;
    const char *e = (const char *)(p.emb + g);
#pragma unroll
    for (int k = 0; k < ESZ * RG_EPT / 16; k++) {
        R.gc_lo.v[k] = rg_ld_stream(gc + 16 * k);
        R.gc_hi.v[k] = rg_ld_stream(gc + H * ESZ + 16 * k);
        R.gs_lo.v[k] = rg_ld_stream(gs + 16 * k);
        R.gs_hi.v[k] = rg_ld_stream(gs + H * ESZ + 16 * k);
    }
    R.e[0] = rg_ld_stream(e);
    R.e[1] = rg_ld_stream(e + 16);
}

// Element k (0..7) of a chunk, widened to float.
template <int ESZ>
static __device__ __forceinline__ float rg_chunk_at(const rg_grad_chunk<4> &c, int k, int dt)
{
    const uint32_t *w = (const uint32_t *)c.v;
    if (ESZ == 4) return __uint_as_float(w[k]);
    const uint32_t x = w[k >> 1];
    if (dt == ROPEGRAD_BF16) return (k & 1) ? rg_bf16_hi(x) : rg_bf16_lo(x);
    return rg_f16_bits((k & 1) ? (x >> 16) : (x & 0xffffu));
}

// True when every one of the n arguments can take rg_sincos_mufu: one compare
// per value (NaN fails it) and one branch per thread, instead of a branch per value.
template <int N>
static __device__ __forceinline__ bool rg_all_fast(const float *e)
{
    bool ok = true;
#pragma unroll
    for (int k = 0; k < N; k++) ok &= fabsf(e[k]) <= RG_SINCOS_FAST_MAX;
    return ok;
}

// A row's partial sum over this thread's 8 d's: rg_sincos_mufu where every
// argument allows it, else rg_sincos. DT: the grad dtype fixed at compile time,
// so the bf16/f16 choice is not a branch per element.
template <int ESZ, int DT>
static __device__ __forceinline__ float rg_row_partial(const ropegrad_rope_backward_problem &p, const rg_row_regs &R,
                                                       const float *inv8)
{
    const float *e = (const float *)R.e;
    const int dt = DT;
    if (rg_all_fast<RG_EPT>(e)) {  // else the accurate path below
        float acc = 0.f;
#pragma unroll
        for (int k = 0; k < RG_EPT; k++) {
            float s, c;
            rg_sincos_mufu(e[k], &s, &c);
            const float gc = rg_chunk_at<ESZ>(R.gc_lo, k, dt) + rg_chunk_at<ESZ>(R.gc_hi, k, dt);
            const float gs = rg_chunk_at<ESZ>(R.gs_lo, k, dt) + rg_chunk_at<ESZ>(R.gs_hi, k, dt);
            acc = fmaf(inv8[k], fmaf(gs, c, -gc * s), acc);
        }
        return acc;
    }
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < RG_EPT; k++) {
        float s, c;
        rg_sincos(e[k], &s, &c);
        const float gc = rg_chunk_at<ESZ>(R.gc_lo, k, p.grad_dtype) + rg_chunk_at<ESZ>(R.gc_hi, k, p.grad_dtype);
        const float gs = rg_chunk_at<ESZ>(R.gs_lo, k, p.grad_dtype) + rg_chunk_at<ESZ>(R.gs_hi, k, p.grad_dtype);
        acc = fmaf(inv8[k], fmaf(gs, c, -gc * s), acc);
    }
    return acc;
}

template <int TPR>
static __device__ __forceinline__ float rg_group_sum(float v)
{
#pragma unroll
    for (int o = TPR / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Kernel 10: one row per thread group per grid-stride step, rg_sincos_mufu
// where the arguments allow, the dtype compiled in (DT).
template <int ESZ, int TPR, int DT>
static __global__ void rg_k3_vec(ropegrad_rope_backward_problem p)
{
    const int64_t rows = p.batch_size * p.seq_len;
    const int j = threadIdx.x % TPR;
    const int64_t groups = (int64_t)gridDim.x * blockDim.x / TPR;
    // Every lane of a warp runs the same number of iterations (rows are padded
    // to whole warps), so the shuffles below always see all 32 lanes.
    const int64_t rows_pad = (rows + 32 / TPR - 1) / (32 / TPR) * (32 / TPR);
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / TPR; r < rows_pad; r += groups) {
        const bool live = r < rows;
        const int64_t rr = live ? r : rows - 1;
        rg_row_regs R;
        rg_load_row<ESZ>(p, rr, j, R);
        float inv8[RG_EPT];
        const float *inv = p.inv_freq + rg_batch_of(rr, p.seq_len) * p.inv_freq_batch_stride + j * RG_EPT;
        *(float4 *)&inv8[0] = __ldg((const float4 *)inv);
        *(float4 *)&inv8[4] = __ldg((const float4 *)inv + 1);
        const float acc = rg_group_sum<TPR>(rg_row_partial<ESZ, DT>(p, R, inv8));
        if (live && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
    }
}

// Kernel 12: kernel 10 with the bookkeeping cut down, because once the sin/cos
// is cheap, the per-row overhead is half of what a thread issues (SASS of 10: ~130
// instructions for a row's 8 d's, ~120 for the row's indexing, a 32-bit division
// for its batch, the grid-stride loop and 64-bit address arithmetic):
//   - a 2D grid, blockIdx.y = batch: no division, and inv_freq's address is known
//     at the first instruction;
//   - one row per thread group, no loop; head_dim fixed at compile time (TPR), so
//     the hi halves are immediate offsets of the lo loads;
//   - the grad dtype compiled in, as in 10.
// Needs B <= 65535 (grid.y) and S < 2^31; the launcher falls back to 10 otherwise.
static constexpr int rg_k12_spread = 2;  // small problems: shrink blocks until there are this many per SM (or 32 threads)
//
// The accurate path for a thread whose 8 arguments are not all within
// RG_SINCOS_FAST_MAX: reads its inputs again (from L2: this thread just loaded
// them) element by element, with rg_sincos. Out of line and given only scalars,
// so it costs the fast path neither registers nor local memory. (Passing the
// loaded registers by reference instead put them in local memory on every
// path: W14 211 us against 100.)
template <int ESZ, int EPT = RG_EPT>
static __device__ __noinline__ float rg_row_reload(const char *gc, const char *gs, const float *e, const float *inv,
                                                   int dt, int H)
{
    float acc = 0.f;
    for (int k = 0; k < EPT; k++) {
        float s, c;
        rg_sincos(e[k], &s, &c);
        const float gck = rg_grad_at(gc, dt, k) + rg_grad_at(gc, dt, k + H);
        const float gsk = rg_grad_at(gs, dt, k) + rg_grad_at(gs, dt, k + H);
        acc = fmaf(inv[k], fmaf(gsk, c, -gck * s), acc);
    }
    return acc;
}


template <int ESZ, int TPR, int DT>
static __global__ void __launch_bounds__(256) rg_k12_2d(ropegrad_rope_backward_problem p)
{
    constexpr int H = 8 * TPR, D = 2 * H;
    const int j = threadIdx.x % TPR;
    const int S = (int)p.seq_len;
    const int rows_per_block = blockDim.x / TPR;
    const int s0 = blockIdx.x * rows_per_block + (threadIdx.x & ~31) / TPR;  // this warp's first row
    if (s0 >= S) return;  // whole warps leave together
    int s = s0 + (threadIdx.x & 31) / TPR;
    const bool live = s < S;
    if (!live) s = S - 1;  // dead rows still take part in the shuffles
    const int64_t r = (int64_t)blockIdx.y * S + s;
    const int64_t g = r * D + j * RG_EPT;  // element index of this thread's first d
    const char *gc = (const char *)p.grad_cos + g * ESZ;
    const char *gs = (const char *)p.grad_sin + g * ESZ;
    const char *e = (const char *)(p.emb + g);
    rg_row_regs R;
#pragma unroll
    for (int k = 0; k < ESZ * RG_EPT / 16; k++) {
        R.gc_lo.v[k] = rg_ld_stream(gc + 16 * k);
        R.gc_hi.v[k] = rg_ld_stream(gc + H * ESZ + 16 * k);
        R.gs_lo.v[k] = rg_ld_stream(gs + 16 * k);
        R.gs_hi.v[k] = rg_ld_stream(gs + H * ESZ + 16 * k);
    }
    R.e[0] = rg_ld_stream(e);
    R.e[1] = rg_ld_stream(e + 16);
    const float *inv = p.inv_freq + blockIdx.y * p.inv_freq_batch_stride + j * RG_EPT;
    float inv8[RG_EPT];
    *(float4 *)&inv8[0] = __ldg((const float4 *)inv);
    *(float4 *)&inv8[4] = __ldg((const float4 *)inv + 1);
    // Out-of-range arguments (rare) take rg_row_reload, out of line, so that its
    // registers do not become the kernel's (60 with the accurate path inline, 48
    // without). rg_row_partial's own range check then folds away.
    const float part = rg_all_fast<RG_EPT>((const float *)R.e)
                           ? rg_row_partial<ESZ, DT>(p, R, inv8)
                           : rg_row_reload<ESZ>(gc, gs, (const float *)e, inv, DT, H);
    const float acc = rg_group_sum<TPR>(part);
    if (live && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
}


// ---------------------------------------------------------------------------
// Kernel 14, "14-2d-ept4", the default: kernel 12 with 4 d's per thread (EPT
// 4: 16 threads per row for D = 128), launched on 256-thread blocks whatever the
// size. Why: on the workloads of <= ~2k rows (W2, W4, W9, W13, W15) 12 sat
// 0.2-0.3 us above the read floor; what a thread does after its loads land (8 x
// 2 MUFU through the special-function unit, a quarter-rate pipe, then 3
// shuffles) is a chain of ~300 cycles on one warp per SM sub-partition. Half
// the d's per thread halve the MUFU chain for +1 shuffle, and put twice the
// warps on the SMs; and not shrinking the blocks for small problems (as 12
// does, to spread them over the SMs) removes the many one-warp blocks that cost
// the mid-size ones (W9, W13, W15) more than the spread gains
// (results/dev/14-ept4-spread.txt). Loads: EPT * ESZ bytes per grad
// stream (8 B for bf16), EPT floats of emb (16 B).
// ---------------------------------------------------------------------------
template <int NB>
static __device__ __forceinline__ void rg_ld_n(const char *p, uint32_t *w)
{
    if constexpr (NB == 16) {
        const uint4 v = rg_ld_stream(p);
        w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else if constexpr (NB == 8) {
        asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
    } else {
        static_assert(NB == 4, "4, 8 or 16 bytes");
        asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(w[0]) : "l"(p));
    }
}

template <int ESZ, int DT>
static __device__ __forceinline__ float rg_word_at(const uint32_t *w, int k)
{
    if (ESZ == 4) return __uint_as_float(w[k]);
    const uint32_t x = w[k >> 1];
    if (DT == ROPEGRAD_BF16) return (k & 1) ? rg_bf16_hi(x) : rg_bf16_lo(x);
    return rg_f16_bits((k & 1) ? (x >> 16) : (x & 0xffffu));
}

template <int ESZ, int TPR, int DT>
static __global__ void __launch_bounds__(256) rg_k14_2d(ropegrad_rope_backward_problem p)
{
    constexpr int EPT = 4, H = EPT * TPR, D = 2 * H, NB = EPT * ESZ, NW = (NB + 3) / 4;
    const int j = threadIdx.x % TPR;
    const int S = (int)p.seq_len;
    const int rows_per_block = blockDim.x / TPR;
    const int s0 = blockIdx.x * rows_per_block + (threadIdx.x & ~31) / TPR;
    if (s0 >= S) return;
    int s = s0 + (threadIdx.x & 31) / TPR;
    const bool live = s < S;
    if (!live) s = S - 1;
    const int64_t r = (int64_t)blockIdx.y * S + s;
    const int64_t g = r * D + j * EPT;
    const char *gc = (const char *)p.grad_cos + g * ESZ;
    const char *gs = (const char *)p.grad_sin + g * ESZ;
    const float *e = p.emb + g;
    uint32_t cl[NW], ch[NW], sl[NW], sh[NW], ew[EPT];
    rg_ld_n<NB>(gc, cl);
    rg_ld_n<NB>(gc + H * ESZ, ch);
    rg_ld_n<NB>(gs, sl);
    rg_ld_n<NB>(gs + H * ESZ, sh);
    rg_ld_n<EPT * 4>((const char *)e, ew);
    const float *inv = p.inv_freq + blockIdx.y * p.inv_freq_batch_stride + j * EPT;
    float iv[EPT];
    const float4 q = __ldg((const float4 *)inv);
    iv[0] = q.x, iv[1] = q.y, iv[2] = q.z, iv[3] = q.w;
    const float *ef = (const float *)ew;
    float part;
    if (rg_all_fast<EPT>(ef)) {
        part = 0.f;
#pragma unroll
        for (int k = 0; k < EPT; k++) {
            float sn, cs;
            rg_sincos_mufu(ef[k], &sn, &cs);
            const float gck = rg_word_at<ESZ, DT>(cl, k) + rg_word_at<ESZ, DT>(ch, k);
            const float gsk = rg_word_at<ESZ, DT>(sl, k) + rg_word_at<ESZ, DT>(sh, k);
            part = fmaf(iv[k], fmaf(gsk, cs, -gck * sn), part);
        }
    } else {
        part = rg_row_reload<ESZ, EPT>(gc, gs, e, inv, DT, H);
    }
    const float acc = rg_group_sum<TPR>(part);
    if (live && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
}

// ---------------------------------------------------------------------------
// Launcher
// ---------------------------------------------------------------------------
// Kernel 12 (and 10, its fallback) apply when each thread's 8 d's are whole
// 16-byte vectors and a row's group fits in a warp: H = 8*TPR with TPR in
// {1,..,32}, and every pointer (and the inv_freq batch stride) 16-byte aligned.
static inline int rg_vec_tpr(const ropegrad_rope_backward_problem *p)
{
    const int64_t H = p->head_dim / 2;
    if (H % RG_EPT) return 0;
    const int64_t tpr = H / RG_EPT;
    if (tpr != 1 && tpr != 2 && tpr != 4 && tpr != 8 && tpr != 16 && tpr != 32) return 0;
    const size_t esz = p->grad_dtype == ROPEGRAD_F32 ? 4 : 2;
    const uintptr_t a = (uintptr_t)p->grad_cos | (uintptr_t)p->grad_sin | (uintptr_t)p->emb |
                        (uintptr_t)p->inv_freq;
    if (a % 16) return 0;
    if ((p->inv_freq_batch_stride * 4) % 16) return 0;
    if (((size_t)H * esz) % 16) return 0;  // the hi half starts on a 16-byte boundary
    return (int)tpr;
}

template <int ESZ, int TPR>
static cudaError_t rg_launch_vec(const ropegrad_rope_backward_problem &p, int kernel, int sms, cudaStream_t st)
{
    const int64_t rows = p.batch_size * p.seq_len;
    const int64_t threads_needed = (rows + 32 / TPR - 1) / (32 / TPR) * 32;  // whole warps
    if (kernel == 14) {   // H = 4 * (2 * TPR): 2*TPR threads per row, 256-thread blocks at every size
        if constexpr (2 * TPR <= 32) {
            constexpr int T4 = 2 * TPR;
            const dim3 grid((unsigned)((p.seq_len + 256 / T4 - 1) / (256 / T4)), (unsigned)p.batch_size);
            if constexpr (ESZ == 4) rg_k14_2d<ESZ, T4, ROPEGRAD_F32><<<grid, 256, 0, st>>>(p);
            else if (p.grad_dtype == ROPEGRAD_BF16) rg_k14_2d<ESZ, T4, ROPEGRAD_BF16><<<grid, 256, 0, st>>>(p);
            else rg_k14_2d<ESZ, T4, ROPEGRAD_F16><<<grid, 256, 0, st>>>(p);
        } else {
            return rg_launch_vec<ESZ, TPR>(p, 12, sms, st);   // H > 128: a row's group would not fit in a warp
        }
    } else if (kernel == 12) {
        int block = 256;
        const int64_t B = p.batch_size, S = p.seq_len;
        while (block > 32 && B * ((S + block / TPR - 1) / (block / TPR)) < (int64_t)rg_k12_spread * sms) block >>= 1;
        const dim3 grid((unsigned)((S + block / TPR - 1) / (block / TPR)), (unsigned)B);
        if constexpr (ESZ == 4) rg_k12_2d<ESZ, TPR, ROPEGRAD_F32><<<grid, block, 0, st>>>(p);
        else if (p.grad_dtype == ROPEGRAD_BF16) rg_k12_2d<ESZ, TPR, ROPEGRAD_BF16><<<grid, block, 0, st>>>(p);
        else rg_k12_2d<ESZ, TPR, ROPEGRAD_F16><<<grid, block, 0, st>>>(p);
    } else {  // 10
        const int block = rg_k10_block;
        int64_t grid = (threads_needed + block - 1) / block;
        if (grid > 2147483647) grid = 2147483647;
        if constexpr (ESZ == 4) rg_k3_vec<ESZ, TPR, ROPEGRAD_F32><<<(unsigned)grid, block, 0, st>>>(p);
        else if (p.grad_dtype == ROPEGRAD_BF16) rg_k3_vec<ESZ, TPR, ROPEGRAD_BF16><<<(unsigned)grid, block, 0, st>>>(p);
        else rg_k3_vec<ESZ, TPR, ROPEGRAD_F16><<<(unsigned)grid, block, 0, st>>>(p);
    }
    return cudaGetLastError();
}

template <int ESZ>
static cudaError_t rg_launch_vec_esz(const ropegrad_rope_backward_problem &p, int tpr, int kernel, int sms, cudaStream_t st)
{
    switch (tpr) {
    case 1: return rg_launch_vec<ESZ, 1>(p, kernel, sms, st);
    case 2: return rg_launch_vec<ESZ, 2>(p, kernel, sms, st);
    case 4: return rg_launch_vec<ESZ, 4>(p, kernel, sms, st);
    case 8: return rg_launch_vec<ESZ, 8>(p, kernel, sms, st);
    case 16: return rg_launch_vec<ESZ, 16>(p, kernel, sms, st);
    default: return rg_launch_vec<ESZ, 32>(p, kernel, sms, st);
    }
}

// Launches the default kernel on `st`: 14 (whatever `kernel` asks, 0 or 14),
// or its fallbacks 10 and 2 as below. The problem must already be validated.
// Returns the launch's cudaError_t.
static cudaError_t rg_cuda_launch(const ropegrad_rope_backward_problem *p, int kernel, cudaStream_t st)
{
    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return e;
    const int64_t rows = p->batch_size * p->seq_len;
    const int tpr = rg_vec_tpr(p);
    // Default: kernel 14 on every size (with 12's loads halved per thread and
    // no block shrinking: level with 12 on the large workloads, 0.05-0.15 us
    // under it on the small ones; dev/rope_backward/NOTES.md). It falls back to 12 where a
    // row is too wide for its layout (H > 128), then to 10, then 2, as noted.
    (void)kernel;
    kernel = 14;
    if (!(tpr && p->batch_size <= 65535 && p->seq_len <= 2147483647)) kernel = tpr ? 10 : 2;
    if (kernel == 2) {
        const int block = 256;
        int64_t grid = (rows * 32 + block - 1) / block;
        const int64_t cap = (int64_t)sms * 8 * 16;
        if (grid > cap) grid = cap;
        rg_k2_warp<<<(unsigned)grid, block, 0, st>>>(*p);
        return cudaGetLastError();
    }
    return p->grad_dtype == ROPEGRAD_F32 ? rg_launch_vec_esz<4>(*p, tpr, kernel, sms, st)
                                         : rg_launch_vec_esz<2>(*p, tpr, kernel, sms, st);
}
