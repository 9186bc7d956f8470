/* SPDX-License-Identifier: Apache-2.0 */
// backward_knobs.cuh -- the development forms of the shipped 014 kernels
// (src/op/rope_backward/kernels.cuh), with the template knobs and tuning macros
// the development versions need and the library does not ship:
//   dv_load_row<ESZ, STREAM, EF>    STREAM: the streaming 16-byte loads (else __ldg),
//                                   EF: emb loaded first (kernels 7, 8)
//   dv_row_partial<ESZ, EF, FAST, DT>  FAST: rg_sincos_mufu when a thread's arguments
//                                   allow (kernel 10), DT: the grad dtype compiled in
//   dv_k3_vec<ESZ, TPR, EF, FAST, DT>  kernels 3, 7 and 10
//   dv_k12_2d<ESZ, TPR, DT, STAGED> kernels 12 and 13 (STAGED)
//   dv_k14_2d<ESZ, TPR, EPT, DT>    kernels 14 (EPT 4) and 15 (EPT 2)
// With the knobs at the library's values each is the shipped kernel's code
// (kernel 10 = dv_k3_vec<.., false, true, DT>, 12, 14), which dev_kernels.cu
// launches from the library's own templates. Tuning macros, set by a build
// (scripts/gpu-build.sh DEV_VARIANTS): DV_K3_STREAM, RG_K3_BLOCK, RG_K12_SPREAD.
#pragma once

#include "rope_backward/kernels.cuh"

#ifndef DV_K3_STREAM
#define DV_K3_STREAM true  // kernel 3: L1 no-allocate + L2 256B hint loads (false: plain __ldg)
#endif
#ifndef RG_K3_BLOCK
#define RG_K3_BLOCK 256
#endif
#ifndef RG_K12_SPREAD
#define RG_K12_SPREAD 2  // small problems: shrink 12's blocks until there are this many per SM (or 32 threads)
#endif

// An L2 evict-first policy: data read once should leave L2 before anything
// else, so that a stream does not evict the dirty lines whatever ran before left
// (their write-back would compete with the reads). Measured: no gain (NOTES.md).
static __device__ __forceinline__ uint64_t rg_evict_first_policy()
{
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}

static __device__ __forceinline__ uint4 dv_ld_plain(const void *p) { return __ldg((const uint4 *)p); }

template <int ESZ, bool STREAM, bool EF = false>
static __device__ __forceinline__ void dv_load_row(const ropegrad_rope_backward_problem &p, int64_t r, int j, rg_row_regs &R)
{
    const int64_t D = p.head_dim, H = D >> 1;
    const int64_t g = r * D + (int64_t)j * RG_EPT;  // element index of this thread's first d
    const char *gc = (const char *)p.grad_cos + g * ESZ;
    const char *gs = (const char *)p.grad_sin + g * ESZ;
    const char *e = (const char *)(p.emb + g);
    if (EF) {  // emb first: the sincos chain needs only emb, so let it land first
        R.e[0] = STREAM ? rg_ld_stream(e) : dv_ld_plain(e);
        R.e[1] = STREAM ? rg_ld_stream(e + 16) : dv_ld_plain(e + 16);
    }
#pragma unroll
    for (int k = 0; k < ESZ * RG_EPT / 16; k++) {
        R.gc_lo.v[k] = STREAM ? rg_ld_stream(gc + 16 * k) : dv_ld_plain(gc + 16 * k);
        R.gc_hi.v[k] = STREAM ? rg_ld_stream(gc + H * ESZ + 16 * k) : dv_ld_plain(gc + H * ESZ + 16 * k);
        R.gs_lo.v[k] = STREAM ? rg_ld_stream(gs + 16 * k) : dv_ld_plain(gs + 16 * k);
        R.gs_hi.v[k] = STREAM ? rg_ld_stream(gs + H * ESZ + 16 * k) : dv_ld_plain(gs + H * ESZ + 16 * k);
    }
    if (!EF) {
        R.e[0] = STREAM ? rg_ld_stream(e) : dv_ld_plain(e);
        R.e[1] = STREAM ? rg_ld_stream(e + 16) : dv_ld_plain(e + 16);
    }
}

// DT >= 0: the grad dtype fixed at compile time (kernels 10 and 11), so the
// bf16/f16 choice is not a branch per element; -1: read from the problem.
template <int ESZ, bool EF = false, bool FAST = false, int DT = -1>
static __device__ __forceinline__ float dv_row_partial(const ropegrad_rope_backward_problem &p, const rg_row_regs &R,
                                                       const float *inv8)
{
    const float *e = (const float *)R.e;
    const int dt = DT >= 0 ? DT : (int)p.grad_dtype;
    if (FAST && rg_all_fast<RG_EPT>(e)) {  // kernel 10; else the accurate path below
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
    float sn[RG_EPT], cs[RG_EPT];
    if (EF) {  // every sincos before any use of the grads (see kernel 7)
#pragma unroll
        for (int k = 0; k < RG_EPT; k++) rg_sincos(e[k], &sn[k], &cs[k]);
    }
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < RG_EPT; k++) {
        float s, c;
        if (EF) s = sn[k], c = cs[k];
        else rg_sincos(e[k], &s, &c);
        const float gc = rg_chunk_at<ESZ>(R.gc_lo, k, p.grad_dtype) + rg_chunk_at<ESZ>(R.gc_hi, k, p.grad_dtype);
        const float gs = rg_chunk_at<ESZ>(R.gs_lo, k, p.grad_dtype) + rg_chunk_at<ESZ>(R.gs_hi, k, p.grad_dtype);
        acc = fmaf(inv8[k], fmaf(gs, c, -gc * s), acc);
    }
    return acc;
}

// Kernel 3: one row per thread group per grid-stride step.
// Kernel 7 (EF): the same with emb loaded first and every sincos computed before
// the grads are touched, so a warp starts its arithmetic when its emb lands
// instead of when the last of its six loads does.
// Kernel 10 (FAST, DT): kernel 3 with rg_sincos_mufu and the dtype compiled in.
template <int ESZ, int TPR, bool EF = false, bool FAST = false, int DT = -1>
static __global__ void dv_k3_vec(ropegrad_rope_backward_problem p)
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
        dv_load_row<ESZ, DV_K3_STREAM, EF>(p, rr, j, R);
        float inv8[RG_EPT];
        const float *inv = p.inv_freq + rg_batch_of(rr, p.seq_len) * p.inv_freq_batch_stride + j * RG_EPT;
        *(float4 *)&inv8[0] = __ldg((const float4 *)inv);
        *(float4 *)&inv8[4] = __ldg((const float4 *)inv + 1);
        const float acc = rg_group_sum<TPR>(dv_row_partial<ESZ, EF, FAST, DT>(p, R, inv8));
        if (live && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
    }
}

// Kernel 13 (STAGED): 12 with the block's results gathered in shared memory and
// written by its first threads as one contiguous run (32 rows x 4 B = one 128 B
// line for 256 threads), instead of a 4-byte store per row from scattered lanes.
// Why: dev/common/probe.cu's read-only kernel gets 1-2 us slower on the large
// workloads when it adds a 4-byte store per row, so partial-sector writes were
// suspected. Measured: within run-to-run spread on W8/W14, +0.1 us on every
// smaller workload (the barrier); not the default (dev/rope_backward/NOTES.md).
template <int ESZ, int TPR, int DT, bool STAGED = false>
static __global__ void __launch_bounds__(256) dv_k12_2d(ropegrad_rope_backward_problem p)
{
    constexpr int H = 8 * TPR, D = 2 * H;
    const int j = threadIdx.x % TPR;
    const int S = (int)p.seq_len;
    const int rows_per_block = blockDim.x / TPR;
    const int s0 = blockIdx.x * rows_per_block + (threadIdx.x & ~31) / TPR;  // this warp's first row
    if (!STAGED && s0 >= S) return;  // whole warps leave together (13 keeps them for the barrier)
    int s = s0 + (threadIdx.x & 31) / TPR;
    const bool live = s < S;
    if (!live) s = S - 1;  // dead rows still take part in the shuffles (and in 13, the barrier)
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
    // without). dv_row_partial's own range check then folds away.
    const float part = rg_all_fast<RG_EPT>((const float *)R.e)
                           ? dv_row_partial<ESZ, false, true, DT>(p, R, inv8)
                           : rg_row_reload<ESZ>(gc, gs, (const float *)e, inv, DT, H);
    const float acc = rg_group_sum<TPR>(part);
    if (!STAGED) {
        if (live && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
        return;
    }
    __shared__ float res[256];
    if (j == 0) res[threadIdx.x / TPR] = p.attention_scaling * acc;
    __syncthreads();
    const int t = threadIdx.x, sb = blockIdx.x * rows_per_block;
    if (t < rows_per_block && sb + t < S) p.grad_position_ids[(int64_t)blockIdx.y * S + sb + t] = res[t];
}


// Kernel 14 (EPT 4, the library's default) and 15 (EPT 2, 32 threads per row for D = 128).
template <int ESZ, int TPR, int EPT, int DT>
static __global__ void __launch_bounds__(256) dv_k14_2d(ropegrad_rope_backward_problem p)
{
    constexpr int H = EPT * TPR, D = 2 * H, NB = EPT * ESZ, NW = (NB + 3) / 4;
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
    if constexpr (EPT == 4) {
        const float4 q = __ldg((const float4 *)inv);
        iv[0] = q.x, iv[1] = q.y, iv[2 % EPT] = q.z, iv[3 % EPT] = q.w;
    } else {
        const float2 q = __ldg((const float2 *)inv);
        iv[0] = q.x, iv[1 % EPT] = q.y;
    }
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
