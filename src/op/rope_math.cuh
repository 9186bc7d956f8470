/* SPDX-License-Identifier: Apache-2.0 */
// rope_math.cuh -- device math shared by every op of ropegrad: sin/cos accurate
// far beyond [-pi, pi] (range reduction), and bf16 packing with correct rounding.
// Self-contained (CUDA runtime headers only): kernels.cuh (014) and
// rope_forward/kernels.cuh and cos_sin/kernels.cuh (011, 012) include it, and `ropegrad export-solution`
// ships it beside them.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

// ---------------------------------------------------------------------------
// sin/cos accurate far beyond [-pi, pi].
//
// Real inputs are emb = position * inv_freq: up to ~3e5 radians for long
// contexts. We reduce x = q*(pi/2) + r with q = rint(x*2/pi) and a three-part
// Cody-Waite split of pi/2 applied with FMA: C1 = pi/2 rounded down to float,
// C2 the rest rounded down, C3 the rest, so every step subtracts (a zero keeps
// its sign: sin(-0) = -0). The first step's rounding is an absolute error of at
// most 2^-24 * |q| * 7.55e-8 (|r1| <= 0.9 + |q| C2), zero while q = 0; the other
// steps round relative to r. That holds while q < 2^22 (|x| < ~6.5e6); we take
// the fast path up to 4e6 and send anything larger (and Inf/NaN) to
// rg_sincos_double_far below (a Payne-Hanek reduction in registers, then
// double precision) -- rare, and kept out of line so its registers don't burden
// the hot loop.
//
// Because q comes from a float product it can be off by one near a quadrant
// boundary, so |r| can slightly exceed pi/4 (up to ~0.9): the polynomials are
// fitted on |r| <= 0.9, not the usual pi/4.
// ---------------------------------------------------------------------------
#define RG_SINCOS_FAST_MAX 4.0e6f

static __device__ __noinline__ float2 rg_sincos_slow(float x);   // beyond it (below, with the double path)

// The fast path alone: |x| <= RG_SINCOS_FAST_MAX (callers check).
static __device__ __forceinline__ void rg_sincos_core(float x, float *s, float *c)
{
    // q = nearest integer to x*2/pi, by the round-to-nearest of adding 1.5*2^23:
    // the sum's low mantissa bits are q as an integer, and subtracting the
    // constant back gives q as a float -- two full-rate FP ops instead of
    // FRND + F2I, which issue at a quarter of the rate on the conversion pipe.
    const float big = fmaf(x, 0.636619746685028076f, 12582912.0f);  // 2/pi, 1.5*2^23
    const float q = big - 12582912.0f;
    const int qi = __float_as_int(big);                              // low bits = q mod 2^22
    float r = fmaf(q, -1.5707962512969971f, x);                      // pi/2 = C1 + C2 + C3
    r = fmaf(q, -7.5497894158615964e-08f, r);
    r = fmaf(q, -5.3903029534742384e-15f, r);
    const float r2 = r * r;
    // Degree-7 sin and degree-8 cos, least-squares fits on |r| <= 0.9 (see the
    // note above on why 0.9 and not pi/4): truncation error 8.6e-9 and 9.1e-10
    // with the float-rounded coefficients, under float rounding (6e-8).
    float ps = -1.93857558770105243e-04f;
    ps = fmaf(ps, r2, 8.33097007125616074e-03f);
    ps = fmaf(ps, r2, -1.66666299104690552e-01f);
    const float sr = r * fmaf(ps, r2, 1.0f);   // r * (...), not r + r*(...): keeps sin(-0) = -0
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

static __device__ __forceinline__ void rg_sincos(float x, float *s, float *c)
{
    if (!(fabsf(x) <= RG_SINCOS_FAST_MAX)) {  // also true for NaN
        const float2 sc = rg_sincos_slow(x);
        *s = sc.x;
        *c = sc.y;
        return;
    }
    rg_sincos_core(x, s, c);
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
// the mid-size workloads' time (dev/rope_forward/NOTES.md). Measured against double
// (dev/common/probe.cu sincos): at most 4.0e-7 on [-pi, pi] and 7.6e-7 up to 4e6 rad
// (the reduction's roundings add to the unit's error), against rg_sincos's
// 1.0e-7; tests/test_gpu_kernel.c holds both to the same end-to-end bounds.
static __device__ __forceinline__ void rg_sincos_mufu(float x, float *s, float *c)
{
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
// midpoint. Here the float value v comes with an error bound in ulps of v
// (rg_sincos_core's, below, and with a scale the product's rounding too).
// Every bf16 midpoint is a float, and the bound is far below half a bf16
// spacing, so only the midpoint m nearest v (v's top 16 bits | 0x8000: same
// sign and exponent) can lie within it: if v is at least that many ulps from
// m, bf16_rn(v) is the correctly rounded result of the exact value. Only when
// it is not is the value recomputed in double and rounded once (about one
// (cos, sin) pair in 11000 at scale 1: results/sincos-bound.txt). So
// every element is the bf16 nearest to scale*sin/cos(x) (up to double's
// 1e-16): never further from the float64 reference than any float32
// evaluation rounded to bf16.
// ---------------------------------------------------------------------------
static __device__ __forceinline__ uint32_t rg_bf16_rn_bits(float f)
{
    uint32_t u = __float_as_uint(f);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;   // finite inputs only
}

// Two floats to a bf16 pair (lo in bits 0-15), round to nearest even: one
// instruction (F2FP.BF16.F32.PACK_AB) on sm_80+.
static __device__ __forceinline__ uint32_t rg_pack_bf16x2(float lo, float hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t w;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    return w;
#else
    return rg_bf16_rn_bits(lo) | (rg_bf16_rn_bits(hi) << 16);
#endif
}

// double -> bf16, one rounding: a double-to-float rounding only goes wrong
// for bf16 when it lands exactly on a bf16 midpoint; decide that case from
// which side of it the double lies.
static __device__ __forceinline__ uint32_t rg_bf16_rn_double(double d)
{
    const float f = (float)d;
    const uint32_t u = __float_as_uint(f);
    if ((u & 0xffffu) == 0x8000u && (double)f != d) return (fabs(d) > fabs((double)f)) ? (u >> 16) + 1u : (u >> 16);
    if (!(fabsf(f) <= 3.40282347e38f)) return (u >> 16) | ((u & 0x7fffffffu) > 0x7f800000u ? 0x40u : 0u);
    return rg_bf16_rn_bits(f);   // FLT_MAX's neighbourhood rounds to Inf, as it should
}

// sin/cos in double, for the values the float path cannot round with
// certainty. For |x| <= RG_SINCOS_FAST_MAX: the quadrant from the same float
// magic-number step as rg_sincos_core (no rint or conversion to integer: they
// run on the quarter-rate conversion pipe), a two-part Cody-Waite reduction by
// pi/2 in double, and Taylor polynomials to degree 17/18 on |r| <= 0.9 (errors
// near 1e-17) evaluated by Estrin's scheme: a dependent chain of ~8 double
// operations instead of ~12. It runs in a warp's critical path whenever one of
// its lanes needs it, which on a small problem is nearly always somewhere.
// Beyond 4e6 (or not finite): rg_sincos_double_far, a full Payne-Hanek
// reduction, then the same polynomials.
//
// sin(r + qi*pi/2) and cos(r + qi*pi/2) for |r| <= 0.9 (only qi's two low bits count).
static __device__ __forceinline__ void rg_sincos_double_poly(double r, int qi, double *s, double *c)
{
    const double y = r * r, y2 = y * y, y4 = y2 * y2;
    // sin r = r (1 + y (S3 + S5 y + ... + S17 y^7))
    const double a0 = fma(8.3333333333333333333e-03, y, -1.6666666666666666667e-01);   // 1/5!, -1/3!
    const double a1 = fma(2.7557319223985890653e-06, y, -1.9841269841269841270e-04);   // 1/9!, -1/7!
    const double a2 = fma(1.6059043836821614599e-10, y, -2.5052108385441718775e-08);   // 1/13!, -1/11!
    const double a3 = fma(2.8114572543455207632e-15, y, -7.6471637318198164759e-13);   // 1/17!, -1/15!
    const double ps = fma(fma(a3, y2, a2), y4, fma(a1, y2, a0));
    const double sr = r * fma(y, ps, 1.0);
    // cos r = 1 + y (C2 + C4 y + ... + C18 y^8)
    const double b0 = fma(4.1666666666666666667e-02, y, -0.5);                         // 1/4!, -1/2!
    const double b1 = fma(2.4801587301587301587e-05, y, -1.3888888888888888889e-03);   // 1/8!, -1/6!
    const double b2 = fma(2.0876756987868098979e-09, y, -2.7557319223985890653e-07);   // 1/12!, -1/10!
    const double b3 = fma(4.7794773323873852974e-14, y, -1.1470745597729724714e-11);   // 1/16!, -1/14!
    const double pc = fma(-1.5619206968586225e-16, y4 * y4, fma(fma(b3, y2, b2), y4, fma(b1, y2, b0)));  // -1/18!
    const double cr = fma(y, pc, 1.0);
    const double sv = (qi & 1) ? cr : sr, cv = (qi & 1) ? sr : cr;
    *s = (qi & 2) ? -sv : sv;
    *c = ((qi + 1) & 2) ? -cv : cv;
}

static __device__ __forceinline__ void rg_sincos_double_core(float xf, double *s, double *c)
{
    const double x = (double)xf;
    const float big = fmaf(xf, 0.636619746685028076f, 12582912.0f);
    const int qi = __float_as_int(big);
    const double q = (double)(big - 12582912.0f);               // +0 when q = 0: keeps sin(-0) = -0
    double r = fma(-q, 1.5707963267948965580e+00, x);            // pi/2 = P1 + P2 (P1 = double(pi/2))
    r = fma(-q, 6.1232339957367658e-17, r);
    rg_sincos_double_poly(r, qi, s, c);
}

// 2/pi = 0.b1 b2 b3 ... in binary: word k (k >= 1) holds bits 32(k-1)+1 ..
// 32k, most significant first; word 0 is the integer part's zeros, so that a
// window may start before b1.
static __constant__ uint32_t rg_two_over_pi[9] = {0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                                  0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u};

// sin/cos in double of any float (finite or not), by a Payne-Hanek reduction
// in registers: no local memory, so a kernel that may take this path needs no
// stack frame (libdevice's sincos keeps its reduction in a local array: a
// 40-byte frame in every kernel that could call it, which cost the fast 012
// kernel ~4% of its time under the official evaluator, dev/rope_forward/NOTES.md).
// |x| = m 2^e with m a 24-bit integer, e <= 104. x 2/pi modulo 4 is m times
// the bits of 2/pi from b(e-1) on, scaled by 2^e (the earlier bits give
// multiples of 4): a 128-bit window of them, times m, is 152 bits whose bits
// 126-127 are the quadrant and whose lower 126 the fraction f. The bits after
// the window add under m 2^-126 < 2^-102 quarter turns, and no float beyond
// RG_SINCOS_FAST_MAX comes closer to a multiple of pi/2 than 1.6e-9 rad, about
// 2^-30 quarter turns (dev/common/sincos_bound.cu's far pass, which compares every
// one with libdevice's sincos): f has over 90 significant bits, of which the
// conversion keeps 64. r = f pi/2, |f| <= 1/2, in double with one rounding of
// its own, then rg_sincos_double_poly.
static __device__ __forceinline__ void rg_sincos_double_far(float xf, double *s, double *c)
{
    if (!(fabsf(xf) <= 3.40282347e38f)) {   // Inf or NaN: NaN, as sincos gives
        *s = *c = (double)(xf - xf);
        return;
    }
    const uint32_t u = __float_as_uint(xf) & 0x7fffffffu;
    const int be = (int)(u >> 23);
    const uint64_t m = be ? (u & 0x7fffffu) | 0x800000u : u;   // |x| = m 2^e
    const int e = (be ? be : 1) - 150;
    if (e < -2) {   // |x| < 2^21 (m < 2^24): under RG_SINCOS_FAST_MAX, never a far argument; the near path answers
        rg_sincos_double_core(xf, s, c);
        return;
    }
    const int b = e + 30;   // the window's first bit, b(e-1), is bit b % 32 of word b / 32 (word 0 = b(-31)..b(0))
    const int k = b >> 5, o = b & 31;
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; j++) w[j] = __funnelshift_l(rg_two_over_pi[k + j + 1], rg_two_over_pi[k + j], o);
    const uint64_t chi = ((uint64_t)w[0] << 32) | w[1], clo = ((uint64_t)w[2] << 32) | w[3];
    // m (chi:clo) = (m chi) 2^64 + (plh:pll), 24 x 128 bits; of m chi only its low 64 bits count
    const uint64_t pll = m * clo, plh = __umul64hi(m, clo), phl = m * chi;
    const uint64_t q0 = phl + plh;       // bits 64..127 of the product (those above are multiples of 4)
    int qi = (int)(q0 >> 62);            // bits 126, 127: the quadrant
    uint64_t fh = q0 & 0x3fffffffffffffffull, fl = pll;      // f = (fh:fl) / 2^126
    bool neg = false;
    if (fh >> 61) {   // f >= 1/2: f - 1, one quadrant on
        fh = 0x3fffffffffffffffull - fh + (fl == 0);
        fl = 0 - fl;
        neg = true;
        qi++;
    }
    // normalize (fh:fl) so that its top bit is bit 127
    const int lz = fh ? __clzll((long long)fh) : 64 + (fl ? __clzll((long long)fl) : 64);
    uint64_t top, nxt;
    if (lz >= 128) {
        top = 0, nxt = 0;
    } else if (lz >= 64) {
        top = fl << (lz - 64), nxt = 0;
    } else {
        top = lz ? (fh << lz) | (fl >> (64 - lz)) : fh;
        nxt = lz ? fl << lz : fl;
    }
    // f = (top 2^64 + nxt) 2^(2 - lz - 128), top's 53 high bits exactly in vh
    const double vh = (double)(top >> 11) * 0x1p-53;
    const double vl = ((double)(top & 0x7ffu) + (double)nxt * 0x1p-64) * 0x1p-64;
    const double sc = lz >= 128 ? 0.0 : __hiloint2double((1023 + 2 - lz) << 20, 0);
    const double f1 = vh * sc, f2 = vl * sc;
    double r = fma(f1, 1.5707963267948965580e+00, fma(f1, 6.1232339957367658e-17, f2 * 1.5707963267948965580e+00));
    if (neg) r = -r;
    double sv, cv;
    rg_sincos_double_poly(r, qi, &sv, &cv);
    *s = xf < 0.0f ? -sv : sv;   // sin(-x) = -sin x, cos(-x) = cos x
    *c = cv;
}

static __device__ __forceinline__ void rg_sincos_double(float xf, double *s, double *c)
{
    if (!(fabsf(xf) <= RG_SINCOS_FAST_MAX)) {
        rg_sincos_double_far(xf, s, c);
        return;
    }
    rg_sincos_double_core(xf, s, c);
}

// Out of line (rare): float sin/cos of a far argument (or Inf/NaN) from
// rg_sincos_double_far.
static __device__ __noinline__ float2 rg_sincos_slow(float x)
{
    double sd, cd;
    rg_sincos_double_far(x, &sd, &cd);
    return make_float2((float)sd, (float)cd);
}

// One value's (cos | sin << 16) bf16 bits from double: the refinement.
static __device__ __forceinline__ uint32_t rg_sincos_bf16_double(float x, float scale)
{
    double s, c;
    rg_sincos_double(x, &s, &c);
    return rg_bf16_rn_double((double)scale * c) | (rg_bf16_rn_double((double)scale * s) << 16);
}

// Out of line, so the compiler cannot run it beside the integer route below.
static __device__ __noinline__ uint32_t rg_bf16_rn_double_rare(double d) { return rg_bf16_rn_double(d); }

// rg_bf16_rn_double by integer operations on the double's bits, for the
// refinement's critical path (~40 cycles against ~110 on the H200, dev/common/
// dev_latency.cu): for 2^-126 <= |d| < 2^128 the exponent is rebiased (1023 ->
// 127) in the high word, whose top 7 mantissa bits are the bf16's; bit 12 of
// that word is the rounding bit and everything below it (the rest of the high
// word, the low word) the sticky part; a carry into the exponent is right, up
// to Inf. Anything else (0, subnormals, Inf, NaN, overflow) takes
// rg_bf16_rn_double out of line. Equal to it for every double (dev/common/
// sincos_bound.cu compares 2^30 of them, ties and their neighbours included).
static __device__ __forceinline__ uint32_t rg_bf16_rn_double_int(double d)
{
    const uint32_t hi = (uint32_t)__double2hiint(d), lo = (uint32_t)__double2loint(d);
    const uint32_t a = hi & 0x7fffffffu;
    if (a - 0x38100000u >= 0x47f00000u - 0x38100000u) return rg_bf16_rn_double_rare(d);
    const uint32_t b = (a - 0x38000000u) >> 13;                            // float exponent, 7 mantissa bits
    const uint32_t up = (a >> 12) & ((((a & 0xfffu) | lo) != 0u) | b);      // above the midpoint, or a tie and b odd
    return ((hi >> 16) & 0x8000u) | (b + (up & 1u));
}

// The refinement from x alone (no float values kept alive: the kernels with 2
// or more values a thread, where registers set the occupancy): sin/cos in
// double (|x| <= RG_SINCOS_FAST_MAX and a finite scale: callers check), times
// scale, each rounded once by rg_bf16_rn_double_int. Bit for bit
// rg_sincos_bf16_double there. S1: scale == 1.
template <bool S1>
static __device__ __forceinline__ uint32_t rg_sincos_bf16_scratch(float x, float scale)
{
    double s, c;
    rg_sincos_double_core(x, &s, &c);
    if (!S1) {
        s *= (double)scale;
        c *= (double)scale;
    }
    return rg_bf16_rn_double_int(c) | (rg_bf16_rn_double_int(s) << 16);
}

// The bf16 bits of z given a float v with |z - v| <= t, t far below a quarter
// of a bf16 spacing (rg_sincos_scaled's bound): z rounds to b, v's top 16 bits
// (v truncated toward zero), or to b + 1 (one bf16 further from zero), on either
// side of the midpoint m between them, ties to even. One compare in double
// instead of a rounding through float and its midpoint check.
static __device__ __forceinline__ uint32_t rg_bf16_side(float v, double z)
{
    const uint32_t u = __float_as_uint(v), b = u >> 16;
    const double m = fabs((double)__uint_as_float((u & 0xffff0000u) | 0x8000u));
    const double a = fabs(z);
    return b + ((a > m || (a == m && (b & 1u))) ? 1u : 0u);
}

// The refinement of a value the float path could not round with certainty:
// vc, vs its float scale*cos and scale*sin (each within rg_sincos_scaled's bound
// of the exact value), redone in double and rounded by rg_bf16_side. |x| <=
// RG_SINCOS_FAST_MAX and a finite scale (callers check). S1: scale == 1.
template <bool S1>
static __device__ __forceinline__ uint32_t rg_sincos_bf16_refine_side(float x, float scale, float vc, float vs)
{
    double s, c;
    rg_sincos_double_core(x, &s, &c);
    if (!S1) {
        s *= (double)scale;
        c *= (double)scale;
    }
    return rg_bf16_side(vc, c) | (rg_bf16_side(vs, s) << 16);
}

// Error bound of rg_sincos_core's values, in units in the last place of the
// value returned (ulp(v): the spacing of the floats at v). dev/common/sincos_bound.cu
// runs rg_sincos_core on every float argument of the fast path (|x| <= 4e6)
// against double and finds the error of sin and cos below RG_SINCOS_ULPS
// (at most 2.88 ulps: results/sincos-bound.txt), so the bound is proved
// by exhaustion, not assumed, and that check fails if a change to
// rg_sincos_core ever breaks it. It is relative to the value, with no part
// proportional to |x|: the reduction's first step, x - q*C1, is exact (both
// are multiples of 2^-23 and the difference is below 2 in size; of 2^-24 when
// |x| < 1), and the later steps round relative to r. Times a scale, a value's
// error can at most double in ulps of the product (which may lie one binade
// lower) and the product's rounding adds half an ulp: 2 * 3 + 1/2 <
// RG_SINCOS_ULPS_SCALED.
#define RG_SINCOS_ULPS 3
#define RG_SINCOS_ULPS_SCALED 7

// Whether bf16_rn(v) might differ from the bf16 nearest a value within fewer
// than K of v's ulps of v (finite v). Every bf16 midpoint is a float, and only
// the one nearest v, m = (v & 0xffff0000) | 0x8000, can be that close; v and m
// share sign and exponent, so v is |lo - 0x8000| ulps from m, lo its low 16
// bits. True when that is below K: (lo + K - 1 - 0x8000) mod 2^16 < 2K - 1,
// computed in the top half of a word, one IMAD and one compare (against four
// float operations and a bound to compute for a test in units of the value).
template <unsigned K>
static __device__ __forceinline__ bool rg_bf16_near_mid(float v)
{
    return __float_as_uint(v) * 65536u + ((K - 1u - 0x8000u) << 16) < ((2u * K - 1u) << 16);
}

// vs, vc = scale*sin(x), scale*cos(x) in float (S1: scale == 1, no multiplies
// and the tighter RG_SINCOS_ULPS); returns whether either might round to the
// wrong bf16. |x| <= RG_SINCOS_FAST_MAX and |scale| <= 1e30 (callers check;
// the values are then finite).
template <bool S1>
static __device__ __forceinline__ bool rg_sincos_scaled(float x, float scale, float *vs, float *vc)
{
    constexpr unsigned K = S1 ? RG_SINCOS_ULPS : RG_SINCOS_ULPS_SCALED;
    float s, c;
    rg_sincos_core(x, &s, &c);
    *vs = S1 ? s : s * scale;
    *vc = S1 ? c : c * scale;
    return rg_bf16_near_mid<K>(*vs) | rg_bf16_near_mid<K>(*vc);
}

// Out of line (rare), returned by value (x = sin bits, y = cos bits), so the
// callers' values stay in registers.
static __device__ __noinline__ uint2 rg_sincos_bf16_slow(float x, float scale)
{
    const uint32_t w = rg_sincos_bf16_double(x, scale);
    return make_uint2(w >> 16, w & 0xffffu);
}

// sb, cb = bf16 bits of scale*sin(x), scale*cos(x), correctly rounded: one
// value at a time (the general kernels, any head_dim or alignment).
static __device__ __forceinline__ void rg_sincos_bf16(float x, float scale, uint32_t *sb, uint32_t *cb)
{
    float vs, vc;
    if (!(fabsf(x) <= RG_SINCOS_FAST_MAX) || !(fabsf(scale) <= 1.0e30f) || rg_sincos_scaled<false>(x, scale, &vs, &vc)) {
        const uint2 r = rg_sincos_bf16_slow(x, scale);
        *sb = r.x;
        *cb = r.y;
        return;
    }
    *sb = rg_bf16_rn_bits(vs);
    *cb = rg_bf16_rn_bits(vc);
}

// ---------------------------------------------------------------------------
// Stores and loads the forward ops' kernels share (011, 012)
// ---------------------------------------------------------------------------
// N 32-bit words, stored as one vector.
template <int N> struct rg_wordvec { uint32_t w[N]; };
template <int N>
static __device__ __forceinline__ void rg_store_words(uint32_t *o, const rg_wordvec<N> &v)
{
    if constexpr (N == 4) *(uint4 *)o = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
    else if constexpr (N == 2) *(uint2 *)o = make_uint2(v.w[0], v.w[1]);
    else *o = v.w[0];
}

// VPT floats (1, 2 or 4) from 4*VPT-byte aligned memory.
template <int VPT>
static __device__ __forceinline__ void rg_load_floats(const float *p, float *f)
{
    if constexpr (VPT == 4) {
        const float4 a = __ldg((const float4 *)p);
        f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w;
    } else if constexpr (VPT == 2) {
        const float2 a = __ldg((const float2 *)p);
        f[0] = a.x, f[1] = a.y;
    } else {
        f[0] = __ldg(p);
    }
}

static inline bool rg_aligned(const void *p, unsigned a) { return ((uintptr_t)p % a) == 0; }
