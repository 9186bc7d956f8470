/* SPDX-License-Identifier: Apache-2.0 */
// dev_common.h -- what the developer tools in bench/ (dev_kernels.cu, probe.cu)
// share: a CUDA-call check, a seeded generator, and CUPTI kernel spans, so that
// their quick comparisons use the protocol's clock rather than
// CUDA events (which add the launch to each figure: ~1-2 us, too coarse for the
// small workloads). The harness has its own, fuller timer in src/harness/run_cuda.c;
// this one assumes what the dev tools guarantee: one kernel per timed iteration,
// on one stream, with the cold-L2 memset in between (a memset is not a kernel
// record, so it is not counted).
//
//   dc_begin();  for (...) { memset; launch; }  std::vector<double> us = dc_end();
//
// Link with -lcupti. If CUPTI cannot be used, dc_end() returns an empty vector and
// the tool falls back to events (and says so).
#pragma once

#include <cuda_runtime.h>
#include <cupti.h>

#include <cxxabi.h>
#include <glob.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

// suites/<id>-<op>/workload.jsonl of op id ("088"), from the repository root
// ("suites/<id>-*" when no such folder: the caller's open reports it).
static inline std::string dc_suite_workloads(const char *id)
{
    std::string dir = std::string("suites/") + id + "-*";
    glob_t g;
    if (glob(dir.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0 && g.gl_pathc == 1) dir = g.gl_pathv[0];
    globfree(&g);
    return dir + "/workload.jsonl";
}

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));  \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

// splitmix64: uniform in (0, 1); reseed by assigning g_rng.
static uint64_t g_rng = 1;
[[maybe_unused]] static double urand()
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return ((z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static std::mutex dc_mu;
static std::vector<std::pair<uint64_t, uint64_t>> dc_spans;  // (start, end) ns
static bool dc_ok = true;

// What CUPTI says a kernel ran as (dc_launched): its name, demangled, its grid
// and block, dynamic shared memory, registers a thread, the shared memory the
// SM was configured with (the carveout executed) and the carveout requested (%).
struct dc_kernel_rec {
    std::string name;
    int grid, block, dyn_smem, regs;
    unsigned smem_executed;
    int carveout;   // -1: none requested
};
static std::vector<dc_kernel_rec> dc_recs;

static std::string dc_demangle(const char *name)
{
    if (!name) return "?";
    int status = 0;
    char *d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    std::string out = status == 0 && d ? d : name;
    free(d);
    return out;
}

static void CUPTIAPI dc_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 8 << 20;
    *buffer = (uint8_t *)aligned_alloc(8, *size);
    if (!*buffer) *size = 0;
    *max_records = 0;
}

static void CUPTIAPI dc_buffer_completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid)
{
    std::lock_guard<std::mutex> g(dc_mu);
    CUpti_Activity *rec = nullptr;
    while (buffer && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel9 *k = (const CUpti_ActivityKernel9 *)rec;
            if (k->name && strstr(k->name, "dc_fill_zero")) continue;   // DC_FLUSH=fill's flush, not a launch's
            dc_spans.emplace_back(k->start, k->end);
            dc_recs.push_back({dc_demangle(k->name), k->gridX, k->blockX, k->dynamicSharedMemory, k->registersPerThread,
                               k->sharedMemoryExecuted, k->isSharedMemoryCarveoutRequested ? k->sharedMemoryCarveoutRequested : -1});
        }
    free(buffer);
}

static void dc_begin()
{
    static bool registered = false;
    if (!registered) {
        registered = true;
        dc_ok = cuptiActivityRegisterCallbacks(dc_buffer_requested, dc_buffer_completed) == CUPTI_SUCCESS;
    }
    std::lock_guard<std::mutex> g(dc_mu);
    dc_spans.clear();
    dc_recs.clear();
    if (dc_ok) dc_ok = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
}

// Kernel durations in microseconds, in launch order; empty if CUPTI failed.
static std::vector<double> dc_end()
{
    std::vector<double> us;
    if (cudaDeviceSynchronize() != cudaSuccess || !dc_ok) return us;
    if (cuptiActivityFlushAll(0) != CUPTI_SUCCESS) return us;
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    std::lock_guard<std::mutex> g(dc_mu);
    std::sort(dc_spans.begin(), dc_spans.end());
    for (auto &s : dc_spans) us.push_back((s.second - s.first) * 1e-3);
    return us;
}

// The kernels one call of launch ran, as CUPTI recorded them (launch order);
// empty if CUPTI failed. For a tool to print what a launcher picked.
[[maybe_unused]] static std::vector<dc_kernel_rec> dc_launched(const std::function<void()> &launch)
{
    dc_begin();
    launch();
    std::vector<dc_kernel_rec> out;
    if (dc_end().empty()) return out;
    std::lock_guard<std::mutex> g(dc_mu);
    out = dc_recs;
    return out;
}

static double dc_median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The official evaluator's flush, for DC_FLUSH=fill: zeros written by a kernel
// (torch's cache.zero_() on a 2x-L2 int8 tensor is a fill kernel, 16 bytes a store).
static __global__ void dc_fill_zero(uint4 *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_uint4(0, 0, 0, 0);
}

// The protocol's loop for one launch: 10 warmup + 50 timed launches, each after
// a memset of flush (twice the L2); the median CUPTI span of the timed ones, in
// microseconds. Exits (naming tool) when CUPTI does not give one record a launch.
// DC_FLUSH=fill flushes with a fill kernel instead of cudaMemsetAsync, and
// DC_SYNC=1 waits for the GPU after each launch (the official loop's
// conditions; CUPTI still times only the launch's own kernels).
static double dc_time_median(const std::function<void()> &launch, char *flush, size_t flush_bytes, const char *tool)
{
    const int warm = 10, iters = 50;
    const char *fl = getenv("DC_FLUSH"), *sy = getenv("DC_SYNC");
    const bool fill = fl && !strcmp(fl, "fill"), sync = sy && !strcmp(sy, "1");
    dc_begin();
    for (int it = 0; it < warm + iters; it++) {
        if (fill) dc_fill_zero<<<132 * 8, 512>>>((uint4 *)flush, flush_bytes / 16);
        else CK(cudaMemsetAsync(flush, 0, flush_bytes));
        launch();
        if (sync) CK(cudaDeviceSynchronize());
    }
    CK(cudaGetLastError());
    std::vector<double> all = dc_end();
    if (all.size() != (size_t)(warm + iters)) {
        fprintf(stderr, "%s: CUPTI gave %zu records for %d launches\n", tool, all.size(), warm + iters);
        exit(1);
    }
    all.erase(all.begin(), all.begin() + warm);
    return dc_median(all);
}
