/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_core_avx2.h -- core8(x, &s, &c): the GPU's float sin/cos
 * (cpu_sincos_core.h) on 8 lanes, and near_mid8, the rounding test of its
 * values, for files built with -mavx2 -mfma (cpu_sincos_avx2.c, rope_backward/cpu_avx2.c,
 * dev/common/sincos_bound_cpu.c). */
#ifndef ROPEGRAD_OP_CPU_CORE_AVX2_H
#define ROPEGRAD_OP_CPU_CORE_AVX2_H

#include <immintrin.h>
#include <sleef.h>

#include "cpu_core_scalar.h"   /* RG_CORE_FAST_MAX */

#define RG_CORE_NAME core8
#define RG_VF __m256
#define RG_VI __m256i
#define RG_F(c) _mm256_set1_ps(c)
#define RG_I(c) _mm256_set1_epi32(c)
#define RG_FMA _mm256_fmadd_ps
#define RG_FNMA _mm256_fnmadd_ps
#define RG_MULF _mm256_mul_ps
#define RG_SUBF _mm256_sub_ps
#define RG_BITS _mm256_castps_si256
#define RG_FLOAT _mm256_castsi256_ps
#define RG_ANDI _mm256_and_si256
#define RG_ADDI _mm256_add_epi32
#define RG_XORI _mm256_xor_si256
#define RG_SHL30(i) _mm256_slli_epi32(i, 30)
#define RG_SEL_ODD(q, a, b) _mm256_blendv_ps(b, a, _mm256_castsi256_ps(_mm256_slli_epi32(q, 31)))
#include "cpu_sincos_core.h"

/* rg_bf16_certain_ulps (cpu_kernels.h) on 8 lanes of the core's values,
 * cpu_core_avx512.h's near_mid16 with a signed compare (AVX2 has no unsigned
 * one): off and lim carry 0x80000000 more, which turns "y < lim unsigned"
 * into a signed "lim > y". An all-ones lane where it cannot certify. */
static inline __attribute__((always_inline)) __m256i near_mid8(__m256 v, __m256i off, __m256i lim)
{
    const __m256i y = _mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(v), 16), off);
    return _mm256_cmpgt_epi32(lim, y);
}

/* cpu_avx512.c's sincos16 at 8 lanes: the core where every lane is within
 * RG_CORE_FAST_MAX (returns 1), else SLEEF's 1-ulp sincos (returns 0). */
static inline __attribute__((always_inline)) int sincos8(__m256 x, __m256 ax, __m256 *s, __m256 *c)
{
    if (_mm256_movemask_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(RG_CORE_FAST_MAX), _CMP_LE_OQ)) == 0xff) {
        core8(x, s, c);
        return 1;
    }
    const Sleef___m256_2 sc = Sleef_sincosf8_u10avx2(x);
    *s = sc.x, *c = sc.y;
    return 0;
}

#endif
