/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_core_avx512.h -- core16(x, &s, &c): the GPU's float sin/cos
 * (cpu_sincos_core.h) on 16 lanes, and near_mid16, the rounding test of its
 * values, for files built with -mavx512f -mfma (cpu_sincos_avx512.c, rope_backward/cpu_avx512.c,
 * dev/common/sincos_bound_cpu.c, dev/common/cpu_dev_avx512.c). */
#ifndef ROPEGRAD_OP_CPU_CORE_AVX512_H
#define ROPEGRAD_OP_CPU_CORE_AVX512_H

#include <immintrin.h>
#include <sleef.h>

#include "cpu_core_scalar.h"   /* RG_CORE_FAST_MAX */

#define RG_CORE_NAME core16
#define RG_VF __m512
#define RG_VI __m512i
#define RG_F(c) _mm512_set1_ps(c)
#define RG_I(c) _mm512_set1_epi32(c)
#define RG_FMA _mm512_fmadd_ps
#define RG_FNMA _mm512_fnmadd_ps
#define RG_MULF _mm512_mul_ps
#define RG_SUBF _mm512_sub_ps
#define RG_BITS _mm512_castps_si512
#define RG_FLOAT _mm512_castsi512_ps
#define RG_ANDI _mm512_and_si512
#define RG_ADDI _mm512_add_epi32
#define RG_XORI _mm512_xor_si512
#define RG_SHL30(i) _mm512_slli_epi32(i, 30)
#define RG_SEL_ODD(q, a, b) _mm512_mask_blend_ps(_mm512_test_epi32_mask(q, _mm512_set1_epi32(1)), b, a)
#include "cpu_sincos_core.h"

/* rg_bf16_certain_ulps (cpu_kernels.h) on 16 lanes of the core's values, in
 * its top-half form: the lanes it cannot certify. off, lim:
 * RG_NEAR_MID_OFF(k), RG_NEAR_MID_LIM(k). */
static inline __attribute__((always_inline)) __mmask16 near_mid16(__m512 v, __m512i off, __m512i lim)
{
    const __m512i y = _mm512_add_epi32(_mm512_slli_epi32(_mm512_castps_si512(v), 16), off);
    return _mm512_cmp_epu32_mask(y, lim, _MM_CMPINT_LT);
}

/* sin and cos of 16 lanes x (ax = |x|): the core where every lane is within
 * RG_CORE_FAST_MAX (returns 1), else SLEEF's 1-ulp sincos (returns 0: a lane
 * beyond the core's range, or NaN). The backward's step16 and the forward's
 * vector16 both take their sin/cos here. */
static inline __attribute__((always_inline)) int sincos16(__m512 x, __m512 ax, __m512 *s, __m512 *c)
{
    if (_mm512_cmp_ps_mask(ax, _mm512_set1_ps(RG_CORE_FAST_MAX), _CMP_LE_OQ) == 0xffff) {
        core16(x, s, c);
        return 1;
    }
    const Sleef___m512_2 sc = Sleef_sincosf16_u10avx512f(x);
    *s = sc.x, *c = sc.y;
    return 0;
}

#endif
