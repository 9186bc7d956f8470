/* SPDX-License-Identifier: Apache-2.0 */
// dev_forward.cu -- kernel developer's loop for the forward ops (011, 012),
// llm.c dev/cuda style: check every version of dev/rope_forward/forward_dev_kernels.cuh
// against the shipped kernel bit for bit (each writes the correctly rounded
// bf16, so they must agree exactly; versions 4, 6 and 7 are timing-only and 27
// and 28 fast modes, none of them checked) on the suite's inputs, real
// long-context positions and hostile arguments; for 012, measure the fast modes
// (and the correctly rounded kernels beside them) on real long-context inputs
// in bf16 ulps against float64 (fd12_accuracy_report); then time each version
// and values-per-thread choice on the suite's 16 shapes beside a floor kernel
// that only moves the op's bytes.
// Timing as the protocol: CUPTI kernel spans, 2x-L2 memset before each launch,
// median of 50 after 10 warmup. Needs nvcc only:
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op dev/rope_forward/dev_forward.cu \
//        src/op/common.c -lcupti -o /tmp/dev_forward && /tmp/dev_forward 011 && /tmp/dev_forward 012
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "forward_dev_kernels.cuh"
#include "dev_common.h"
#include "floors.cuh"   // the floors of dev/common/probe.cu forward

// ---- probe: what cold code costs under the protocol (timing only) -----------------------
// 011's floor (fl11_t16) plus N dependent FMAs whose code must be fetched: DEP
// false, on a value independent of the loads (issued after them, so their
// latency hides under the loads'); DEP true, on the loaded value (after it).
template <int N, bool DEP>
static __global__ void fd_icache(const int64_t *pos, const uint4 *inv, uint4 *out, int64_t rows)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, r = t >> 4;
    const int k = (int)(t & 15);
    if (r >= rows) return;
    const int64_t pv = pos[r];
    const uint4 iv = __ldg(inv + k);
    float a = DEP ? (float)(pv & 1023) : (float)threadIdx.x;
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("fma.rn.f32 %0, %0, 0f3F800347, 0f3F000000;" : "+f"(a));
    const uint32_t p = (uint32_t)pv ^ fl_fold(iv) ^ (__float_as_uint(a) & 1u);
    const uint4 v = make_uint4(p, p + 1, p + 2, (uint32_t)k);
    out[r * 32 + k] = v;
    out[r * 32 + k + 16] = v;
}

// Versions whose output must equal the shipped kernel's bit for bit (the
// correctly rounded ones): not the floor (0) or the shipped kernel itself (1),
// not the timing-only or fast-mode ones (4, 6, 7, 20-28), 29 (the library's
// kernel at another geometry), 30 (correctly rounded from the
// special-function unit) and 32 (late refinement) yes.
static bool fd_bitwise_checked(int version)
{
    return version >= 2 && version != 4 && version != 6 && version != 7 && (version < 20 || version == 29 || version == 30 || version == 32);
}

static char *g_flush;
static size_t g_flush_bytes;

static double time_it(const std::function<void()> &launch)
{
    return dc_time_median(launch, g_flush, g_flush_bytes, "dev_forward");
}

struct variant {
    const char *name;
    int version;  // 1 shipped, 2-4 dev; 0 floor
    std::function<void(int64_t B, int64_t S, float scale)> go;
};

// The dataset's llama3 inv_freq (as src/harness/op_rope_forward.c writes it).
static void llama3_inv(float *inv)
{
    for (int d = 0; d < 64; d++) {
        const float f = 1.0f / powf(500000.0f, (float)(2 * d) / 128.0f);
        const float wavelen = (float)(2.0 * 3.14159265358979323846) / f;
        float smooth = (8192.0f / wavelen - 1.0f) / 3.0f;
        smooth = smooth < 0.0f ? 0.0f : smooth > 1.0f ? 1.0f : smooth;
        inv[d] = (1.0f - smooth) * f + smooth * (f / 8.0f);
    }
}

static std::vector<std::pair<int64_t, int64_t>> suite_shapes(const char *op)
{
    std::vector<std::pair<int64_t, int64_t>> v;
    std::string path = dc_suite_workloads(op);
    FILE *f = fopen(path.c_str(), "r");
    if (!f) {
        fprintf(stderr, "dev_forward: cannot open %s (run from the repository root)\n", path.c_str());
        exit(2);
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        const char *b = strstr(line, "\"batch_size\":"), *s = strstr(line, "\"seq_len\":");
        if (b && s) v.push_back({atoll(b + 13), atoll(s + 10)});
    }
    fclose(f);
    return v;
}

// ---- 012: error in bf16 ulps on real inputs ----------------------------------------------
// The spacing of bf16 at |e| (normal binades; 2^-133 below), and e rounded to
// the nearest bf16, ties to even (exact: scaling by a power of two).
static double fd_bf16_ulp(double e)
{
    return std::ldexp(1.0, (e == 0.0 ? -126 : std::max(std::ilogb(e), -126)) - 7);
}
static double fd_bf16_nearest(double e)
{
    const double u = fd_bf16_ulp(e);
    return std::nearbyint(e / u) * u;
}
static double fd_bf16_value(uint16_t b)
{
    const uint32_t w = (uint32_t)b << 16;
    float f;
    memcpy(&f, &w, 4);
    return f;
}

struct fd_accuracy {
    double max_ulp = 0, got = 0, exact = 0;
    int64_t at = -1, wrong = 0, beyond1 = 0, halves = 0;
    bool at_sin = false;
};

// One output (cos or sin, [rows][128] bf16, the value at j and j+64) against
// scale * the exact values ex ([rows][64]).
static void fd_accuracy_add(fd_accuracy &a, const uint16_t *o, const std::vector<double> &ex, double scale, int64_t rows,
                            bool is_sin)
{
    for (int64_t r = 0; r < rows; r++)
        for (int d = 0; d < 64; d++) {
            const uint16_t b = o[r * 128 + d];
            a.halves += b != o[r * 128 + 64 + d];
            const double e = scale * ex[(size_t)(r * 64 + d)], v = fd_bf16_value(b);
            const double ulps = std::fabs(v - e) / fd_bf16_ulp(e);
            a.wrong += v != fd_bf16_nearest(e);
            a.beyond1 += ulps > 1.0;
            if (ulps > a.max_ulp) a.max_ulp = ulps, a.at = r * 64 + d, a.got = v, a.exact = e, a.at_sin = is_sin;
        }
}

// Positions 0..262144 (every row one position) times the dataset's llama3
// inv_freq, each x = float(p * inv[d]) as Hugging Face's float32 product
// makes it (|x| up to 262144 rad): each variant's cos/sin against float64
// sin/cos times the scale (1, 1/sqrt(2), and YaRN's 0.1 ln 8 + 1), in bf16
// ulps of the exact value. "nearest" counts outputs other than the correctly
// rounded bf16; "> 1 ulp" those further than one ulp; "halves" outputs whose
// j and j+64 copies differ. The fast mode's promise is "> 1 ulp" = 0.
static void fd12_accuracy_report(const std::vector<variant> &vs, float *&freqs, uint16_t *&out)
{
    const int64_t rows = 262145;
    std::vector<float> inv(64), hf((size_t)rows * 64);
    llama3_inv(inv.data());
    std::vector<double> ec(hf.size()), es(hf.size());
    for (int64_t p = 0; p < rows; p++)
        for (int d = 0; d < 64; d++) {
            const float x = (float)p * inv[d];
            hf[(size_t)(p * 64 + d)] = x;
            ec[(size_t)(p * 64 + d)] = std::cos((double)x);
            es[(size_t)(p * 64 + d)] = std::sin((double)x);
        }
    float *const small_freqs = freqs;
    uint16_t *const small_out = out;
    CK(cudaMalloc(&freqs, (size_t)rows * 256));
    CK(cudaMalloc(&out, (size_t)rows * 512));
    CK(cudaMemcpy(freqs, hf.data(), (size_t)rows * 256, cudaMemcpyHostToDevice));
    std::vector<uint16_t> ho((size_t)rows * 256);
    const float scales[] = {1.0f, 0.70710678f, 1.20794415f};
    printf("\n012 accuracy, real long-context inputs: positions 0..262144 x llama3 inv_freq (x up to 262144 rad), "
           "%lld values of cos and of sin, in bf16 ulps of the exact value (float64)\n", (long long)(rows * 64));
    printf("| variant | scale | max ulps | at (p, d, x, output) | got | exact | not nearest | > 1 ulp | halves differ |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (const variant &v : vs)
        for (float sc : scales) {
            CK(cudaMemset(out, 0xff, (size_t)rows * 512));
            v.go(1, rows, sc);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(ho.data(), out, (size_t)rows * 512, cudaMemcpyDeviceToHost));
            fd_accuracy a;
            fd_accuracy_add(a, ho.data(), ec, (double)sc, rows, false);
            fd_accuracy_add(a, ho.data() + rows * 128, es, (double)sc, rows, true);
            if (a.at < 0) a.at = 0;   // every output exact: no largest error to point at
            printf("| %s | %.6g | %.4f | %lld, %d, %.9g, %s | %.9g | %.9g | %lld | %lld | %lld |\n", v.name, sc, a.max_ulp,
                   (long long)(a.at / 64), (int)(a.at % 64), hf[(size_t)a.at], a.at_sin ? "sin" : "cos", a.got, a.exact,
                   (long long)a.wrong, (long long)a.beyond1, (long long)a.halves);
            fflush(stdout);
        }
    CK(cudaFree(freqs));
    CK(cudaFree(out));
    freqs = small_freqs;
    out = small_out;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "011") && strcmp(argv[1], "012"))) {
        fprintf(stderr, "usage: dev_forward 011|012 [workload...]\n");
        return 2;
    }
    const bool is11 = !strcmp(argv[1], "011");
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    g_flush_bytes = 2 * (size_t)l2;
    CK(cudaMalloc(&g_flush, g_flush_bytes));
    auto shapes = suite_shapes(argv[1]);
    int64_t max_rows = 1 << 16;
    for (auto &s : shapes) max_rows = std::max(max_rows, s.first * s.second);

    int64_t *pos;
    float *inv, *freqs;
    uint16_t *out, *ref;
    CK(cudaMalloc(&pos, max_rows * 8));
    CK(cudaMalloc(&inv, 64 * 4));
    CK(cudaMalloc(&freqs, max_rows * 256));
    CK(cudaMalloc(&out, max_rows * 512));
    CK(cudaMalloc(&ref, max_rows * 512));

    // Variants. `out` holds the result (011: [rows,128,2]; 012: cos [rows,128] then sin).
    std::vector<variant> vs;
    auto c16 = [&](int64_t rows) { return out + rows * 128; };
    if (is11) {
        vs.push_back({"floor", 0, [&](int64_t B_, int64_t S_, float) {
                          const int64_t rows = B_ * S_;
                          fl11_t16<<<(unsigned)((rows * 16 + 255) / 256), 256>>>(pos, (const uint4 *)inv, (uint4 *)out, rows);
                      }});
        vs.push_back({"1-shipped", 1, [&](int64_t B_, int64_t S_, float sc) {
                          ropegrad_rope_forward_problem p = {B_, S_, 128, pos, inv, sc, out};
                          CK(rg_rope_forward_launch(&p, 0));
                      }});
#define V11(V, N, NAME) vs.push_back({NAME, V, [&](int64_t B_, int64_t S_, float sc) { fd11_go<V, N>(pos, inv, sc, out, B_ * S_, 0); }})
        V11(2, 1, "2-mid/1");
        V11(2, 2, "2-mid/2");
        V11(2, 4, "2-mid/4");
        V11(3, 1, "3-dbl/1");
        V11(3, 2, "3-dbl/2");
        V11(4, 2, "4-plain/2");
        V11(4, 4, "4-plain/4");
#define V11B(M, N, NAME) vs.push_back({NAME, 5 + M, [&](int64_t B_, int64_t S_, float sc) { fd11_v5_go<M, N>(pos, inv, sc, out, B_ * S_, 0); }})
        V11B(0, 1, "5-ref/1");
        V11B(0, 2, "5-ref/2");
        V11B(0, 4, "5-ref/4");
#define V11S(N, BS, NAME) vs.push_back({NAME, 5, [&](int64_t B_, int64_t S_, float sc) { fd11_v5_go<0, N, BS>(pos, inv, sc, out, B_ * S_, 0); }})
        V11S(1, 64, "5-ref/1 b64");
        V11S(1, 128, "5-ref/1 b128");
        V11S(2, 64, "5-ref/2 b64");
        V11S(2, 128, "5-ref/2 b128");
        V11S(4, 128, "5-ref/4 b128");
        V11B(1, 2, "6-plain/2");
        V11B(1, 4, "6-plain/4");
        V11B(2, 2, "7-noop/2");
        V11B(2, 4, "7-noop/4");
#define V11R(M, N, NAME) vs.push_back({NAME, 11 + M, [&](int64_t B_, int64_t S_, float sc) { fd11_v5_go<M, N>(pos, inv, sc, out, B_ * S_, 0); }})
        V11R(3, 1, "14-side/1");
        V11R(3, 2, "14-side/2");
        V11R(3, 4, "14-side/4");
        V11R(4, 1, "15-fix/1");
        V11R(4, 2, "15-fix/2");
        V11R(4, 4, "15-fix/4");
        V11R(5, 1, "16-tight/1");
        V11R(5, 2, "16-tight/2");
        V11R(6, 1, "17-u23/1");
        V11R(6, 2, "17-u23/2");
#define V11T(M, V, N, NAME) vs.push_back({NAME, V, [&](int64_t B_, int64_t S_, float sc) { fd11_v5_go<M, N>(pos, inv, sc, out, B_ * S_, 0); }})
        V11T(8, 22, 1, "22-noref/1");
        V11T(8, 22, 2, "22-noref/2");
        V11T(9, 23, 1, "23-ffemu/1");
        V11T(9, 23, 2, "23-ffemu/2");
#define V24(N, TEST, NAME) vs.push_back({NAME, TEST ? 24 - 5 : 21, [&](int64_t B_, int64_t S_, float sc) { fd11_warm_go<N, TEST>(pos, inv, sc, out, B_ * S_, 0); }})
        V24(1, true, "24-warm/1");
        V24(2, true, "24-warm/2");
        V24(2, false, "24-warm-plain/2");
        V11R(7, 1, "18-spec/1");
        V11R(7, 2, "18-spec/2");
#define V19(TW, TEST, NAME) vs.push_back({NAME, TEST ? 19 : 21, [&](int64_t B_, int64_t S_, float sc) { fd11_loop_go<TEST>(pos, inv, sc, out, B_ * S_, TW, true, 256, 0); }})
        V19(1056, true, "19-defer/4w1k");
        V19(2112, true, "19-defer/4w2k");
        V19(3168, true, "19-defer/4w3k");
        V19(4224, true, "19-defer/4w4k");
        V19(2112, false, "19-plain/4w2k");
        V19(4224, false, "19-plain/4w4k");
#define V20(TW, EVEN, BS, NAME) vs.push_back({NAME, 20 - 1, [&](int64_t B_, int64_t S_, float sc) { fd11_loop_go<true>(pos, inv, sc, out, B_ * S_, TW, EVEN, BS, 0); }})
        V20(2112, true, 64, "20-lib-loop/w2k b64");
        V20(2112, false, 64, "20-lib-loop/w2k b64 odd");
        V20(2112, false, 32, "20-lib-loop/w2k b32 odd");
        V11T(10, 21, 1, "25-sfu/1");
        V11T(10, 21, 2, "25-sfu/2");
        V11T(10, 21, 4, "25-sfu/4");
#define V11M(V, N, NAME) vs.push_back({NAME, V, [&](int64_t B_, int64_t S_, float sc) { fd11_memo_go<V, N>(pos, inv, sc, out, B_, S_, 0); }})
        V11M(10, 2, "10-memo-chunk/2");
        V11M(10, 4, "10-memo-chunk/4");
        V11M(11, 1, "11-memo-block/1");
        V11M(11, 2, "11-memo-block/2");
#define VIC(N, DEP, NAME) vs.push_back({NAME, 20, [&](int64_t B_, int64_t S_, float) { \
            const int64_t rows = B_ * S_; \
            fd_icache<N, DEP><<<(unsigned)((rows * 16 + 255) / 256), 256>>>(pos, (const uint4 *)inv, (uint4 *)out, rows); }})
        VIC(0, false, "ic-0");
        VIC(64, false, "ic-64");
        VIC(256, false, "ic-256");
        VIC(1024, false, "ic-1024");
        VIC(32, true, "ic-dep-32");
        VIC(128, true, "ic-dep-128");
    } else {
        vs.push_back({"floor", 0, [&](int64_t B_, int64_t S_, float) {
                          const int64_t rows = B_ * S_;
                          fl12_t8<<<(unsigned)((rows * 8 + 255) / 256), 256>>>((const uint4 *)freqs, (uint4 *)out,
                                                                           (uint4 *)c16(rows), rows);
                      }});
        vs.push_back({"1-shipped", 1, [&](int64_t B_, int64_t S_, float sc) {
                          const int64_t rows = B_ * S_;
                          ropegrad_cos_sin_problem p = {B_, S_, 128, freqs, sc, out, c16(rows)};
                          CK(rg_cos_sin_launch(&p, 0));
                      }});
#define V12(V, N, NAME) vs.push_back({NAME, V, [&](int64_t B_, int64_t S_, float sc) { fd12_go<V, N>(freqs, sc, out, c16(B_ * S_), B_ * S_, 0); }})
        V12(2, 2, "2-mid/2");
        V12(2, 4, "2-mid/4");
        V12(2, 8, "2-mid/8");
        V12(3, 2, "3-dbl/2");
        V12(3, 4, "3-dbl/4");
        V12(4, 4, "4-plain/4");
        V12(4, 8, "4-plain/8");
#define V12B(M, N, NAME) vs.push_back({NAME, 5 + M, [&](int64_t B_, int64_t S_, float sc) { fd12_v5_go<M, N>(freqs, sc, out, c16(B_ * S_), B_ * S_, 0); }})
        V12B(0, 2, "5-ref/2");
        V12B(0, 4, "5-ref/4");
        V12B(0, 8, "5-ref/8");
#define V12S(N, BS, NAME) vs.push_back({NAME, 5, [&](int64_t B_, int64_t S_, float sc) { fd12_v5_go<0, N, BS>(freqs, sc, out, c16(B_ * S_), B_ * S_, 0); }})
        V12S(2, 64, "5-ref/2 b64");
        V12S(2, 128, "5-ref/2 b128");
        V12S(4, 64, "5-ref/4 b64");
        V12S(4, 128, "5-ref/4 b128");
        V12B(1, 4, "6-plain/4");
        V12B(1, 8, "6-plain/8");
        V12B(2, 4, "7-noop/4");
        V12B(2, 8, "7-noop/8");
#define V12R(M, N, NAME) vs.push_back({NAME, 11 + M, [&](int64_t B_, int64_t S_, float sc) { fd12_v5_go<M, N>(freqs, sc, out, c16(B_ * S_), B_ * S_, 0); }})
        V12R(3, 2, "14-side/2");
        V12R(3, 4, "14-side/4");
        V12R(4, 2, "15-fix/2");
        V12R(4, 4, "15-fix/4");
        V12R(5, 2, "16-tight/2");
        // The fast modes and the peer's geometry (forward_dev_kernels.cuh, 27-29 and 6-plain/2).
        V12B(1, 2, "6-plain/2");
#define V12F(M, V, N, NAME) vs.push_back({NAME, V, [&](int64_t B_, int64_t S_, float sc) { fd12_v5_go<M, N>(freqs, sc, out, c16(B_ * S_), B_ * S_, 0); }})
        V12F(11, 27, 2, "27-mufu/2");
        V12F(11, 27, 4, "27-mufu/4");
        V12F(12, 28, 2, "28-mufu-guard/2");
        V12F(12, 28, 4, "28-mufu-guard/4");
        V12F(13, 30, 2, "30-mufu-cr/2");
        V12F(13, 30, 4, "30-mufu-cr/4");
        V12F(13, 30, 8, "30-mufu-cr/8");
        V12F(14, 31, 2, "31-quad/2");
        V12F(14, 31, 4, "31-quad/4");
        V12F(14, 31, 8, "31-quad/8");
        // 6-plain's geometry: threads a block (the grid's block count against the 132 SMs).
#define V12P(N, BS, NAME) vs.push_back({NAME, 6, [&](int64_t B_, int64_t S_, float sc) { fd12_v5_go<1, N, BS>(freqs, sc, out, c16(B_ * S_), B_ * S_, 0); }})
        V12P(2, 128, "6-plain/2 b128");
        V12P(2, 512, "6-plain/2 b512");
        V12P(4, 128, "6-plain/4 b128");
        V12P(4, 512, "6-plain/4 b512");
        V12P(4, 1024, "6-plain/4 b1024");
        V12P(8, 128, "6-plain/8 b128");
        // Version 34 (fd_sincos_lean, dev/common/sincos_lean.cuh) at the fast kernel's geometries.
#define V12L(N, BS, NAME) vs.push_back({NAME, 34, [&](int64_t B_, int64_t S_, float sc) { fd12_v5_go<17, N, BS>(freqs, sc, out, c16(B_ * S_), B_ * S_, 0); }})
        V12L(2, 256, "34-lean/2");
        V12L(4, 256, "34-lean/4");
        V12L(2, 512, "34-lean/2 b512");
        V12L(4, 512, "34-lean/4 b512");
        // Version 35: 6-plain with about one block an SM (fd12_adapt_go); "35-adapt" takes the fast kernel's values a thread.
        static int nsm = 0;
        if (!nsm) CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
        vs.push_back({"35-adapt/2", 35, [&](int64_t B_, int64_t S_, float sc) { fd12_adapt_go<2>(freqs, sc, out, c16(B_ * S_), B_ * S_, nsm); }});
        vs.push_back({"35-adapt/4", 35, [&](int64_t B_, int64_t S_, float sc) { fd12_adapt_go<4>(freqs, sc, out, c16(B_ * S_), B_ * S_, nsm); }});
        // Both at the shipped fast kernel's values a thread (rg_cos_sin_fast_vpt), "fast-rule" at its 256 a block.
        vs.push_back({"35-adapt", 35, [&](int64_t B_, int64_t S_, float sc) {
                          const int64_t rows = B_ * S_;
                          if (rg_cos_sin_fast_vpt(rows) == 2) fd12_adapt_go<2>(freqs, sc, out, c16(rows), rows, nsm);
                          else fd12_adapt_go<4>(freqs, sc, out, c16(rows), rows, nsm);
                      }});
        vs.push_back({"fast-rule", 6, [&](int64_t B_, int64_t S_, float sc) {
                          const int64_t rows = B_ * S_;
                          if (rg_cos_sin_fast_vpt(rows) == 2) fd12_v5_go<1, 2>(freqs, sc, out, c16(rows), rows, 0);
                          else fd12_v5_go<1, 4>(freqs, sc, out, c16(rows), rows, 0);
                      }});
        V12F(15, 32, 2, "32-late/2");
        V12F(15, 32, 4, "32-late/4");
        V12F(16, 33, 2, "33-no-refine/2");
        V12F(16, 33, 4, "33-no-refine/4");
        vs.push_back({"29-lib/2", 29, [&](int64_t B_, int64_t S_, float sc) {
                          const int64_t rows = B_ * S_;
                          const ropegrad_cos_sin_problem p = {B_, S_, 128, freqs, sc, out, c16(rows)};
                          rg_cos_sin_go<2>(&p, (int)rows, 0);
                          CK(cudaGetLastError());
                      }});
    }

    // DEV_FORWARD_ONLY=name,name,...: time only those (the floor and the shipped kernel always).
    if (const char *only = getenv("DEV_FORWARD_ONLY")) {
        const std::string list = std::string(",") + only + ",";
        std::vector<variant> kept;
        for (size_t i = 0; i < vs.size(); i++)
            if (i < 2 || list.find(std::string(",") + vs[i].name + ",") != std::string::npos) kept.push_back(vs[i]);
        vs.swap(kept);
    }
    // ---- bit-for-bit check against the shipped kernel --------------------------------------
    const int64_t crows = 1 << 16;
    std::vector<int64_t> hp(crows);
    std::vector<float> hi(64), hf(crows * 64);
    struct input_set {
        const char *name;
        float scale;
    };
    const input_set sets[] = {{"suite inputs", 1.0f}, {"long positions (theta 1e6, 262143), scale 1", 1.0f},
                              {"long positions, scale 0.7071", 0.70710678f}, {"hostile arguments, scale 1.3", 1.3f}};
    int bad_total = 0;
    for (int si = 0; si < 4; si++) {
        g_rng = 77 + si;
        if (is11) {
            if (si == 0) {
                for (int64_t i = 0; i < crows; i++) hp[i] = i % 2048;   // equal positions across the 16 batches (and within)
                llama3_inv(hi.data());
            } else if (si <= 2) {
                for (int64_t i = 0; i < crows; i++) hp[i] = (int64_t)(urand() * 262144.0);
                for (int d = 0; d < 64; d++) hi[d] = (float)pow(1.0e6, -d / 64.0);
            } else {
                for (int64_t i = 0; i < crows; i++) {
                    const double u = urand();
                    hp[i] = u < 0.1 ? -(int64_t)(urand() * 1e6) : u < 0.2 ? (int64_t)(urand() * 3e9) : (int64_t)(urand() * 4e5);
                }
                for (int d = 0; d < 64; d++) hi[d] = (float)pow(1.0e4, -d / 64.0) * (d % 3 ? 1.0f : 3.0f);
            }
            CK(cudaMemcpy(pos, hp.data(), crows * 8, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(inv, hi.data(), 64 * 4, cudaMemcpyHostToDevice));
        } else {
            for (int64_t i = 0; i < crows * 64; i++) {
                const double u = urand();
                float x;
                if (si == 0) x = (float)(sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * u));
                else if (si <= 2) x = (float)((double)(int64_t)(urand() * 262144.0) * pow(1.0e6, -(i % 64) / 64.0));
                else x = u < 0.05 ? 0.0f : u < 0.1 ? -0.0f : u < 0.15 ? 1e-40f * (float)urand() : u < 0.3 ? (float)((urand() - 0.5) * 1.2e7)
                        : u < 0.35 ? (float)(urand() * 1e-6) : (float)((urand() - 0.5) * 1e6);
                hf[i] = x;
            }
            CK(cudaMemcpy(freqs, hf.data(), crows * 256, cudaMemcpyHostToDevice));
        }
        const float sc = sets[si].scale;
        // reference: the shipped kernel
        vs[1].go(16, crows / 16, sc);   // 16 batches: the shipped 011 kernel works per (s, batch chunk)
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(ref, out, crows * 512, cudaMemcpyDeviceToDevice));
        std::vector<uint16_t> hr(crows * 256), ho(crows * 256);
        CK(cudaMemcpy(hr.data(), ref, crows * 512, cudaMemcpyDeviceToHost));
        printf("check (%s): ", sets[si].name);
        for (auto &v : vs) {
            if (!fd_bitwise_checked(v.version)) continue;
            CK(cudaMemset(out, 0xff, crows * 512));
            v.go(16, crows / 16, sc);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(ho.data(), out, crows * 512, cudaMemcpyDeviceToHost));
            int64_t bad = 0, first = -1;
            for (int64_t i = 0; i < crows * 256; i++)
                if (ho[i] != hr[i]) {
                    if (first < 0) first = i;
                    bad++;
                }
            printf("%s %s  ", v.name, bad ? "DIFFERS" : "same");
            if (bad) {
                printf("(%lld elements, first at %lld: %04x vs shipped %04x) ", (long long)bad, (long long)first,
                       ho[first], hr[first]);
                bad_total++;
            }
        }
        printf("\n");
    }

    if (!is11) {
        // The fast modes' accuracy on real long-context inputs, against float64:
        // one geometry each (the others share the code of version 5's kernel,
        // checked bit for bit above), 28 at both, and the correctly rounded two.
        const std::string names = ",1-shipped,29-lib/2,6-plain/2,27-mufu/2,28-mufu-guard/2,28-mufu-guard/4,30-mufu-cr/4,31-quad/2,31-quad/4,34-lean/2,35-adapt,";
        std::vector<variant> acc;
        for (auto &v : vs)
            if (names.find(std::string(",") + v.name + ",") != std::string::npos) acc.push_back(v);
        fd12_accuracy_report(acc, freqs, out);
    }

    // ---- timing on the suite's shapes (suite inputs) -----------------------------------------
    if (is11) {
        std::vector<int64_t> sp(max_rows);
        llama3_inv(hi.data());
        CK(cudaMemcpy(inv, hi.data(), 64 * 4, cudaMemcpyHostToDevice));
        (void)sp;
    } else {
        std::vector<float> big(max_rows * 64);
        g_rng = 5;
        for (auto &x : big) x = (float)(sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand()));
        CK(cudaMemcpy(freqs, big.data(), max_rows * 256, cudaMemcpyHostToDevice));
    }
    // Pass 0: the dataset's inputs. Pass 1 (011 only): different positions in
    // every batch (packed sequences), the shipped kernel's and 5's only.
    for (int pass = 0; pass < (is11 ? 2 : 1); pass++) {
    printf("\n%s%s: median us (CUPTI spans, 2x-L2 memset before each launch, 50 after 10 warmup)\n", argv[1],
           pass ? ", positions different in every batch: (s + 4099 b) mod 131072" : ", the dataset's inputs");
    auto in_pass = [&](const variant &v) { return pass == 0 || v.version <= 1 || v.version == 5 || (v.version >= 10 && v.version < 20); };
    printf("| # | B | S |");
    for (auto &v : vs)
        if (in_pass(v)) printf(" %s |", v.name);
    printf(" best 5 | best 5 / floor |\n|---|---|---|");
    for (auto &v : vs)
        if (in_pass(v)) printf("---|");
    printf("---|---|\n");
    std::vector<double> lsum(vs.size() + 1, 0.0);
    std::vector<std::vector<double>> times;   // [workload][variant], 0 where not timed
    int nw = 0;
    for (size_t w = 0; w < shapes.size(); w++) {
        if (argc > 2) {
            bool hit = false;
            for (int a = 2; a < argc; a++) hit |= atoi(argv[a]) == (int)w;
            if (!hit) continue;
        }
        nw++;
        const int64_t B = shapes[w].first, S = shapes[w].second, rows = B * S;
        if (is11) {
            std::vector<int64_t> h(rows);
            for (int64_t i = 0; i < rows; i++) h[i] = pass ? (i % S + 4099 * (i / S)) % 131072 : i % S;
            CK(cudaMemcpy(pos, h.data(), rows * 8, cudaMemcpyHostToDevice));
        }
        printf("| %zu | %lld | %lld |", w, (long long)B, (long long)S);
        double best5 = 1e30, fl = 0;
        times.emplace_back(vs.size(), 0.0);
        for (size_t i = 0; i < vs.size(); i++) {
            if (!in_pass(vs[i])) continue;
            const double t = time_it([&] { vs[i].go(B, S, 1.0f); });
            times.back()[i] = t;
            if (i == 0) fl = t;
            lsum[i] += log(t);
            if (vs[i].version == 5) best5 = std::min(best5, t);
            printf(" %.2f |", t);
        }
        lsum[vs.size()] += log(best5);
        if (best5 < 1e29) printf(" %.2f | %.3f |\n", best5, best5 / fl);
        else printf(" - | - |\n");   // no version-5 column timed (DEV_FORWARD_ONLY)
        fflush(stdout);
    }
    printf("| geomean | | |");
    bool any5 = false;
    for (auto &v : vs) any5 |= in_pass(v) && v.version == 5;
    auto cell = [&](size_t i, double x) {
        if (i < vs.size() ? in_pass(vs[i]) : any5) printf(" %.3f |", x);
        else if (i == vs.size()) printf(" - |");
    };
    for (size_t i = 0; i <= vs.size(); i++) cell(i, exp(lsum[i] / nw));
    printf("\n| / floor | | |");
    for (size_t i = 0; i <= vs.size(); i++) cell(i, exp((lsum[i] - lsum[0]) / nw));
    printf("\n");
    // Each version at its best values per thread (the columns "V/N" of one V
    // and no block-size suffix), workload by workload: the geomean of
    // min_N(time) / floor. What a version could reach if the library picked N
    // per workload perfectly (the minimum also picks up the timer's noise).
    std::vector<std::pair<std::string, std::vector<size_t>>> fams;   // "V" -> its "V/N" columns, in order
    for (size_t i = 1; i < vs.size(); i++) {
        const std::string n = vs[i].name;
        const size_t sl = n.find('/');
        if (!in_pass(vs[i]) || sl == std::string::npos || n.find(' ') != std::string::npos) continue;
        const std::string v = n.substr(0, sl);
        auto f = std::find_if(fams.begin(), fams.end(), [&](const auto &e) { return e.first == v; });
        if (f == fams.end()) fams.push_back({v, {i}});
        else f->second.push_back(i);
    }
    printf("best over values per thread, geomean / floor:");
    for (auto &[v, cols] : fams) {
        double ls = 0;
        for (auto &row : times) {
            double m = 1e30;
            for (size_t j : cols) m = std::min(m, row[j]);
            ls += log(m / row[0]);
        }
        printf(" %s %.3f", v.c_str(), exp(ls / nw));
    }
    printf("\n");
    }
    if (bad_total) printf("dev_forward: %d version/input pairs differ from the shipped kernel\n", bad_total);
    return bad_total ? 1 : 0;
}
