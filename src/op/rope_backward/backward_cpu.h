/* SPDX-License-Identifier: Apache-2.0 */
/* backward_cpu.h -- 014's per-ISA row kernels (not public).
 *
 * cpu.c owns validation, threading and dispatch; a kernel only computes
 * grad_position_ids[r] for the rows r0 <= r < r1 of an already validated
 * problem. Each SIMD kernel lives in its own file compiled with that
 * instruction set (src/op/CMakeLists.txt), so nothing built with
 * -mavx2/-mavx512f is ever executed before src/op/cpu.c has checked that the
 * CPU supports it. */
#ifndef ROPEGRAD_OP_BACKWARD_CPU_H
#define ROPEGRAD_OP_BACKWARD_CPU_H

#include "cpu_kernels.h"

typedef void (*rg_backward_rows_fn)(const ropegrad_rope_backward_problem *p, int64_t r0, int64_t r1);

/* The kernel compiled in cpu_avx2.c / cpu_avx512.c, or NULL when that file
 * was built without its instruction set (non-x86 targets, other compilers).
 * Callers must still check the running CPU (rg_cpu_isa_chosen). */
rg_backward_rows_fn rg_backward_avx2_kernel(void);
rg_backward_rows_fn rg_backward_avx512_kernel(void);

#endif
