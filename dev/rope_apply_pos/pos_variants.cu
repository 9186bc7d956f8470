/* SPDX-License-Identifier: Apache-2.0 */
// pos_variants.cu -- the apply from positions' kernels (src/op/rope_apply_pos/
// kernels.cuh) at Hugging Face training shapes (bf16, Qwen3-4B's heads: 32 q
// heads, 8 kv heads, head_dim 128, q and k [B,S,H,D]), beside the shipped
// launcher and a copy of the same bytes (q and k read and written: the floor):
//   - the warp kernel (rg_posw_kernel, shipped where its units divide a warp)
//     under its knobs: heads a thread loads before it stores them (HSTEP) and
//     blocks an SM asked of the register allocation (MINB);
//   - the block kernel (rg_pos_kernel, shipped for the other shapes) under its
//     knobs: the register budget (its body here under __launch_bounds__(512,
//     MINB); shipped: (512) alone, which ptxas does not treat as MINB 1) and
//     the units a block aims at (rg_pos_plan's block_units, 512 shipped);
//   - positions from position_ids and from cu_seqlens (sequences of S tokens);
//   - the packed table ops' kernels (src/op/rope_apply_thd/kernels.cuh): the
//     warp kernel reading a bf16 table, and the block kernel rg_thd_kernel.
// Each variant's outputs are compared with the shipped launcher's bit for bit
// (they must be equal: the same arithmetic); each time is the median over 7
// trials of 20 launches back to back (CUDA events), as microseconds a launch.
//
//   build/dev/pos_variants            (cmake --build build --target dev)
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "rope_apply_thd/kernels.cuh"

#define CK(x)                                                                                              \
    do {                                                                                                   \
        cudaError_t e_ = (x);                                                                              \
        if (e_ != cudaSuccess) {                                                                           \
            fprintf(stderr, "pos_variants: %s: %s\n", #x, cudaGetErrorString(e_));                         \
            exit(1);                                                                                       \
        }                                                                                                  \
    } while (0)

typedef __nv_bfloat16 bf16;

struct shape_case {
    int64_t B, S;
};

// us a launch of fn: the median over 7 trials of 20 launches.
template <typename F>
static double time_us(F fn)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) fn();
    std::vector<float> t;
    for (int trial = 0; trial < 7; trial++) {
        CK(cudaEventRecord(a));
        for (int i = 0; i < 20; i++) fn();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0f / 20.0f);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[3];
}

// rg_pos_kernel's body (src/op/rope_apply_pos/kernels.cuh) under
// __launch_bounds__(512, MINB): bf16, rotate-half, 16-byte units.
template <int MINB>
__global__ void __launch_bounds__(512, MINB) pv_kernel(rg_pos_args a)
{
    extern __shared__ float pv_sh[];
    const int H = a.R / 2;
    float *c = pv_sh, *n = pv_sh + a.tpb * H;
    for (int64_t blk = blockIdx.x; blk < a.blocks; blk += gridDim.x) {
        const rg_pos_block b = rg_pos_block_at<8, true>(a, blk);
        rg_pos_unit<bf16, 8> w[RG_POS_UPT];
        rg_pos_load_first<bf16, 8, true, true>(a, b, w);
        for (int i = threadIdx.x; i < b.nt * H; i += blockDim.x) {
            const int tl = i / H, j = i - tl * H;
            const float x = (float)rg_pos_position_dev(a, b.t0 + tl) * __ldg(a.inv + j);
            rg_pos_cos_sin(x, a.scale, (int)a.s.cos_sin_dtype, c[i], n[i]);
        }
        __syncthreads();
        rg_pos_store_all<bf16, 8, true, true>(a, b, w, c, n, c, n);
    }
}

// Compares the outputs (out_bytes at got) with the shipped launcher's (at
// want) and prints the time of launch beside the copy's.
template <typename F>
static void report(const char *label, F launch, void *got_dev, const void *want_dev, size_t out_bytes, double floor_us,
                   double bytes, const char *info)
{
    CK(cudaMemset(got_dev, 0, out_bytes));
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned char> got(out_bytes), want(out_bytes);
    CK(cudaMemcpy(got.data(), got_dev, out_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(want.data(), want_dev, out_bytes, cudaMemcpyDeviceToHost));
    const int same = memcmp(got.data(), want.data(), out_bytes) == 0;
    const double us = time_us(launch);
    printf("  %-34s %-44s %9.1f us %7.0f GB/s %5.1f%% of copy  %s\n", label, info, us, bytes / us / 1e3,
           100.0 * floor_us / us, same ? "same bits" : "DIFFERENT BITS");
    if (!same) exit(1);
}

// "R regs, N blocks/SM (T threads)" of kernel k launched with threads, shmem.
template <typename K>
static const char *occupancy(K k, int threads, size_t shmem, int tpb)
{
    static char buf[96];
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, shmem));
    snprintf(buf, sizeof buf, "%3d regs %2d blocks/SM x %3d threads %2d tok", fa.numRegs, per_sm, threads, tpb);
    return buf;
}

template <int MINB>
static void block_variant(rg_pos_args a, int block_units, void *out, const void *ref, size_t out_bytes, double floor_us,
                          double bytes)
{
    rg_pos_cfg cfg;
    CK(rg_pos_plan(a, rg_pos_units_per_head<8, true>(a), a.R, cfg, block_units));
    char l[64];
    snprintf(l, sizeof l, "block: minb %d, block units %d", MINB, block_units);
    report(l, [&] { pv_kernel<MINB><<<cfg.grid, cfg.threads, cfg.shmem>>>(a); }, out, ref, out_bytes, floor_us, bytes,
           occupancy(pv_kernel<MINB>, cfg.threads, cfg.shmem, a.tpb));
}

template <int HSTEP, int MINB, typename SRC = rg_posw_from_positions>
static void warp_variant(rg_pos_args a, void *out, const void *ref, size_t out_bytes, double floor_us, double bytes,
                         SRC src = SRC())
{
    rg_pos_cfg cfg;
    CK(rg_posw_plan(a, rg_pos_rot_units<8, true>(a), src.rows, cfg));
    auto k = rg_posw_kernel<bf16, 8, true, SRC, HSTEP, MINB>;
    char l[64];
    snprintf(l, sizeof l, "%swarp: hstep %d, minb %d%s", src.rows == 4 ? "thd " : "", HSTEP, MINB,
             HSTEP == SRC::hstep && MINB == SRC::minb ? " (shipped)" : "");
    report(l, [&] { k<<<cfg.grid, cfg.threads, cfg.shmem>>>(a, src); }, out, ref, out_bytes, floor_us, bytes,
           occupancy(k, cfg.threads, cfg.shmem, 1));
}

// The positions' variants on p's q and k (p's outputs: the shipped launcher's).
static void positions_variants(const ropegrad_rope_apply_pos_problem &p, bf16 *qo, bf16 *ko, size_t out_bytes,
                               double floor_us, double bytes)
{
    rg_pos_args a;
    memset(&a, 0, sizeof a);
    a.s = p.shape, a.R = (int)p.shape.head_dim, a.scale = 1.0f, a.sign = 1.0f, a.ids = p.position_ids, a.bits = 64;
    a.cu_seqlens = p.cu_seqlens, a.nseq = (int)p.num_seqs, a.inv = p.inv_freq;
    a.q = p.q, a.k = p.k, a.qo = qo, a.ko = ko;
    a.tpb = a.hpb = a.groups = 1;
    warp_variant<1, 4>(a, qo, p.q_out, out_bytes, floor_us, bytes);
    warp_variant<2, 2>(a, qo, p.q_out, out_bytes, floor_us, bytes);
    warp_variant<2, 3>(a, qo, p.q_out, out_bytes, floor_us, bytes);
    warp_variant<4, 1>(a, qo, p.q_out, out_bytes, floor_us, bytes);
    warp_variant<4, 2>(a, qo, p.q_out, out_bytes, floor_us, bytes);
    static const int units[] = {512, 1024, 2048};
    for (int u : units) {
        block_variant<1>(a, u, qo, p.q_out, out_bytes, floor_us, bytes);
        block_variant<2>(a, u, qo, p.q_out, out_bytes, floor_us, bytes);
        block_variant<3>(a, u, qo, p.q_out, out_bytes, floor_us, bytes);
    }
}

// The packed table ops' kernels on p's q and k, a bf16 table of S rows and
// position_ids (p's outputs: the shipped launcher's).
static void thd_variants(ropegrad_rope_apply_thd_problem p, bf16 *qo, bf16 *ko, size_t out_bytes, double floor_us,
                         double bytes)
{
    const void *ref = p.q_out;
    p.q_out = qo, p.k_out = ko;
    report("thd shipped launcher", [&] { CK(rg_thd_launch(&p, 1.0f, 0)); }, qo, ref, out_bytes, floor_us, bytes, "");
    rg_thd_args ta;
    memset(&ta, 0, sizeof ta);
    rg_pos_args &a = ta.a;
    a.s = p.shape, a.R = (int)p.shape.head_dim, a.scale = 1.0f, a.sign = 1.0f, a.ids = p.position_ids, a.bits = 64;
    a.cu_seqlens = p.cu_seqlens, a.nseq = (int)p.num_seqs;
    a.q = p.q, a.k = p.k, a.qo = qo, a.ko = ko, a.tpb = a.hpb = a.groups = 1;
    ta.cos = p.cos, ta.sin = p.sin, ta.table_len = p.table_len;
    const rg_posw_from_table<bf16> src = {(const bf16 *)p.cos, (const bf16 *)p.sin, p.table_len};
    warp_variant<1, 4>(a, qo, ref, out_bytes, floor_us, bytes, src);
    warp_variant<2, 2>(a, qo, ref, out_bytes, floor_us, bytes, src);
    warp_variant<2, 3>(a, qo, ref, out_bytes, floor_us, bytes, src);
    warp_variant<4, 1>(a, qo, ref, out_bytes, floor_us, bytes, src);
    rg_pos_cfg cfg;
    CK(rg_pos_plan(a, rg_pos_units_per_head<8, true>(a), rg_thd_floats_per_token(a.R), cfg));
    auto k = rg_thd_kernel<bf16, bf16, 8, true, true>;
    report("thd block kernel", [&] { k<<<cfg.grid, cfg.threads, cfg.shmem>>>(ta); }, qo, ref, out_bytes, floor_us, bytes,
           occupancy(k, cfg.threads, cfg.shmem, a.tpb));
}

int main(void)
{
    const int HQ = 32, HK = 8, D = 128;
    const shape_case cases[] = {{4, 4096}, {8, 8192}};
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("pos_variants: %s, bf16, q [B,S,%d,%d], k [B,S,%d,%d], int64 positions 0..S-1 a batch, rotate-half\n",
           prop.name, HQ, D, HK, D);
    for (const shape_case &sc : cases) {
        const int64_t tokens = sc.B * sc.S, nq = tokens * HQ * D, nk = tokens * HK * D;
        const size_t qb = (size_t)nq * sizeof(bf16), kb = (size_t)nk * sizeof(bf16);
        std::vector<bf16> hq(nq), hk(nk);
        uint32_t r = 12345;
        for (int64_t i = 0; i < nq; i++) hq[i] = __float2bfloat16((float)((r = r * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f);
        for (int64_t i = 0; i < nk; i++) hk[i] = __float2bfloat16((float)((r = r * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f);
        std::vector<long long> pos(tokens);
        for (int64_t t = 0; t < tokens; t++) pos[t] = t % sc.S;
        std::vector<int32_t> cu(sc.B + 1);
        for (int64_t b = 0; b <= sc.B; b++) cu[b] = (int32_t)(b * sc.S);
        std::vector<float> inv(D / 2);
        for (int j = 0; j < D / 2; j++) inv[j] = (float)(1.0 / pow(1e6, 2.0 * j / D));
        std::vector<bf16> table((size_t)sc.S * D);
        for (int64_t i = 0; i < sc.S * D; i++) table[i] = __float2bfloat16((float)((r = r * 1664525u + 1013904223u) >> 8) / 16777216.0f);
        bf16 *q, *k, *qo, *ko, *rq, *rk, *tc;
        long long *dpos;
        int32_t *dcu;
        float *dinv;
        CK(cudaMalloc(&q, qb)); CK(cudaMalloc(&k, kb)); CK(cudaMalloc(&qo, qb + kb)); CK(cudaMalloc(&rq, qb + kb));
        ko = qo + nq, rk = rq + nq;
        CK(cudaMalloc(&dpos, tokens * sizeof(long long))); CK(cudaMalloc(&dinv, D / 2 * sizeof(float)));
        CK(cudaMalloc(&dcu, (sc.B + 1) * sizeof(int32_t))); CK(cudaMalloc(&tc, table.size() * sizeof(bf16)));
        CK(cudaMemcpy(q, hq.data(), qb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(k, hk.data(), kb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dpos, pos.data(), tokens * sizeof(long long), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dcu, cu.data(), (sc.B + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dinv, inv.data(), D / 2 * sizeof(float), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(tc, table.data(), table.size() * sizeof(bf16), cudaMemcpyHostToDevice));
        const double bytes = 2.0 * (double)(qb + kb);
        const double floor_us = time_us([&] { CK(cudaMemcpyAsync(qo, q, qb, cudaMemcpyDeviceToDevice));
                                               CK(cudaMemcpyAsync(ko, k, kb, cudaMemcpyDeviceToDevice)); });
        printf("B %lld x S %lld: %.1f MB moved; copy %.1f us (%.0f GB/s)\n", (long long)sc.B, (long long)sc.S,
               bytes / 1e6, floor_us, bytes / floor_us / 1e3);
        for (int use_cu = 0; use_cu < 2; use_cu++) {
            ropegrad_rope_apply_pos_problem p;
            memset(&p, 0, sizeof p);
            p.shape.batch_size = use_cu ? 1 : sc.B, p.shape.seq_len = use_cu ? tokens : sc.S, p.shape.head_dim = D;
            p.shape.num_heads = HQ, p.shape.num_kv_heads = HK;
            p.shape.layout = ROPEGRAD_LAYOUT_BSHD, p.shape.dtype = ROPEGRAD_BF16, p.shape.cos_sin_dtype = ROPEGRAD_BF16;
            p.style = ROPEGRAD_ROTARY_HALF, p.position_ids = dpos, p.position_bits = 64, p.inv_freq = dinv;
            if (use_cu) p.cu_seqlens = dcu, p.num_seqs = sc.B;
            p.attention_scaling = 1.0f, p.q = q, p.k = k, p.q_out = rq, p.k_out = rk;
            CK(rg_pos_launch(&p, 1.0f, 0));
            CK(cudaDeviceSynchronize());
            printf(" positions from %s\n", use_cu ? "cu_seqlens (one packed batch)" : "position_ids");
            ropegrad_rope_apply_pos_problem ps = p;
            ps.q_out = qo, ps.k_out = ko;
            report("shipped launcher", [&] { CK(rg_pos_launch(&ps, 1.0f, 0)); }, qo, rq, qb + kb, floor_us, bytes, "");
            positions_variants(p, qo, ko, qb + kb, floor_us, bytes);
        }
        printf(" packed table ops (bf16 table of S rows, position_ids)\n");
        ropegrad_rope_apply_thd_problem tp;
        memset(&tp, 0, sizeof tp);
        tp.shape.batch_size = 1, tp.shape.seq_len = tokens, tp.shape.head_dim = D;
        tp.shape.num_heads = HQ, tp.shape.num_kv_heads = HK;
        tp.shape.layout = ROPEGRAD_LAYOUT_BSHD, tp.shape.dtype = ROPEGRAD_BF16, tp.shape.cos_sin_dtype = ROPEGRAD_BF16;
        tp.shape.style = ROPEGRAD_ROTARY_HALF;
        tp.position_ids = dpos, tp.position_bits = 64, tp.cos = tc, tp.sin = tc, tp.table_len = sc.S;
        tp.q = q, tp.k = k, tp.q_out = rq, tp.k_out = rk;
        CK(rg_thd_launch(&tp, 1.0f, 0));
        CK(cudaDeviceSynchronize());
        thd_variants(tp, qo, ko, qb + kb, floor_us, bytes);
        CK(cudaFree(q)); CK(cudaFree(k)); CK(cudaFree(qo)); CK(cudaFree(rq)); CK(cudaFree(dpos)); CK(cudaFree(dinv));
        CK(cudaFree(dcu)); CK(cudaFree(tc));
    }
    return 0;
}
