/* SPDX-License-Identifier: Apache-2.0 */
// sincos_bound.cu -- every float argument of the forward ops' fast path, on the
// GPU: the device math the library ships (src/op/rope_math.cuh, included as
// is) against libdevice's double sin/cos, at scale 1 and at a scale
// (0.70710677, 1/sqrt(2)).
//
// For each float x with |x| <= RG_SINCOS_FAST_MAX (4e6; about 2.5e9 values,
// both signs), at each scale:
//   - rg_sincos_scaled's float values (rg_sincos_core's sin/cos, times the
//     scale), and their error against double in ulps of the value (the
//     spacing of floats there): the largest must stay below the bound the
//     rounding test assumes, RG_SINCOS_ULPS at scale 1 and
//     RG_SINCOS_ULPS_SCALED times a scale;
//   - rg_sincos_scaled's rounding test: every value it calls certain must
//     round (bf16, nearest even) to the bf16 nearest the double value; the
//     flagged ones are counted;
//   - the flagged ones redone by both refinements the kernels use
//     (rg_sincos_bf16_refine_side, rg_sincos_bf16_scratch) must give the bf16
//     nearest the double value too;
//   - fd_sincos_lean (dev/common/sincos_lean.cuh: version 34 of 012's fast
//     core, not shipped) times the scale, rounded once to bf16: within
//     FD_SINCOS_LEAN_BF16_ULPS of a bf16 ulp of the double value;
//     its outputs that are not the nearest bf16 are counted (allowed);
// and once:
//   - rg_sincos_double_far (the far path's Payne-Hanek reduction in registers)
//     against libdevice's double sincos on every float beyond
//     RG_SINCOS_FAST_MAX, both signs, and Inf and NaN: the largest difference
//     in double ulps of the reference (at most FAR_ULPS), and the bf16 nearest
//     each the same wherever the reference is decided; also the smallest
//     |sin| or |cos| met (how close a float comes to a multiple of pi/2);
//   - rg_bf16_rn_double_int (the scratch refinement's rounding, by integer
//     operations) equals rg_bf16_rn_double on 2^30 doubles built to cover its
//     cases (ties and their neighbours, every exponent near float's range);
//   - the CPU path's form of the core (src/op/cpu_core_scalar.h) gives the
//     GPU's bits on 2^22 arguments spread over the range.
// "The double value" is libdevice's sin/cos (under 2 ulp of double); where it
// lies within 4 double ulps of a bf16 midpoint it cannot tell which side the
// exact value is on, and the argument is counted as undecided, not compared
// (and listed when the answers differ: for tiny x = a midpoint itself, sin x =
// x(1 - x^2/6) rounds to x in double, a tie, while the exact value is below the
// midpoint).
//
// Built with the library when CUDA is (tests/gpu_sincos_bound.cmake: the CTest
// test gpu_sincos_bound, which skips without a GPU), or alone:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op dev/common/sincos_bound.cu -o /tmp/sincos_bound
//   /tmp/sincos_bound > results/sincos-bound.txt      (exit 1 on any failure, 77 without a GPU)
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cpu_core_scalar.h"   // the CPU path's form of rg_sincos_core: must give the same bits
#include "rope_math.cuh"
#include "sincos_lean.cuh"   // version 34 (results/dev/19-012-lean/)

// The CPU path's copy of the core's range and bound must be the GPU's.
static_assert(RG_CORE_FAST_MAX == RG_SINCOS_FAST_MAX && RG_CORE_ULPS == RG_SINCOS_ULPS &&
                  RG_CORE_ULPS_SCALED == RG_SINCOS_ULPS_SCALED,
              "cpu_core_scalar.h and rope_math.cuh disagree on the sin/cos core's range or bound");

#define SCALE 0.70710677f   // the scaled pass: 1/sqrt(2), as dev/common/sincos_bound_cpu.c

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "sincos_bound: %s: %s\n", #x, cudaGetErrorString(e_));              \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

// The milliseconds the GPU takes for what launch() enqueues (CUDA events
// around it), the launches checked.
template <class F>
static float gpu_ms(F launch)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaGetLastError());
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return ms;
}

// The first few disagreements, for the report.
struct miss {
    uint32_t x_bits, want, side, dbl;
    double sd, cd;
};
#define MAX_MISS 40
__device__ miss g_miss[MAX_MISS];
__device__ unsigned int g_nmiss;

struct counts {
    unsigned long long n, flagged, wrong_certain, wrong_side, wrong_double, undecided;
    unsigned int max_ulps_bits;   // largest error in ulps of the value (a non-negative float's bits)
    unsigned int worst_x_bits;    // its argument
};

// ulp(v): the spacing of the floats at v (2^-149 among the subnormals).
static __device__ double ulp_of(float v)
{
    const int e = (int)((__float_as_uint(v) >> 23) & 0xffu);
    return __longlong_as_double((long long)((e ? e : 1) - 150 + 1023) << 52);
}

// The larger error of float values vs, vc against sd, cd, in ulps of each value.
static __device__ float value_ulps(float vs, float vc, double sd, double cd)
{
    return (float)fmax(fabs((double)vs - sd) / ulp_of(vs), fabs((double)vc - cd) / ulp_of(vc));
}

// The bf16 nearest to a double (nearest even), as the library's own.
static __device__ uint32_t nearest(double d) { return rg_bf16_rn_double(d); }

// Whether the reference d is too close to a bf16 midpoint for its own error
// (libdevice: under 2 ulp of double) to tell which side the exact value is on:
// within 4 double ulps of the midpoint next to it.
static __device__ bool undecided(double d)
{
    const float f = (float)d;
    const double m = (double)__uint_as_float((__float_as_uint(f) & 0xffff0000u) | 0x8000u);
    const double m2 = (double)__uint_as_float(((__float_as_uint(f) & 0xffff0000u) - 0x10000u) | 0x8000u);
    const double tol = 4.0 * fabs(d) * 0x1p-52;
    return fabs(d - m) <= tol || fabs(d - m2) <= tol;
}

// The i-th argument of an exhaustive pass (every float up to the top, each
// followed by its negative; bits: its bits) and its double sin and cos times
// the scale.
template <bool S1>
static __device__ float pass_arg(uint64_t i, float scale, uint32_t *bits, double *sd, double *cd)
{
    *bits = (uint32_t)(i >> 1) | ((uint32_t)(i & 1) << 31);
    const float x = __uint_as_float(*bits);
    sincos((double)x, sd, cd);
    if (!S1) *sd *= (double)scale, *cd *= (double)scale;
    return x;
}

template <bool S1>
static __global__ void check(uint32_t nbits, float scale, counts *out)
{
    __shared__ counts blk;
    if (threadIdx.x == 0) memset(&blk, 0, sizeof blk);
    __syncthreads();
    unsigned long long n = 0, flagged = 0, wc = 0, ws = 0, wd = 0, und = 0;
    float max_ulps = 0.0f;
    uint32_t worst = 0;
    const uint64_t total = 2ull * nbits;   // both signs
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t bits;
        double sd, cd;
        const float x = pass_arg<S1>(i, scale, &bits, &sd, &cd);
        float vs, vc;
        const bool amb = rg_sincos_scaled<S1>(x, scale, &vs, &vc);
        const float u = value_ulps(vs, vc, sd, cd);
        if (u > max_ulps) max_ulps = u, worst = bits;
        const uint32_t want = nearest(cd) | (nearest(sd) << 16);
        const uint32_t got = rg_pack_bf16x2(vc, vs);
        n++;
        uint32_t side = got, dbl = got;
        if (amb) {
            flagged++;
            side = rg_sincos_bf16_refine_side<S1>(x, scale, vc, vs);
            dbl = rg_sincos_bf16_scratch<S1>(x, scale);
        }
        const bool open = undecided(sd) || undecided(cd);
        und += open;
        if (!open) {
            if (amb) {
                ws += side != want;
                wd += dbl != want;
            } else {
                wc += got != want;
            }
        }
        if (side != want || dbl != want || (!amb && got != want)) {
            const unsigned int k = atomicAdd(&g_nmiss, 1u);
            if (k < MAX_MISS) g_miss[k] = {bits, want, side, dbl, sd, cd};
        }
    }
    atomicAdd(&blk.n, n);
    atomicAdd(&blk.flagged, flagged);
    atomicAdd(&blk.wrong_certain, wc);
    atomicAdd(&blk.wrong_side, ws);
    atomicAdd(&blk.wrong_double, wd);
    atomicAdd(&blk.undecided, und);
    if (atomicMax(&blk.max_ulps_bits, __float_as_uint(max_ulps)) < __float_as_uint(max_ulps))
        blk.worst_x_bits = worst;   // racy among equal maxima: any of them will do
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&out->n, blk.n);
        atomicAdd(&out->flagged, blk.flagged);
        atomicAdd(&out->wrong_certain, blk.wrong_certain);
        atomicAdd(&out->wrong_side, blk.wrong_side);
        atomicAdd(&out->wrong_double, blk.wrong_double);
        atomicAdd(&out->undecided, blk.undecided);
        if (atomicMax(&out->max_ulps_bits, blk.max_ulps_bits) < blk.max_ulps_bits) out->worst_x_bits = blk.worst_x_bits;
    }
}

// Version 34's core (fd_sincos_lean) times the scale, rounded once to bf16
// with no test: the largest error of its float values in ulps of the value, of
// its bf16 outputs in bf16 ulps of the exact value (its bound,
// FD_SINCOS_LEAN_BF16_ULPS), and how many outputs are not the nearest.
struct lean_counts {
    unsigned long long n, not_nearest, undecided;
    unsigned int max_ulps_bits, worst_x_bits;   // float ulps of the value
    unsigned int max_bf16_bits, worst_bf16_x;   // bf16 ulps of the exact value
};

static __device__ double bf16_ulp_of(double e)   // the bf16 spacing at |e| (normal range)
{
    return e == 0.0 ? 0x1p-133 : ldexp(1.0, max(ilogb(e), -126) - 7);
}

template <bool S1>
static __global__ void check_lean(uint32_t nbits, float scale, lean_counts *out)
{
    unsigned long long n = 0, nn = 0, und = 0;
    float max_ulps = 0.0f, max_b = 0.0f;
    uint32_t worst = 0, worst_b = 0;
    const uint64_t total = 2ull * nbits;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t bits;
        double sd, cd;
        const float x = pass_arg<S1>(i, scale, &bits, &sd, &cd);
        float vs, vc;
        fd_sincos_lean(x, &vs, &vc);
        if (!S1) vs *= scale, vc *= scale;
        const float u = value_ulps(vs, vc, sd, cd);
        if (u > max_ulps) max_ulps = u, worst = bits;
        const uint32_t got = rg_pack_bf16x2(vc, vs);
        const double gc = (double)__uint_as_float(got << 16), gs = (double)__uint_as_float(got & 0xffff0000u);
        const float bc = (float)(fabs(gc - cd) / bf16_ulp_of(cd)), bs = (float)(fabs(gs - sd) / bf16_ulp_of(sd));
        if (bc > max_b) max_b = bc, worst_b = bits;
        if (bs > max_b) max_b = bs, worst_b = bits;
        n++;
        const bool open = undecided(sd) || undecided(cd);
        und += open;
        if (!open) nn += (got & 0xffffu) != nearest(cd), nn += (got >> 16) != nearest(sd);
    }
    atomicAdd(&out->n, n);
    atomicAdd(&out->not_nearest, nn);
    atomicAdd(&out->undecided, und);
    if (atomicMax(&out->max_ulps_bits, __float_as_uint(max_ulps)) < __float_as_uint(max_ulps)) out->worst_x_bits = worst;
    if (atomicMax(&out->max_bf16_bits, __float_as_uint(max_b)) < __float_as_uint(max_b)) out->worst_bf16_x = worst_b;
}

// The lean pass at scale 1 and at SCALE: its bf16 outputs must be within
// FD_SINCOS_LEAN_BF16_ULPS of a bf16 ulp of the exact value. Returns whether they are.
static bool lean_pass(uint32_t nbits)
{
    bool ok = true;
    for (int pass = 0; pass < 2; pass++) {
        lean_counts *d, h;
        CK(cudaMalloc(&d, sizeof *d));
        CK(cudaMemset(d, 0, sizeof *d));
        if (pass == 0) check_lean<true><<<132 * 16, 256>>>(nbits, 1.0f, d);
        else check_lean<false><<<132 * 16, 256>>>(nbits, SCALE, d);
        CK(cudaGetLastError());
        CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        CK(cudaFree(d));
        float ulps, worst, b, worst_b;
        memcpy(&ulps, &h.max_ulps_bits, 4);
        memcpy(&worst, &h.worst_x_bits, 4);
        memcpy(&b, &h.max_bf16_bits, 4);
        memcpy(&worst_b, &h.worst_bf16_x, 4);
        printf("fd_sincos_lean (version 34, no test), scale %.8g\n", pass == 0 ? 1.0 : (double)SCALE);
        printf("  arguments checked:                      %llu\n", h.n);
        printf("  error, ulps of the float value:         max %.4f (at x = %.9g)\n", ulps, (double)worst);
        printf("  error of the bf16 outputs, bf16 ulps:   max %.6f (at x = %.9g; must be < %.8f)\n", b,
               (double)worst_b, FD_SINCOS_LEAN_BF16_ULPS);
        printf("  bf16 outputs not the nearest:           %llu (%.3g of the outputs; undecided pairs %llu not counted)\n",
               h.not_nearest, (double)h.not_nearest / (2.0 * h.n), h.undecided);
        ok = ok && b < (float)FD_SINCOS_LEAN_BF16_ULPS;
    }
    return ok;
}

// rg_sincos_core on n sampled arguments: the k-th is the float with bits
// k * stride, negated for odd k; its sin and cos bits at out[2k], out[2k+1].
__global__ void core_sample(uint32_t stride, uint32_t n, uint32_t *out)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const float x = __uint_as_float((k * stride) | ((k & 1u) << 31));
    float s, c;
    rg_sincos_core(x, &s, &c);
    out[2 * k] = __float_as_uint(s);
    out[2 * k + 1] = __float_as_uint(c);
}

// The CPU path's core (src/op/cpu_core_scalar.h, the same IEEE operations in
// the same order) against the GPU's on 2^22 arguments spread over the fast
// range: returns how many differ in a bit.
static unsigned long long cpu_core_mismatches(uint32_t top, uint32_t *n_out)
{
    const uint32_t n = 1u << 22, stride = (top / n) | 1u;
    uint32_t *d, *h = (uint32_t *)malloc((size_t)n * 8);
    if (!h) {
        fprintf(stderr, "sincos_bound: out of memory\n");
        exit(2);
    }
    CK(cudaMalloc(&d, (size_t)n * 8));
    core_sample<<<n / 256, 256>>>(stride, n, d);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h, d, (size_t)n * 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    unsigned long long bad = 0;
    for (uint32_t k = 0; k < n; k++) {
        const float x = rg_bits_float((k * stride) | ((k & 1u) << 31));
        float s, c;
        rg_sincos_core1(x, &s, &c);
        bad += (rg_float_bits(s) != h[2 * k]) + (rg_float_bits(c) != h[2 * k + 1]);
    }
    free(h);
    *n_out = n;
    return bad;
}

// rg_bf16_rn_double_int against rg_bf16_rn_double on n doubles: exponents from
// well below float's normal range to beyond its largest, both signs, and below
// the bf16's 7 mantissa bits one of 16 patterns (an exact tie, a tie plus or
// minus 1-3 double ulps, all zeros, all ones, one, random) under random top bits.
__device__ unsigned long long g_round_bad, g_round_first;
static __device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
__global__ void rounding_check(uint64_t n)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t h = mix64(i * 0x9e3779b97f4a7c15ull + 1);
        const uint64_t e = 860 + (h % 310);       // biased exponent 860 .. 1169 (float's normals: 897 .. 1150)
        const uint64_t top = (h >> 16) & 0x7f;     // the bf16's 7 mantissa bits
        const uint64_t tie = 1ull << 44;           // the rounding bit: 52 - 7 - 1
        uint64_t low;                              // the 45 bits below them
        switch ((h >> 24) & 15) {
        case 0: low = tie; break;
        case 1: low = tie + 1; break;
        case 2: low = tie - 1; break;
        case 3: low = tie + 2; break;
        case 4: low = tie - 2; break;
        case 5: low = tie + 3; break;
        case 6: low = tie - 3; break;
        case 7: low = 0; break;
        case 8: low = (1ull << 45) - 1; break;
        case 9: low = 1; break;
        default: low = mix64(h) & ((1ull << 45) - 1); break;
        }
        const uint64_t bits = (h >> 63) << 63 | e << 52 | top << 45 | low;
        const double d = __longlong_as_double((long long)bits);
        if (rg_bf16_rn_double_int(d) != rg_bf16_rn_double(d) && atomicAdd(&g_round_bad, 1ull) == 0) g_round_first = bits;
    }
}

// ---------------------------------------------------------------------------
// The far path: rg_sincos_double_far against libdevice's sincos, every float
// with RG_SINCOS_FAST_MAX < |x| (finite; then Inf and NaN).
// ---------------------------------------------------------------------------
#define FAR_ULPS 4.0   // the most double ulps of the reference the two may differ by
struct far_counts {
    unsigned long long n, bf16_differ, undecided, bad_nonfinite;
    unsigned long long max_ulps_bits;   // largest difference, double ulps (a non-negative double's bits)
    unsigned int worst_x_bits;
    unsigned long long min_abs_bits;    // smallest |sin| or |cos| of libdevice (a non-negative double's bits)
    unsigned int min_x_bits;
};

static __device__ double ulp_of_double(double d)
{
    const int e = (int)((__double_as_longlong(d) >> 52) & 0x7ff);
    return __longlong_as_double((long long)((e ? e : 1) - 52) << 52);
}

// i-th far argument: bits lo + i/2, negated for odd i.
static __global__ void far_check(uint32_t lo, uint64_t count, far_counts *out)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long n = 0, differ = 0, und = 0;
    double worst = 0.0, least = 1.0;
    uint32_t worst_x = 0, least_x = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        const uint32_t bits = (lo + (uint32_t)(i >> 1)) | (uint32_t)(i & 1) << 31;
        const float x = __uint_as_float(bits);
        double s, c, sd, cd;
        rg_sincos_double_far(x, &s, &c);
        sincos((double)x, &sd, &cd);
        const double d = fmax(fabs(s - sd) / ulp_of_double(sd), fabs(c - cd) / ulp_of_double(cd));
        if (d > worst) worst = d, worst_x = bits;
        const double a = fmin(fabs(sd), fabs(cd));
        if (a < least) least = a, least_x = bits;
        const bool u = undecided(sd) || undecided(cd);
        und += u;
        differ += !u && (nearest(s) != nearest(sd) || nearest(c) != nearest(cd));
        n++;
    }
    atomicAdd(&out->n, n);
    atomicAdd(&out->bf16_differ, differ);
    atomicAdd(&out->undecided, und);
    const unsigned long long wb = (unsigned long long)__double_as_longlong(worst);
    if (atomicMax(&out->max_ulps_bits, wb) < wb) out->worst_x_bits = worst_x;   // racy among equal maxima
    const unsigned long long lb = (unsigned long long)__double_as_longlong(least);
    if (atomicMin(&out->min_abs_bits, lb) > lb) out->min_x_bits = least_x;
}

// Inf, -Inf and NaN give NaN for both, as sincos does.
static __global__ void far_nonfinite(far_counts *out)
{
    const uint32_t cases[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u};
    for (uint32_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double s, c;
        rg_sincos_double_far(__uint_as_float(cases[k]), &s, &c);
        if (!isnan(s) || !isnan(c)) out->bad_nonfinite++;
    }
}

static bool far_pass(uint32_t fast_top_bits)
{
    const uint32_t lo = fast_top_bits + 1, hi = 0x7f7fffffu;   // 4e6's successor .. FLT_MAX
    const uint64_t count = 2ull * (hi - lo + 1);
    far_counts *d, h;
    CK(cudaMalloc(&d, sizeof *d));
    CK(cudaMemset(d, 0, sizeof *d));
    const unsigned long long one = (unsigned long long)__builtin_bit_cast(long long, 1.0);
    CK(cudaMemcpy(&d->min_abs_bits, &one, sizeof one, cudaMemcpyHostToDevice));
    const float ms = gpu_ms([&] {
        far_check<<<132 * 16, 256>>>(lo, count, d);
        far_nonfinite<<<1, 1>>>(d);
    });
    CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    double ulps, least;
    float wx, lx;
    memcpy(&ulps, &h.max_ulps_bits, 8);
    memcpy(&least, &h.min_abs_bits, 8);
    memcpy(&wx, &h.worst_x_bits, 4);
    memcpy(&lx, &h.min_x_bits, 4);
    printf("far path (rg_sincos_double_far) against libdevice's sincos, every float with %.0f < |x| <= FLT_MAX "
           "(%.0f ms)\n", (double)RG_SINCOS_FAST_MAX, ms);
    printf("  arguments checked:                      %llu\n", h.n);
    printf("  difference, double ulps of libdevice's: max %.3f (at x = %.9g; allowed %.0f)\n", ulps, (double)wx,
           FAR_ULPS);
    printf("  nearest bf16 differs (reference decided): %llu\n", h.bf16_differ);
    printf("  reference undecided (not compared):     %llu\n", h.undecided);
    printf("  smallest |sin| or |cos|:                %.6g (at x = %.9g)\n", least, (double)lx);
    printf("  Inf and NaN not giving NaN:             %llu\n", h.bad_nonfinite);
    return ulps <= FAR_ULPS && h.bf16_differ == 0 && h.bad_nonfinite == 0 && h.n == count;
}

int main()
{
    // Also a CTest test (tests/gpu_sincos_bound.cmake): without a GPU it skips (77), saying why.
    int ndev = 0;
    const cudaError_t de = cudaGetDeviceCount(&ndev);
    if (de != cudaSuccess || ndev == 0) {
        printf("skip: no usable CUDA device (%s)\n", de != cudaSuccess ? cudaGetErrorString(de) : "none found");
        return 77;
    }
    float fmax = RG_SINCOS_FAST_MAX;
    uint32_t top;
    memcpy(&top, &fmax, 4);
    const uint32_t nbits = top + 1;   // every non-negative float up to 4e6, then its negative
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    printf("sincos_bound on %s: every float x with |x| <= %.0f, against libdevice's double sincos\n", pr.name,
           (double)fmax);
    bool ok = true;
    for (int pass = 0; pass < 2; pass++) {   // scale 1, then SCALE
        counts *d, h;
        CK(cudaMalloc(&d, sizeof *d));
        CK(cudaMemset(d, 0, sizeof *d));
        const unsigned int zero = 0;
        CK(cudaMemcpyToSymbol(g_nmiss, &zero, sizeof zero));
        const float ms = gpu_ms([&] {
            if (pass == 0) check<true><<<132 * 16, 256>>>(nbits, 1.0f, d);
            else check<false><<<132 * 16, 256>>>(nbits, SCALE, d);
        });
        CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        CK(cudaFree(d));
        float ulps, worst;
        memcpy(&ulps, &h.max_ulps_bits, 4);
        memcpy(&worst, &h.worst_x_bits, 4);
        const int bound = pass == 0 ? RG_SINCOS_ULPS : RG_SINCOS_ULPS_SCALED;
        printf("scale %.8g (%.0f ms)\n", pass == 0 ? 1.0 : (double)SCALE, ms);
        printf("  arguments checked:                      %llu\n", h.n);
        printf("  error, ulps of the value:               max %.4f (at x = %.9g; the test assumes < %d)\n", ulps,
               (double)worst, bound);
        printf("  flagged by the rounding test:           %llu (%.3g of the pairs)\n", h.flagged, (double)h.flagged / h.n);
        printf("  certain but not the nearest bf16:       %llu\n", h.wrong_certain);
        printf("  flagged, rg_sincos_bf16_refine_side off: %llu\n", h.wrong_side);
        printf("  flagged, rg_sincos_bf16_scratch off:    %llu\n", h.wrong_double);
        printf("  reference undecided (within 4 double ulps of a bf16 midpoint; not counted above): %llu\n", h.undecided);
        printf("  values where the bf16 nearest libdevice's double differs from the kernel's (first %d, undecided ones "
               "included):\n", MAX_MISS);
        unsigned int nm = 0;
        miss hm[MAX_MISS];
        CK(cudaMemcpyFromSymbol(&nm, g_nmiss, sizeof nm));
        CK(cudaMemcpyFromSymbol(hm, g_miss, sizeof hm));
        for (unsigned int k = 0; k < nm && k < MAX_MISS; k++) {
            float x;
            memcpy(&x, &hm[k].x_bits, 4);
            printf("    x = %.9g (%08x): nearest (cos|sin<<16) %08x, refine_side %08x, refine_double %08x; "
                   "libdevice sin %.17g cos %.17g\n", (double)x, hm[k].x_bits, hm[k].want, hm[k].side, hm[k].dbl,
                   hm[k].sd, hm[k].cd);
        }
        ok = ok && ulps < (float)bound && h.wrong_certain == 0 && h.wrong_side == 0 && h.wrong_double == 0;
    }
    ok = lean_pass(nbits) && ok;
    ok = far_pass(top) && ok;
    const uint64_t nround = 1ull << 30;
    rounding_check<<<132 * 16, 256>>>(nround);
    CK(cudaGetLastError());
    unsigned long long round_bad = 0, round_first = 0;
    CK(cudaMemcpyFromSymbol(&round_bad, g_round_bad, sizeof round_bad));
    CK(cudaMemcpyFromSymbol(&round_first, g_round_first, sizeof round_first));
    printf("rg_bf16_rn_double_int against rg_bf16_rn_double on %llu doubles: %llu differ", (unsigned long long)nround,
           round_bad);
    if (round_bad) printf(" (first: bits %016llx)", round_first);
    printf("\n");
    uint32_t nsample = 0;
    const unsigned long long cpu_bad = cpu_core_mismatches(top, &nsample);
    printf("the CPU path's core (cpu_core_scalar.h) on %u sampled arguments: %llu values differ from the GPU's\n",
           nsample, cpu_bad);
    ok = ok && cpu_bad == 0 && round_bad == 0;
    printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
