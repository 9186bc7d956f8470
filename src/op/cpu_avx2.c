/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_avx2.c -- the CPU path's AVX2 row kernel: 8 floats per vector.
 *
 * Compiled with -mavx2 -mfma -mf16c (src/op/CMakeLists.txt) and called by
 * cpu.c only after __builtin_cpu_supports said the CPU has all of them. It is
 * cpu_avx512.c at half the width (core8 / Sleef_sincosf8_u10avx2, F16C
 * for f16); the reasons it is fast are written down there. */
#include "cpu_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <sleef.h>
#include <string.h>

#include "cpu_core_avx2.h"   /* core8: the GPU's float sin/cos on 8 lanes */

#define W 8

#define RG_INLINE static inline __attribute__((always_inline))

/* grad elements base[i .. i+7] widened to float. dt is a constant at every
 * call site (see rows_avx2), so the branches fold away. */
RG_INLINE __m256 load_grad8(const void *base, int64_t i, ropegrad_dtype dt)
{
    if (dt == ROPEGRAD_F32) return _mm256_loadu_ps((const float *)base + i);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)base + i));
    if (dt == ROPEGRAD_BF16) /* bf16 is the top half of a float32 */
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h); /* F16C: IEEE half, exact (subnormals included) */
}

/* Sum of the 8 lanes. */
RG_INLINE float hsum8(__m256 v)
{
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}

/* cpu_avx512.c's sincos16 at 8 lanes: the core where every lane is within
 * RG_CORE_FAST_MAX (returns 1), else SLEEF's 1-ulp sincos (returns 0). */
RG_INLINE int sincos8(__m256 x, __m256 ax, __m256 *s, __m256 *c)
{
    if (_mm256_movemask_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(RG_CORE_FAST_MAX), _CMP_LE_OQ)) == 0xff) {
        core8(x, s, c);
        return 1;
    }
    const Sleef___m256_2 sc = Sleef_sincosf8_u10avx2(x);
    *s = sc.x, *c = sc.y;
    return 0;
}

/* acc += inv * ((gs_lo+gs_hi)*cos(e) - (gc_lo+gc_hi)*sin(e)), 8 lanes. */
RG_INLINE __m256 step8(const float *e, const float *inv, const void *gc, const void *gs,
                       int64_t lo, int64_t hi, ropegrad_dtype dt, __m256 acc)
{
    const __m256 x = _mm256_loadu_ps(e);
    __m256 sn, cs;
    sincos8(x, _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), &sn, &cs);
    __m256 c = _mm256_add_ps(load_grad8(gc, lo, dt), load_grad8(gc, hi, dt));
    __m256 s = _mm256_add_ps(load_grad8(gs, lo, dt), load_grad8(gs, hi, dt));
    __m256 t = _mm256_fmsub_ps(s, cs, _mm256_mul_ps(c, sn));
    return _mm256_fmadd_ps(_mm256_loadu_ps(inv), t, acc);
}

/* Prefetch the bytes of row r the kernel will read: the first half of emb
 * and the whole grad rows. Issued RG_PF_ROWS rows ahead of use (8 rows of
 * head_dim 128 is ~6 KB per thread in flight; 4 and 16 were not measurably
 * better). */
#define RG_PF_ROWS 8
RG_INLINE void prefetch_row(const ropegrad_problem *p, int64_t r, size_t esz)
{
    const int64_t D = p->head_dim;
    const char *e = (const char *)(p->emb + r * D);
    const char *c = (const char *)p->grad_cos + (size_t)(r * D) * esz;
    const char *s = (const char *)p->grad_sin + (size_t)(r * D) * esz;
    for (size_t off = 0; off < (size_t)D * 2; off += 64) _mm_prefetch(e + off, _MM_HINT_T0);
    for (size_t off = 0; off < (size_t)D * esz; off += 64) {
        _mm_prefetch(c + off, _MM_HINT_T0);
        _mm_prefetch(s + off, _MM_HINT_T0);
    }
}

RG_INLINE void rows_avx2(const ropegrad_problem *p, int64_t r0, int64_t r1, ropegrad_dtype dt)
{
    const int64_t S = p->seq_len, D = p->head_dim, H = D / 2;
    const size_t esz = dt == ROPEGRAD_F32 ? 4 : 2;
    const int64_t nvec = H / W * W, ntail = H - nvec;
    const int64_t rows = p->batch_size * S;
    for (int64_t r = r0; r < r1; r++) {
        if (r + RG_PF_ROWS < rows) prefetch_row(p, r + RG_PF_ROWS, esz);
        const int64_t base = r * D;
        const float *inv = p->inv_freq + (r / S) * p->inv_freq_batch_stride;
        const float *emb = p->emb + base;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t d = 0; d < nvec; d += W)
            acc = step8(emb + d, inv + d, p->grad_cos, p->grad_sin, base + d, base + d + H, dt, acc);
        if (ntail) {
            /* The last H % 8 elements (all of them when H < 8), through
             * zero-padded buffers as in cpu_avx512.c. */
            float eb[W] = {0}, ib[W] = {0};
            float cb[2 * W] = {0}, sb[2 * W] = {0}; /* lo half at 0, hi half at W; as floats or u16 */
            memcpy(eb, emb + nvec, (size_t)ntail * 4);
            memcpy(ib, inv + nvec, (size_t)ntail * 4);
            const char *gc = (const char *)p->grad_cos, *gs = (const char *)p->grad_sin;
            memcpy(cb, gc + (size_t)(base + nvec) * esz, (size_t)ntail * esz);
            memcpy((char *)cb + W * esz, gc + (size_t)(base + nvec + H) * esz, (size_t)ntail * esz);
            memcpy(sb, gs + (size_t)(base + nvec) * esz, (size_t)ntail * esz);
            memcpy((char *)sb + W * esz, gs + (size_t)(base + nvec + H) * esz, (size_t)ntail * esz);
            acc = step8(eb, ib, cb, sb, 0, W, dt, acc);
        }
        p->grad_position_ids[r] = p->attention_scaling * hsum8(acc);
    }
}

static void kernel_avx2(const ropegrad_problem *p, int64_t r0, int64_t r1)
{
    switch (p->grad_dtype) { /* one specialized copy of the loop per dtype */
    case ROPEGRAD_BF16: rows_avx2(p, r0, r1, ROPEGRAD_BF16); break;
    case ROPEGRAD_F16: rows_avx2(p, r0, r1, ROPEGRAD_F16); break;
    default: rows_avx2(p, r0, r1, ROPEGRAD_F32); break;
    }
}

rg_cpu_rows_fn rg_cpu_avx2_kernel(void) { return kernel_avx2; }

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

/* cpu_avx512.c's store16 at 8 lanes: certified lanes only, none a tie. */
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

/* cpu_avx512.c's vector16 at 8 lanes; the lanes to redo, as bits. */
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

/* The forward primitive (cpu_kernels.h), cpu_avx512.c's at 8 lanes. */
RG_SINCOS_BF16_PRIMITIVE(sincos_bf16, sincos_bf16_loop)

rg_cpu_sincos_bf16_fn rg_cpu_avx2_sincos_bf16(void) { return sincos_bf16; }

#else

rg_cpu_rows_fn rg_cpu_avx2_kernel(void) { return NULL; }

rg_cpu_sincos_bf16_fn rg_cpu_avx2_sincos_bf16(void) { return NULL; }

#endif
