/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_sincos_avx2.c -- the forward ops' sin/cos primitive (cpu_kernels.h) on 8 lanes.
 *
 * Compiled with its instruction set (src/op/CMakeLists.txt) and called by
 * cpu.c only after __builtin_cpu_supports said the CPU has it; the lanes'
 * sin/cos are sincos8 (cpu_core_avx2.h). 014's row kernel on the same
 * lanes is rope_backward/cpu_avx2.c. */
#include "cpu_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <sleef.h>
#include <string.h>

#include "cpu_core_avx2.h"   /* core8: the GPU's float sin/cos on 8 lanes */

#define W 8

#define RG_INLINE static inline __attribute__((always_inline))

/* rg_bf16_certain on 8 lanes, t = |v| * rel + ta (SLEEF's values): an
 * all-ones lane where it cannot certify. */
RG_INLINE __m256 uncertain8(__m256 v, __m256 rel, __m256 ta)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i m = _mm256_or_si256(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32((int)0xffff0000u)),
                                      _mm256_set1_epi32(0x8000));
    const __m256 t = _mm256_fmadd_ps(_mm256_andnot_ps(sign, v), rel, ta);
    const __m256 d = _mm256_andnot_ps(sign, _mm256_sub_ps(v, _mm256_castsi256_ps(m)));
    return _mm256_cmp_ps(d, t, _CMP_LE_OQ);
}

/* 8 16-bit values from the low halves of 8 32-bit lanes (each < 2^16). */
RG_INLINE __m128i narrow8(__m256i v)
{
    return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

/* cpu_sincos_avx512.c's store16 at 8 lanes: certified lanes only, none a tie. */
RG_INLINE void store8(__m256 vc, __m256 vs, int64_t j, uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    const __m256i h = _mm256_set1_epi32(0x8000);
    const __m256i c16 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_castps_si256(vc), h), 16);
    const __m256i s32 = _mm256_add_epi32(_mm256_castps_si256(vs), h);   /* sin's bits in the high halves */
    if (w) _mm256_storeu_si256((__m256i *)(void *)(w + j), _mm256_blend_epi16(c16, s32, 0xaa));
    if (cb) {
        _mm_storeu_si128((__m128i *)(void *)(cb + j), narrow8(c16));
        _mm_storeu_si128((__m128i *)(void *)(sb + j), narrow8(_mm256_srli_epi32(s32, 16)));
    }
}

/* cpu_sincos_avx512.c's vector16 at 8 lanes; the lanes to redo, as bits. */
RG_INLINE int vector8(const float *x, int64_t j, __m256 vmul, __m256 vscale, __m256i off, __m256i lim, int s1,
                      uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + j), vmul);
    const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    __m256 s, c;
    const int core = sincos8(v, ax, &s, &c);
    const __m256 vs = s1 ? s : _mm256_mul_ps(s, vscale), vc = s1 ? c : _mm256_mul_ps(c, vscale);
    __m256 bad;
    if (core) {
        bad = _mm256_castsi256_ps(_mm256_or_si256(near_mid8(vs, off, lim), near_mid8(vc, off, lim)));
    } else {
        const __m256 rel = _mm256_set1_ps(RG_SLEEF_SINCOS_REL), ta = _mm256_set1_ps(RG_SLEEF_SINCOS_ABS);
        bad = _mm256_or_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(RG_SLEEF_SINCOS_MAX), _CMP_NLE_UQ),
                           _mm256_or_ps(uncertain8(vs, rel, ta), uncertain8(vc, rel, ta)));
    }
    store8(vc, vs, j, cb, sb, w);
    return _mm256_movemask_ps(bad);
}

RG_INLINE void sincos_bf16_loop(const float *x, float mul, int64_t n, float scale, int s1, uint16_t *cb,
                                uint16_t *sb, uint32_t *w)
{
    const __m256 vmul = _mm256_set1_ps(mul), vscale = _mm256_set1_ps(scale);
    const unsigned k = s1 ? RG_CORE_ULPS : RG_CORE_ULPS_SCALED;
    const __m256i off = _mm256_set1_epi32((int)(RG_NEAR_MID_OFF(k) ^ 0x80000000u));
    const __m256i lim = _mm256_set1_epi32((int)(RG_NEAR_MID_LIM(k) ^ 0x80000000u));
    int64_t j = 0;
    for (; j + W <= n; j += W) {
        const unsigned bad = (unsigned)vector8(x, j, vmul, vscale, off, lim, s1, cb, sb, w);
        rg_sincos_bf16_put_lanes(x, mul, j, bad, scale, cb, sb, w);
    }
    rg_sincos_bf16_scalar(x, mul, j, n, scale, cb, sb, w);
}

/* The forward primitive (cpu_kernels.h), cpu_sincos_avx512.c's at 8 lanes. */
RG_SINCOS_BF16_PRIMITIVE(sincos_bf16, sincos_bf16_loop)

rg_cpu_sincos_bf16_fn rg_cpu_avx2_sincos_bf16(void) { return sincos_bf16; }

#else

rg_cpu_sincos_bf16_fn rg_cpu_avx2_sincos_bf16(void) { return NULL; }

#endif
