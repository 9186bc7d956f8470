/* SPDX-License-Identifier: Apache-2.0 */
// probe.cu -- what any kernel for this op must pay on this GPU, measured the
// protocol's way (CUPTI kernel spans, 2x-L2 memset before every launch, median of
// 50 after 10 warmup), and how accurate each sin/cos is. Two reports:
//
//   probe floor    per shape (the suite's W2, W13, W0, W12, W8, W14): the time of
//                  kernels that do nothing, or only the reads (and one store) any
//                  correct kernel must do, in several access patterns. These bound
//                  what a kernel can reach and tell where the time goes.
//                  Also: the same reads by the copy engine (2D tensor maps), and
//                  the plain reads after a flush that leaves L2 clean (a
//                  diagnostic: how much of the time the memset's dirty lines cost).
//   probe sincos   max |error| of rg_sincos and rg_sincos_mufu against double
//                  sin/cos, over argument ranges up to 4e6 rad.
//   probe backward BxS...   014 per shape: the read floor (16-byte loads of the
//                  bytes any kernel must read, one float stored per row) beside
//                  ropegrad's default kernel, and the ratio.
//   probe forward OP BxS...   the forward ops (OP 011 or 012) per shape: floor
//                  kernels that move exactly the op's bytes (011: 8 B read and
//                  512 B written per row; 012: 256 B read, 512 B written) in
//                  three access patterns, the best of them, and ropegrad's kernel
//                  (rope_forward/kernels.cuh, cos_sin/kernels.cuh) timed the same way, with the ratio.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op dev/common/probe.cu \
//        src/op/common.c -lcupti -o /tmp/probe && /tmp/probe floor && /tmp/probe sincos
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backward_kernels.cuh"  // the shipped launcher rg_cuda_launch, rg_smem_addr, kernel 9
#include "cos_sin/kernels.cuh"
#include "rope_forward/kernels.cuh"
#include "dev_common.h"
#include "floors.cuh"


// ---- floor kernels -----------------------------------------------------------------------
// Every reading kernel folds what it read into one value per thread and stores
// it only if it equals a value it cannot have (the loads stay live, the stores
// stay out of the time), except "store" variants, which write one float per row.

static __global__ void pr_empty(float *out)
{
    if (out && threadIdx.x == 1024) out[0] = 0.f;  // never true: an empty kernel
}

// The anchors' floor kernel: thread j (0..15) of a row reads bytes [16j, 16j+16)
// of the row's grad_cos and grad_sin (256 B each) and of its emb half row (the
// first 256 B of 512): 48 B per thread, 768 B per row. FULL_EMB reads the whole
// emb row too (1024 B per row), to show what the half-row pattern costs.
// EF: the loads carry an L2 evict-first policy (so that, in principle, later
// misses replace our clean lines rather than the memset's dirty ones).
static __device__ __forceinline__ uint4 pr_ld(const uint4 *p, bool ef)
{
    if (!ef) return rg_ld_stream(p);
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(rg_evict_first_policy()));
    return v;
}

template <bool STORE, bool FULL_EMB, bool EF = false>
static __global__ void pr_rows(const uint4 *gc, const uint4 *gs, const uint4 *emb, int64_t rows, float *out)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t r = t >> 4;
    const int j = t & 15;
    if (r >= rows) return;
    uint4 a = pr_ld(gc + r * 16 + j, EF), b = pr_ld(gs + r * 16 + j, EF);
    uint4 c = pr_ld(emb + r * 32 + j, EF);
    uint32_t x = a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w;
    if (FULL_EMB) {
        uint4 d = rg_ld_stream(emb + r * 32 + 16 + j);
        x ^= d.x ^ d.y ^ d.z ^ d.w;
    }
    if (STORE) {
        float v = __uint_as_float(x & 0x3fffffffu);
#pragma unroll
        for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (j == 0) out[r] = v;
    } else if (x == 0x9e3779b9u && t == 0) {
        out[0] = 1.f;
    }
}

// One contiguous stream of the same byte count (grid-stride, 16 B per load): the
// best a plain read of that many bytes does here. CG: plain L2-cached loads, for
// the clean-L2 flush below.
template <bool CG = false>
static __global__ void pr_stream(const uint4 *p, int64_t n16, float *out)
{
    uint32_t x = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n16; i += (int64_t)gridDim.x * blockDim.x) {
        uint4 v = CG ? __ldcg(p + i) : rg_ld_stream(p + i);
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (x == 0x9e3779b9u) out[0] = 1.f;
}

// The same three streams read by the copy engine (cp.async.bulk.tensor, 2D
// tensor maps): tiles of PR_T rows, one box per stream per tile (grad_cos and
// grad_sin: 128 x 2 B by PR_T rows; emb: the first 64 floats of PR_T rows),
// PR_STAGES tiles in flight per block, one producer thread per block, nothing
// computed. Whether the copy engine can beat plain loads at this pattern.
#define PR_T 32
#define PR_STAGES 4
#define PR_TILEB (PR_T * 256)
static __global__ void pr_tma(const __grid_constant__ CUtensorMap mgc, const __grid_constant__ CUtensorMap mgs,
                              const __grid_constant__ CUtensorMap memb, int64_t tiles)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) unsigned char sm[];  // PR_STAGES x 3 x PR_TILEB
    __shared__ __align__(8) uint64_t bar[PR_STAGES];
    if (threadIdx.x != 0) return;
    for (int st = 0; st < PR_STAGES; st++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(rg_smem_addr(&bar[st])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    auto issue = [&](int st, int64_t tile) {
        const uint32_t b = rg_smem_addr(&bar[st]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(3 * PR_TILEB) : "memory");
        const int y = (int)(tile * PR_T);
        const CUtensorMap *maps[3] = {&mgc, &mgs, &memb};
        for (int m = 0; m < 3; m++)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         ::"r"(rg_smem_addr(sm + (st * 3 + m) * PR_TILEB)), "l"((uint64_t)maps[m]), "r"(0), "r"(y), "r"(b)
                         : "memory");
    };
    for (int st = 0; st < PR_STAGES; st++)
        if (blockIdx.x + st * (int64_t)gridDim.x < tiles) issue(st, blockIdx.x + st * (int64_t)gridDim.x);
    uint32_t phases = 0;
    int it = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, it++) {
        const int st = it % PR_STAGES;
        uint32_t done = 0;
        while (!done)
            asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2; selp.u32 %0, 1, 0, P; }"
                         : "=r"(done) : "r"(rg_smem_addr(&bar[st])), "r"((phases >> st) & 1u) : "memory");
        phases ^= 1u << st;
        const int64_t nt = t + (int64_t)PR_STAGES * gridDim.x;
        if (nt < tiles) issue(st, nt);
    }
#endif
}

typedef CUresult (*pr_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                 const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A 2D map over `rows` rows of `row_bytes` bytes, each box = `box_cols` elements x PR_T rows.
static CUtensorMap pr_map(pr_encode_fn enc, void *base, CUtensorMapDataType dt, int esz, int64_t rows, int row_elems,
                          int box_cols)
{
    CUtensorMap m;
    const cuuint64_t dims[2] = {(cuuint64_t)row_elems, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)row_elems * esz};
    const cuuint32_t box[2] = {(cuuint32_t)box_cols, PR_T}, estr[2] = {1, 1};
    CUresult r = enc(&m, dt, 2, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                     CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "probe: cuTensorMapEncodeTiled failed (%d)\n", (int)r);
        exit(1);
    }
    return m;
}

// ---- sincos accuracy ---------------------------------------------------------------------
static __global__ void pr_sincos(const float *x, int64_t n, float *s1, float *c1, float *s2, float *c2)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    rg_sincos(x[i], &s1[i], &c1[i]);
    rg_sincos_mufu(x[i], &s2[i], &c2[i]);
}


// Median span of launch() with a cold L2 before each: the protocol's memset, or
// (read_flush) a kernel that reads the flush buffer, whose records are skipped.
template <typename F>
static double time_it(char *flush, size_t flush_bytes, F launch, bool read_flush = false)
{
    const int warm = 10, iters = 50, per = read_flush ? 2 : 1;
    dc_begin();
    for (int it = 0; it < warm + iters; it++) {
        // A flush that leaves L2 clean: read the 2x-L2 buffer (a diagnostic only;
        // the protocol's memset leaves L2 full of dirty lines).
        if (read_flush) pr_stream<true><<<1056, 256>>>((const uint4 *)flush, (int64_t)(flush_bytes / 16), nullptr);
        else CK(cudaMemsetAsync(flush, 0, flush_bytes));
        launch();
    }
    CK(cudaGetLastError());
    std::vector<double> all = dc_end(), t;
    if (all.size() != (size_t)(per * (warm + iters))) {
        fprintf(stderr, "probe: CUPTI gave %zu records for %d launches\n", all.size(), per * (warm + iters));
        exit(1);
    }
    for (int it = warm; it < warm + iters; it++) t.push_back(all[(size_t)(it * per + per - 1)]);
    return dc_median(t);
}

static int floor_report()
{
    int l2 = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    char *flush;
    CK(cudaMalloc(&flush, 2 * (size_t)l2));
    const int shapes[][3] = {{2, 1, 128}, {13, 1, 1321}, {0, 32, 256}, {12, 4, 3967}, {8, 64, 3011}, {14, 64, 8192}};
    const int64_t max_rows = 64 * 8192;
    uint4 *gc, *gs, *emb;
    float *out;
    CK(cudaMalloc(&gc, max_rows * 256));
    CK(cudaMalloc(&gs, max_rows * 256));
    CK(cudaMalloc(&emb, max_rows * 512));
    CK(cudaMalloc(&out, max_rows * 16 * 4));
    CK(cudaMemset(gc, 1, max_rows * 256));
    CK(cudaMemset(gs, 2, max_rows * 256));
    CK(cudaMemset(emb, 3, max_rows * 512));

    printf("probe floor: median us, CUPTI kernel spans, 2x-L2 memset before each of 60 launches (10 warmup)\n");
    printf("empty kernel (1 block of 32): %.2f us\n", time_it(flush, 2 * (size_t)l2, [&] { pr_empty<<<1, 32>>>(nullptr); }));
    pr_encode_fn enc = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&enc, 12000, cudaEnableDefault, &q));
    if (!enc) {
        fprintf(stderr, "probe: no cuTensorMapEncodeTiled\n");
        return 1;
    }
    CK(cudaFuncSetAttribute(pr_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, PR_STAGES * 3 * PR_TILEB));
    printf("| W | rows | bytes_min MB | empty grid | read 3x16 B/thread | + store/row | full emb rows | 1 contiguous stream | stream GB/s | bulk-tensor read | read, evict-first | read, clean-L2 flush |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (auto &sh : shapes) {
        const int64_t rows = (int64_t)sh[1] * sh[2];
        const int64_t threads = rows * 16;
        const int block = 256;
        const unsigned grid = (unsigned)((threads + block - 1) / block);
        const double mb = rows * 772.0 / 1e6;
        const double t_empty = time_it(flush, 2 * (size_t)l2, [&] { pr_empty<<<grid, block>>>(nullptr); });
        const double t_read = time_it(flush, 2 * (size_t)l2, [&] { pr_rows<false, false><<<grid, block>>>(gc, gs, emb, rows, out); });
        const double t_store = time_it(flush, 2 * (size_t)l2, [&] { pr_rows<true, false><<<grid, block>>>(gc, gs, emb, rows, out); });
        const double t_full = time_it(flush, 2 * (size_t)l2, [&] { pr_rows<false, true><<<grid, block>>>(gc, gs, emb, rows, out); });
        // The same bytes as one contiguous stream (from the emb buffer, which is
        // large enough): 2 x 256 + 256 B per row.
        const int64_t n16 = rows * 48;
        int64_t sgrid = (n16 + block - 1) / block;
        if (sgrid > (int64_t)sms * 8 * 4) sgrid = (int64_t)sms * 8 * 4;
        const double t_stream = time_it(flush, 2 * (size_t)l2, [&] { pr_stream<<<(unsigned)sgrid, block>>>(emb, n16, out); });
        const double t_ef = time_it(flush, 2 * (size_t)l2, [&] { pr_rows<false, false, true><<<grid, block>>>(gc, gs, emb, rows, out); });
        const double t_clean = time_it(flush, 2 * (size_t)l2, [&] { pr_rows<false, false><<<grid, block>>>(gc, gs, emb, rows, out); }, true);
        const int64_t tiles = (rows + PR_T - 1) / PR_T;
        const CUtensorMap mgc = pr_map(enc, gc, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, rows, 128, 128);
        const CUtensorMap mgs = pr_map(enc, gs, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, rows, 128, 128);
        const CUtensorMap memb = pr_map(enc, emb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, rows, 128, 64);
        const int smem = PR_STAGES * 3 * PR_TILEB;
        int tgrid = (int)std::min<int64_t>(tiles, (int64_t)sms * 2);
        const double t_tma = time_it(flush, 2 * (size_t)l2, [&] { pr_tma<<<tgrid, 32, smem>>>(mgc, mgs, memb, tiles); });
        printf("| %d | %lld | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f | %.2f |\n", sh[0], (long long)rows,
               mb, t_empty, t_read, t_store, t_full, t_stream, n16 * 16 / t_stream * 1e-3, t_tma, t_ef, t_clean);
    }
    return 0;
}

// ---- forward-op floors: dev/common/floors.cuh ------------------------------------------

// "BxS" arguments -> (B, S) pairs and the largest B*S; 1 (with a message) on a bad one.
static int parse_shapes(const char *who, int n, char **shapes, long long max, std::vector<std::pair<int64_t, int64_t>> &bs,
                        int64_t &max_rows)
{
    for (int i = 0; i < n; i++) {
        long long b = 0, s = 0;
        if (sscanf(shapes[i], "%lldx%lld", &b, &s) != 2 || b < 1 || s < 1 || b * s > max) {
            fprintf(stderr, "%s: bad shape '%s' (BxS)\n", who, shapes[i]);
            return 1;
        }
        bs.push_back({b, s});
        max_rows = std::max<int64_t>(max_rows, b * s);
    }
    return 0;
}

static int forward_report(const char *op, int n, char **shapes)
{
    const bool is11 = !strcmp(op, "011");
    if (!is11 && strcmp(op, "012")) {
        fprintf(stderr, "probe forward: OP must be 011 or 012\n");
        return 2;
    }
    int l2 = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    char *flush;
    CK(cudaMalloc(&flush, 2 * (size_t)l2));
    std::vector<std::pair<int64_t, int64_t>> bs;
    int64_t max_rows = 1;
    if (parse_shapes("probe forward", n, shapes, 1ll << 26, bs, max_rows)) return 2;
    int64_t *pos;
    float *inv, *freqs;
    uint16_t *out;
    CK(cudaMalloc(&pos, max_rows * 8));
    CK(cudaMalloc(&inv, 64 * 4));
    CK(cudaMalloc(&freqs, max_rows * 256));
    CK(cudaMalloc(&out, max_rows * 512));
    {   // sequential positions (get_inputs), llama3-like frequencies, random freqs
        std::vector<int64_t> hp(max_rows);
        std::vector<float> hi(64), hf(max_rows * 64);
        for (int64_t i = 0; i < max_rows; i++) hp[i] = i % 8192;
        for (int d = 0; d < 64; d++) hi[d] = (float)std::pow(500000.0, -d / 64.0);
        for (auto &v : hf) v = (float)((urand() - 0.5) * 8.0);
        CK(cudaMemcpy(pos, hp.data(), max_rows * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(inv, hi.data(), 64 * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(freqs, hf.data(), max_rows * 256, cudaMemcpyHostToDevice));
    }
    const size_t fb = 2 * (size_t)l2;
    printf("probe forward %s: median us, CUPTI kernel spans, 2x-L2 memset before each of 60 launches (10 warmup)\n", op);
    printf("| # | B | S | MB moved | %s | best floor | ropegrad | ropegrad / floor |\n",
           is11 ? "16 thr/row 2x16 B | 32 thr/row 16 B | grid-stride 16 B" : "8 thr/row 2 in 4 out | 16 thr/row | 32 thr/row");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<double> g_floor, g_rg;
    for (size_t w = 0; w < bs.size(); w++) {
        const int64_t B = bs[w].first, S = bs[w].second, rows = B * S;
        const double mb = rows * (is11 ? 520.0 : 768.0) / 1e6;
        double t[3], trg;
        if (is11) {
            uint4 *o = (uint4 *)out;
            t[0] = time_it(flush, fb, [&] { fl11_t16<<<(unsigned)((rows * 16 + 255) / 256), 256>>>(pos, (const uint4 *)inv, o, rows); });
            t[1] = time_it(flush, fb, [&] { fl11_t32<<<(unsigned)((rows * 32 + 255) / 256), 256>>>(pos, (const uint4 *)inv, o, rows); });
            const unsigned g = (unsigned)std::min<int64_t>((rows * 32 + 255) / 256, (int64_t)sms * 8);
            t[2] = time_it(flush, fb, [&] { fl11_grid<<<g, 256>>>(pos, (const uint4 *)inv, o, rows); });
            ropegrad_rope_forward_problem p = {B, S, 128, pos, inv, 1.0f, out};
            trg = time_it(flush, fb, [&] { CK(rg_rope_forward_launch(&p, 0)); });
        } else {
            const uint4 *in = (const uint4 *)freqs;
            uint4 *oc = (uint4 *)out, *os = (uint4 *)(out + rows * 128);
            t[0] = time_it(flush, fb, [&] { fl12_t8<<<(unsigned)((rows * 8 + 255) / 256), 256>>>(in, oc, os, rows); });
            t[1] = time_it(flush, fb, [&] { fl12_t16<<<(unsigned)((rows * 16 + 255) / 256), 256>>>(in, oc, os, rows); });
            t[2] = time_it(flush, fb, [&] { fl12_t32<<<(unsigned)((rows * 32 + 255) / 256), 256>>>(in, oc, os, rows); });
            ropegrad_cos_sin_problem p = {B, S, 128, freqs, 1.0f, out, out + rows * 128};
            trg = time_it(flush, fb, [&] { CK(rg_cos_sin_launch(&p, 0)); });
        }
        const double best = std::min(t[0], std::min(t[1], t[2]));
        g_floor.push_back(std::log(best));
        g_rg.push_back(std::log(trg));
        printf("| %zu | %lld | %lld | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.3f |\n", w, (long long)B, (long long)S, mb,
               t[0], t[1], t[2], best, trg, trg / best);
    }
    double sf = 0, sr = 0;
    for (size_t i = 0; i < g_floor.size(); i++) sf += g_floor[i], sr += g_rg[i];
    const double gf = std::exp(sf / g_floor.size()), gr = std::exp(sr / g_rg.size());
    printf("| geomean | | | | | | | %.3f | %.3f | %.3f |\n", gf, gr, gr / gf);
    return 0;
}

// 014 over the suite's shapes: the read floor (the anchors' kernel: 16-byte
// loads of bytes_min, one float stored per row) beside ropegrad's default kernel.
static int backward_report(int n, char **shapes)
{
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    char *flush;
    CK(cudaMalloc(&flush, 2 * (size_t)l2));
    std::vector<std::pair<int64_t, int64_t>> bs;
    int64_t max_rows = 1;
    if (parse_shapes("probe backward", n, shapes, 1ll << 22, bs, max_rows)) return 2;
    uint4 *gc, *gs, *emb;
    float *out, *inv;
    CK(cudaMalloc(&gc, max_rows * 256));
    CK(cudaMalloc(&gs, max_rows * 256));
    CK(cudaMalloc(&emb, max_rows * 512));
    CK(cudaMalloc(&out, max_rows * 16 * 4));
    CK(cudaMalloc(&inv, 64 * 64 * 4));
    CK(cudaMemset(gc, 0, max_rows * 256));
    CK(cudaMemset(gs, 0, max_rows * 256));
    CK(cudaMemset(emb, 0, max_rows * 512));
    CK(cudaMemset(inv, 0, 64 * 64 * 4));
    const size_t fb = 2 * (size_t)l2;
    printf("probe backward (014): median us, CUPTI kernel spans, 2x-L2 memset before each of 60 launches (10 warmup)\n");
    printf("| # | B | S | read floor (+ inv_freq, + store/row) | ropegrad default | ropegrad / floor |\n|---|---|---|---|---|---|\n");
    double sf = 0, sr = 0;
    for (size_t w = 0; w < bs.size(); w++) {
        const int64_t B = bs[w].first, S = bs[w].second, rows = B * S;
        const unsigned grid = (unsigned)((rows * 16 + 255) / 256);
        const double tf = time_it(flush, fb, [&] { fl14_read_store<<<grid, 256>>>(gc, gs, emb, (const uint4 *)inv, S, rows, out); });
        ropegrad_rope_backward_problem p = {};
        p.batch_size = B, p.seq_len = S, p.head_dim = 128, p.grad_dtype = ROPEGRAD_BF16;
        p.grad_cos = gc, p.grad_sin = gs, p.emb = (const float *)emb, p.inv_freq = inv, p.inv_freq_batch_stride = 64;
        p.attention_scaling = 1.0f, p.grad_position_ids = out;
        const double tr = time_it(flush, fb, [&] { CK(rg_cuda_launch(&p, 0, 0)); });
        sf += std::log(tf), sr += std::log(tr);
        printf("| %zu | %lld | %lld | %.2f | %.2f | %.3f |\n", w, (long long)B, (long long)S, tf, tr, tr / tf);
    }
    const double gf = std::exp(sf / bs.size()), gr = std::exp(sr / bs.size());
    printf("| geomean | | | %.3f | %.3f | %.3f |\n", gf, gr, gr / gf);
    return 0;
}

static int sincos_report()
{
    const int64_t n = 1 << 24;
    g_rng = 12345;
    const double ranges[] = {3.14159265358979, 100.0, 3.0e5, 4.0e6};
    std::vector<float> x(n), s1(n), c1(n), s2(n), c2(n);
    float *dx, *ds1, *dc1, *ds2, *dc2;
    CK(cudaMalloc(&dx, n * 4));
    CK(cudaMalloc(&ds1, n * 4));
    CK(cudaMalloc(&dc1, n * 4));
    CK(cudaMalloc(&ds2, n * 4));
    CK(cudaMalloc(&dc2, n * 4));
    printf("probe sincos: max |error| against double sin/cos, %lld arguments uniform in [-R, R]\n", (long long)n);
    printf("| R | rg_sincos sin | rg_sincos cos | rg_sincos_mufu sin | rg_sincos_mufu cos |\n|---|---|---|---|---|\n");
    for (double R : ranges) {
        for (int64_t i = 0; i < n; i++) x[i] = (float)((2.0 * urand() - 1.0) * R);
        CK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
        pr_sincos<<<(unsigned)((n + 255) / 256), 256>>>(dx, n, ds1, dc1, ds2, dc2);
        CK(cudaGetLastError());
        CK(cudaMemcpy(s1.data(), ds1, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c1.data(), dc1, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(s2.data(), ds2, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c2.data(), dc2, n * 4, cudaMemcpyDeviceToHost));
        double e[4] = {0, 0, 0, 0};
        for (int64_t i = 0; i < n; i++) {
            const double s = sin((double)x[i]), c = cos((double)x[i]);
            e[0] = fmax(e[0], fabs(s1[i] - s));
            e[1] = fmax(e[1], fabs(c1[i] - c));
            e[2] = fmax(e[2], fabs(s2[i] - s));
            e[3] = fmax(e[3], fabs(c2[i] - c));
        }
        printf("| %.3g | %.2e | %.2e | %.2e | %.2e |\n", R, e[0], e[1], e[2], e[3]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "floor")) return floor_report();
    if (argc == 2 && !strcmp(argv[1], "sincos")) return sincos_report();
    if (argc >= 4 && !strcmp(argv[1], "forward")) return forward_report(argv[2], argc - 3, argv + 3);
    if (argc >= 3 && !strcmp(argv[1], "backward")) return backward_report(argc - 2, argv + 2);
    fprintf(stderr, "usage: probe floor|sincos|forward OP BxS...\n");
    return 2;
}
