/* SPDX-License-Identifier: Apache-2.0 */
// apply_floor.cu -- the apply ops (088 forward, 068 backward) beside their
// memory floors, on the suite's 16 shapes (float32, [B,H,S,D], head_dim 128):
// a floor kernel moves exactly the bytes any correct kernel must move (088:
// q and k read and written, cos/sin [S,D] read; 068: the two gradients and q,
// k read, grad_q and grad_k written, cos/sin [B,S,D] read and grad_cos,
// grad_sin written), each byte once, computing nothing but folding every load
// into a store. 088 has two: "floor" (its first, kept with its meaning: the
// figures quoted as "ropegrad / floor") reads cos/sin's chunk again for every
// head row, from L2 after the first time: DRAM bytes as the definition, but
// twice q/k's bytes again from L2 to the SMs, which a kernel that loads the
// table once for several heads does not pay (dev variant heads2 measured below
// it); "flat floor" reads every byte once, cos/sin's too, and is the floor in
// the definition's sense (NOTES.md "088: heads2 and what the floor moves").
// 068 has two floors: "flat" spreads the chunks over every thread the bytes
// allow (the fastest any kernel can move them: the one ratios are taken
// against); "by row" keeps the shipped kernel's shape (one thread a cos/sin
// chunk, looping over the heads) to show what that shape alone costs. Each
// op's development kernels are timed beside the shipped one and checked
// against it (its outputs, run again, against the variant's in fresh buffers:
// the largest |a-b|/(1+|b|) and the largest distance in ulps, on the device):
// 088's from dev/rope_apply/apply_forward_variants.cuh, 068's from
// dev/rope_apply_backward/apply_backward_split.cuh (variants 0-7),
// dev/rope_apply_backward/apply_backward_staged.cuh (8-11) and apply_backward_knobs.cuh
// (12-19: the shipped staged kernel launched directly, and its launch and
// code knobs); 068's shipped kernel is the staged one (rg_apply_columns_staged)
// or its fallbacks where the launcher picks them: per workload 068 prints the
// launcher's choice worked out again with its own functions ("launcher:") and
// what CUPTI says the shipped launcher and the dev staged kernel ran
// ("launched:": kernel, grid, block, shared memory, registers, the carveout).
// 088 ends with a bf16 table (bf16 q/k and cos/sin on the same shapes): the
// 16-byte kernel of one head a thread (the baseline) against the shipped one of two.
// Per workload a line a variant, then the table row; at the end a
// geomean line a variant, and the geomean of each workload's best of them
// and the shipped kernel (an oracle, not a kernel: what a perfect per-shape
// choice among them would give, the timer's noise included). Timed as the
// protocol: CUPTI kernel spans, 2x-L2 memset before each launch, median of 50
// after 10 warmup. Needs nvcc only, from the
// repository root (scripts/gpu-build.sh builds it as build-gpu/dev/apply_floor):
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op dev/rope_apply/apply_floor.cu -lcupti -o /tmp/apply_floor
//   /tmp/apply_floor 088 && /tmp/apply_floor 068
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dev_common.h"
#include "rope_apply/kernels.cuh"
#include "rope_apply_backward/kernels.cuh"
#include "apply_backward_staged.cuh"
#include "apply_forward_variants.cuh"

static __device__ __forceinline__ uint4 af_xor(uint4 a, uint4 b)
{
    return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// 088: one 16-byte chunk of q or k per thread, its cos/sin chunk (L2-resident
// after the first read) folded in.
static __global__ void af_floor088(const uint4 *q, const uint4 *k, const uint4 *cos, const uint4 *sin, uint4 *qo,
                                   uint4 *ko, int64_t n_q4, int64_t n_k4, int64_t S, int64_t d4)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n_q4 + n_k4; i += (int64_t)gridDim.x * blockDim.x) {
        const bool is_q = i < n_q4;
        const int64_t e = is_q ? i : i - n_q4, row = e / d4, c = (row % S) * d4 + e % d4;
        const uint4 v = af_xor(af_xor(is_q ? q[e] : k[e], __ldg(cos + c)), __ldg(sin + c));
        (is_q ? qo : ko)[e] = v;
    }
}

// 088, flat: one 16-byte chunk per thread over q's, then k's, then cos/sin's
// chunks: q and k copied to their outputs, each cos/sin chunk read once and
// kept by a store that its values make impossible (every word of cos ^ sin
// all ones: the inputs are in [-1, 1), whose bit 30 is clear) but the compiler
// cannot rule out, so the loads stay.
static __global__ void af_floor088_flat(const uint4 *q, const uint4 *k, const uint4 *cos, const uint4 *sin, uint4 *qo,
                                        uint4 *ko, uint4 *sink, int64_t n_q4, int64_t n_k4, int64_t n_cs4)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n_q4 + n_k4 + n_cs4;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (i < n_q4) {
            qo[i] = q[i];
        } else if (i < n_q4 + n_k4) {
            ko[i - n_q4] = k[i - n_q4];
        } else {
            const int64_t e = i - n_q4 - n_k4;
            const uint4 v = af_xor(cos[e], sin[e]);
            if ((v.x & v.y & v.z & v.w) == 0xffffffffu) *sink = v;
        }
    }
}

// 068: one 16-byte chunk of a [B,S] row per thread, looping over q's and k's heads.
static __global__ void af_floor068(const uint4 *gq, const uint4 *gk, const uint4 *q, const uint4 *k, const uint4 *cos,
                                   const uint4 *sin, uint4 *gqo, uint4 *gko, uint4 *gc, uint4 *gs, int64_t B, int64_t S,
                                   int64_t hq, int64_t hk, int64_t d4)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < B * S * d4; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / d4, j = i % d4, b = r / S, s = r % S;
        const uint4 c = cos[i], n = sin[i];
        uint4 acc = af_xor(c, n);
        for (int64_t h = 0; h < hq; h++) {
            const int64_t o = ((b * hq + h) * S + s) * d4 + j;
            const uint4 g = gq[o];
            acc = af_xor(acc, q[o]);
            gqo[o] = af_xor(g, c);
        }
        for (int64_t h = 0; h < hk; h++) {
            const int64_t o = ((b * hk + h) * S + s) * d4 + j;
            const uint4 g = gk[o];
            acc = af_xor(acc, k[o]);
            gko[o] = af_xor(g, n);
        }
        gc[i] = acc;
        gs[i] = af_xor(acc, c);
    }
}

// 068, flat: one 16-byte chunk per thread over q's, then k's, then cos/sin's
// chunks: every gradient chunk folds its input chunk in, every cos/sin chunk
// gives its grad_cos and grad_sin chunks.
static __global__ void af_floor068_flat(const uint4 *gq, const uint4 *gk, const uint4 *q, const uint4 *k,
                                        const uint4 *cos, const uint4 *sin, uint4 *gqo, uint4 *gko, uint4 *gc,
                                        uint4 *gs, int64_t nq4, int64_t nk4, int64_t ncs4)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nq4 + nk4 + ncs4;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (i < nq4) {
            gqo[i] = af_xor(gq[i], q[i]);
        } else if (i < nq4 + nk4) {
            const int64_t e = i - nq4;
            gko[e] = af_xor(gk[e], k[e]);
        } else {
            const int64_t e = i - nq4 - nk4;
            const uint4 c = cos[e], n = sin[e];
            gc[e] = af_xor(c, n);
            gs[e] = af_xor(n, c);
        }
    }
}

// Seeded values in [-1, 1), as X (float or bf16).
static __device__ __forceinline__ void af_set(float *x, int64_t i, float v) { x[i] = v; }
static __device__ __forceinline__ void af_set(__nv_bfloat16 *x, int64_t i, float v) { x[i] = __float2bfloat16(v); }

template <typename X>
static __global__ void af_fill(X *x, int64_t n, uint32_t seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        af_set(x, i, (float)(h & 0xffffff) / 8388608.0f - 1.0f);
    }
}

static char *g_flush;
static size_t g_flush_bytes;

static double time_it(const std::function<void()> &launch)
{
    return dc_time_median(launch, g_flush, g_flush_bytes, "apply_floor");
}

struct af_shape {
    int64_t B, hq, hk, S;
};

// The suite's shapes, read from its workload.jsonl.
static std::vector<af_shape> suite_shapes(const char *op)
{
    std::vector<af_shape> v;
    std::string path = dc_suite_workloads(op);
    FILE *f = fopen(path.c_str(), "r");
    if (!f) {
        fprintf(stderr, "apply_floor: cannot open %s (run from the repository root)\n", path.c_str());
        exit(2);
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        const char *b = strstr(line, "\"batch_size\":"), *h = strstr(line, "\"num_heads\":");
        const char *k = strstr(line, "\"num_kv_heads\":"), *s = strstr(line, "\"seq_len\":");
        if (b && h && k && s) v.push_back({atoll(b + 13), atoll(h + 12), atoll(k + 15), atoll(s + 10)});
    }
    fclose(f);
    return v;
}

template <typename X = float>
static X *dev_random(int64_t n, uint32_t seed)
{
    X *p;
    CK(cudaMalloc(&p, (size_t)n * sizeof(X)));
    af_fill<X><<<rg_apply_grid(n), 256>>>(p, n, seed);
    CK(cudaGetLastError());
    return p;
}

// How far a variant's outputs are from the shipped kernel's: the largest
// |a-b| / (1 + |b|), and the largest distance in ulps (floats as ordered
// integers; a NaN on either side counts as the largest).
struct af_diff {
    double rel;
    uint32_t ulps;
};

static af_diff af_worse(af_diff a, af_diff b) { return {std::fmax(a.rel, b.rel), std::max(a.ulps, b.ulps)}; }

// One workload: the floor's and ropegrad's median times, in microseconds, and
// each development variant's time and difference from the shipped kernel.
struct af_times {
    double floor_us, row_floor_us, flat_floor_us, rg_us, dev_us, dev_err;   // flat_floor_us: 088's (NaN for 068)
    std::vector<double> var_us;
    std::vector<af_diff> var_err;
};

static __device__ __forceinline__ int64_t af_ordered(float x)
{
    const int32_t i = __float_as_int(x);
    return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

// diff[0]: the largest relative difference as the bits of a non-negative
// double (they order as the values; a NaN's above every number), diff[1] the
// largest ulp distance. Folded across each warp, then one atomic a warp.
static __global__ void af_diff_kernel(const float *a, const float *b, int64_t n, unsigned long long *diff)
{
    double rel = 0;
    unsigned long long ulps = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float x = a[i], y = b[i];
        const double r = fabs((double)x - (double)y) / (1.0 + fabs((double)y));
        rel = r > rel || r != r ? r : rel;
        const int64_t d = af_ordered(x) - af_ordered(y);
        const unsigned long long u = (x != x || y != y) ? 0xffffffffull : (unsigned long long)(d < 0 ? -d : d);
        ulps = u > ulps ? u : ulps;
    }
    unsigned long long rel_bits = (unsigned long long)__double_as_longlong(rel != rel ? (double)NAN : rel);
    for (int o = 16; o > 0; o /= 2) {
        rel_bits = max(rel_bits, __shfl_xor_sync(0xffffffffu, rel_bits, o));
        ulps = max(ulps, __shfl_xor_sync(0xffffffffu, ulps, o));
    }
    if (threadIdx.x % 32 == 0) {
        atomicMax(&diff[0], rel_bits);
        atomicMax(&diff[1], ulps);
    }
}

// The difference between n floats of two device buffers, worked out on the device.
static af_diff max_diff(const float *a, const float *b, int64_t n)
{
    unsigned long long *d, h[2];
    CK(cudaMalloc(&d, sizeof h));
    CK(cudaMemset(d, 0, sizeof h));
    af_diff_kernel<<<std::min(rg_apply_grid(n), 4096u), 256>>>(a, b, n, d);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    double rel;
    memcpy(&rel, &h[0], sizeof rel);
    return {rel, (uint32_t)std::min(h[1], 0xffffffffull)};
}

static float *dev_zeros(int64_t n)
{
    float *p;
    CK(cudaMalloc(&p, (size_t)n * 4));
    CK(cudaMemset(p, 0, (size_t)n * 4));
    return p;
}

// A dev variant's outputs against the shipped kernel's (run again here into
// p's outputs, which the timed launches before overwrote).
static af_diff check_dev(const ropegrad_rope_apply_backward_problem &p, int64_t nq, int64_t nk, int64_t ncs, int variant)
{
    CK(rg_rope_apply_backward_launch(&p, 0));
    float *oq = dev_zeros(nq), *ok = dev_zeros(nk), *gc = dev_zeros(ncs), *gs = dev_zeros(ncs);
    ropegrad_rope_apply_backward_problem d = p;
    d.grad_q = oq;
    d.grad_k = ok;
    d.grad_cos = gc;
    d.grad_sin = gs;
    CK(dev_apply_backward_variant(&d, 0, variant));
    CK(cudaDeviceSynchronize());
    af_diff m = max_diff(oq, (const float *)p.grad_q, nq);
    m = af_worse(m, max_diff(ok, (const float *)p.grad_k, nk));
    m = af_worse(m, max_diff(gc, (const float *)p.grad_cos, ncs));
    m = af_worse(m, max_diff(gs, (const float *)p.grad_sin, ncs));
    for (float *x : {oq, ok, gc, gs}) CK(cudaFree(x));
    return m;
}

// 088's: the same, q_out and k_out.
static af_diff check_fwd(const ropegrad_rope_apply_problem &p, int64_t nq, int64_t nk, int variant)
{
    CK(rg_rope_apply_launch(&p, 0));
    float *oq = dev_zeros(nq), *ok = dev_zeros(nk);
    ropegrad_rope_apply_problem d = p;
    d.q_out = oq;
    d.k_out = ok;
    CK(dev88_forward_variant(&d, 0, variant));
    CK(cudaDeviceSynchronize());
    const af_diff m = af_worse(max_diff(oq, (const float *)p.q_out, nq), max_diff(ok, (const float *)p.k_out, nk));
    for (float *x : {oq, ok}) CK(cudaFree(x));
    return m;
}

// Times each of an op's `count` variants and checks it against the shipped
// kernel. L2 lines a variant marked evict_last (088's ef+cs-last) are made
// normal again after it, so that they cannot favour what is timed next (its
// own launches keep them, as the harness would).
static void time_variants(af_times *t, int count, const std::function<cudaError_t(int)> &launch,
                          const std::function<af_diff(int)> &check)
{
    for (int v = 0; v < count; v++) {
        t->var_us.push_back(time_it([&] { CK(launch(v)); }));
        t->var_err.push_back(check(v));
        CK(cudaCtxResetPersistingL2Cache());
    }
}

// What a launch ran, as CUPTI recorded it: a line a kernel.
static void af_print_launched(const char *who, const std::function<void()> &launch)
{
    const std::vector<dc_kernel_rec> recs = dc_launched(launch);
    if (recs.empty()) printf("    %s launched: (CUPTI gave no record)\n", who);
    for (const dc_kernel_rec &r : recs)
        printf("    %s launched: %s grid %d block %d dyn smem %d regs %d smem config %u carveout %d\n", who, r.name.c_str(),
               r.grid, r.block, r.dyn_smem, r.regs, r.smem_executed, r.carveout);
}

// 068's launcher's choice for p, worked out again with its own functions
// (kernels.cuh rg_apply_backward_go: rg_apply_staged_applies, then
// rg_apply_split_one_wave), after its timed launches set the kernels'
// attributes as it leaves them.
static void af_print_pick068(const ropegrad_rope_apply_backward_problem &p)
{
    int dev = 0, sms = 0, smem_max = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const uint32_t split_threads = rg_apply_split_threads<float, float>(&p);
    const int64_t rows = rg_apply_cs_rows_of(p.shape), H = p.shape.head_dim / 2;
    const int64_t split_wave = split_threads ? rg_apply_wave(rg_apply_columns_split<float, float, 4>, split_threads,
                                                             rg_apply_split_smem<float>(H, split_threads), sms)
                                             : 0;
    rg_apply_staged_block blk;
    if (!rg_apply_staged_applies<float, float>(&p, smem_max, &blk)) {
        printf("    launcher: staged does not apply; split %u threads -> %s\n", split_threads, split_threads ? "split" : "columns");
        return;
    }
    // The suite's head_dim is 128: the launcher's HD = 128 instances (rg_apply_staged_pick).
    if (p.shape.head_dim != 128) {
        printf("    launcher: head_dim %lld, not the suite's 128: pick not re-derived\n", (long long)p.shape.head_dim);
        return;
    }
    const bool small = blk.G * blk.L <= 224;
    const int64_t staged_wave = small ? rg_apply_wave(rg_apply_columns_staged<float, float, 224, 5, 128>, blk.G * blk.L, blk.smem, sms)
                                      : rg_apply_wave(rg_apply_columns_staged<float, float, 256, 3, 128>, blk.G * blk.L, blk.smem, sms);
    const bool split = small ? rg_apply_split_one_wave<float, float, 224, 5, 128>(rows, blk, split_threads, sms)
                             : rg_apply_split_one_wave<float, float, 256, 3, 128>(rows, blk, split_threads, sms);
    printf("    launcher: rows %lld; staged G %u L %u threads %u smem %zu <%d>, wave %lld blocks; split threads %u, wave %lld "
           "blocks -> %s\n",
           (long long)rows, blk.G, blk.L, blk.G * blk.L, blk.smem, small ? 224 : 256, (long long)staged_wave, split_threads,
           (long long)split_wave, split ? "split" : "staged");
}

static void run(bool is88, const af_shape &w, af_times *t)
{
    const int64_t D = 128, d4 = D / 4, nq = w.B * w.hq * w.S * D, nk = w.B * w.hk * w.S * D;
    const int64_t ncs = (is88 ? 1 : w.B) * w.S * D;
    float *q = dev_random(nq, 1), *k = dev_random(nk, 2), *c = dev_random(ncs, 3), *s = dev_random(ncs, 4);
    float *gq = is88 ? nullptr : dev_random(nq, 5), *gk = is88 ? nullptr : dev_random(nk, 6);
    float *oq, *ok, *ogc = nullptr, *ogs = nullptr;
    CK(cudaMalloc(&oq, (size_t)nq * 4));
    CK(cudaMalloc(&ok, (size_t)nk * 4));
    if (!is88) {
        CK(cudaMalloc(&ogc, (size_t)ncs * 4));
        CK(cudaMalloc(&ogs, (size_t)ncs * 4));
    }
    const ropegrad_rope_apply_shape sh = {w.B, w.S, D, w.hq, w.hk, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32,
                                          is88 ? 0 : w.S * D, ROPEGRAD_ROTARY_HALF, 0};
    if (is88) {
        const ropegrad_rope_apply_problem p = {sh, q, k, c, s, oq, ok};
        t->row_floor_us = t->dev_us = t->dev_err = NAN;
        uint4 *sink;
        CK(cudaMalloc(&sink, sizeof *sink));
        t->flat_floor_us = time_it([&] {
            af_floor088_flat<<<rg_apply_grid((nq + nk + ncs) / 4), 256>>>((const uint4 *)q, (const uint4 *)k,
                                                                       (const uint4 *)c, (const uint4 *)s, (uint4 *)oq,
                                                                       (uint4 *)ok, sink, nq / 4, nk / 4, ncs / 4);
        });
        CK(cudaFree(sink));
        t->floor_us = time_it([&] {
            af_floor088<<<rg_apply_grid((nq + nk) / 4), 256>>>((const uint4 *)q, (const uint4 *)k, (const uint4 *)c,
                                                              (const uint4 *)s, (uint4 *)oq, (uint4 *)ok, nq / 4, nk / 4,
                                                              w.S, d4);
        });
        t->rg_us = time_it([&] { CK(rg_rope_apply_launch(&p, 0)); });
        CK(cudaDeviceSynchronize());
        af_print_launched("ropegrad", [&] { CK(rg_rope_apply_launch(&p, 0)); });
        time_variants(
            t, dev88_variant_count, [&](int v) { return dev88_forward_variant(&p, 0, v); },
            [&](int v) { return check_fwd(p, nq, nk, v); });
    } else {
        const ropegrad_rope_apply_backward_problem p = {sh, gq, gk, q, k, c, s, oq, ok, ogc, ogs};
        t->flat_floor_us = NAN;
        t->floor_us = time_it([&] {
            af_floor068_flat<<<rg_apply_grid((nq + nk + ncs) / 4), 256>>>(
                (const uint4 *)gq, (const uint4 *)gk, (const uint4 *)q, (const uint4 *)k, (const uint4 *)c,
                (const uint4 *)s, (uint4 *)oq, (uint4 *)ok, (uint4 *)ogc, (uint4 *)ogs, nq / 4, nk / 4, ncs / 4);
        });
        t->row_floor_us = time_it([&] {
            af_floor068<<<rg_apply_grid(ncs / 4), 256>>>((const uint4 *)gq, (const uint4 *)gk, (const uint4 *)q,
                                                        (const uint4 *)k, (const uint4 *)c, (const uint4 *)s, (uint4 *)oq,
                                                        (uint4 *)ok, (uint4 *)ogc, (uint4 *)ogs, w.B, w.S, w.hq, w.hk, d4);
        });
        t->dev_us = time_it([&] { CK(dev_apply_backward_split(&p, 0)); });
        t->rg_us = time_it([&] { CK(rg_rope_apply_backward_launch(&p, 0)); });
        CK(cudaDeviceSynchronize());
        t->dev_err = check_dev(p, nq, nk, ncs, 0).rel;
        af_print_pick068(p);
        af_print_launched("ropegrad", [&] { CK(rg_rope_apply_backward_launch(&p, 0)); });
        af_print_launched("staged (dev 9)", [&] { CK(dev_apply_backward_variant(&p, 0, 9)); });
        time_variants(
            t, dev_apply_variant_count, [&](int v) { return dev_apply_backward_variant(&p, 0, v); },
            [&](int v) { return check_dev(p, nq, nk, ncs, v); });
    }
    for (float *x : {q, k, c, s, gq, gk, oq, ok, ogc, ogs})
        if (x) CK(cudaFree(x));
}

// 088 with bf16 q/k and cos/sin on a suite shape (not the suite's dtype: the
// 16-byte path's 8-pair instances, whose registers differ): the 16-byte
// kernel of one head a thread (rg_apply_pairs_vec) and of two
// (rg_apply_pairs_heads2) launched directly, and whether their outputs have
// the same bits (they should).
struct af_bf16_times {
    double vec_us, heads2_us;
    bool same;
};

static af_bf16_times run88_bf16(const af_shape &w)
{
    const int64_t D = 128, nq = w.B * w.hq * w.S * D, nk = w.B * w.hk * w.S * D, ncs = w.S * D;
    using bf16 = __nv_bfloat16;
    bf16 *q = dev_random<bf16>(nq, 1), *k = dev_random<bf16>(nk, 2), *c = dev_random<bf16>(ncs, 3),
         *s = dev_random<bf16>(ncs, 4), *o[4];
    for (int i = 0; i < 4; i++) CK(cudaMalloc(&o[i], (size_t)(i % 2 ? nk : nq) * 2));
    const ropegrad_rope_apply_shape sh = {w.B, w.S, D, w.hq, w.hk, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_BF16, 0,
                                          ROPEGRAD_ROTARY_HALF, 0};
    const int64_t units = (nq + nk) / 16;   // 8 pairs (16 elements) a unit
    af_bf16_times t;
    t.vec_us = time_it([&] {
        rg_apply_pairs_vec<__nv_bfloat16, __nv_bfloat16, 8><<<rg_apply_grid(units), 256>>>(sh, 1.0f, q, k, c, s, o[0], o[1]);
        CK(cudaGetLastError());
    });
    t.heads2_us = time_it([&] { CK((rg_apply_heads2_launch<__nv_bfloat16, __nv_bfloat16>(sh, 1.0f, q, k, c, s, o[2], o[3], 0))); });
    CK(cudaDeviceSynchronize());
    // the same bits: two bf16 a float, compared as floats (0 ulps <=> equal bits)
    t.same = max_diff((const float *)o[2], (const float *)o[0], nq / 2).ulps == 0 &&
             max_diff((const float *)o[3], (const float *)o[1], nk / 2).ulps == 0;
    for (__nv_bfloat16 *x : {q, k, c, s, o[0], o[1], o[2], o[3]}) CK(cudaFree(x));
    return t;
}

// The bf16 table after 088's: a row a workload, the geomean of heads2 / vec.
static void print88_bf16(const std::vector<af_shape> &shapes)
{
    printf("\n| 088 bf16 | B | heads | kv heads | S | pairs-vec us | rg-heads2 us | heads2 / vec | same bits |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    double log_ratio = 0;
    for (size_t i = 0; i < shapes.size(); i++) {
        const af_shape &w = shapes[i];
        const af_bf16_times t = run88_bf16(w);
        log_ratio += std::log(t.heads2_us / t.vec_us);
        printf("| %zu | %lld | %lld | %lld | %lld | %.3f | %.3f | %.3f | %s |\n", i, (long long)w.B, (long long)w.hq,
               (long long)w.hk, (long long)w.S, t.vec_us, t.heads2_us, t.heads2_us / t.vec_us, t.same ? "yes" : "NO");
    }
    if (!shapes.empty()) printf("geomean bf16 rg-heads2 / pairs-vec: %.3f\n", std::exp(log_ratio / (double)shapes.size()));
}

// An op's development variants over the workloads: a line a variant for each
// workload (printed before the workload's table row), then a geomean line a
// variant with its largest difference from the shipped kernel, and the
// oracle line (each workload's best of the shipped kernel and the variants).
// Where the op has a flat floor beside its floor (088), each ratio to it too.
struct af_variant_summary {
    const char *const *names;
    int count;
    std::vector<double> log_ratio, log_flat;
    std::vector<af_diff> worst;
    double log_best = 0;
    size_t workloads = 0;

    af_variant_summary(const char *const *n, int c)
        : names(n), count(c), log_ratio((size_t)c, 0.0), log_flat((size_t)c, 0.0), worst((size_t)c, af_diff{0, 0})
    {
    }

    void add(const af_times &t)
    {
        double best_us = t.rg_us;
        for (int v = 0; v < count; v++) {
            best_us = std::min(best_us, t.var_us[(size_t)v]);
            const double us = t.var_us[(size_t)v];
            log_ratio[(size_t)v] += std::log(us / t.floor_us);
            log_flat[(size_t)v] += std::log(us / t.flat_floor_us);
            worst[(size_t)v] = af_worse(worst[(size_t)v], t.var_err[(size_t)v]);
            printf("    variant %-18s %.3f us  %.3f x floor", names[v], us, us / t.floor_us);
            if (std::isfinite(t.flat_floor_us)) printf("  %.3f x flat floor", us / t.flat_floor_us);
            printf("\n");
        }
        log_best += std::log(best_us / t.floor_us);
        workloads++;
    }

    void print() const
    {
        if (!workloads) return;
        const double n = (double)workloads;
        for (int v = 0; v < count; v++)
            printf("geomean variant %-18s / floor: %.3f  (largest difference from shipped %.1e, %u ulp)\n", names[v],
                   std::exp(log_ratio[(size_t)v] / n), worst[(size_t)v].rel, worst[(size_t)v].ulps);
        for (int v = 0; v < count; v++)
            if (std::isfinite(log_flat[(size_t)v]))
                printf("geomean variant %-18s / flat floor: %.3f\n", names[v], std::exp(log_flat[(size_t)v] / n));
        printf("geomean of each workload's best of shipped and the variants (oracle, not a kernel) / floor: %.3f\n",
               std::exp(log_best / n));
    }
};

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "088") && strcmp(argv[1], "068"))) {
        fprintf(stderr, "usage: apply_floor 088|068\n");
        return 2;
    }
    const bool is88 = !strcmp(argv[1], "088");
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    g_flush_bytes = 2 * (size_t)l2;
    CK(cudaMalloc(&g_flush, g_flush_bytes));
    const std::vector<af_shape> shapes = suite_shapes(argv[1]);
    printf("| %s | B | heads | kv heads | S | floor us | ropegrad us | ropegrad / floor | by-row floor us | dev split us | "
           "dev / floor | dev vs shipped | flat floor us (088) | ropegrad / flat floor |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
           argv[1]);
    double log_sum = 0, log_dev = 0, log_flat = 0;
    af_variant_summary variants(is88 ? dev88_variant_names : dev_apply_variant_names,
                                is88 ? dev88_variant_count : dev_apply_variant_count);
    for (size_t i = 0; i < shapes.size(); i++) {
        af_times t;
        run(is88, shapes[i], &t);
        log_sum += std::log(t.rg_us / t.floor_us);
        log_dev += std::log(t.dev_us / t.floor_us);
        log_flat += std::log(t.rg_us / t.flat_floor_us);
        variants.add(t);
        printf("| %zu | %lld | %lld | %lld | %lld | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.1e | %.3f | %.3f |\n", i,
               (long long)shapes[i].B, (long long)shapes[i].hq, (long long)shapes[i].hk, (long long)shapes[i].S,
               t.floor_us, t.rg_us, t.rg_us / t.floor_us, t.row_floor_us, t.dev_us, t.dev_us / t.floor_us, t.dev_err,
               t.flat_floor_us, t.rg_us / t.flat_floor_us);
    }
    if (!shapes.empty()) {
        printf("geomean ropegrad / floor: %.3f\n", std::exp(log_sum / (double)shapes.size()));
        if (is88) printf("geomean ropegrad / flat floor: %.3f\n", std::exp(log_flat / (double)shapes.size()));
        if (!is88) printf("geomean dev split / floor: %.3f\n", std::exp(log_dev / (double)shapes.size()));
        variants.print();
        if (is88) print88_bf16(shapes);
    }
    return 0;
}
