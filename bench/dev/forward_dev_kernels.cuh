/* SPDX-License-Identifier: Apache-2.0 */
// forward_dev_kernels.cuh -- development versions of the forward ops' kernels
// (011: position ids -> cos_sin, 012: freqs -> cos, sin), llm.c dev/cuda style,
// beside the shipped ones (src/op/forward_kernels.cuh = version 1 here). Built
// and compared by bench/dev_forward.cu; bench/NOTES.md has the outcomes.
//
// Every version but 4 writes, for each value, the bf16 nearest to
// scale*sin/cos(x) (x the float product p*inv for 011, the given float for
// 012), so versions 1-3 must agree bit for bit; dev_forward checks that.
//
//  1 shipped   src/op/forward_kernels.cuh as it is now: since 2026-12-01 that
//              is version 5 (with values per thread chosen by size). Before, it
//              was rg_sincos_bf16 per value (bf16 of v-t and v+t, a branch to an
//              out-of-line double path per value; `git show 3764848:src/op/
//              forward_kernels.cuh`), measured as "1-shipped" in
//              bench/results/dev/forward-2026-12-01-run{1,2,3}.txt.
//  2 mid       the same values from a cheaper test: the only bf16 rounding a
//              float error t can flip is the one at the midpoint nearest v, so
//              |v - m| <= t (m = v's top 16 bits | 0x8000) replaces the two
//              roundings; the pair is packed by one cvt.rn.bf16x2.f32; the
//              error bound's absolute part grows with |x| (the reduction's
//              rounding is proportional to q, zero for |x| < pi/4) instead of
//              a constant, so small arguments (low frequencies at small
//              positions) no longer fall back; one branch per thread, to an
//              out-of-line path that redoes only the flagged values in double.
//  3 double    every value in double (rg_sincos_double + one rounding): no
//              branch, no fallback; for small problems, where the rare path's
//              cold code (fetched from DRAM after the cold-L2 flush) may cost
//              more than the arithmetic.
//  4 plain     2's arithmetic without the rounding test (NOT correctly rounded;
//              timing only: what the test costs).
//  5 refine    2 with a cheaper rare path and a cheaper common one: the flagged
//              values are redone inline (no call) in double from the fast
//              path's quadrant, with Estrin-scheme polynomials (a dependent
//              chain of ~6 double ops instead of ~12, no rint/F2I conversions);
//              only |x| > 4e6, NaN/Inf and a huge scale take the out-of-line
//              libdevice path. The reduction constants are all subtracted
//              (C1 = pi/2 rounded down), so sin(-0) = -0 without a test; scale
//              == 1 compiled apart (no multiplies); 32-bit indexing.
//  6 = 5 without the rounding test, 7 = 5 with no arithmetic (x's bits
//      stored): timing only, to split 5's time into memory, arithmetic, test.
//  8 loop      5's arithmetic with each warp looping over RPW consecutive rows
//              (all its positions, or its freqs, fetched before the loop), on a
//              grid sized to a target number of warps: the stores of a row go
//              out while the next row computes, instead of every warp loading,
//              computing, then storing at once (5: the arithmetic adds to the
//              memory time on the mid-size and large workloads instead of
//              hiding under it). VPT 1, 2 or 4 (011); 2, 4 or 8 (012).
// VPT (values per thread) is a launch parameter: 1, 2, 4 (011) / 2, 4, 8 (012).
#pragma once

#include "forward_kernels.cuh"

// sin/cos on the fast path only (|x| <= RG_SINCOS_FAST_MAX): rg_sincos without
// its range check.
static __device__ __forceinline__ void fd_sincos_core(float x, float *s, float *c)
{
    const float big = fmaf(x, 0.636619746685028076f, 12582912.0f);
    const float q = big - 12582912.0f;
    const int qi = __float_as_int(big);
    float r = fmaf(q, -1.57079637050628662f, x);
    r = fmaf(q, 4.37113882867379300e-08f, r);
    r = fmaf(q, 1.71512451000588190e-15f, r);
    const float r2 = r * r;
    float ps = -1.93857558770105243e-04f;
    ps = fmaf(ps, r2, 8.33097007125616074e-03f);
    ps = fmaf(ps, r2, -1.66666299104690552e-01f);
    const float sr = fmaf(ps * r2, r, r);
    float pc = 2.43223821598803624e-05f;
    pc = fmaf(pc, r2, -1.38862279709428549e-03f);
    pc = fmaf(pc, r2, 4.16666194796562195e-02f);
    pc = fmaf(pc, r2, -0.5f);
    const float cr = fmaf(pc, r2, 1.0f);
    const float sv = (qi & 1) ? cr : sr;
    const float cv = (qi & 1) ? sr : cr;
    *s = __int_as_float(__float_as_int(sv) ^ ((qi & 2) << 30));
    *c = __int_as_float(__float_as_int(cv) ^ (((qi + 1) & 2) << 30));
}

// The reduction's absolute error per radian of |x| (2^-47: the first FMA's
// rounding is at most 2^-24 * |q| * 4.4e-8 with |q| <= 0.64|x| + 1, and q = 0,
// an exact reduction, below pi/4).
#define FD_ABS_PER_RAD 7.105427357601002e-15f

// True when bf16_rn(v) might not be the bf16 nearest to a value within t of v:
// only the midpoint nearest v (same sign and exponent: the subtraction is exact)
// can lie within t, as t is far below half a bf16 spacing.
static __device__ __forceinline__ bool fd_near_mid(float v, float t)
{
    const float m = __uint_as_float((__float_as_uint(v) & 0xffff0000u) | 0x8000u);
    return fabsf(v - m) <= t;
}

static __device__ __forceinline__ uint32_t fd_pack_bf16x2(float lo, float hi)
{
    uint32_t w;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    return w;
}

// vs, vc = scale*sin(x), scale*cos(x) in float; returns whether either may round
// to the wrong bf16 (or x is off the fast path). sa = |scale| * FD_ABS_PER_RAD.
template <bool CHECK>
static __device__ __forceinline__ bool fd_sincos_scaled(float x, float scale, float sa, float *vs, float *vc)
{
    float s, c;
    fd_sincos_core(x, &s, &c);
    *vs = s * scale;
    *vc = c * scale;
    if (!CHECK) return !(fabsf(x) <= RG_SINCOS_FAST_MAX);
    const float ta = fabsf(x) * sa;
    const float ts = fmaf(fabsf(*vs), RG_SINCOS_REL_ERR, ta), tc = fmaf(fabsf(*vc), RG_SINCOS_REL_ERR, ta);
    return !(fabsf(x) <= RG_SINCOS_FAST_MAX) | fd_near_mid(*vs, ts) | fd_near_mid(*vc, tc);
}

// Exact-as-double (cos | sin << 16) word of one value: the slow path.
static __device__ __forceinline__ uint32_t fd_word_double(float x, float scale)
{
    double s, c;
    rg_sincos_double(x, &s, &c);
    return rg_bf16_rn_double((double)scale * c) | (rg_bf16_rn_double((double)scale * s) << 16);
}

template <int N> struct fd_words { uint32_t w[N]; };

// ---- 011 ---------------------------------------------------------------------------------
// Out of line: redo the flagged values of a thread in double, store its 2 runs.
template <int VPT>
static __device__ __noinline__ void fd11_slow(const int64_t *pos, const float *inv, float scale, uint32_t mask,
                                              fd_words<VPT> w, uint32_t *o, int tpr)
{
    const float p = (float)*pos;
    for (int i = 0; i < VPT; i++)
        if (mask >> i & 1) w.w[i] = fd_word_double(p * inv[i], scale);
    for (int i = 0; i < VPT; i++) o[i] = w.w[i], o[i + VPT * tpr] = w.w[i];
}

template <int VPT> struct fd_store;
template <> struct fd_store<1> {
    static __device__ __forceinline__ void go(uint32_t *o, const uint32_t *w) { *o = w[0]; }
};
template <> struct fd_store<2> {
    static __device__ __forceinline__ void go(uint32_t *o, const uint32_t *w) { *(uint2 *)o = make_uint2(w[0], w[1]); }
};
template <> struct fd_store<4> {
    static __device__ __forceinline__ void go(uint32_t *o, const uint32_t *w)
    {
        *(uint4 *)o = make_uint4(w[0], w[1], w[2], w[3]);
    }
};

// V: 2 mid, 3 double, 4 plain. H = 64 (head_dim 128) fixed.
template <int V, int VPT>
static __global__ void __launch_bounds__(256) fd11(const int64_t *__restrict__ pos, const float *__restrict__ inv,
                                                   float scale, uint32_t *__restrict__ out, int64_t rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / TPR;
    const int k = (int)(t % TPR);
    if (r >= rows) return;
    const float p = (float)__ldg(pos + r);
    float f[VPT];
    if constexpr (VPT == 4) {
        const float4 q = __ldg((const float4 *)inv + k);
        f[0] = q.x, f[1 % VPT] = q.y, f[2 % VPT] = q.z, f[3 % VPT] = q.w;
    } else if constexpr (VPT == 2) {
        const float2 q = __ldg((const float2 *)inv + k);
        f[0] = q.x, f[1 % VPT] = q.y;
    } else {
        f[0] = __ldg(inv + k);
    }
    uint32_t *o = out + r * (2 * H) + VPT * k;   // a row: 2*H words (cos | sin << 16)
    fd_words<VPT> w;
    if constexpr (V == 3) {
#pragma unroll
        for (int i = 0; i < VPT; i++) w.w[i] = fd_word_double(p * f[i], scale);
    } else {
        const float sa = fabsf(scale) * FD_ABS_PER_RAD;
        uint32_t mask = (fabsf(scale) <= 1.0e30f) ? 0u : ~0u;
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            float vs, vc;
            if (fd_sincos_scaled<V == 2>(p * f[i], scale, sa, &vs, &vc)) mask |= 1u << i;
            w.w[i] = fd_pack_bf16x2(vc, vs);
        }
        if (mask & ((1u << VPT) - 1)) {
            fd11_slow<VPT>(pos + r, inv + VPT * k, scale, mask, w, o, TPR);
            return;
        }
    }
    fd_store<VPT>::go(o, w.w);
    fd_store<VPT>::go(o + H, w.w);
}

template <int V, int VPT>
static void fd11_go(const int64_t *pos, const float *inv, float scale, uint16_t *out, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    fd11<V, VPT><<<(unsigned)((n + 255) / 256), 256, 0, st>>>(pos, inv, scale, (uint32_t *)out, rows);
}

// ---- 012 ---------------------------------------------------------------------------------
template <int VPT>
static __device__ __noinline__ void fd12_slow(const float *x, float scale, uint32_t mask, fd_words<VPT / 2> cw,
                                              fd_words<VPT / 2> sw, uint32_t *oc, uint32_t *os, int H2)
{
    for (int i = 0; i < VPT; i++)
        if (mask >> i & 1) {
            const uint32_t wd = fd_word_double(x[i], scale);
            const int sh = (i & 1) * 16;
            cw.w[i / 2] = (cw.w[i / 2] & ~(0xffffu << sh)) | ((wd & 0xffffu) << sh);
            sw.w[i / 2] = (sw.w[i / 2] & ~(0xffffu << sh)) | ((wd >> 16) << sh);
        }
    for (int i = 0; i < VPT / 2; i++) oc[i] = cw.w[i], oc[i + H2] = cw.w[i], os[i] = sw.w[i], os[i + H2] = sw.w[i];
}

template <int V, int VPT>
static __global__ void __launch_bounds__(256) fd12(const float *__restrict__ freqs, float scale,
                                                   uint32_t *__restrict__ cos_out, uint32_t *__restrict__ sin_out,
                                                   int64_t rows)
{
    constexpr int H = 64, TPR = H / VPT, H2 = H / 2;   // H2: words per half row
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t r = t / TPR;
    const int k = (int)(t % TPR);
    if (r >= rows) return;
    const float *in = freqs + r * H + VPT * k;
    float f[VPT];
    if constexpr (VPT == 8) {
        const float4 a = __ldg((const float4 *)in), b = __ldg((const float4 *)in + 1);
        f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
        f[4 % VPT] = b.x, f[5 % VPT] = b.y, f[6 % VPT] = b.z, f[7 % VPT] = b.w;
    } else if constexpr (VPT == 4) {
        const float4 a = __ldg((const float4 *)in);
        f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
    } else {
        const float2 a = __ldg((const float2 *)in);
        f[0] = a.x, f[1] = a.y;
    }
    uint32_t *oc = cos_out + r * H + (VPT / 2) * k, *os = sin_out + r * H + (VPT / 2) * k;
    fd_words<VPT / 2> cw, sw;
    if constexpr (V == 3) {
#pragma unroll
        for (int i = 0; i < VPT / 2; i++) {
            const uint32_t a = fd_word_double(f[2 * i], scale), b = fd_word_double(f[2 * i + 1], scale);
            cw.w[i] = (a & 0xffffu) | (b << 16);
            sw.w[i] = (a >> 16) | (b & 0xffff0000u);
        }
    } else {
        const float sa = fabsf(scale) * FD_ABS_PER_RAD;
        uint32_t mask = (fabsf(scale) <= 1.0e30f) ? 0u : ~0u;
        float vs[VPT], vc[VPT];
#pragma unroll
        for (int i = 0; i < VPT; i++)
            if (fd_sincos_scaled<V == 2>(f[i], scale, sa, &vs[i], &vc[i])) mask |= 1u << i;
#pragma unroll
        for (int i = 0; i < VPT / 2; i++) {
            cw.w[i] = fd_pack_bf16x2(vc[2 * i], vc[2 * i + 1]);
            sw.w[i] = fd_pack_bf16x2(vs[2 * i], vs[2 * i + 1]);
        }
        if (mask & ((1u << VPT) - 1)) {
            fd12_slow<VPT>(in, scale, mask, cw, sw, oc, os, H2);
            return;
        }
    }
    fd_store<VPT / 2>::go(oc, cw.w);
    fd_store<VPT / 2>::go(oc + H2, cw.w);
    fd_store<VPT / 2>::go(os, sw.w);
    fd_store<VPT / 2>::go(os + H2, sw.w);
}

template <int V, int VPT>
static void fd12_go(const float *freqs, float scale, uint16_t *c, uint16_t *s, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    fd12<V, VPT><<<(unsigned)((n + 255) / 256), 256, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, rows);
}

// ---- version 5 (6, 7: its timing-only variants) -------------------------------------------
#define FD5_ABS_PER_RAD 1.4210854715202004e-14f   // 2^-46: 2^-24 * 7.55e-8 * |q|, |q| <= 0.64|x| + 1

// r = x - q*(C1 + C2 + C3), C1 = pi/2 rounded down to float, C2 the rest rounded
// down, C3 the rest: every step subtracts, so a zero keeps its sign.
static __device__ __forceinline__ void fd5_core(float x, float *s, float *c)
{
    const float big = fmaf(x, 0.636619746685028076f, 12582912.0f);
    const float q = big - 12582912.0f;
    const int qi = __float_as_int(big);
    float r = fmaf(q, -1.5707962512969971f, x);
    r = fmaf(q, -7.5497894158615964e-08f, r);
    r = fmaf(q, -5.3903029534742384e-15f, r);
    const float r2 = r * r;
    float ps = -1.93857558770105243e-04f;
    ps = fmaf(ps, r2, 8.33097007125616074e-03f);
    ps = fmaf(ps, r2, -1.66666299104690552e-01f);
    const float sr = r * fmaf(ps, r2, 1.0f);   // r * (...), not r + r*(...): keeps sin(-0) = -0
    float pc = 2.43223821598803624e-05f;
    pc = fmaf(pc, r2, -1.38862279709428549e-03f);
    pc = fmaf(pc, r2, 4.16666194796562195e-02f);
    pc = fmaf(pc, r2, -0.5f);
    const float cr = fmaf(pc, r2, 1.0f);
    const float sv = (qi & 1) ? cr : sr;
    const float cv = (qi & 1) ? sr : cr;
    *s = __int_as_float(__float_as_int(sv) ^ ((qi & 2) << 30));
    *c = __int_as_float(__float_as_int(cv) ^ (((qi + 1) & 2) << 30));
}

// The flagged value again, in double: (cos | sin << 16) bf16 bits, each the
// double value rounded once. |x| <= RG_SINCOS_FAST_MAX (the caller checks).
static __device__ __forceinline__ uint32_t fd5_refine(float x, float scale)
{
    const float big = fmaf(x, 0.636619746685028076f, 12582912.0f);
    const int qi = __float_as_int(big);
    const double qd = (double)(big - 12582912.0f), xd = (double)x;
    double r = fma(-qd, 1.5707963267948965580e+00, xd);
    r = fma(-qd, 6.1232339957367658e-17, r);
    const double y = r * r, y2 = y * y, y4 = y2 * y2;
    // sin r = r + r^3 (S3 + S5 y + ... + S17 y^7), Estrin
    const double a0 = fma(8.3333333333333333333e-03, y, -1.6666666666666666667e-01);
    const double a1 = fma(2.7557319223985890653e-06, y, -1.9841269841269841270e-04);
    const double a2 = fma(1.6059043836821614599e-10, y, -2.5052108385441718775e-08);
    const double a3 = fma(2.8114572543455207632e-15, y, -7.6471637318198164759e-13);
    const double ps = fma(fma(a3, y2, a2), y4, fma(a1, y2, a0));
    const double sr = fma(r * y, ps, r);
    // cos r = 1 + y (C2 + C4 y + ... + C18 y^8), Estrin
    const double b0 = fma(4.1666666666666666667e-02, y, -0.5);
    const double b1 = fma(2.4801587301587301587e-05, y, -1.3888888888888888889e-03);
    const double b2 = fma(2.0876756987868098979e-09, y, -2.7557319223985890653e-07);
    const double b3 = fma(4.7794773323873852974e-14, y, -1.1470745597729724714e-11);
    const double pc = fma(-1.5619206968586225e-16, y4 * y4, fma(fma(b3, y2, b2), y4, fma(b1, y2, b0)));
    const double cr = fma(y, pc, 1.0);
    const double sv = (qi & 1) ? cr : sr, cv = (qi & 1) ? sr : cr;
    const double s = (qi & 2) ? -sv : sv, c = ((qi + 1) & 2) ? -cv : cv;
    return rg_bf16_rn_double((double)scale * c) | (rg_bf16_rn_double((double)scale * s) << 16);
}

// MODE 0: correctly rounded (5); 1: no test (6); 2: no arithmetic (7).
template <bool S1, int MODE>
static __device__ __forceinline__ bool fd5_value(float x, float scale, float sa, float *vs, float *vc)
{
    if (MODE == 2) {
        *vs = x, *vc = -x;
        return false;
    }
    float s, c;
    fd5_core(x, &s, &c);
    *vs = S1 ? s : s * scale;
    *vc = S1 ? c : c * scale;
    if (MODE == 1) return false;
    const float ta = fabsf(x) * sa;
    const float ts = fmaf(fabsf(*vs), RG_SINCOS_REL_ERR, ta), tc = fmaf(fabsf(*vc), RG_SINCOS_REL_ERR, ta);
    return fd_near_mid(*vs, ts) | fd_near_mid(*vc, tc);
}

template <int VPT, bool S1, int MODE>
static __global__ void __launch_bounds__(256) fd11_v5(const int64_t *__restrict__ pos, const float *__restrict__ inv,
                                                      float scale, uint32_t *__restrict__ out, int rows)
{
    constexpr int H = 64, TPR = H / VPT;
    const int t = blockIdx.x * 256 + threadIdx.x;
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    const float p = (float)__ldg(pos + r);
    float f[VPT];
    if constexpr (VPT == 4) {
        const float4 q = __ldg((const float4 *)inv + k);
        f[0] = q.x, f[1 % VPT] = q.y, f[2 % VPT] = q.z, f[3 % VPT] = q.w;
    } else if constexpr (VPT == 2) {
        const float2 q = __ldg((const float2 *)inv + k);
        f[0] = q.x, f[1 % VPT] = q.y;
    } else {
        f[0] = __ldg(inv + k);
    }
    uint32_t *o = out + (size_t)r * (2 * H) + VPT * k;
    const float sa = fabsf(scale) * FD5_ABS_PER_RAD;
    uint32_t amb = 0;
    bool far = !(fabsf(scale) <= 1.0e30f);
    fd_words<VPT> w;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        const float x = p * f[i];
        float vs, vc;
        if (fd5_value<S1, MODE>(x, scale, sa, &vs, &vc)) amb |= 1u << i;
        far |= !(fabsf(x) <= RG_SINCOS_FAST_MAX);
        w.w[i] = fd_pack_bf16x2(vc, vs);
    }
    if (MODE != 2 && far) {
        fd11_slow<VPT>(pos + r, inv + VPT * k, scale, ~0u, w, o, TPR);
        return;
    }
    if (amb) {
#pragma unroll
        for (int i = 0; i < VPT; i++)
            if (amb >> i & 1) w.w[i] = fd5_refine(p * f[i], scale);
    }
    fd_store<VPT>::go(o, w.w);
    fd_store<VPT>::go(o + H, w.w);
}

template <int MODE, int VPT>
static void fd11_v5_go(const int64_t *pos, const float *inv, float scale, uint16_t *out, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    const unsigned g = (unsigned)((n + 255) / 256);
    if (scale == 1.0f) fd11_v5<VPT, true, MODE><<<g, 256, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows);
    else fd11_v5<VPT, false, MODE><<<g, 256, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows);
}

template <int VPT, bool S1, int MODE>
static __global__ void __launch_bounds__(256) fd12_v5(const float *__restrict__ freqs, float scale,
                                                      uint32_t *__restrict__ cos_out, uint32_t *__restrict__ sin_out,
                                                      int rows)
{
    constexpr int H = 64, TPR = H / VPT, H2 = H / 2;
    const int t = blockIdx.x * 256 + threadIdx.x;
    const int r = t / TPR, k = t % TPR;
    if (r >= rows) return;
    const float *in = freqs + (size_t)r * H + VPT * k;
    float f[VPT];
    if constexpr (VPT == 8) {
        const float4 a = __ldg((const float4 *)in), b = __ldg((const float4 *)in + 1);
        f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
        f[4 % VPT] = b.x, f[5 % VPT] = b.y, f[6 % VPT] = b.z, f[7 % VPT] = b.w;
    } else if constexpr (VPT == 4) {
        const float4 a = __ldg((const float4 *)in);
        f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
    } else {
        const float2 a = __ldg((const float2 *)in);
        f[0] = a.x, f[1] = a.y;
    }
    uint32_t *oc = cos_out + (size_t)r * H + (VPT / 2) * k, *os = sin_out + (size_t)r * H + (VPT / 2) * k;
    const float sa = fabsf(scale) * FD5_ABS_PER_RAD;
    uint32_t amb = 0;
    bool far = !(fabsf(scale) <= 1.0e30f);
    float vs[VPT], vc[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        if (fd5_value<S1, MODE>(f[i], scale, sa, &vs[i], &vc[i])) amb |= 1u << i;
        far |= !(fabsf(f[i]) <= RG_SINCOS_FAST_MAX);
    }
    fd_words<VPT / 2> cw, sw;
#pragma unroll
    for (int i = 0; i < VPT / 2; i++) {
        cw.w[i] = fd_pack_bf16x2(vc[2 * i], vc[2 * i + 1]);
        sw.w[i] = fd_pack_bf16x2(vs[2 * i], vs[2 * i + 1]);
    }
    if (MODE != 2 && far) {
        fd12_slow<VPT>(in, scale, ~0u, cw, sw, oc, os, H2);
        return;
    }
    if (amb) {
#pragma unroll
        for (int i = 0; i < VPT; i++)
            if (amb >> i & 1) {
                const uint32_t wd = fd5_refine(f[i], scale);
                const int sh = (i & 1) * 16;
                cw.w[i / 2] = (cw.w[i / 2] & ~(0xffffu << sh)) | ((wd & 0xffffu) << sh);
                sw.w[i / 2] = (sw.w[i / 2] & ~(0xffffu << sh)) | ((wd >> 16) << sh);
            }
    }
    fd_store<VPT / 2>::go(oc, cw.w);
    fd_store<VPT / 2>::go(oc + H2, cw.w);
    fd_store<VPT / 2>::go(os, sw.w);
    fd_store<VPT / 2>::go(os + H2, sw.w);
}

template <int MODE, int VPT>
static void fd12_v5_go(const float *freqs, float scale, uint16_t *c, uint16_t *s, int64_t rows, cudaStream_t st)
{
    const int64_t n = rows * (64 / VPT);
    const unsigned g = (unsigned)((n + 255) / 256);
    if (scale == 1.0f) fd12_v5<VPT, true, MODE><<<g, 256, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows);
    else fd12_v5<VPT, false, MODE><<<g, 256, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows);
}

// ---- version 8: rows in a loop per warp -----------------------------------------------------
// A warp covers VPT/2 rows per step (011: 64/VPT lanes per row), RPW rows in all.
template <int VPT, bool S1, int MODE>
static __global__ void __launch_bounds__(256) fd11_v8(const int64_t *__restrict__ pos, const float *__restrict__ inv,
                                                      float scale, uint32_t *__restrict__ out, int rows, int rpw)
{
    constexpr int H = 64, TPR = H / VPT, RPS = 32 / TPR > 0 ? 32 / TPR : 1;   // rows per step (VPT 1: 64 lanes, 2 warps a row)
    const int lane = threadIdx.x & 31;
    int warp = (blockIdx.x * 256 + threadIdx.x) >> 5;
    int k = lane % TPR, sub = lane / TPR;
    if (TPR == 64) {   // VPT 1: two warps per row group
        k = lane + 32 * (warp & 1);
        sub = 0;
        warp >>= 1;
    }
    const int r0 = warp * rpw;
    if (r0 >= rows) return;
    const int rend = min(r0 + rpw, rows);
    float f[VPT];
    if constexpr (VPT == 4) {
        const float4 q = __ldg((const float4 *)inv + k);
        f[0] = q.x, f[1 % VPT] = q.y, f[2 % VPT] = q.z, f[3 % VPT] = q.w;
    } else if constexpr (VPT == 2) {
        const float2 q = __ldg((const float2 *)inv + k);
        f[0] = q.x, f[1 % VPT] = q.y;
    } else {
        f[0] = __ldg(inv + k);
    }
    const float pl = r0 + lane < rend ? (float)__ldg(pos + r0 + lane) : 0.0f;   // rpw <= 32
    const float sa = fabsf(scale) * FD5_ABS_PER_RAD;
    const bool bad_scale = !(fabsf(scale) <= 1.0e30f);
#pragma unroll 1
    for (int r = r0; r < rend; r += RPS) {
        const int rr = r + sub;
        const float p = __shfl_sync(0xffffffffu, pl, rr - r0);
        if (rr >= rend) continue;
        uint32_t *o = out + (size_t)rr * (2 * H) + VPT * k;
        uint32_t amb = 0;
        bool far = bad_scale;
        fd_words<VPT> w;
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            const float x = p * f[i];
            float vs, vc;
            if (fd5_value<S1, MODE>(x, scale, sa, &vs, &vc)) amb |= 1u << i;
            far |= !(fabsf(x) <= RG_SINCOS_FAST_MAX);
            w.w[i] = fd_pack_bf16x2(vc, vs);
        }
        if (MODE != 2 && far) {
            fd11_slow<VPT>(pos + rr, inv + VPT * k, scale, ~0u, w, o, TPR);
            continue;
        }
        if (amb) {
#pragma unroll
            for (int i = 0; i < VPT; i++)
                if (amb >> i & 1) w.w[i] = fd5_refine(p * f[i], scale);
        }
        fd_store<VPT>::go(o, w.w);
        fd_store<VPT>::go(o + H, w.w);
    }
}

// Rows per warp for a target number of warps (0: one step per warp).
static int fd_rpw(int64_t rows, int rps, int target_warps)
{
    if (target_warps <= 0) return rps;
    int64_t rpw = (rows + target_warps - 1) / target_warps;
    rpw = (rpw + rps - 1) / rps * rps;
    return (int)std::max<int64_t>(rps, std::min<int64_t>(rpw, 32));
}

template <int MODE, int VPT>
static void fd11_v8_go(const int64_t *pos, const float *inv, float scale, uint16_t *out, int64_t rows, int target_warps,
                       cudaStream_t st)
{
    constexpr int TPR = 64 / VPT, RPS = 32 / TPR > 0 ? 32 / TPR : 1, WPG = TPR == 64 ? 2 : 1;
    const int rpw = fd_rpw(rows, RPS, target_warps);
    const int64_t warps = (rows + rpw - 1) / rpw * WPG;
    const unsigned g = (unsigned)((warps * 32 + 255) / 256);
    if (scale == 1.0f) fd11_v8<VPT, true, MODE><<<g, 256, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows, rpw);
    else fd11_v8<VPT, false, MODE><<<g, 256, 0, st>>>(pos, inv, scale, (uint32_t *)out, (int)rows, rpw);
}

// 012: TPR = 64/VPT lanes per row, RPS = 32/TPR rows per step; each lane loads
// its VPT freqs of the step's row at the top of the step, and the next step's
// before the current one computes (one step of prefetch in registers).
template <int VPT, bool S1, int MODE>
static __global__ void __launch_bounds__(256) fd12_v8(const float *__restrict__ freqs, float scale,
                                                      uint32_t *__restrict__ cos_out, uint32_t *__restrict__ sin_out,
                                                      int rows, int rpw)
{
    constexpr int H = 64, TPR = H / VPT, RPS = 32 / TPR, H2 = H / 2;
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * 256 + threadIdx.x) >> 5;
    const int k = lane % TPR, sub = lane / TPR;
    const int r0 = warp * rpw;
    if (r0 >= rows) return;
    const int rend = min(r0 + rpw, rows);
    const float sa = fabsf(scale) * FD5_ABS_PER_RAD;
    const bool bad_scale = !(fabsf(scale) <= 1.0e30f);
    auto load = [&](int rr, float *f) {
        const float *in = freqs + (size_t)rr * H + VPT * k;
        if constexpr (VPT == 8) {
            const float4 a = __ldg((const float4 *)in), b = __ldg((const float4 *)in + 1);
            f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
            f[4 % VPT] = b.x, f[5 % VPT] = b.y, f[6 % VPT] = b.z, f[7 % VPT] = b.w;
        } else if constexpr (VPT == 4) {
            const float4 a = __ldg((const float4 *)in);
            f[0] = a.x, f[1] = a.y, f[2 % VPT] = a.z, f[3 % VPT] = a.w;
        } else {
            const float2 a = __ldg((const float2 *)in);
            f[0] = a.x, f[1] = a.y;
        }
    };
    float f[VPT], fn[VPT];
    load(min(r0 + sub, rend - 1), f);
#pragma unroll 1
    for (int r = r0; r < rend; r += RPS) {
        const int rr = r + sub;
        if (r + RPS < rend) load(min(r + RPS + sub, rend - 1), fn);
        if (rr < rend) {
            const float *in = freqs + (size_t)rr * H + VPT * k;
            uint32_t *oc = cos_out + (size_t)rr * H + (VPT / 2) * k, *os = sin_out + (size_t)rr * H + (VPT / 2) * k;
            uint32_t amb = 0;
            bool far = bad_scale;
            float vs[VPT], vc[VPT];
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                if (fd5_value<S1, MODE>(f[i], scale, sa, &vs[i], &vc[i])) amb |= 1u << i;
                far |= !(fabsf(f[i]) <= RG_SINCOS_FAST_MAX);
            }
            fd_words<VPT / 2> cw, sw;
#pragma unroll
            for (int i = 0; i < VPT / 2; i++) {
                cw.w[i] = fd_pack_bf16x2(vc[2 * i], vc[2 * i + 1]);
                sw.w[i] = fd_pack_bf16x2(vs[2 * i], vs[2 * i + 1]);
            }
            if (MODE != 2 && far) {
                fd12_slow<VPT>(in, scale, ~0u, cw, sw, oc, os, H2);
            } else {
                if (amb) {
#pragma unroll
                    for (int i = 0; i < VPT; i++)
                        if (amb >> i & 1) {
                            const uint32_t wd = fd5_refine(f[i], scale);
                            const int sh = (i & 1) * 16;
                            cw.w[i / 2] = (cw.w[i / 2] & ~(0xffffu << sh)) | ((wd & 0xffffu) << sh);
                            sw.w[i / 2] = (sw.w[i / 2] & ~(0xffffu << sh)) | ((wd >> 16) << sh);
                        }
                }
                fd_store<VPT / 2>::go(oc, cw.w);
                fd_store<VPT / 2>::go(oc + H2, cw.w);
                fd_store<VPT / 2>::go(os, sw.w);
                fd_store<VPT / 2>::go(os + H2, sw.w);
            }
        }
#pragma unroll
        for (int i = 0; i < VPT; i++) f[i] = fn[i];
    }
}

template <int MODE, int VPT>
static void fd12_v8_go(const float *freqs, float scale, uint16_t *c, uint16_t *s, int64_t rows, int target_warps,
                       cudaStream_t st)
{
    constexpr int TPR = 64 / VPT, RPS = 32 / TPR;
    const int rpw = fd_rpw(rows, RPS, target_warps);
    const int64_t warps = (rows + rpw - 1) / rpw;
    const unsigned g = (unsigned)((warps * 32 + 255) / 256);
    if (scale == 1.0f) fd12_v8<VPT, true, MODE><<<g, 256, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows, rpw);
    else fd12_v8<VPT, false, MODE><<<g, 256, 0, st>>>(freqs, scale, (uint32_t *)c, (uint32_t *)s, (int)rows, rpw);
}
