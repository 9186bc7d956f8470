/* SPDX-License-Identifier: Apache-2.0 */
// backward_kernels.cuh -- every version of 014's CUDA kernel, side by side (llm.c
// dev/cuda style), and the launcher that picks one (rg_dev_launch). The library
// ships the winner only (src/op/rope_backward/kernels.cuh).
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
// Kernel versions (dev_kernels N; NOTES.md has each one's
// prediction and measured outcome):
//   1 naive      one thread per row, scalar loads, CUDA's sincosf. The obvious code.
//   2 warp       one warp per row, scalar loads, rg_sincos. Handles every problem
//                the API accepts (any even D, any dtype, any alignment, any
//                stride): the general path.
//   3 vec        a group of TPR = H/8 threads per row, each thread 8 consecutive
//                d's (and the matching d+H's) fetched with 16-byte loads that skip
//                L1 and ask L2 for 256-byte runs; reduction by warp shuffles.
//   4 vec-dbuf   3 in a grid-stride loop with the next row's loads held in
//                registers while the current row computes. Slower: the second
//                row's registers cost occupancy.
//   5 vec-pf     3 in a grid-stride loop with an L2 bulk prefetch of the next row.
//                Slower on the largest workload than 3's one-row-per-group grid.
//   6 vec-lat    32 threads per row (2 or 4 d's each) for D = 128/256: the
//                shortest dependent chain after the loads land, for small problems.
//   7 vec-ef     3 with emb loaded first and every sincos done before the grads
//                are read, so arithmetic can start when emb lands. No gain.
//   8 vec-lat-ef 6 with the same ordering. No gain.
//   9 bulk       D = 128, 2-byte grads, sm_90+: tiles of 16 rows staged in shared
//                memory by cp.async.bulk copies, three stages deep (else 3).
//                Slower than 3 as written (W14 110 vs 100 us): a first cut.
//  10 vec-mufu   3 with rg_sincos_mufu: the reduced argument's sin/cos from the
//                special-function unit, about a third of the arithmetic.
//  11 lat-mufu   6 with rg_sincos_mufu.
//  12 vec-2d     10 without its per-row bookkeeping: a (rows, batch) grid, one
//                row per thread group, no division, no loop.
//  13 vec-2d-st  12 with each block's results written as one contiguous run.
//   0 default    12 where it applies (D/2 a multiple of 8 with H/8 <= 32,
//                16-byte aligned pointers and stride, B <= 65535); else 10 where
//                only B is too large; 2 otherwise. Versions 3-13 fall back the
//                same way (6, 8, 11 also need D = 128 or 256; 9, D = 128).
//
// Development copy (dev/rope_backward/dev_kernels.cu): the shipped kernels (2, 10,
// 12, 14) and their device helpers come from src/op/rope_backward/kernels.cuh,
// their knobbed forms (3, 7, 13, 15) from backward_knobs.cuh; this file adds
// versions 1, 4, 5/6/8/11 and 9, the development switches (RG_K5_WAVES) and the
// launcher of every version, rg_dev_launch (the library's own launcher is rg_cuda_launch).
#pragma once

#include "backward_knobs.cuh"   // the shipped kernels and their development forms

#ifndef RG_K5_WAVES
#define RG_K5_WAVES 4  // resident-block waves of kernel 5's grid
#endif

// ---------------------------------------------------------------------------
// Kernel 1: naive. One thread per row; CUDA's own sincosf (accurate, with its
// own slow path). Obviously right, slow: a warp's 32 threads read 32 rows 256 B
// apart, so every load instruction touches 32 sectors.
// ---------------------------------------------------------------------------
static __global__ void rg_k1_naive(ropegrad_rope_backward_problem p)
{
    const int64_t rows = p.batch_size * p.seq_len;
    const int64_t D = p.head_dim, H = D / 2;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        const float *inv = p.inv_freq + rg_batch_of(r, p.seq_len) * p.inv_freq_batch_stride;
        const int64_t base = r * D;
        float acc = 0.f;
        for (int64_t d = 0; d < H; d++) {
            float s, c;
            sincosf(p.emb[base + d], &s, &c);
            const float gc = rg_grad_at(p.grad_cos, p.grad_dtype, base + d) +
                             rg_grad_at(p.grad_cos, p.grad_dtype, base + d + H);
            const float gs = rg_grad_at(p.grad_sin, p.grad_dtype, base + d) +
                             rg_grad_at(p.grad_sin, p.grad_dtype, base + d + H);
            acc += inv[d] * (gs * c - gc * s);
        }
        p.grad_position_ids[r] = p.attention_scaling * acc;
    }
}

// Kernel 4: streaming loads with the L2 256 B hint, and software pipelining:
// the loads of this group's next row are issued before the arithmetic of the
// current one, so each thread keeps two rows (12 x 16 B) in flight.
template <int ESZ, int TPR>
static __global__ void __launch_bounds__(256) rg_k4_vec(ropegrad_rope_backward_problem p)
{
    const int64_t rows = p.batch_size * p.seq_len;
    const int j = threadIdx.x % TPR;
    const int64_t groups = (int64_t)gridDim.x * blockDim.x / TPR;
    const int64_t rows_pad = (rows + 32 / TPR - 1) / (32 / TPR) * (32 / TPR);
    int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / TPR;
    if (r >= rows_pad) return;  // whole warps leave together (blockDim is a multiple of 32)
    rg_row_regs cur;
    dv_load_row<ESZ, true>(p, r < rows ? r : rows - 1, j, cur);
    for (; r < rows_pad; r += groups) {
        const int64_t rr = r < rows ? r : rows - 1;
        const int64_t next = r + groups;
        rg_row_regs nxt;
        if (next < rows_pad) dv_load_row<ESZ, true>(p, next < rows ? next : rows - 1, j, nxt);
        float inv8[RG_EPT];
        const float *inv = p.inv_freq + rg_batch_of(rr, p.seq_len) * p.inv_freq_batch_stride + j * RG_EPT;
        *(float4 *)&inv8[0] = __ldg((const float4 *)inv);
        *(float4 *)&inv8[4] = __ldg((const float4 *)inv + 1);
        const float acc = rg_group_sum<TPR>(dv_row_partial<ESZ>(p, cur, inv8));
        if (r < rows && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
        cur = nxt;
    }
}

// ---------------------------------------------------------------------------
// Kernels 5 and 6: the vector kernel generalized over EPT (d's per thread), with
// loads as wide as EPT allows (4, 8, 16 or 2x16 bytes).
//   5 prefetch  EPT = 8, a grid-stride loop sized to a few waves, and before
//               each row's loads the group asks L2 to fetch the row it will do
//               next (cp.async.bulk.prefetch: no registers held, unlike kernel
//               4's register double-buffer, so occupancy stays at kernel 3's).
//   6 latency   for small problems (a few thousand rows), where time is one DRAM
//               round trip plus the dependent arithmetic after it: EPT = 2 or 4
//               (32 threads per row) cuts each thread's sincos chain 4x and
//               spreads the rows over more SMs.
// ---------------------------------------------------------------------------
template <int NW>
struct rg_words {
    uint32_t w[NW];
};

template <int NW>
static __device__ __forceinline__ void rg_ld_words(const void *p, rg_words<NW> &out)
{
    if constexpr (NW % 4 == 0) {
#pragma unroll
        for (int k = 0; k < NW / 4; k++) {
            const uint4 v = rg_ld_stream((const char *)p + 16 * k);
            out.w[4 * k] = v.x, out.w[4 * k + 1] = v.y, out.w[4 * k + 2] = v.z, out.w[4 * k + 3] = v.w;
        }
    } else if constexpr (NW == 2) {
        uint2 v;
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v2.u32 {%0,%1}, [%2], %3;"
                     : "=r"(v.x), "=r"(v.y) : "l"(p), "l"(rg_evict_first_policy()));
        out.w[0] = v.x, out.w[1] = v.y;
    } else {
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.u32 %0, [%1], %2;"
                     : "=r"(out.w[0]) : "l"(p), "l"(rg_evict_first_policy()));
    }
}

template <int ESZ, int EPT>
static __device__ __forceinline__ float rg_words_at(const rg_words<ESZ * EPT / 4> &c, int k, int dt)
{
    if (ESZ == 4) return __uint_as_float(c.w[k]);
    const uint32_t x = c.w[k >> 1];
    if (dt == ROPEGRAD_BF16) return (k & 1) ? rg_bf16_hi(x) : rg_bf16_lo(x);
    return rg_f16_bits((k & 1) ? (x >> 16) : (x & 0xffffu));
}

static __device__ __forceinline__ void rg_prefetch_l2(const void *p, int bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
    for (int o = 0; o < bytes; o += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"((const char *)p + o));
#endif
}

template <int ESZ, int EPT, int TPR, bool PF, bool EF = false, bool FAST = false, int DT = -1>
static __global__ void __launch_bounds__(256) rg_k5_vec(ropegrad_rope_backward_problem p)
{
    const int dt = DT >= 0 ? DT : (int)p.grad_dtype;
    constexpr int GW = ESZ * EPT / 4;  // 32-bit words of grads per thread per half
    const int64_t rows = p.batch_size * p.seq_len;
    const int64_t D = p.head_dim, H = D >> 1;
    const int j = threadIdx.x % TPR;
    const int64_t groups = (int64_t)gridDim.x * blockDim.x / TPR;
    const int64_t rows_pad = (rows + 32 / TPR - 1) / (32 / TPR) * (32 / TPR);
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / TPR; r < rows_pad; r += groups) {
        const bool live = r < rows;
        const int64_t rr = live ? r : rows - 1;
        if (PF) {
            // Lanes 0..2 of the group each prefetch one stream of the next row:
            // its grad_cos row, grad_sin row, and the first half of its emb row.
            const int64_t nx = r + groups;
            if (nx < rows && j < 3) {
                const char *base = j == 0 ? (const char *)p.grad_cos + nx * D * ESZ
                                 : j == 1 ? (const char *)p.grad_sin + nx * D * ESZ
                                          : (const char *)(p.emb + nx * D);
                rg_prefetch_l2(base, (int)(j < 2 ? D * ESZ : H * 4));
            }
        }
        const int64_t g = rr * D + (int64_t)j * EPT;
        rg_words<GW> gcl, gch, gsl, gsh;
        rg_words<EPT> e;
        if (EF) rg_ld_words<EPT>(p.emb + g, e);
        rg_ld_words<GW>((const char *)p.grad_cos + g * ESZ, gcl);
        rg_ld_words<GW>((const char *)p.grad_cos + (g + H) * ESZ, gch);
        rg_ld_words<GW>((const char *)p.grad_sin + g * ESZ, gsl);
        rg_ld_words<GW>((const char *)p.grad_sin + (g + H) * ESZ, gsh);
        if (!EF) rg_ld_words<EPT>(p.emb + g, e);
        const float *inv = p.inv_freq + rg_batch_of(rr, p.seq_len) * p.inv_freq_batch_stride + j * EPT;
        float acc = 0.f;
        float ev[EPT];
#pragma unroll
        for (int k = 0; k < EPT; k++) ev[k] = __uint_as_float(e.w[k]);
        const bool fast = FAST && rg_all_fast<EPT>(ev);
        if (fast) {  // kernel 11
#pragma unroll
            for (int k = 0; k < EPT; k++) {
                float sn, cs;
                rg_sincos_mufu(ev[k], &sn, &cs);
                const float gc = rg_words_at<ESZ, EPT>(gcl, k, dt) + rg_words_at<ESZ, EPT>(gch, k, dt);
                const float gs = rg_words_at<ESZ, EPT>(gsl, k, dt) + rg_words_at<ESZ, EPT>(gsh, k, dt);
                acc = fmaf(__ldg(inv + k), fmaf(gs, cs, -gc * sn), acc);
            }
        }
        if (!fast) {  // the accurate path (every kernel but 11, and 11's rare huge or non-finite arguments)
            float snv[EPT], csv[EPT];
            if (EF) {
#pragma unroll
                for (int k = 0; k < EPT; k++) rg_sincos(ev[k], &snv[k], &csv[k]);
            }
#pragma unroll
            for (int k = 0; k < EPT; k++) {
                float sn, cs;
                if (EF) sn = snv[k], cs = csv[k];
                else rg_sincos(ev[k], &sn, &cs);
                const float gc = rg_words_at<ESZ, EPT>(gcl, k, p.grad_dtype) + rg_words_at<ESZ, EPT>(gch, k, p.grad_dtype);
                const float gs = rg_words_at<ESZ, EPT>(gsl, k, p.grad_dtype) + rg_words_at<ESZ, EPT>(gsh, k, p.grad_dtype);
                acc = fmaf(__ldg(inv + k), fmaf(gs, cs, -gc * sn), acc);
            }
        }
        acc = rg_group_sum<TPR>(acc);
        if (live && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
    }
}

// ---------------------------------------------------------------------------
// Kernel 9: bulk copies (Hopper's copy engine, cp.async.bulk) into shared
// memory, three stages deep, for D = 128 with 2-byte grads. A block of 128
// threads owns tiles of 16 rows: per tile one 4 KB copy of grad_cos rows, one
// of grad_sin rows (contiguous), and 16 copies of 256 B for the first halves
// of the emb rows, all completing on one mbarrier. Warps then read their 16 B
// pieces from shared memory (a quarter-warp reads 128 contiguous bytes: no
// bank conflicts) and compute as kernel 3. The idea: a few large requests the
// copy engine streams, instead of 6 x 16 B loads per thread.
// ---------------------------------------------------------------------------
#define RG_K9_ROWS 16
#define RG_K9_STAGES 3
#define RG_K9_ROWB 256  /* bytes per row per stream: 128 x 2 B grads, 64 x 4 B emb */

static __device__ __forceinline__ uint32_t rg_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

template <int TPR>
static __global__ void __launch_bounds__(128) rg_k9_bulk(ropegrad_rope_backward_problem p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) unsigned char sm[RG_K9_STAGES][3][RG_K9_ROWS * RG_K9_ROWB];
    __shared__ alignas(8) uint64_t bar[RG_K9_STAGES];
    const int64_t rows = p.batch_size * p.seq_len;
    const int64_t tiles = (rows + RG_K9_ROWS - 1) / RG_K9_ROWS;
    const int tid = threadIdx.x, j = tid % TPR, lr = tid / TPR;  // local row 0..15
    if (tid == 0) {
        for (int s = 0; s < RG_K9_STAGES; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(rg_smem_addr(&bar[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    // Warp 0 issues one tile's copies into a stage.
    auto issue = [&](int stage, int64_t tile) {
        const int64_t r0 = tile * RG_K9_ROWS;
        const int n = (int)min((int64_t)RG_K9_ROWS, rows - r0);
        const uint32_t b = rg_smem_addr(&bar[stage]);
        const int lane = tid & 31;
        if (lane == 0) {
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // our reads of this stage are done
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(n * 3 * RG_K9_ROWB)
                         : "memory");
        }
        __syncwarp();
        if (lane == 0) {
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         ::"r"(rg_smem_addr(sm[stage][0])), "l"((const char *)p.grad_cos + r0 * 256),
                         "r"(n * RG_K9_ROWB), "r"(b) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         ::"r"(rg_smem_addr(sm[stage][1])), "l"((const char *)p.grad_sin + r0 * 256),
                         "r"(n * RG_K9_ROWB), "r"(b) : "memory");
        }
        if (lane < n)
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         ::"r"(rg_smem_addr(sm[stage][2] + lane * RG_K9_ROWB)),
                         "l"((const char *)(p.emb + (r0 + lane) * 128)), "r"(RG_K9_ROWB), "r"(b) : "memory");
    };

    int64_t tile = blockIdx.x;
    if (tid < 32) {
        for (int s = 0; s < RG_K9_STAGES; s++)
            if (tile + s * (int64_t)gridDim.x < tiles) issue(s, tile + s * (int64_t)gridDim.x);
    }
    uint32_t phases = 0;  // bit s: the parity stage s waits for next
    for (int it = 0; tile < tiles; tile += gridDim.x, it++) {
        const int stage = it % RG_K9_STAGES;
        const uint32_t b = rg_smem_addr(&bar[stage]);
        uint32_t done = 0;
        while (!done)
            asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2; selp.u32 %0, 1, 0, P; }"
                         : "=r"(done) : "r"(b), "r"((phases >> stage) & 1u) : "memory");
        phases ^= 1u << stage;

        const int64_t r = tile * RG_K9_ROWS + lr;
        const bool live = r < rows;
        const int64_t rr = live ? r : rows - 1;
        const unsigned char *g0 = sm[stage][0] + lr * RG_K9_ROWB, *g1 = sm[stage][1] + lr * RG_K9_ROWB;
        const unsigned char *e = sm[stage][2] + lr * RG_K9_ROWB;
        rg_row_regs R;
        R.gc_lo.v[0] = *(const uint4 *)(g0 + j * 16);
        R.gc_hi.v[0] = *(const uint4 *)(g0 + 128 + j * 16);
        R.gs_lo.v[0] = *(const uint4 *)(g1 + j * 16);
        R.gs_hi.v[0] = *(const uint4 *)(g1 + 128 + j * 16);
        R.e[0] = *(const uint4 *)(e + j * 32);
        R.e[1] = *(const uint4 *)(e + j * 32 + 16);
        float inv8[RG_EPT];
        const float *inv = p.inv_freq + rg_batch_of(rr, p.seq_len) * p.inv_freq_batch_stride + j * RG_EPT;
        *(float4 *)&inv8[0] = __ldg((const float4 *)inv);
        *(float4 *)&inv8[4] = __ldg((const float4 *)inv + 1);
        __syncthreads();  // every thread has its tile data in registers: the stage may be refilled
        if (tid < 32 && tile + RG_K9_STAGES * (int64_t)gridDim.x < tiles)
            issue(stage, tile + RG_K9_STAGES * (int64_t)gridDim.x);
        const float acc = rg_group_sum<TPR>(dv_row_partial<2>(p, R, inv8));
        if (live && j == 0) p.grad_position_ids[r] = p.attention_scaling * acc;
    }
#endif
}
// Kernel 14 (EPT 4, the library's default): rg_k14_2d in src/op/rope_backward/kernels.cuh;
// 15 (EPT 2): dv_k14_2d in backward_knobs.cuh.

// ---------------------------------------------------------------------------
// Launcher
// ---------------------------------------------------------------------------
#ifndef RG_K14_SPREAD
#define RG_K14_SPREAD 0
#endif
#define RG_DEV_KERNEL_COUNT 15

// The development copy accepts every version (the library: 0 and 12 only).
static inline bool rg_dev_kernel_known(int kernel) { return kernel >= 0 && kernel <= RG_DEV_KERNEL_COUNT; }

static const char *const rg_dev_kernel_names[RG_DEV_KERNEL_COUNT + 1] = {
    "default", "1-naive", "2-warp", "3-vec", "4-vec-dbuf", "5-vec-pf", "6-vec-lat", "7-vec-ef", "8-vec-lat-ef", "9-bulk",
    "10-vec-mufu", "11-lat-mufu", "12-vec-2d", "13-vec-2d-st", "14-2d-ept4", "15-2d-ept2"};

// Kernel 6: 32 threads per row for H = 64 (EPT 2) and H = 128 (EPT 4); other
// shapes use kernel 5's EPT = 8 layout, which is already <= 8 d's per thread
// only when H <= 256.
template <int ESZ, bool EF, bool FAST = false, int DT = -1>
static cudaError_t rg_launch_lat(const ropegrad_rope_backward_problem &p, int sms, cudaStream_t st)
{
    const int64_t rows = p.batch_size * p.seq_len, H = p.head_dim / 2;
    int block = 256;
    while (block > 32 && (rows * 32 + block - 1) / block < 2 * sms) block >>= 1;
    int64_t grid = (rows * 32 + block - 1) / block;
    const int64_t cap = (int64_t)sms * (2048 / block) * 4;
    if (grid > cap) grid = cap;
    if (H == 64) rg_k5_vec<ESZ, 2, 32, false, EF, FAST, DT><<<(unsigned)grid, block, 0, st>>>(p);
    else rg_k5_vec<ESZ, 4, 32, false, EF, FAST, DT><<<(unsigned)grid, block, 0, st>>>(p);
    return cudaGetLastError();
}

// Kernels 3/4 apply where the shipped kernels 10/12 do: rg_vec_tpr (src/op/rope_backward/kernels.cuh).
template <int ESZ, int TPR>
static cudaError_t rg_dev_launch_vec(const ropegrad_rope_backward_problem &p, int kernel, int sms, cudaStream_t st)
{
    const int64_t rows = p.batch_size * p.seq_len;
    const int64_t threads_needed = (rows + 32 / TPR - 1) / (32 / TPR) * 32;  // whole warps
    if (kernel == 5) {
        // A few resident waves; each group then loops, prefetching ahead.
        const int block = 256;
        int64_t grid = (threads_needed + block - 1) / block;
        const int64_t cap = (int64_t)sms * (2048 / block) * RG_K5_WAVES;
        if (grid > cap) grid = cap;
        rg_k5_vec<ESZ, RG_EPT, TPR, true><<<(unsigned)grid, block, 0, st>>>(p);
    } else if (kernel == 12 || kernel == 13) {
        int block = 256;
        const int64_t B = p.batch_size, S = p.seq_len;
        while (block > 32 && B * ((S + block / TPR - 1) / (block / TPR)) < (int64_t)RG_K12_SPREAD * sms) block >>= 1;
        const dim3 grid((unsigned)((S + block / TPR - 1) / (block / TPR)), (unsigned)B);
        if (kernel == 12) {
            if constexpr (ESZ == 4) rg_k12_2d<ESZ, TPR, ROPEGRAD_F32><<<grid, block, 0, st>>>(p);
            else if (p.grad_dtype == ROPEGRAD_BF16) rg_k12_2d<ESZ, TPR, ROPEGRAD_BF16><<<grid, block, 0, st>>>(p);
            else rg_k12_2d<ESZ, TPR, ROPEGRAD_F16><<<grid, block, 0, st>>>(p);
        } else {
            if constexpr (ESZ == 4) dv_k12_2d<ESZ, TPR, ROPEGRAD_F32, true><<<grid, block, 0, st>>>(p);
            else if (p.grad_dtype == ROPEGRAD_BF16) dv_k12_2d<ESZ, TPR, ROPEGRAD_BF16, true><<<grid, block, 0, st>>>(p);
            else dv_k12_2d<ESZ, TPR, ROPEGRAD_F16, true><<<grid, block, 0, st>>>(p);
        }
    } else if (kernel == 14 || kernel == 15) {
        // TPR * 8 / EPT threads per row (EPT 4 or 2) on 256-thread blocks at
        // every size, as the library launches 14 (RG_K14_SPREAD > 0: shrunk
        // for small problems like 12's, as measured before 2026-12-01).
        constexpr int T4 = TPR * 2 <= 32 ? TPR * 2 : 32, T2 = TPR * 4 <= 32 ? TPR * 4 : 32;
        const int tpr = kernel == 14 ? T4 : T2;
        int block = 256;
        const int64_t B = p.batch_size, S = p.seq_len;
        while (block > 32 && B * ((S + block / tpr - 1) / (block / tpr)) < (int64_t)RG_K14_SPREAD * sms) block >>= 1;
        const dim3 grid((unsigned)((S + block / tpr - 1) / (block / tpr)), (unsigned)B);
        if constexpr (TPR * 2 <= 32 && TPR * 4 <= 32) {
            if (kernel == 14) {
                if constexpr (ESZ == 4) rg_k14_2d<ESZ, T4, ROPEGRAD_F32><<<grid, block, 0, st>>>(p);
                else if (p.grad_dtype == ROPEGRAD_BF16) rg_k14_2d<ESZ, T4, ROPEGRAD_BF16><<<grid, block, 0, st>>>(p);
                else rg_k14_2d<ESZ, T4, ROPEGRAD_F16><<<grid, block, 0, st>>>(p);
            } else {
                if constexpr (ESZ == 4) dv_k14_2d<ESZ, T2, 2, ROPEGRAD_F32><<<grid, block, 0, st>>>(p);
                else if (p.grad_dtype == ROPEGRAD_BF16) dv_k14_2d<ESZ, T2, 2, ROPEGRAD_BF16><<<grid, block, 0, st>>>(p);
                else dv_k14_2d<ESZ, T2, 2, ROPEGRAD_F16><<<grid, block, 0, st>>>(p);
            }
        } else {
            return rg_dev_launch_vec<ESZ, TPR>(p, 12, sms, st);  // H > 64: rows too wide for one warp at EPT 2/4
        }
    } else if (kernel == 3 || kernel == 7 || kernel == 10) {
        const int block = RG_K3_BLOCK;
        int64_t grid = (threads_needed + block - 1) / block;
        if (grid > 2147483647) grid = 2147483647;
        if (kernel == 3) dv_k3_vec<ESZ, TPR, false><<<(unsigned)grid, block, 0, st>>>(p);
        else if (kernel == 7) dv_k3_vec<ESZ, TPR, true><<<(unsigned)grid, block, 0, st>>>(p);
        else if constexpr (ESZ == 4) rg_k3_vec<ESZ, TPR, ROPEGRAD_F32><<<(unsigned)grid, block, 0, st>>>(p);
        else if (p.grad_dtype == ROPEGRAD_BF16) rg_k3_vec<ESZ, TPR, ROPEGRAD_BF16><<<(unsigned)grid, block, 0, st>>>(p);
        else rg_k3_vec<ESZ, TPR, ROPEGRAD_F16><<<(unsigned)grid, block, 0, st>>>(p);
    } else {
        // Small problems: shrink blocks so the work lands on as many SMs as
        // possible (latency, not bandwidth, decides there). Large ones: enough
        // resident blocks to fill every SM, each thread group looping over
        // rows so the prefetch of the next row has something to overlap.
        int block = 256;
        while (block > 32 && (threads_needed + block - 1) / block < 2 * sms) block >>= 1;
        const int64_t resident = (int64_t)sms * (2048 / block);
        int64_t grid = (threads_needed + block - 1) / block;
        const int64_t cap = resident * 2;  // each group then handles >= 1 row; big cases ~2+ rows
        if (grid > cap) grid = cap;
        rg_k4_vec<ESZ, TPR><<<(unsigned)grid, block, 0, st>>>(p);
    }
    return cudaGetLastError();
}

template <int ESZ>
static cudaError_t rg_dev_launch_vec_esz(const ropegrad_rope_backward_problem &p, int tpr, int kernel, int sms, cudaStream_t st)
{
    switch (tpr) {
    case 1: return rg_dev_launch_vec<ESZ, 1>(p, kernel, sms, st);
    case 2: return rg_dev_launch_vec<ESZ, 2>(p, kernel, sms, st);
    case 4: return rg_dev_launch_vec<ESZ, 4>(p, kernel, sms, st);
    case 8: return rg_dev_launch_vec<ESZ, 8>(p, kernel, sms, st);
    case 16: return rg_dev_launch_vec<ESZ, 16>(p, kernel, sms, st);
    default: return rg_dev_launch_vec<ESZ, 32>(p, kernel, sms, st);
    }
}

// Launches kernel version `kernel` (0 = best that applies) on `st`. The problem
// must already be validated. Versions 3 and 4 fall back to 2 for problems they
// do not specialize. Returns the launch's cudaError_t.
static cudaError_t rg_dev_launch(const ropegrad_rope_backward_problem *p, int kernel, cudaStream_t st)
{
    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return e;
    const int64_t rows = p->batch_size * p->seq_len;
    const int tpr = rg_vec_tpr(p);
    // Default: kernel 14, as the library's launcher (src/op/rope_backward/kernels.cuh).
    if (kernel == 0) kernel = 14;
    if (kernel == 6 && !(tpr && (p->head_dim == 128 || p->head_dim == 256))) kernel = tpr ? 3 : 2;
    if (kernel == 8 && !(tpr && (p->head_dim == 128 || p->head_dim == 256))) kernel = tpr ? 7 : 2;
    if (kernel == 11 && !(tpr && (p->head_dim == 128 || p->head_dim == 256))) kernel = tpr ? 10 : 2;
    if ((kernel == 12 || kernel == 13 || kernel == 14 || kernel == 15) && !(tpr && p->batch_size <= 65535 && p->seq_len <= 2147483647))
        kernel = tpr ? 10 : 2;
    if (kernel >= 3 && !tpr) kernel = 2;
    if (kernel == 9) {
        // Bulk copies need sm_90+, D = 128 (8 threads per row) and 2-byte grads.
        int major = 0;
        if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess) return e;
        if (major < 9 || tpr != 8 || p->grad_dtype == ROPEGRAD_F32) kernel = 3;
    }
    switch (kernel) {
    case 1: {
        const int block = 128;
        int64_t grid = (rows + block - 1) / block;
        if (grid > 65535LL * 32) grid = 65535LL * 32;
        rg_k1_naive<<<(unsigned)grid, block, 0, st>>>(*p);
        return cudaGetLastError();
    }
    case 2: {
        const int block = 256;
        int64_t grid = (rows * 32 + block - 1) / block;
        const int64_t cap = (int64_t)sms * 8 * 16;
        if (grid > cap) grid = cap;
        rg_k2_warp<<<(unsigned)grid, block, 0, st>>>(*p);
        return cudaGetLastError();
    }
    case 9: {
        const int64_t tiles = (rows + RG_K9_ROWS - 1) / RG_K9_ROWS;
        int64_t grid = (int64_t)sms * 6;  // 6 x 36 KB of shared memory per SM
        if (grid > tiles) grid = tiles;
        rg_k9_bulk<8><<<(unsigned)grid, RG_K9_ROWS * 8, 0, st>>>(*p);
        return cudaGetLastError();
    }
    case 6:
        return p->grad_dtype == ROPEGRAD_F32 ? rg_launch_lat<4, false>(*p, sms, st) : rg_launch_lat<2, false>(*p, sms, st);
    case 8:
        return p->grad_dtype == ROPEGRAD_F32 ? rg_launch_lat<4, true>(*p, sms, st) : rg_launch_lat<2, true>(*p, sms, st);
    case 11:
        if (p->grad_dtype == ROPEGRAD_F32) return rg_launch_lat<4, false, true, ROPEGRAD_F32>(*p, sms, st);
        if (p->grad_dtype == ROPEGRAD_BF16) return rg_launch_lat<2, false, true, ROPEGRAD_BF16>(*p, sms, st);
        return rg_launch_lat<2, false, true, ROPEGRAD_F16>(*p, sms, st);
    default:
        return p->grad_dtype == ROPEGRAD_F32 ? rg_dev_launch_vec_esz<4>(*p, tpr, kernel, sms, st)
                                             : rg_dev_launch_vec_esz<2>(*p, tpr, kernel, sms, st);
    }
}
