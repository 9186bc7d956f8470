/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_kernels.h -- the CPU path's per-ISA row kernels (not public).
 *
 * cpu.c owns validation, threading and dispatch; a kernel only computes
 * out[r] for the rows r0 <= r < r1 of an already validated problem. Each
 * SIMD kernel lives in its own file compiled with that instruction set
 * (see src/op/CMakeLists.txt), so nothing built with -mavx2/-mavx512f is
 * ever executed before cpu.c has checked the CPU supports it. */
#ifndef ROPEGRAD_OP_CPU_KERNELS_H
#define ROPEGRAD_OP_CPU_KERNELS_H

#include <math.h>
#include <stdint.h>

#include "internal.h"
#include "ropegrad.h"

typedef void (*rg_cpu_rows_fn)(const ropegrad_problem *p, int64_t r0, int64_t r1);

/* The kernel compiled in cpu_avx2.c / cpu_avx512.c, or NULL when that file
 * was built without its instruction set (non-x86 targets, other compilers).
 * Callers must still check the running CPU before calling the kernel. */
rg_cpu_rows_fn rg_cpu_avx2_kernel(void);
rg_cpu_rows_fn rg_cpu_avx512_kernel(void);

/* The forward ops' (011, 012) building block, one per ISA like the row
 * kernels: for j < n (n <= ROPEGRAD_MAX_HEAD_DIM / 2), sin and cos of x[j]
 * from SLEEF's vector sincos (3.5-ulp where every lane of a vector is within
 * +-39000, else 1-ulp), scaled and rounded to bf16 by rg_bf16_bracket below
 * (compiled with the file's instruction set, so the rounding check runs at
 * the vector width too). Returns 1 when every ok[j] is 1. */
typedef int (*rg_cpu_sincos_bf16_fn)(const float *x, int64_t n, float scale, uint16_t *sb, uint16_t *cb,
                                     unsigned char *ok);
rg_cpu_sincos_bf16_fn rg_cpu_avx2_sincos_bf16(void);
rg_cpu_sincos_bf16_fn rg_cpu_avx512_sincos_bf16(void);

/* SLEEF's float sincos error bounds are relative (3.5 ulp = 2^-22.2 of the
 * value); 2^-20 of |value| covers them and the scale's product with margin,
 * and a tiny absolute part covers results near zero and subnormals. */
#define RG_SLEEF_SINCOS_REL 9.5367431640625e-07f   /* 2^-20 */
#define RG_SLEEF_SINCOS_ABS 1.0e-30f
/* SLEEF documents its 1-ulp float sincos for |x| <= 5e9; beyond, libm's double. */
#define RG_SLEEF_SINCOS_MAX 1.0e9f

/* The forward ops round scale*sin/cos to bf16. A float value v carries an
 * error of at most t = |v| * RG_SLEEF_SINCOS_REL (+ a tiny absolute part);
 * when v - t and v + t round to the same bf16, that bf16 is the one nearest
 * to the exact value: sb[j], cb[j] are written and ok[j] = 1. Otherwise (a
 * rounding midpoint inside the interval: about one value in 2^11; or x or a
 * value out of range) ok[j] = 0 and the caller recomputes the value
 * (rg_sincos_bf16_row in cpu.c: libm's double sin/cos, rounded once).
 * Branch-free, so the compiler vectorizes it. Returns 1 when every ok[j] is 1. */
static inline int rg_bf16_bracket(const float *x, const float *s, const float *c, int64_t n, float scale,
                                  uint16_t *sb, uint16_t *cb, unsigned char *ok)
{
    int all_ok = 1;
    for (int64_t j = 0; j < n; j++) {
        const float vs = s[j] * scale, vc = c[j] * scale;
        const float ts = fabsf(vs) * RG_SLEEF_SINCOS_REL + RG_SLEEF_SINCOS_ABS;
        const float tc = fabsf(vc) * RG_SLEEF_SINCOS_REL + RG_SLEEF_SINCOS_ABS;
        const uint16_t s0 = rg_bf16_rn(vs - ts), s1 = rg_bf16_rn(vs + ts);
        const uint16_t c0 = rg_bf16_rn(vc - tc), c1 = rg_bf16_rn(vc + tc);
        /* |x| within SLEEF's documented range and both values finite (NaN fails every compare) */
        const int good = (s0 == s1) & (c0 == c1) & (fabsf(x[j]) <= RG_SLEEF_SINCOS_MAX) &
                         (fabsf(vs) + ts <= 3.0e38f) & (fabsf(vc) + tc <= 3.0e38f);
        sb[j] = s0;
        cb[j] = c0;
        ok[j] = (unsigned char)good;
        all_ok &= good;
    }
    return all_ok;
}

#endif
