/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_sincos_core.h -- the GPU's float sin/cos (rg_sincos_core in
 * rope_math.cuh) for the CPU: the same IEEE operations in the same order, so
 * for every float x with |x| <= RG_CORE_FAST_MAX it returns the same bits as
 * the kernels, and the error bound the whole-range check proves for them
 * (dev/common/sincos_bound.cu on the GPU, dev/common/sincos_bound_cpu.c here) holds.
 *
 * Written once, for any vector width: the includer defines the type and
 * operation macros below, then includes this file, which defines
 *
 *   static inline void RG_CORE_NAME(RG_VF x, RG_VF *s, RG_VF *c);
 *
 * Every float operation is an explicit macro (FMA where the GPU has FFMA,
 * plain MUL and SUB elsewhere), so no compiler contraction can change a
 * result: the scalar form (cpu_kernels.h), cpu_sincos_avx2.c and cpu_sincos_avx512.c (and 014's rope_backward/cpu_avx*.c) agree
 * bit for bit (tests/test_sincos_core.c). The macros are undefined at the
 * end of this file, so each includer defines its own set.
 *
 *   RG_VF, RG_VI          float and 32-bit integer vectors
 *   RG_F(c), RG_I(c)      a constant in every lane
 *   RG_FMA(a, b, c)       a * b + c, one rounding
 *   RG_FNMA(a, b, c)      c - a * b, one rounding
 *   RG_MULF(a, b), RG_SUBF(a, b)
 *   RG_BITS(v), RG_FLOAT(i)   bit casts
 *   RG_ANDI, RG_ADDI, RG_XORI, RG_SHL30(i)   integer ops (SHL30: i << 30)
 *   RG_SEL_ODD(q, a, b)   a in the lanes whose q is odd, b elsewhere
 *
 * Callers check |x| <= RG_CORE_FAST_MAX (NaN fails it) before calling: the
 * three-part reduction by pi/2 is exact enough only while q = rint(x*2/pi) <
 * 2^22, and the bound was checked up to 4e6. */
#ifndef RG_CORE_NAME
#error "define RG_CORE_NAME and the vector macros before including cpu_sincos_core.h"
#endif

static inline __attribute__((always_inline)) void RG_CORE_NAME(RG_VF x, RG_VF *s, RG_VF *c)
{
    /* q = rint(x * 2/pi) by adding 1.5 * 2^23 (the low mantissa bits of the
     * sum are q), then x - q*pi/2 with pi/2 in three parts, each step an FMA */
    const RG_VF big = RG_FMA(x, RG_F(0.636619746685028076f), RG_F(12582912.0f));
    const RG_VF q = RG_SUBF(big, RG_F(12582912.0f));
    const RG_VI qi = RG_BITS(big);
    RG_VF r = RG_FNMA(q, RG_F(1.5707962512969971f), x);
    r = RG_FNMA(q, RG_F(7.5497894158615964e-08f), r);
    r = RG_FNMA(q, RG_F(5.3903029534742384e-15f), r);
    const RG_VF r2 = RG_MULF(r, r);
    /* degree-7 sin and degree-8 cos on |r| <= 0.9 (rope_math.cuh says why 0.9) */
    RG_VF ps = RG_FMA(RG_F(-1.93857558770105243e-04f), r2, RG_F(8.33097007125616074e-03f));
    ps = RG_FMA(ps, r2, RG_F(-1.66666299104690552e-01f));
    const RG_VF sr = RG_MULF(r, RG_FMA(ps, r2, RG_F(1.0f)));
    RG_VF pc = RG_FMA(RG_F(2.43223821598803624e-05f), r2, RG_F(-1.38862279709428549e-03f));
    pc = RG_FMA(pc, r2, RG_F(4.16666194796562195e-02f));
    pc = RG_FMA(pc, r2, RG_F(-0.5f));
    const RG_VF cr = RG_FMA(pc, r2, RG_F(1.0f));
    /* quadrant: sin(r + q pi/2) cycles sin, cos, -sin, -cos; signs by the sign bit */
    const RG_VF sv = RG_SEL_ODD(qi, cr, sr), cv = RG_SEL_ODD(qi, sr, cr);
    *s = RG_FLOAT(RG_XORI(RG_BITS(sv), RG_SHL30(RG_ANDI(qi, RG_I(2)))));
    *c = RG_FLOAT(RG_XORI(RG_BITS(cv), RG_SHL30(RG_ANDI(RG_ADDI(qi, RG_I(1)), RG_I(2)))));
}

#undef RG_CORE_NAME
#undef RG_VF
#undef RG_VI
#undef RG_F
#undef RG_I
#undef RG_FMA
#undef RG_FNMA
#undef RG_MULF
#undef RG_SUBF
#undef RG_BITS
#undef RG_FLOAT
#undef RG_ANDI
#undef RG_ADDI
#undef RG_XORI
#undef RG_SHL30
#undef RG_SEL_ODD
