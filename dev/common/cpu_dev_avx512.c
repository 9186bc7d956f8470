/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_dev_avx512.c -- dev/common/cpu_dev.c's part 1, built with -mavx512f -mfma:
 * SLEEF's vector sincos against the kernels' core (core16) per value, in a
 * 011-like row loop. */
#include <math.h>
#include <stdio.h>

#include "cpu_kernels.h"

/* now_us: a clock in microseconds; median: of n values (sorts them). */
int cpu_dev_per_value(int reps, double (*now_us)(void), double (*median)(double *, int));

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__FMA__)
#include <sleef.h>

#include "cpu_core_avx512.h"

enum { SRC_SLEEF35, SRC_SLEEF10, SRC_CORE };

/* One 011 row: 64 values of sin/cos(pos * inv), the test (the library's:
 * in ulps for the core, against SLEEF's bound for SLEEF), the pack, two
 * stores of the 64 words; returns the lanes flagged. */
static unsigned row16(int src, float pos, const float *inv, uint32_t *o)
{
    unsigned flagged = 0;
    const __m512 rel = _mm512_set1_ps(RG_SLEEF_SINCOS_REL), ta = _mm512_set1_ps(RG_SLEEF_SINCOS_ABS);
    const __m512i off = _mm512_set1_epi32((int)RG_NEAR_MID_OFF(RG_CORE_ULPS));
    const __m512i lim = _mm512_set1_epi32((int)RG_NEAR_MID_LIM(RG_CORE_ULPS));
    for (int j = 0; j < 64; j += 16) {
        const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(inv + j), _mm512_set1_ps(pos));
        __m512 s, c;
        if (src == SRC_CORE) {
            core16(x, &s, &c);
        } else {
            const Sleef___m512_2 r = src == SRC_SLEEF35 ? Sleef_sincosf16_u35avx512f(x) : Sleef_sincosf16_u10avx512f(x);
            s = r.x, c = r.y;
        }
        __mmask16 bad = 0;
        const __m512 v[2] = {s, c};
        for (int k = 0; k < 2; k++) {
            if (src == SRC_CORE) {
                bad |= near_mid16(v[k], off, lim);
                continue;
            }
            const __m512i m = _mm512_ternarylogic_epi32(_mm512_castps_si512(v[k]), _mm512_set1_epi32((int)0xffff0000u),
                                                        _mm512_set1_epi32(0x8000), 0xea);
            const __m512 t = _mm512_fmadd_ps(_mm512_abs_ps(v[k]), rel, ta);
            bad |= _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(v[k], _mm512_castsi512_ps(m))), t, _CMP_LE_OQ);
        }
        const __m512i sb = _mm512_add_epi32(_mm512_castps_si512(s), _mm512_set1_epi32(0x8000));
        const __m512i cb = _mm512_srli_epi32(_mm512_add_epi32(_mm512_castps_si512(c), _mm512_set1_epi32(0x8000)), 16);
        const __m512i w = _mm512_ternarylogic_epi32(cb, sb, _mm512_set1_epi32((int)0xffff0000u), 0xf8);
        _mm512_storeu_si512((void *)(o + j), w);
        _mm512_storeu_si512((void *)(o + j + 64), w);
        flagged += (unsigned)__builtin_popcount(bad);
    }
    return flagged;
}

int cpu_dev_per_value(int reps, double (*now_us)(void), double (*median)(double *, int))
{
    enum { ROWS = 20000 };
    static float inv[64];
    static uint32_t out[ROWS][128];
    for (int j = 0; j < 64; j++) inv[j] = powf(500000.0f, -(float)j / 64.0f);
    static const char *names[] = {"SLEEF sincosf16_u35avx512f", "SLEEF sincosf16_u10avx512f",
                                  "the kernels' core (core16)"};
    printf("1. per value, a 011-like row loop (64 frequencies of theta 5e5, positions 0..%d), warm, 1 thread\n",
           ROWS - 1);
    for (int src = SRC_SLEEF35; src <= SRC_CORE; src++) {
        double t[64];
        unsigned flagged = 0;
        for (int k = 0; k < reps; k++) {
            const double t0 = now_us();
            for (int r = 0; r < ROWS; r++) flagged += row16(src, (float)r, inv, out[r]);
            t[k] = (now_us() - t0) * 1e3 / (ROWS * 64.0);
        }
        printf("   %-28s %.3f ns a value (values flagged by its test: %.2g)\n", names[src], median(t, reps),
               (double)flagged / ((double)reps * ROWS * 128));
    }
    return out[7][3] == 0xdeadbeefu;   /* keeps the stores; never true for these values */
}
#else
int cpu_dev_per_value(int reps, double (*now_us)(void), double (*median)(double *, int))
{
    (void)reps, (void)now_us, (void)median;
    return 1;
}
#endif
