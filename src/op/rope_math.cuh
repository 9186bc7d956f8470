/* SPDX-License-Identifier: Apache-2.0 */
// rope_math.cuh -- device math shared by every op of ropegrad: sin/cos accurate
// far beyond [-pi, pi] (range reduction), and bf16 packing with correct rounding.
// Self-contained (CUDA runtime headers only): kernels.cuh (014) and
// forward_kernels.cuh (011, 012) include it, and `ropegrad export-solution`
// ships it beside them.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

// ---------------------------------------------------------------------------
// sin/cos accurate far beyond [-pi, pi].
//
// Real inputs are emb = position * inv_freq: up to ~3e5 radians for long
// contexts. We reduce x = q*(pi/2) + r with q = rint(x*2/pi) and a three-part
// Cody-Waite split of pi/2 applied with FMA (each product q*Ck is exact inside
// the FMA, so the only errors are three roundings of a value below 1: ~1e-7
// absolute). That holds while q < 2^22 (|x| < ~6.5e6); we take the fast path up
// to 4e6 and send anything larger (and Inf/NaN) to double-precision sincos,
// which does a full Payne-Hanek reduction -- rare, and kept out of line so its
// registers and stack don't burden the hot loop.
//
// Because q comes from a float product it can be off by one near a quadrant
// boundary, so |r| can slightly exceed pi/4 (up to ~0.9): the polynomials are
// fitted on |r| <= 0.9, not the usual pi/4.
// ---------------------------------------------------------------------------
#define RG_SINCOS_FAST_MAX 4.0e6f

static __device__ __noinline__ float2 rg_sincos_slow(float x)
{
    double sd, cd;
    sincos((double)x, &sd, &cd);
    return make_float2((float)sd, (float)cd);
}

static __device__ __forceinline__ void rg_sincos(float x, float *s, float *c)
{
#ifdef RG_DEV_NOCOMPUTE  // bench/dev_kernels.cu only: isolate the memory side
    *s = x, *c = x;
    return;
#endif
    if (!(fabsf(x) <= RG_SINCOS_FAST_MAX)) {  // also true for NaN
        const float2 sc = rg_sincos_slow(x);
        *s = sc.x;
        *c = sc.y;
        return;
    }
    // q = nearest integer to x*2/pi, by the round-to-nearest of adding 1.5*2^23:
    // the sum's low mantissa bits are q as an integer, and subtracting the
    // constant back gives q as a float -- two full-rate FP ops instead of
    // FRND + F2I, which issue at a quarter of the rate on the conversion pipe.
    const float big = fmaf(x, 0.636619746685028076f, 12582912.0f);  // 2/pi, 1.5*2^23
    const float q = big - 12582912.0f;
    const int qi = __float_as_int(big);                              // low bits = q mod 2^22
    float r = fmaf(q, -1.57079637050628662f, x);          // pi/2 = C1 + C2 + C3
    r = fmaf(q, 4.37113882867379300e-08f, r);             // -C2
    r = fmaf(q, 1.71512451000588190e-15f, r);             // -C3
    const float r2 = r * r;
    // Degree-7 sin and degree-8 cos, least-squares fits on |r| <= 0.9 (see the
    // note above on why 0.9 and not pi/4): truncation error 8.6e-9 and 9.1e-10
    // with the float-rounded coefficients, under float rounding (6e-8).
    float ps = -1.93857558770105243e-04f;
    ps = fmaf(ps, r2, 8.33097007125616074e-03f);
    ps = fmaf(ps, r2, -1.66666299104690552e-01f);
    const float sr = fmaf(ps * r2, r, r);
    float pc = 2.43223821598803624e-05f;
    pc = fmaf(pc, r2, -1.38862279709428549e-03f);
    pc = fmaf(pc, r2, 4.16666194796562195e-02f);
    pc = fmaf(pc, r2, -0.5f);
    const float cr = fmaf(pc, r2, 1.0f);
    // Quadrant: sin(r + q*pi/2) cycles sin, cos, -sin, -cos. Signs are
    // applied by flipping the sign bit (one integer op each).
    const float sv = (qi & 1) ? cr : sr;
    const float cv = (qi & 1) ? sr : cr;
    *s = __int_as_float(__float_as_int(sv) ^ ((qi & 2) << 30));
    *c = __int_as_float(__float_as_int(cv) ^ (((qi + 1) & 2) << 30));
}

// Cheaper sin/cos for kernels 10-13: the same Cody-Waite idea, but the
// reduction is modulo 2*pi (two FMA parts: for |x| <= 4e6, q < 2^20 and the
// dropped third part is below q * 1e-14 < 1e-8), and the reduced argument
// r in [-pi, pi] goes to the special-function unit (sin.approx / cos.approx:
// MUFU.SIN and MUFU.COS, documented absolute error about 2^-21.4 = 3.6e-7 on
// [-pi, pi]). The fast-math intrinsic only ever sees a reduced argument, which
// is where its error bound holds; the caller checks |x| <= RG_SINCOS_FAST_MAX
// itself, once per thread (rg_all_fast), and takes the accurate path if not.
// About 7 instructions against rg_sincos's ~20: it is the arithmetic that sets
// the mid-size workloads' time (bench/NOTES.md). Measured against double
// (bench/probe.cu sincos): at most 4.0e-7 on [-pi, pi] and 7.6e-7 up to 4e6 rad
// (the reduction's roundings add to the unit's error), against rg_sincos's
// 1.0e-7; tests/test_gpu_kernel.c holds both to the same end-to-end bounds.
static __device__ __forceinline__ void rg_sincos_mufu(float x, float *s, float *c)
{
#ifdef RG_DEV_NOCOMPUTE
    *s = x, *c = x;
    return;
#endif
    const float big = fmaf(x, 0.159154943091895336f, 12582912.0f);  // 1/(2 pi), 1.5*2^23
    const float q = big - 12582912.0f;
    float r = fmaf(q, -6.28318548202514648f, x);  // 2 pi = C1 + C2, C1 = float(2 pi)
    r = fmaf(q, 1.74845553146951720e-07f, r);     // -C2
    asm("sin.approx.f32 %0, %1;" : "=f"(*s) : "f"(r));
    asm("cos.approx.f32 %0, %1;" : "=f"(*c) : "f"(r));
}

// ---------------------------------------------------------------------------
// bf16 outputs, rounded as if from the exact value.
//
// The forward ops write bf16(scale * cos(x)) and bf16(scale * sin(x)). A plain
// float32 evaluation rounds twice (sin/cos to float, then to bf16) and lands
// on the wrong bf16 neighbour whenever the float error straddles a rounding
// midpoint. Here the float value v comes with an error bound t (rg_sincos's
// bound, below, times |scale|, plus v's own rounding); if v - t and v + t round to the
// same bf16, that is the correctly rounded result of the exact value. Only
// when they differ is the
// value recomputed in double and rounded once (about one value in 4000). So every element is the bf16
// nearest to scale*sin/cos(x) (up to double's 1e-16): never further from the
// float64 reference than any float32 evaluation rounded to bf16.
// ---------------------------------------------------------------------------
static __device__ __forceinline__ uint32_t rg_bf16_rn_bits(float f)
{
    uint32_t u = __float_as_uint(f);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;   // finite inputs only
}

// double -> bf16, one rounding: a double-to-float rounding only goes wrong
// for bf16 when it lands exactly on a bf16 midpoint; decide that case from
// which side of it the double lies.
static __device__ __forceinline__ uint32_t rg_bf16_rn_double(double d)
{
    const float f = (float)d;
    const uint32_t u = __float_as_uint(f);
    if ((u & 0xffffu) == 0x8000u && (double)f != d) return (fabs(d) > fabs((double)f)) ? (u >> 16) + 1u : (u >> 16);
    if (!(fabsf(f) <= 3.0e38f)) return (u >> 16) | ((u & 0x7fffffffu) > 0x7f800000u ? 0x40u : 0u);
    return rg_bf16_rn_bits(f);
}

// The fallback: sin/cos in double. For |x| <= RG_SINCOS_FAST_MAX a short path
// (Cody-Waite reduction by pi/2 in two double parts with FMA, then Taylor
// polynomials to degree 17/18 on |r| <= pi/4 + a little: errors near 1e-17),
// about 40 double instructions; beyond (or not finite) libdevice's sincos with
// its full Payne-Hanek reduction. The short path matters: a warp waits for its
// slowest lane, and libdevice's general sincos costs microseconds of latency.
static __device__ __forceinline__ void rg_sincos_double(float xf, double *s, double *c)
{
    const double x = (double)xf;
    if (!(fabsf(xf) <= RG_SINCOS_FAST_MAX)) {
        sincos(x, s, c);
        return;
    }
    const double q = rint(x * 0.63661977236758134308);          // 2/pi
    double r = fma(-q, 1.5707963267948965580e+00, x);            // pi/2 = P1 + P2 (P1 = double(pi/2))
    r = fma(-q, 6.1232339957367658e-17, r);
    const double r2 = r * r;
    double ps = 2.8114572543455207632e-15;                       // 1/17!
    ps = fma(ps, r2, -7.6471637318198164759e-13);                // -1/15!
    ps = fma(ps, r2, 1.6059043836821614599e-10);                 // 1/13!
    ps = fma(ps, r2, -2.5052108385441718775e-08);                // -1/11!
    ps = fma(ps, r2, 2.7557319223985890653e-06);                 // 1/9!
    ps = fma(ps, r2, -1.9841269841269841270e-04);                // -1/7!
    ps = fma(ps, r2, 8.3333333333333333333e-03);                 // 1/5!
    ps = fma(ps, r2, -1.6666666666666666667e-01);                // -1/3!
    const double sr = fma(ps * r2, r, r);
    double pc = 1.5619206968586225e-16;                          // 1/18!
    pc = fma(pc, r2, -4.7794773323873852974e-14);                // -1/16!
    pc = fma(pc, r2, 1.1470745597729724714e-11);                 // 1/14!
    pc = fma(pc, r2, -2.0876756987868098979e-09);                // -1/12!
    pc = fma(pc, r2, 2.7557319223985890653e-07);                 // 1/10!
    pc = fma(pc, r2, -2.4801587301587301587e-05);                // -1/8!
    pc = fma(pc, r2, 1.3888888888888888889e-03);                 // 1/6!
    pc = fma(pc, r2, -4.1666666666666666667e-02);                // -1/4!
    pc = fma(pc, r2, 0.5);
    const double cr = fma(-pc, r2, 1.0);                         // 1 - r2/2 + ...
    const int qi = (int)(long long)q;
    const double sv = (qi & 1) ? cr : sr, cv = (qi & 1) ? sr : cr;
    *s = (qi & 2) ? -sv : sv;
    *c = ((qi + 1) & 2) ? -cv : cv;
}

// Out of line (rare), returned by value (x = sin bits, y = cos bits), so the
// callers' values stay in registers.
static __device__ __noinline__ uint2 rg_sincos_bf16_slow(float x, float scale)
{
    double s, c;
    rg_sincos_double(x, &s, &c);
    return make_uint2(rg_bf16_rn_double((double)scale * s), rg_bf16_rn_double((double)scale * c));
}

// Error bound of rg_sincos's values, with margin: its reduction and
// polynomials are accurate relative to the result (a few float ulps: 2^-21 of
// |value| covers them with room) plus an absolute part from the reduction's
// first rounding, at most 2^-24 * q * 4.4e-8 < 7e-9 for |x| <= 4e6. A bound
// relative to the value matters: the small values (sin near its zeros, low
// frequencies at small positions) have fine bf16 spacing, and an absolute
// bound would send most of them to the double path.
#define RG_SINCOS_REL_ERR 4.76837158203125e-07f   // 2^-21
#define RG_SINCOS_ABS_ERR 1.0e-8f

// sb, cb = bf16 bits of scale*sin(x), scale*cos(x), correctly rounded.
static __device__ __forceinline__ void rg_sincos_bf16(float x, float scale, uint32_t *sb, uint32_t *cb)
{
    float s, c;
    if (!(fabsf(x) <= RG_SINCOS_FAST_MAX) || !(fabsf(scale) <= 1.0e30f)) {
        const uint2 r = rg_sincos_bf16_slow(x, scale);
        *sb = r.x;
        *cb = r.y;
        return;
    }
    if (x == 0.0f) {   // exact: sin 0 = 0 (the bound cannot separate 0 from its neighbours), cos 0 = 1
        *sb = rg_bf16_rn_bits(x * scale);
        *cb = rg_bf16_rn_bits(scale);
        return;
    }
    rg_sincos(x, &s, &c);
    const float vs = s * scale, vc = c * scale;
    // The product's own rounding (2^-24 relative) is inside the relative part.
    const float ta = fabsf(scale) * RG_SINCOS_ABS_ERR;
    const float ts = fmaf(fabsf(vs), RG_SINCOS_REL_ERR, ta), tc = fmaf(fabsf(vc), RG_SINCOS_REL_ERR, ta);
    const uint32_t s0 = rg_bf16_rn_bits(vs - ts), s1 = rg_bf16_rn_bits(vs + ts);
    const uint32_t c0 = rg_bf16_rn_bits(vc - tc), c1 = rg_bf16_rn_bits(vc + tc);
    if (s0 != s1 || c0 != c1) {
        const uint2 r = rg_sincos_bf16_slow(x, scale);
        *sb = r.x;
        *cb = r.y;
        return;
    }
    *sb = s0;
    *cb = c0;
}
