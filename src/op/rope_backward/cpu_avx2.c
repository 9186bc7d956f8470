/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_avx2.c -- 014's AVX2 row kernel: 8 floats per vector.
 *
 * Compiled with -mavx2 -mfma -mf16c (src/op/CMakeLists.txt) and called by
 * cpu.c only when src/op/cpu.c chose that ISA (the CPU has all of them). It is
 * cpu_avx512.c at half the width (core8 / Sleef_sincosf8_u10avx2, F16C
 * for f16); the reasons it is fast are written down there. */
#include "backward_cpu.h"

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
RG_INLINE void prefetch_row(const ropegrad_rope_backward_problem *p, int64_t r, size_t esz)
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

RG_INLINE void rows_avx2(const ropegrad_rope_backward_problem *p, int64_t r0, int64_t r1, ropegrad_dtype dt)
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

static void kernel_avx2(const ropegrad_rope_backward_problem *p, int64_t r0, int64_t r1)
{
    switch (p->grad_dtype) { /* one specialized copy of the loop per dtype */
    case ROPEGRAD_BF16: rows_avx2(p, r0, r1, ROPEGRAD_BF16); break;
    case ROPEGRAD_F16: rows_avx2(p, r0, r1, ROPEGRAD_F16); break;
    default: rows_avx2(p, r0, r1, ROPEGRAD_F32); break;
    }
}

rg_backward_rows_fn rg_backward_avx2_kernel(void) { return kernel_avx2; }

#else

rg_backward_rows_fn rg_backward_avx2_kernel(void) { return NULL; }

#endif
