/* SPDX-License-Identifier: Apache-2.0 */
/* sincos_bound_isa.c -- bench/sincos_bound_cpu.c's vector parts
 * (sincos_bound_isa.h), built twice: with SBC_AVX2 and -mavx2 -mfma, and with
 * SBC_AVX512 and -mavx512f -mfma (tests/cpu_sincos_bound.cmake). */
#include "sincos_bound_isa.h"

#if SBC_HAVE_X86 && defined(SBC_AVX2) && defined(__AVX2__) && defined(__FMA__)
#include <sleef.h>

#include "cpu_core_avx2.h"

void sbc_core_avx2(const float *x, int n, float *s, float *c)
{
    for (int k = 0; k < n; k += 8) {
        __m256 a, b;
        core8(_mm256_loadu_ps(x + k), &a, &b);
        _mm256_storeu_ps(s + k, a);
        _mm256_storeu_ps(c + k, b);
    }
}

void sbc_ref_avx2(const float *x, int n, double *s, double *c)
{
    for (int k = 0; k < n; k += 4) {
        const Sleef___m256d_2 r = Sleef_sincosd4_u10avx2(_mm256_cvtps_pd(_mm_loadu_ps(x + k)));
        _mm256_storeu_pd(s + k, r.x);
        _mm256_storeu_pd(c + k, r.y);
    }
}
#elif SBC_HAVE_X86 && defined(SBC_AVX512) && defined(__AVX512F__) && defined(__FMA__)
#include <sleef.h>

#include "cpu_core_avx512.h"

void sbc_core_avx512(const float *x, int n, float *s, float *c)
{
    for (int k = 0; k < n; k += 16) {
        __m512 a, b;
        core16(_mm512_loadu_ps(x + k), &a, &b);
        _mm512_storeu_ps(s + k, a);
        _mm512_storeu_ps(c + k, b);
    }
}

void sbc_ref_avx512(const float *x, int n, double *s, double *c)
{
    for (int k = 0; k < n; k += 8) {
        const Sleef___m512d_2 r = Sleef_sincosd8_u10avx512f(_mm512_cvtps_pd(_mm256_loadu_ps(x + k)));
        _mm512_storeu_pd(s + k, r.x);
        _mm512_storeu_pd(c + k, r.y);
    }
}
#else
typedef int sbc_empty_unit;   /* ISO C wants a declaration in every file */
#endif
