/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_kernels.h -- the CPU paths' shared sin/cos machinery (not public): the
 * forward ops' per-ISA primitive and the scalar core with its rounding test.
 *
 * cpu.c owns threading and the ISA choice. Each SIMD primitive lives in its
 * own file compiled with that instruction set (cpu_sincos_avx2.c,
 * cpu_sincos_avx512.c; src/op/CMakeLists.txt), so nothing built with
 * -mavx2/-mavx512f is ever executed before cpu.c has checked the CPU
 * supports it. 014's row kernels: rope_backward/backward_cpu.h. */
#ifndef ROPEGRAD_OP_CPU_KERNELS_H
#define ROPEGRAD_OP_CPU_KERNELS_H

#include <math.h>
#include <sleef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "ropegrad.h"

/* The forward ops' (011, 012) building block, one per ISA like the row
 * kernels: for j < n (n <= ROPEGRAD_MAX_HEAD_DIM / 2), the bf16 bits of
 * scale*cos(x[j]*mul) and scale*sin(x[j]*mul) (the float product: 011 passes
 * inv_freq and the position, 012 its freqs and 1), each the bf16 nearest to
 * the exact value, written as (cos | sin << 16) words to w (011's interleaved pairs)
 * when w is not NULL, and as two arrays cb, sb (012) when they are not NULL.
 * The float values come from the kernels' own sin/cos (cpu_sincos_core.h, bit
 * for bit the GPU's rg_sincos_core) where every lane of a vector is within
 * RG_CORE_FAST_MAX, else from SLEEF's 1-ulp vector sincos; a test against
 * that source's error bound (rg_bf16_certain_ulps for the core's,
 * rg_bf16_certain for SLEEF's) proves most roundings, and the others (about
 * one pair in 11000 at scale 1: results/sincos-bound-cpu.txt) are
 * redone by rg_sincos_bf16_put in double. */
typedef void (*rg_cpu_sincos_bf16_fn)(const float *x, float mul, int64_t n, float scale, uint16_t *cb,
                                      uint16_t *sb, uint32_t *w);
rg_cpu_sincos_bf16_fn rg_cpu_avx2_sincos_bf16(void);
rg_cpu_sincos_bf16_fn rg_cpu_avx512_sincos_bf16(void);

/* SLEEF's float sincos error bounds are relative (1 ulp for the variant used
 * beyond the core's range); 2^-20 of |value| covers them and the scale's product with margin.
 * The absolute part, 2^-140, covers results among the subnormals (there SLEEF
 * returns sin x = x, exact to far below a subnormal's spacing) and stays below
 * the smallest bf16 midpoint (2^-134), so sin(+-0) = +-0 and cos 0 = 1 are
 * certified without a test of their own. */
#define RG_SLEEF_SINCOS_REL 9.5367431640625e-07f   /* 2^-20 */
#define RG_SLEEF_SINCOS_ABS 7.174648137343064e-43f /* 2^-140 */
/* SLEEF documents its 1-ulp float sincos for |x| <= 5e9; beyond, libm's double. */
#define RG_SLEEF_SINCOS_MAX 1.0e9f
/* Larger |scale| (or NaN) sends every value to rg_sincos_bf16_put. */
#define RG_SINCOS_SCALE_MAX 1.0e30f

/* rg_sincos_core1, the core one value at a time, and its range and error
 * bound in ulps (RG_CORE_FAST_MAX, RG_CORE_ULPS, RG_CORE_ULPS_SCALED). */
#include "cpu_core_scalar.h"

/* sin and cos of one value: the core where |x| <= RG_CORE_FAST_MAX (returns
 * 1), else SLEEF's scalar 1-ulp sincos (returns 0; also for NaN). The
 * portable backward kernel (rope_backward/cpu.c) and rg_sincos_bf16_scalar below. */
static inline int rg_sincos1(float x, float *s, float *c)
{
    if (fabsf(x) <= RG_CORE_FAST_MAX) {
        rg_sincos_core1(x, s, c);
        return 1;
    }
    const Sleef_float2 r = Sleef_sincosf_u10(x);
    *s = r.x, *c = r.y;
    return 0;
}

/* Whether bf16_rn(v) is the bf16 nearest to every value within t of v: t is
 * far below half a bf16 spacing, so only the midpoint m nearest v (v's top 16
 * bits | 0x8000: same sign and exponent, so v - m is exact) can lie within t.
 * True for a NaN v (the compare fails): callers rule NaN out first, by the
 * range check on x (a finite x within SLEEF's range gives finite values).
 * The test for SLEEF's values, whose bound is relative with a floor. */
static inline int rg_bf16_certain(float v, float t)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u = (u & 0xffff0000u) | 0x8000u;
    float m;
    memcpy(&m, &u, sizeof m);
    return !(fabsf(v - m) <= t);
}

/* The same question for a finite v within fewer than k of its own ulps of the
 * exact value (the core's values: RG_CORE_ULPS, RG_CORE_ULPS_SCALED): v and
 * the midpoint m share sign and exponent, so |v - m| is |lo - 0x8000| ulps,
 * lo v's low 16 bits, and the rounding is certain when that is at least k.
 * An integer test: no bound to compute, and no float subtraction. Computed in
 * the top half of a 32-bit word, the form the vector files use on every lane:
 * uncertain when (bits(v) << 16) + RG_NEAR_MID_OFF(k) < RG_NEAR_MID_LIM(k),
 * unsigned, i.e. (lo + k - 1 - 0x8000) mod 2^16 < 2k - 1. */
#define RG_NEAR_MID_OFF(k) (((uint32_t)(k) - 1u - 0x8000u) << 16)
#define RG_NEAR_MID_LIM(k) ((2u * (uint32_t)(k) - 1u) << 16)
static inline int rg_bf16_certain_ulps(float v, unsigned k)
{
    return (uint32_t)(rg_float_bits(v) << 16) + RG_NEAR_MID_OFF(k) >= RG_NEAR_MID_LIM(k);
}

/* Value j's bf16 bits c and s where the caller wants them: a (cos | sin << 16)
 * word in w, and/or the arrays cb, sb. */
static inline void rg_sincos_bf16_store(int64_t j, uint16_t c, uint16_t s, uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    if (w) w[j] = c | (uint32_t)s << 16;
    if (cb) cb[j] = c, sb[j] = s;
}

/* Value j the test could not certify (or out of range): libm's double sin and
 * cos of x, times scale, rounded once to bf16. */
static inline void rg_sincos_bf16_put(float x, float scale, int64_t j, uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    const double xd = (double)x;
    rg_sincos_bf16_store(j, rg_bf16_rn_double((double)scale * cos(xd)), rg_bf16_rn_double((double)scale * sin(xd)),
                         cb, sb, w);
}

/* The values j + k of a vector whose lane k is set in bad, through
 * rg_sincos_bf16_put (rare: with the core, about one 16-lane vector in 300
 * has one). */
static inline void rg_sincos_bf16_put_lanes(const float *x, float mul, int64_t j, unsigned bad, float scale,
                                            uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    for (; bad; bad &= bad - 1) {
        const int k = __builtin_ctz(bad);
        rg_sincos_bf16_put(x[j + k] * mul, scale, j + k, cb, sb, w);
    }
}

/* Every value through rg_sincos_bf16_put when |scale| is beyond
 * RG_SINCOS_SCALE_MAX (or NaN), where the float values could overflow: returns
 * 1 then, 0 (nothing done) otherwise. The ISA primitives' first step. */
static inline int rg_sincos_bf16_huge_scale(const float *x, float mul, int64_t n, float scale, uint16_t *cb,
                                            uint16_t *sb, uint32_t *w)
{
    if (fabsf(scale) <= RG_SINCOS_SCALE_MAX) return 0;
    for (int64_t j = 0; j < n; j++) rg_sincos_bf16_put(x[j] * mul, scale, j, cb, sb, w);
    return 1;
}

/* Values j0 <= j < n one at a time (the portable primitive, and the last
 * n % width values of the SIMD ones): the core where |x| <= RG_CORE_FAST_MAX,
 * SLEEF's scalar 1-ulp sincos beyond, then the same test as the vector forms.
 * |scale| <= RG_SINCOS_SCALE_MAX (rg_sincos_bf16_huge_scale has run). */
static inline void rg_sincos_bf16_scalar(const float *xs, float mul, int64_t j0, int64_t n, float scale,
                                         uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    const unsigned k = scale == 1.0f ? RG_CORE_ULPS : RG_CORE_ULPS_SCALED;
    for (int64_t j = j0; j < n; j++) {
        const float x = xs[j] * mul, ax = fabsf(x);
        float s, c;
        const int core = rg_sincos1(x, &s, &c);
        const float vs = s * scale, vc = c * scale;
        int certain;
        if (core) certain = rg_bf16_certain_ulps(vs, k) && rg_bf16_certain_ulps(vc, k);
        else
            certain = ax <= RG_SLEEF_SINCOS_MAX &&
                      rg_bf16_certain(vs, fabsf(vs) * RG_SLEEF_SINCOS_REL + RG_SLEEF_SINCOS_ABS) &&
                      rg_bf16_certain(vc, fabsf(vc) * RG_SLEEF_SINCOS_REL + RG_SLEEF_SINCOS_ABS);
        if (certain) rg_sincos_bf16_store(j, rg_bf16_rn(vc), rg_bf16_rn(vs), cb, sb, w);
        else rg_sincos_bf16_put(x, scale, j, cb, sb, w);
    }
}

/* An ISA file's forward primitive NAME from its inline loop LOOP(x, mul, n,
 * scale, s1, cb, sb, w): the huge-scale case first, then one copy of the loop
 * per case with the stores it does not make compiled out (011 writes w only,
 * 012 cb and sb), at scale 1 (no multiplies) or not. */
#define RG_SINCOS_BF16_PRIMITIVE(NAME, LOOP)                                                                    \
    static void NAME(const float *x, float mul, int64_t n, float scale, uint16_t *cb, uint16_t *sb, uint32_t *w) \
    {                                                                                                          \
        if (rg_sincos_bf16_huge_scale(x, mul, n, scale, cb, sb, w)) return;                                    \
        if (w && !cb) {                                                                                        \
            if (scale == 1.0f) LOOP(x, mul, n, scale, 1, NULL, NULL, w);                                       \
            else LOOP(x, mul, n, scale, 0, NULL, NULL, w);                                                     \
        } else if (scale == 1.0f) {                                                                            \
            LOOP(x, mul, n, scale, 1, cb, sb, w);                                                              \
        } else {                                                                                               \
            LOOP(x, mul, n, scale, 0, cb, sb, w);                                                              \
        }                                                                                                      \
    }

#endif
