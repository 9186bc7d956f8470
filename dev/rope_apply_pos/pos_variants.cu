/* SPDX-License-Identifier: Apache-2.0 */
// pos_variants.cu -- the apply from positions' kernel (src/op/rope_apply_pos/
// kernels.cuh, rg_pos_kernel) at Hugging Face training shapes (bf16, Qwen3-4B's
// heads: 32 q heads, 8 kv heads, head_dim 128, q and k [B,S,H,D]) under its
// launch knobs: the register budget (its body here under __launch_bounds__(512,
// MINB), MINB 1, 2, 3; shipped: (512) alone) and the units a block aims at
// (rg_pos_plan's block_units: 512 shipped,
// 1024, 2048), beside the shipped launcher and a copy of the same bytes (q and
// k read and written: the floor). Each variant's outputs are compared with the
// shipped launcher's bit for bit (they must be equal: the same arithmetic);
// each time is the median over 7 trials of 20 launches back to back (CUDA
// events), as microseconds a launch.
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

#include "rope_apply_pos/kernels.cuh"

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

template <int MINB>
static void variant(const char *label, rg_pos_args a, int block_units, size_t out_bytes, const void *ref_q,
                    double floor_us, double bytes)
{
    rg_pos_cfg cfg;
    CK(rg_pos_plan(a, rg_pos_units_per_head<8, true>(a), a.R, cfg, block_units));
    auto launch = [&] {
        pv_kernel<MINB><<<cfg.grid, cfg.threads, cfg.shmem>>>(a);
    };
    CK(cudaMemset(a.qo, 0, out_bytes));
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned char> got(out_bytes), want(out_bytes);
    CK(cudaMemcpy(got.data(), a.qo, out_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(want.data(), ref_q, out_bytes, cudaMemcpyDeviceToHost));
    const int same = memcmp(got.data(), want.data(), out_bytes) == 0;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, pv_kernel<MINB>));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pv_kernel<MINB>, cfg.threads,
                                                     cfg.shmem));
    const double us = time_us(launch);
    printf("  %-26s %4d tokens/block %4d threads %3d regs %3d blocks/SM %9.1f us %7.0f GB/s %5.1f%% of copy  %s\n",
           label, a.tpb, cfg.threads, fa.numRegs, per_sm, us, bytes / us / 1e3, 100.0 * floor_us / us,
           same ? "same bits" : "DIFFERENT BITS");
    if (!same) exit(1);
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
        std::vector<float> inv(D / 2);
        for (int j = 0; j < D / 2; j++) inv[j] = (float)(1.0 / pow(1e6, 2.0 * j / D));
        bf16 *q, *k, *qo, *ko, *rq, *rk;
        long long *dpos;
        float *dinv;
        CK(cudaMalloc(&q, qb)); CK(cudaMalloc(&k, kb)); CK(cudaMalloc(&qo, qb + kb)); CK(cudaMalloc(&rq, qb + kb));
        ko = qo + nq, rk = rq + nq;
        CK(cudaMalloc(&dpos, tokens * sizeof(long long))); CK(cudaMalloc(&dinv, D / 2 * sizeof(float)));
        CK(cudaMemcpy(q, hq.data(), qb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(k, hk.data(), kb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dpos, pos.data(), tokens * sizeof(long long), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dinv, inv.data(), D / 2 * sizeof(float), cudaMemcpyHostToDevice));
        ropegrad_rope_apply_pos_problem p;
        memset(&p, 0, sizeof p);
        p.shape.batch_size = sc.B, p.shape.seq_len = sc.S, p.shape.head_dim = D;
        p.shape.num_heads = HQ, p.shape.num_kv_heads = HK;
        p.shape.layout = ROPEGRAD_LAYOUT_BSHD, p.shape.dtype = ROPEGRAD_BF16, p.shape.cos_sin_dtype = ROPEGRAD_BF16;
        p.style = ROPEGRAD_ROTARY_HALF, p.position_ids = dpos, p.position_bits = 64, p.inv_freq = dinv;
        p.attention_scaling = 1.0f, p.q = q, p.k = k, p.q_out = rq, p.k_out = rk;
        CK(rg_pos_launch(&p, 1.0f, 0));
        CK(cudaDeviceSynchronize());
        const double bytes = 2.0 * (double)(qb + kb);
        const double floor_us = time_us([&] { CK(cudaMemcpyAsync(qo, q, qb, cudaMemcpyDeviceToDevice));
                                               CK(cudaMemcpyAsync(ko, k, kb, cudaMemcpyDeviceToDevice)); });
        printf("B %lld x S %lld: %.1f MB moved; copy %.1f us (%.0f GB/s)\n", (long long)sc.B, (long long)sc.S,
               bytes / 1e6, floor_us, bytes / floor_us / 1e3);
        p.q_out = qo, p.k_out = ko;
        const double shipped = time_us([&] { CK(rg_pos_launch(&p, 1.0f, 0)); });
        printf("  %-26s %9.1f us %7.0f GB/s %5.1f%% of copy\n", "shipped launcher", shipped, bytes / shipped / 1e3,
               100.0 * floor_us / shipped);
        rg_pos_args a;
        memset(&a, 0, sizeof a);
        a.s = p.shape, a.R = D, a.scale = 1.0f, a.sign = 1.0f, a.ids = dpos, a.bits = 64, a.inv = dinv;
        a.q = q, a.k = k, a.qo = qo, a.ko = ko, a.tpb = a.hpb = a.groups = 1;
        static const int units[] = {512, 1024, 2048};
        for (int u : units) {
            char l[64];
            snprintf(l, sizeof l, "minb 1, block units %d", u);
            variant<1>(l, a, u, qb + kb, rq, floor_us, bytes);
            snprintf(l, sizeof l, "minb 2, block units %d", u);
            variant<2>(l, a, u, qb + kb, rq, floor_us, bytes);
            snprintf(l, sizeof l, "minb 3, block units %d", u);
            variant<3>(l, a, u, qb + kb, rq, floor_us, bytes);
        }
        CK(cudaFree(q)); CK(cudaFree(k)); CK(cudaFree(qo)); CK(cudaFree(rq)); CK(cudaFree(dpos)); CK(cudaFree(dinv));
    }
    return 0;
}
