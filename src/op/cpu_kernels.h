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

#include <stdint.h>

#include "ropegrad.h"

typedef void (*rg_cpu_rows_fn)(const ropegrad_problem *p, int64_t r0, int64_t r1);

/* The kernel compiled in cpu_avx2.c / cpu_avx512.c, or NULL when that file
 * was built without its instruction set (non-x86 targets, other compilers).
 * Callers must still check the running CPU before calling the kernel. */
rg_cpu_rows_fn rg_cpu_avx2_kernel(void);
rg_cpu_rows_fn rg_cpu_avx512_kernel(void);

/* s[i], c[i] = sin(x[i]), cos(x[i]) for i < n, from SLEEF's vector sincos
 * (3.5-ulp where every lane of a vector is within +-39000, else 1-ulp). The
 * forward ops' (011, 012) building block, one per ISA like the row kernels. */
typedef void (*rg_cpu_sincos_fn)(const float *x, float *s, float *c, int64_t n);
rg_cpu_sincos_fn rg_cpu_avx2_sincos(void);
rg_cpu_sincos_fn rg_cpu_avx512_sincos(void);

#endif
