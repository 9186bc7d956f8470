/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_avx512.c -- 014's AVX-512 row kernel: 16 floats per vector.
 *
 * Compiled with -mavx512f -mfma -mf16c (src/op/CMakeLists.txt) and called by
 * cpu.c only after __builtin_cpu_supports said the CPU has all of them.
 *
 * Why it is fast. Per element the op is one sin/cos pair and a handful of
 * multiply-adds, and per row it streams 768 bytes (head_dim 128, bf16), so it
 * is bound by the sincos and by DRAM bandwidth in about equal measure:
 *  - one vector sincos per 16 elements: the GPU kernels' own float core
 *    (cpu_sincos_core.h: a Cody-Waite reduction by pi/2 in three parts and
 *    two short polynomials, about 20 instructions, accurate to 3.5 float
 *    ulps or 2^-47.6 |x| over every float |x| <= 4e6: results/
 *    sincos-bound-cpu.txt) when every lane is within 4e6, SLEEF's 1-ulp
 *    sincos (documented to +-5e9) otherwise. Both reduce the argument
 *    properly. SLEEF's 3.5-ulp variant, used before, costs about 1.5x the
 *    core a value (results/dev/cpu-dev-2026-12-01.txt); the output
 *    error is dominated by the float32 products and sums either way, 2.5-4.5x
 *    below a plain float32 libm evaluation (tests/test_cpu.c checks that);
 *  - bf16 grads widen with an integer zero-extend + shift in registers, f16
 *    with vcvtph2ps; no per-element branches;
 *  - gc[d]+gc[d+H] and gs[d]+gs[d+H] are added before multiplying;
 *  - 16 partial sums stay in one register, reduced once per row;
 *  - software prefetch a few rows ahead, so the loads are mostly in cache by
 *    the time they are used (without it the loop stalls on DRAM: 1.4-1.6x
 *    slower on the 2-core dev machine; the hardware prefetchers alone do not
 *    keep up with three interleaved streams, one of them with gaps). */
#include "backward_cpu.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <sleef.h>
#include <string.h>

#include "cpu_core_avx512.h"   /* core16: the GPU's float sin/cos on 16 lanes */

#define W 16

#define RG_INLINE static inline __attribute__((always_inline))

/* grad elements base[i .. i+15] widened to float. dt is a constant at every
 * call site (see rows_avx512), so the branches fold away. */
RG_INLINE __m512 load_grad16(const void *base, int64_t i, ropegrad_dtype dt)
{
    if (dt == ROPEGRAD_F32) return _mm512_loadu_ps((const float *)base + i);
    __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)base + i));
    if (dt == ROPEGRAD_BF16) /* bf16 is the top half of a float32 */
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h); /* IEEE half, exact (subnormals included) */
}

/* acc += inv * ((gs_lo+gs_hi)*cos(e) - (gc_lo+gc_hi)*sin(e)), 16 lanes. */
RG_INLINE __m512 step16(const float *e, const float *inv, const void *gc, const void *gs,
                        int64_t lo, int64_t hi, ropegrad_dtype dt, __m512 acc)
{
    const __m512 x = _mm512_loadu_ps(e);
    __m512 sn, cs;
    sincos16(x, _mm512_abs_ps(x), &sn, &cs);
    __m512 c = _mm512_add_ps(load_grad16(gc, lo, dt), load_grad16(gc, hi, dt));
    __m512 s = _mm512_add_ps(load_grad16(gs, lo, dt), load_grad16(gs, hi, dt));
    __m512 t = _mm512_fmsub_ps(s, cs, _mm512_mul_ps(c, sn));
    return _mm512_fmadd_ps(_mm512_loadu_ps(inv), t, acc);
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

RG_INLINE void rows_avx512(const ropegrad_rope_backward_problem *p, int64_t r0, int64_t r1, ropegrad_dtype dt)
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
        __m512 acc = _mm512_setzero_ps();
        for (int64_t d = 0; d < nvec; d += W)
            acc = step16(emb + d, inv + d, p->grad_cos, p->grad_sin, base + d, base + d + H, dt, acc);
        if (ntail) {
            /* The last H % 16 elements (all of them when H < 16): copy into
             * zero-padded buffers so the same full-width step can run without
             * reading past the row. A zero lane adds inv 0 * (0*cos 0 - 0*sin 0)
             * = 0. Only AVX-512F is needed (no 16-bit masked loads). */
            float eb[W] = {0}, ib[W] = {0};
            float cb[2 * W] = {0}, sb[2 * W] = {0}; /* lo half at 0, hi half at W; as floats or u16 */
            memcpy(eb, emb + nvec, (size_t)ntail * 4);
            memcpy(ib, inv + nvec, (size_t)ntail * 4);
            const char *gc = (const char *)p->grad_cos, *gs = (const char *)p->grad_sin;
            memcpy(cb, gc + (size_t)(base + nvec) * esz, (size_t)ntail * esz);
            memcpy((char *)cb + W * esz, gc + (size_t)(base + nvec + H) * esz, (size_t)ntail * esz);
            memcpy(sb, gs + (size_t)(base + nvec) * esz, (size_t)ntail * esz);
            memcpy((char *)sb + W * esz, gs + (size_t)(base + nvec + H) * esz, (size_t)ntail * esz);
            acc = step16(eb, ib, cb, sb, 0, W, dt, acc);
        }
        p->grad_position_ids[r] = p->attention_scaling * _mm512_reduce_add_ps(acc);
    }
}

static void kernel_avx512(const ropegrad_rope_backward_problem *p, int64_t r0, int64_t r1)
{
    switch (p->grad_dtype) { /* one specialized copy of the loop per dtype */
    case ROPEGRAD_BF16: rows_avx512(p, r0, r1, ROPEGRAD_BF16); break;
    case ROPEGRAD_F16: rows_avx512(p, r0, r1, ROPEGRAD_F16); break;
    default: rows_avx512(p, r0, r1, ROPEGRAD_F32); break;
    }
}

rg_backward_rows_fn rg_backward_avx512_kernel(void) { return kernel_avx512; }

#else

rg_backward_rows_fn rg_backward_avx512_kernel(void) { return NULL; }

#endif
