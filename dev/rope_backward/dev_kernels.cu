/* SPDX-License-Identifier: Apache-2.0 */
// dev_kernels.cu -- kernel developer's loop, llm.c dev/cuda style: validate every
// kernel version against the float64 reference, then time each on the suite's
// shapes with a cold L2. Needs nothing but nvcc (no CMake, no Debian libraries),
// so it runs on a bare GPU machine:
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op dev/rope_backward/dev_kernels.cu \
//        src/op/common.c src/op/rope_backward/reference.c -lcupti -o /tmp/dev_kernels && /tmp/dev_kernels [kernel...]
//
// Timing is the protocol's: CUPTI kernel spans (dev/common/dev_common.h), a 2x-L2
// memset before every launch, median of 50 after 10 warmup. If CUPTI is
// unusable it falls back to CUDA events around each launch (which include the
// launch, ~1-2 us more) and says so. Use it to compare versions and knobs (build
// it with -DRG_...=value to try one); `ropegrad bench` makes the figures of record.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backward_kernels.cuh"   // every version, and its launcher rg_dev_launch
#include "dev_common.h"
#include "floors.cuh"   // fl14_read_store: the read floor of dev/common/probe.cu backward

// Version k of the backward on the default stream: the C API's checks, then
// the development launcher (every version; the library's ships 0 and 14).
static int dev_launch(const ropegrad_rope_backward_problem *p, int k)
{
    if (ropegrad_rope_backward_validate(p) != ROPEGRAD_OK || !rg_dev_kernel_known(k)) return 1;
    return rg_dev_launch(p, k, 0) != cudaSuccess;
}


static float nrand() { return (float)(sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand())); }
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

int main(int argc, char **argv)
{
    // The (B, S) of the suite's 16 workloads, in workload.jsonl order.
    const int shapes[16][2] = {{32, 256}, {2, 3637}, {1, 128}, {8, 1024}, {1, 131},  {16, 613},
                               {8, 449},  {16, 512}, {64, 3011}, {4, 293}, {8, 4093}, {64, 128},
                               {4, 3967}, {1, 1321}, {64, 8192}, {1, 2048}};
    std::vector<int> kernels;
    for (int i = 1; i < argc; i++) kernels.push_back(atoi(argv[i]));
    if (kernels.empty())
        for (int k = 1; k <= RG_DEV_KERNEL_COUNT; k++) kernels.push_back(k);
    const int D = 128, H = 64, iters = 50, warm = 10;

    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    char *flush;
    CK(cudaMalloc(&flush, 2 * (size_t)l2));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    bool events_said = false;
    printf("%-3s %-5s %-5s", "#", "B", "S");
    for (int k : kernels) printf(" %12s", rg_dev_kernel_names[k]);
    printf(" %12s   (median us, cold L2, CUPTI spans; ratio = best version / floor)\n", "floor");
    std::vector<double> logsum(kernels.size() + 1, 0.0);
    // DK_WORKLOADS="8,14" limits the run to those workloads (the geomean is then over them).
    const char *only = getenv("DK_WORKLOADS");
    int nw = 0;
    for (int w = 0; w < 16; w++) {
        if (only) {
            char key[8];
            snprintf(key, sizeof key, "%d", w);
            bool hit = false;
            for (const char *t = only; *t;) {
                size_t len = strcspn(t, ",");
                if (len == strlen(key) && !strncmp(t, key, len)) hit = true;
                t += len + (t[len] == ',');
            }
            if (!hit) continue;
        }
        nw++;
        const int64_t B = shapes[w][0], S = shapes[w][1], rows = B * S, n = rows * D;
        std::vector<uint16_t> gc(n), gs(n);
        std::vector<float> emb(n), inv(B * H);
        g_rng = 200 + w;
        for (int64_t i = 0; i < n; i++) gc[i] = to_bf16(nrand());
        for (int64_t i = 0; i < n; i++) gs[i] = to_bf16(nrand());
        for (int64_t i = 0; i < n; i++) emb[i] = nrand();
        for (int64_t i = 0; i < B * H; i++) inv[i] = nrand();
        ropegrad_rope_backward_problem hp = {B, S, D, ROPEGRAD_BF16, gc.data(), gs.data(), emb.data(), inv.data(), H, 0.0883883f, nullptr};
        std::vector<double> ref(rows);
        if (ropegrad_rope_backward_reference(&hp, ref.data())) return 1;

        void *dgc, *dgs;
        float *demb, *dinv, *dout;
        CK(cudaMalloc(&dgc, n * 2));
        CK(cudaMalloc(&dgs, n * 2));
        CK(cudaMalloc(&demb, n * 4));
        CK(cudaMalloc(&dinv, B * H * 4));
        CK(cudaMalloc(&dout, rows * 4));
        CK(cudaMemcpy(dgc, gc.data(), n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dgs, gs.data(), n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(demb, emb.data(), n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dinv, inv.data(), B * H * 4, cudaMemcpyHostToDevice));
        ropegrad_rope_backward_problem p = {B, S, D, ROPEGRAD_BF16, dgc, dgs, demb, dinv, H, 0.0883883f, dout};

        printf("%-3d %-5lld %-5lld", w, (long long)B, (long long)S);
        for (size_t ki = 0; ki < kernels.size(); ki++) {
            const int k = kernels[ki];
            CK(cudaMemset(dout, 0xff, rows * 4));
            if (dev_launch(&p, k)) { printf(" launch-fail"); continue; }
            CK(cudaDeviceSynchronize());
            std::vector<float> out(rows);
            CK(cudaMemcpy(out.data(), dout, rows * 4, cudaMemcpyDeviceToHost));
            int64_t bad = 0;
            for (int64_t r = 0; r < rows; r++)
                if (!(fabs(out[r] - ref[r]) <= 1e-5 + 1e-5 * fabs(ref[r]))) bad++;
            dc_begin();
            for (int it = 0; it < warm + iters; it++) {
                CK(cudaMemsetAsync(flush, 0, 2 * (size_t)l2));
                dev_launch(&p, k);
            }
            std::vector<double> t = dc_end();
            if (t.size() == (size_t)(warm + iters)) {
                t.erase(t.begin(), t.begin() + warm);
            } else {
                if (!events_said) fprintf(stderr, "dev_kernels: CUPTI unusable, timing with CUDA events\n");
                events_said = true;
                t.clear();
                for (int it = 0; it < warm + iters; it++) {
                    CK(cudaMemsetAsync(flush, 0, 2 * (size_t)l2));
                    CK(cudaEventRecord(e0));
                    dev_launch(&p, k);
                    CK(cudaEventRecord(e1));
                    CK(cudaEventSynchronize(e1));
                    float ms;
                    CK(cudaEventElapsedTime(&ms, e0, e1));
                    if (it >= warm) t.push_back(ms * 1000.0);
                }
            }
            const double med = dc_median(t);
            logsum[ki] += log(med);
            printf(" %10.2f%s", med, bad ? "!!" : "  ");
        }
        {
            dc_begin();
            const unsigned fg = (unsigned)((rows * 16 + 255) / 256);
            for (int it = 0; it < warm + iters; it++) {
                CK(cudaMemsetAsync(flush, 0, 2 * (size_t)l2));
                fl14_read_store<<<fg, 256>>>((const uint4 *)dgc, (const uint4 *)dgs, (const uint4 *)demb, (const uint4 *)dinv, S, rows, dout);
            }
            std::vector<double> t = dc_end();
            if (t.size() == (size_t)(warm + iters)) t.erase(t.begin(), t.begin() + warm);
            const double med = t.empty() ? NAN : dc_median(t);
            logsum[kernels.size()] += log(med);
            printf(" %10.2f  ", med);
        }
        printf("   %.1f MB\n", rows * 772.0 / 1e6);
        cudaFree(dgc), cudaFree(dgs), cudaFree(demb), cudaFree(dinv), cudaFree(dout);
    }
    printf("%-15s", "geomean");
    for (size_t ki = 0; ki <= kernels.size(); ki++) printf(" %10.2f  ", exp(logsum[ki] / (nw ? nw : 1)));
    printf("\n%-15s", "/ floor");
    for (size_t ki = 0; ki < kernels.size(); ki++) printf(" %10.3f  ", exp((logsum[ki] - logsum[kernels.size()]) / (nw ? nw : 1)));
    printf("\n(!! = some element outside the suite's tolerance)\n");
    return 0;
}
