/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_sincos_avx512.c -- the forward ops' sin/cos primitive (cpu_kernels.h) on 16 lanes.
 *
 * Compiled with its instruction set (src/op/CMakeLists.txt) and called by
 * cpu.c only after __builtin_cpu_supports said the CPU has it; the lanes'
 * sin/cos are sincos16 (cpu_core_avx512.h). 014's row kernel on the same
 * lanes is rope_backward/cpu_avx512.c. */
#include "cpu_kernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <sleef.h>
#include <string.h>

#include "cpu_core_avx512.h"   /* core16: the GPU's float sin/cos on 16 lanes */

#define W 16

#define RG_INLINE static inline __attribute__((always_inline))

/* rg_bf16_certain on 16 lanes, t = |v| * rel + ta (SLEEF's values): the
 * lanes it cannot certify. */
RG_INLINE __mmask16 uncertain16(__m512 v, __m512 rel, __m512 ta)
{
    const __m512i m = _mm512_ternarylogic_epi32(_mm512_castps_si512(v), _mm512_set1_epi32((int)0xffff0000u),
                                                _mm512_set1_epi32(0x8000), 0xea);   /* (v & hi) | 0x8000 */
    const __m512 t = _mm512_fmadd_ps(_mm512_abs_ps(v), rel, ta);
    const __m512 d = _mm512_abs_ps(_mm512_sub_ps(v, _mm512_castsi512_ps(m)));
    return _mm512_cmp_ps_mask(d, t, _CMP_LE_OQ);
}

/* The 16 values' bf16 bits stored where the caller wants them: (cos | sin <<
 * 16) words to w, halves to cb and sb. Only certified lanes are kept (the
 * others are redone), and none of those is a tie, so round to nearest is
 * adding half a bf16 spacing (0x8000) and truncating. */
RG_INLINE void store16(__m512 vc, __m512 vs, int64_t j, uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    const __m512i h = _mm512_set1_epi32(0x8000);
    const __m512i c16 = _mm512_srli_epi32(_mm512_add_epi32(_mm512_castps_si512(vc), h), 16);
    const __m512i s32 = _mm512_add_epi32(_mm512_castps_si512(vs), h);   /* sin's bits in the high halves */
    if (w)
        _mm512_storeu_si512((void *)(w + j),
                            _mm512_ternarylogic_epi32(c16, s32, _mm512_set1_epi32((int)0xffff0000u), 0xf8));
    if (cb) {
        _mm256_storeu_si256((__m256i *)(void *)(cb + j), _mm512_cvtepi32_epi16(c16));
        _mm256_storeu_si256((__m256i *)(void *)(sb + j), _mm512_cvtepi32_epi16(_mm512_srli_epi32(s32, 16)));
    }
}

/* The vector at x + j (times mul, then times scale unless S1): the core where
 * every lane is within RG_CORE_FAST_MAX, tested in ulps (off, lim), else
 * SLEEF's 1-ulp sincos against its bound (lanes beyond its range or NaN are
 * redone too); stored by store16; returns the lanes to redo. */
RG_INLINE __mmask16 vector16(const float *x, int64_t j, __m512 vmul, __m512 vscale, __m512i off, __m512i lim, int s1,
                             uint16_t *cb, uint16_t *sb, uint32_t *w)
{
    const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + j), vmul), ax = _mm512_abs_ps(v);
    __m512 s, c;
    const int core = sincos16(v, ax, &s, &c);
    const __m512 vs = s1 ? s : _mm512_mul_ps(s, vscale), vc = s1 ? c : _mm512_mul_ps(c, vscale);
    __mmask16 bad;
    if (core) {
        bad = near_mid16(vs, off, lim) | near_mid16(vc, off, lim);
    } else {
        const __m512 rel = _mm512_set1_ps(RG_SLEEF_SINCOS_REL), ta = _mm512_set1_ps(RG_SLEEF_SINCOS_ABS);
        bad = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(RG_SLEEF_SINCOS_MAX), _CMP_NLE_UQ) | uncertain16(vs, rel, ta) |
              uncertain16(vc, rel, ta);
    }
    store16(vc, vs, j, cb, sb, w);
    return bad;
}

RG_INLINE void sincos_bf16_loop(const float *x, float mul, int64_t n, float scale, int s1, uint16_t *cb,
                                uint16_t *sb, uint32_t *w)
{
    const __m512 vmul = _mm512_set1_ps(mul), vscale = _mm512_set1_ps(scale);
    const unsigned k = s1 ? RG_CORE_ULPS : RG_CORE_ULPS_SCALED;
    const __m512i off = _mm512_set1_epi32((int)RG_NEAR_MID_OFF(k)), lim = _mm512_set1_epi32((int)RG_NEAR_MID_LIM(k));
    int64_t j = 0;
    /* two vectors per step, both before either's rare redo, so the second
     * one's work overlaps the first one's test */
    for (; j + 2 * W <= n; j += 2 * W) {
        const __mmask16 b0 = vector16(x, j, vmul, vscale, off, lim, s1, cb, sb, w);
        const __mmask16 b1 = vector16(x, j + W, vmul, vscale, off, lim, s1, cb, sb, w);
        if (__builtin_expect(b0 | b1, 0)) {
            rg_sincos_bf16_put_lanes(x, mul, j, b0, scale, cb, sb, w);
            rg_sincos_bf16_put_lanes(x, mul, j + W, b1, scale, cb, sb, w);
        }
    }
    for (; j + W <= n; j += W)
        rg_sincos_bf16_put_lanes(x, mul, j, vector16(x, j, vmul, vscale, off, lim, s1, cb, sb, w), scale, cb, sb, w);
    rg_sincos_bf16_scalar(x, mul, j, n, scale, cb, sb, w);
}

/* The forward primitive (cpu_kernels.h): per 16 values, the core (SLEEF's
 * 1-ulp sincos for a vector with a lane beyond the core's range), the scale
 * (compiled out at scale 1), the test and the bf16 pairs written where the
 * caller wants them, in registers from x to the stores
 * (results/cpu-floor-0NN.md have the CPU path's time per workload). */
RG_SINCOS_BF16_PRIMITIVE(sincos_bf16, sincos_bf16_loop)

rg_cpu_sincos_bf16_fn rg_cpu_avx512_sincos_bf16(void) { return sincos_bf16; }

#else

rg_cpu_sincos_bf16_fn rg_cpu_avx512_sincos_bf16(void) { return NULL; }

#endif
