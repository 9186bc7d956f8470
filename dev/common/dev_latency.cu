/* SPDX-License-Identifier: Apache-2.0 */
// dev_latency.cu -- the latency, in SM clock cycles, of the pieces of the
// forward ops' dependent chain (position -> float -> sin/cos -> rounding test
// -> packed bf16 pair, and the double refinement), measured by one warp that
// runs each piece N times in a row, every run depending on the one before,
// between two clock64() reads, with warm caches. The small workloads of 011
// and 012 are latency-bound (dev/rope_forward/NOTES.md), so this says where a thread's
// time goes. A trivial link (an integer add) closes each loop; its own
// latency is measured alone and printed, not subtracted.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op dev/common/dev_latency.cu -o build-dev/dev_latency
#include <cstdio>
#include <cstdlib>

#include "rope_math.cuh"

#define CK(x)                                                                      \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "dev_latency: %s: %s\n", #x, cudaGetErrorString(e_)); \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

#define N 256

// Each piece maps a 32-bit word to a word; the loop feeds it back. seed keeps
// the compiler from folding; out keeps the chain alive.
// A candidate refinement: rg_sincos_bf16_refine_side<true> with the float ->
// double conversions done by integer ops (a normal x's bits moved into place;
// q from the magic number's mantissa and one DADD) and only the magnitudes of
// sin and cos (rg_bf16_side compares magnitudes): no F2F at the chain's head.
static __device__ __noinline__ uint32_t cand_slow(float x, float vc, float vs)
{
    return rg_sincos_bf16_refine_side<true>(x, 1.0f, vc, vs);
}
static __device__ __forceinline__ uint32_t cand_refine(float xf, float vc, float vs)
{
    const uint32_t u = __float_as_uint(xf);
    if ((u & 0x7f800000u) == 0u) return cand_slow(xf, vc, vs);   // zero or subnormal: the library's path
    const double x = __hiloint2double((int)((((u >> 3) & 0x0fffffffu) + 0x38000000u) | (u & 0x80000000u)), (int)(u << 29));
    const float big = fmaf(xf, 0.636619746685028076f, 12582912.0f);
    const uint32_t qb = __float_as_uint(big);
    // big = 1.5*2^23 + q: its mantissa is 2^22 + q; 2^52 + mantissa, minus 2^52 + 2^22, is q exactly
    const double q = __hiloint2double(0x43300000, (int)(qb & 0x7fffffu)) - 4503599631564800.0;   // 2^52 + 2^22
    double r = fma(-q, 1.5707963267948965580e+00, x);
    r = fma(-q, 6.1232339957367658e-17, r);
    const double y = r * r, y2 = y * y, y4 = y2 * y2;
    const double a0 = fma(8.3333333333333333333e-03, y, -1.6666666666666666667e-01);
    const double a1 = fma(2.7557319223985890653e-06, y, -1.9841269841269841270e-04);
    const double a2 = fma(1.6059043836821614599e-10, y, -2.5052108385441718775e-08);
    const double a3 = fma(2.8114572543455207632e-15, y, -7.6471637318198164759e-13);
    const double ps = fma(fma(a3, y2, a2), y4, fma(a1, y2, a0));
    const double sr = fabs(r) * fma(y, ps, 1.0);
    const double b0 = fma(4.1666666666666666667e-02, y, -0.5);
    const double b1 = fma(2.4801587301587301587e-05, y, -1.3888888888888888889e-03);
    const double b2 = fma(2.0876756987868098979e-09, y, -2.7557319223985890653e-07);
    const double b3 = fma(4.7794773323873852974e-14, y, -1.1470745597729724714e-11);
    const double pc = fma(-1.5619206968586225e-16, y4 * y4, fma(fma(b3, y2, b2), y4, fma(b1, y2, b0)));
    const double cr = fma(y, pc, 1.0);
    const bool odd = qb & 1u;
    const double as = odd ? cr : sr, ac = odd ? sr : cr;   // |sin x|, |cos x|
    return rg_bf16_side(vc, ac) | (rg_bf16_side(vs, as) << 16);
}

template <int K>
static __device__ __forceinline__ uint32_t piece(uint32_t u, float f)
{
    if constexpr (K == 0) {   // integer add (the loop's link alone)
        return u + 1u;
    } else if constexpr (K == 1) {   // int64 -> float (I2F.S64)
        return __float_as_uint((float)(int64_t)(u & 0xffffu));
    } else if constexpr (K == 2) {   // int32 -> float (I2F.S32)
        return __float_as_uint((float)(int32_t)(u & 0xffffu));
    } else if constexpr (K == 3) {   // int -> float by the magic number (0 <= p < 2^23: LOP3 + FADD)
        return __float_as_uint(__uint_as_float(0x4b000000u | (u & 0xffffu)) - 8388608.0f);
    } else if constexpr (K == 4) {   // F2FP: a float pair to bf16x2
        const float v = __uint_as_float((u & 0x3fffffffu) | 0x3f800000u);
        return rg_pack_bf16x2(v, v);
    } else if constexpr (K == 5) {   // rg_sincos_core, sin fed back
        float s, c;
        rg_sincos_core(__uint_as_float((u & 0x007fffffu) | 0x40000000u) * f, &s, &c);
        return __float_as_uint(s);
    } else if constexpr (K == 6) {   // core + the rounding test + pack (scale 1): 011's common path per value
        float s, c;
        const float x = __uint_as_float((u & 0x007fffffu) | 0x40000000u) * f;
        const bool amb = rg_sincos_scaled<true>(x, 1.0f, &s, &c);
        return rg_pack_bf16x2(c, s) ^ (uint32_t)amb;
    } else if constexpr (K == 7) {   // the refinement from the float values (rg_sincos_bf16_refine_side)
        const float x = __uint_as_float((u & 0x007fffffu) | 0x40000000u) * f;
        return rg_sincos_bf16_refine_side<true>(x, 1.0f, 0.5f, 0.25f);
    } else if constexpr (K == 8) {   // the refinement from scratch (rg_sincos_bf16_double)
        const float x = __uint_as_float((u & 0x007fffffu) | 0x40000000u) * f;
        return rg_sincos_bf16_double(x, 1.0f);
    } else if constexpr (K == 9) {   // rg_sincos_double_core alone, sin's high word fed back
        double s, c;
        rg_sincos_double_core(__uint_as_float((u & 0x007fffffu) | 0x40000000u) * f, &s, &c);
        return (uint32_t)__double2hiint(s);
    } else if constexpr (K == 20) {   // the refinement from scratch, integer rounding (rg_sincos_bf16_scratch)
        const float x = __uint_as_float((u & 0x007fffffu) | 0x40000000u) * f;
        return rg_sincos_bf16_scratch<true>(x, 1.0f);
    } else if constexpr (K == 21) {   // rg_bf16_rn_double_int
        return rg_bf16_rn_double_int(__hiloint2double((int)((u & 0xfffffu) | 0x3ff00000u), (int)u));
    } else if constexpr (K == 18) {   // the candidate refinement (cand_refine)
        const float x = __uint_as_float((u & 0x007fffffu) | 0x40000000u) * f;
        return cand_refine(x, 0.5f, 0.25f);
    } else if constexpr (K == 19) {   // DMUL chain link
        const double d = __hiloint2double((int)((u & 0xfffffu) | 0x3ff00000u), (int)u);
        return (uint32_t)__double2loint(d * 1.0000001);
    } else if constexpr (K == 11) {   // DFMA
        const double d = __hiloint2double((int)(u | 0x3ff00000u) & 0x3fffffff, (int)u);
        const double e = fma(d, 1.0000001, -0.5);
        return (uint32_t)__double2loint(e);
    } else if constexpr (K == 12) {   // float -> double (F2F.F64.F32)
        const double d = (double)__uint_as_float(u | 0x3f800000u);
        return (uint32_t)__double2hiint(d);
    } else if constexpr (K == 13) {   // double -> float (F2F.F32.F64)
        const float f2 = (float)__hiloint2double((int)((u & 0xfffffu) | 0x3ff00000u), (int)u);
        return __float_as_uint(f2);
    } else if constexpr (K == 14) {   // rg_bf16_rn_double (the double -> bf16 rounding)
        return rg_bf16_rn_double(__hiloint2double((int)((u & 0xfffffu) | 0x3ff00000u), (int)u));
    } else if constexpr (K == 15) {   // FFMA
        return __float_as_uint(fmaf(__uint_as_float(u | 0x3f800000u), 1.0000001f, -0.5f));
    } else if constexpr (K == 16) {   // 4 DFMA in a chain
        double d = __hiloint2double((int)((u & 0xfffffu) | 0x3ff00000u), (int)u);
        d = fma(d, 1.0000001, -0.5);
        d = fma(d, 1.0000001, -0.5);
        d = fma(d, 1.0000001, -0.5);
        d = fma(d, 1.0000001, -0.5);
        return (uint32_t)__double2loint(d);
    } else if constexpr (K == 17) {   // 4 FFMA in a chain
        float d = __uint_as_float(u | 0x3f800000u);
        d = fmaf(d, 1.0000001f, -0.5f);
        d = fmaf(d, 1.0000001f, -0.5f);
        d = fmaf(d, 1.0000001f, -0.5f);
        d = fmaf(d, 1.0000001f, -0.5f);
        return __float_as_uint(d);
    } else {   // 011's whole common path from an int64 position: I2F.S64, product, core, test, pack
        float s, c;
        const float x = (float)(int64_t)(u & 0xffffu) * f;
        const bool amb = rg_sincos_scaled<true>(x, 1.0f, &s, &c);
        return rg_pack_bf16x2(c, s) ^ (uint32_t)amb;
    }
}

template <int K>
static __global__ void lat(uint32_t seed, float f, uint32_t *out, long long *cycles)
{
    uint32_t u = seed + threadIdx.x;
    // warm the code and the pipes
#pragma unroll 1
    for (int i = 0; i < 8; i++) u = piece<K>(u, f) & 0x00ffffffu;
    __syncwarp();
    const long long t0 = clock64();
#pragma unroll 16
    for (int i = 0; i < N; i++) u = piece<K>(u, f) & 0x00ffffffu;
    // clock64 after the chain: make the read depend on u
    long long t1 = clock64();
    if (u == 0xffffffffu) t1 = 0;   // never (u < 2^24): keeps the order
    out[threadIdx.x] = u;
    if (threadIdx.x == 0) *cycles = t1 - t0;
}

// Every float x with |x| <= RG_SINCOS_FAST_MAX: cand_refine against the
// library's rg_sincos_bf16_refine_side<true>, from the float path's values.
static __global__ void cand_check(unsigned long long *diff, unsigned long long *first)
{
    const uint32_t nbits = __float_as_uint(RG_SINCOS_FAST_MAX) + 1u;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < 2ull * nbits;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t bits = (uint32_t)(i >> 1) | ((uint32_t)(i & 1) << 31);
        const float x = __uint_as_float(bits);
        float vs, vc;
        rg_sincos_scaled<true>(x, 1.0f, &vs, &vc);
        if (cand_refine(x, vc, vs) != rg_sincos_bf16_refine_side<true>(x, 1.0f, vc, vs)) {
            atomicAdd(diff, 1ull);
            atomicMin(first, (unsigned long long)bits);
        }
    }
}

template <int K>
static double run(const char *name, uint32_t *out, long long *cyc)
{
    long long best = -1;
    for (int rep = 0; rep < 5; rep++) {
        lat<K><<<1, 32>>>(12345u, 1.3f, out, cyc);
        CK(cudaGetLastError());
        long long c;
        CK(cudaMemcpy(&c, cyc, sizeof c, cudaMemcpyDeviceToHost));
        if (best < 0 || c < best) best = c;
    }
    const double per = (double)best / N;
    printf("| %s | %.1f |\n", name, per);
    return per;
}

int main()
{
    uint32_t *out;
    long long *cyc;
    CK(cudaMalloc(&out, 32 * sizeof(uint32_t)));
    CK(cudaMalloc(&cyc, sizeof(long long)));
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    printf("dev_latency on %s: cycles per link of a dependent chain, one warp, best of 5 runs of %d links\n", pr.name, N);
    printf("(each link also carries an AND with 0x00ffffff, and the first row is that plus an integer add)\n");
    printf("| piece | cycles |\n|---|---|\n");
    run<0>("integer add (the loop's own link)", out, cyc);
    run<1>("int64 -> float (I2F.S64)", out, cyc);
    run<2>("int32 -> float (I2F.S32)", out, cyc);
    run<3>("int -> float by the magic number (LOP3 + FADD)", out, cyc);
    run<4>("float pair -> bf16x2 (F2FP)", out, cyc);
    run<5>("rg_sincos_core (float sin/cos)", out, cyc);
    run<6>("rg_sincos_core + rounding test + pack (scale 1)", out, cyc);
    run<10>("011 common path from an int64 position", out, cyc);
    run<15>("FFMA", out, cyc);
    run<17>("4 FFMA", out, cyc);
    run<11>("DFMA", out, cyc);
    run<16>("4 DFMA", out, cyc);
    run<12>("float -> double (F2F.F64.F32)", out, cyc);
    run<13>("double -> float (F2F.F32.F64)", out, cyc);
    run<14>("rg_bf16_rn_double", out, cyc);
    run<9>("rg_sincos_double_core (double sin/cos)", out, cyc);
    run<7>("refinement from the float values (refine_side)", out, cyc);
    run<8>("refinement from scratch (rg_sincos_bf16_double)", out, cyc);
    run<18>("candidate refinement (integer conversions, magnitudes only)", out, cyc);
    run<19>("DMUL", out, cyc);
    run<21>("rg_bf16_rn_double_int (integer rounding)", out, cyc);
    run<20>("refinement from scratch, integer rounding (rg_sincos_bf16_scratch)", out, cyc);
    unsigned long long *d, h[2] = {0, ~0ull};
    CK(cudaMalloc(&d, sizeof h));
    CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    cand_check<<<132 * 16, 256>>>(d, d + 1);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    printf("candidate refinement against rg_sincos_bf16_refine_side over every float |x| <= 4e6: %llu differ", h[0]);
    if (h[0]) printf(" (first bits %08llx)", h[1]);
    printf("\n");
    if (h[0]) return 1;
    return 0;
}
