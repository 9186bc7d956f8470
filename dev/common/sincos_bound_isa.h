/* SPDX-License-Identifier: Apache-2.0 */
/* sincos_bound_isa.h -- the vector parts of dev/common/sincos_bound_cpu.c, each in
 * sincos_bound_isa.c built for its instruction set (AVX2 + FMA, AVX-512F +
 * FMA), so the checker's own code runs on any x86-64 and calls them only
 * after the CPU said it has them. On other targets SBC_HAVE_X86 is 0 and
 * nothing here is called. For n a multiple of 16: */
#ifndef ROPEGRAD_BENCH_SINCOS_BOUND_ISA_H
#define ROPEGRAD_BENCH_SINCOS_BOUND_ISA_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SBC_HAVE_X86 1
#else
#define SBC_HAVE_X86 0
#endif

/* the core's vector form (core8 / core16) on x[0, n) */
void sbc_core_avx2(const float *x, int n, float *s, float *c);
void sbc_core_avx512(const float *x, int n, float *s, float *c);
/* SLEEF's 1-ulp double sincos of the floats x[0, n) */
void sbc_ref_avx2(const float *x, int n, double *s, double *c);
void sbc_ref_avx512(const float *x, int n, double *s, double *c);

#endif
