/* SPDX-License-Identifier: Apache-2.0 */
/* sincos_bound_isa.c -- dev/common/sincos_bound_cpu.c's vector parts
 * (sincos_bound_isa.h), built twice: with SBC_AVX2 and -mavx2 -mfma, and with
 * SBC_AVX512 and -mavx512f -mfma (tests/cpu_sincos_bound.cmake). One body,
 * instantiated by the instruction set's names below. */
#include "sincos_bound_isa.h"

#if SBC_HAVE_X86 && defined(SBC_AVX2) && defined(__AVX2__) && defined(__FMA__)
#include <sleef.h>

#include "cpu_core_avx2.h"

#define SBC_CORE_FN sbc_core_avx2
#define SBC_REF_FN sbc_ref_avx2
#define SBC_W 8   /* float lanes; half as many doubles */
#define SBC_CORE core8
#define SBC_VF __m256
#define SBC_LOADF _mm256_loadu_ps
#define SBC_STOREF _mm256_storeu_ps
#define SBC_HALF_TO_D(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define SBC_SLEEF_D Sleef_sincosd4_u10avx2
#define SBC_VD2 Sleef___m256d_2
#define SBC_STORED _mm256_storeu_pd
#elif SBC_HAVE_X86 && defined(SBC_AVX512) && defined(__AVX512F__) && defined(__FMA__)
#include <sleef.h>

#include "cpu_core_avx512.h"

#define SBC_CORE_FN sbc_core_avx512
#define SBC_REF_FN sbc_ref_avx512
#define SBC_W 16
#define SBC_CORE core16
#define SBC_VF __m512
#define SBC_LOADF _mm512_loadu_ps
#define SBC_STOREF _mm512_storeu_ps
#define SBC_HALF_TO_D(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define SBC_SLEEF_D Sleef_sincosd8_u10avx512f
#define SBC_VD2 Sleef___m512d_2
#define SBC_STORED _mm512_storeu_pd
#endif

#ifdef SBC_CORE_FN
void SBC_CORE_FN(const float *x, int n, float *s, float *c)
{
    for (int k = 0; k < n; k += SBC_W) {
        SBC_VF a, b;
        SBC_CORE(SBC_LOADF(x + k), &a, &b);
        SBC_STOREF(s + k, a);
        SBC_STOREF(c + k, b);
    }
}

void SBC_REF_FN(const float *x, int n, double *s, double *c)
{
    for (int k = 0; k < n; k += SBC_W / 2) {
        const SBC_VD2 r = SBC_SLEEF_D(SBC_HALF_TO_D(x + k));
        SBC_STORED(s + k, r.x);
        SBC_STORED(c + k, r.y);
    }
}
#else
typedef int sbc_empty_unit;   /* ISO C wants a declaration in every file */
#endif
