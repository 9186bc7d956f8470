/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h -- helpers shared by the op's implementations (not public). */
#ifndef ROPEGRAD_OP_INTERNAL_H
#define ROPEGRAD_OP_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "ropegrad.h"
#include "ropegrad_dtype.h"

/* Widening bf16 and fp16 (ropegrad_bf16_to_float, ropegrad_f16_to_float,
 * ropegrad_element_to_float for a grad tensor's element) is public, header
 * only: include/ropegrad_dtype.h, which plugins use too. */

/* Validation minus the output pointer check (the reference writes elsewhere). */
int rg_validate_inputs(const ropegrad_rope_backward_problem *p);

/* 1 when the byte ranges [a, a+a_bytes) and [b, b+b_bytes) share a byte (0 for
 * a NULL pointer or an empty range). For any op's aliasing check. */
int rg_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/* ROPEGRAD_ERR_OVERLAP when out_bytes at out overlap any input range of p
 * (shapes as declared in ropegrad.h), else 0. Only after rg_validate_inputs. */
int rg_check_output_overlap(const ropegrad_rope_backward_problem *p, const void *out, size_t out_bytes);

/* ---- shared by the ops' CPU paths (cpu.c) ---- */

/* Rows [r0, r1) of an already validated problem held in ctx. */
typedef void (*rg_cpu_chunk_fn)(const void *ctx, int64_t r0, int64_t r1);

/* The instruction set chosen once per process (cpu.c says how); every op's
 * CPU path runs its kernel for it. */
typedef enum { RG_CPU_PORTABLE, RG_CPU_AVX2, RG_CPU_AVX512 } rg_cpu_isa_id;
rg_cpu_isa_id rg_cpu_isa_chosen(void);

/* Runs fn over rows split into chunks on OpenMP threads (0 = all cores),
 * fewer threads when the work (rows x row_elems sincos) is too small to
 * repay waking them. */
void rg_cpu_parallel_rows(int64_t rows, int64_t row_elems, int num_threads, rg_cpu_chunk_fn fn, const void *ctx);

/* ---- the forward ops' output rounding (rope_forward.c, cos_sin.c) ---- */

/* float32 -> bf16 bits, round to nearest even (finite inputs). */
static inline uint16_t rg_bf16_rn(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* double -> bf16 bits with one rounding (nearest even). A double-to-float
 * rounding only misleads the bf16 rounding when it lands exactly on a bf16
 * midpoint; that case is decided from the side of it the double lies on. */
static inline uint16_t rg_bf16_rn_double(double d)
{
    const float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  /* NaN stays NaN */
    if ((u & 0xffffu) == 0x8000u && (double)f != d)
        return (uint16_t)((d < 0 ? -d : d) > (f < 0 ? -(double)f : (double)f) ? (u >> 16) + 1u : (u >> 16));
    if ((u & 0x7fffffffu) == 0x7f800000u) return (uint16_t)(u >> 16);               /* Inf */
    return rg_bf16_rn(f);
}

/* The bf16 bits of scale*cos(x[j]*mul) and scale*sin(x[j]*mul), j < n (the
 * float product: 011 passes inv_freq and the position, 012 a row of freqs and
 * 1, which is exact), each the bf16 nearest to the exact value
 * (rg_sincos_bf16_row in cpu.c says how): to w as (cos | sin << 16) words
 * when w is not NULL, to cb and sb when they are not. Called from the row
 * function rg_cpu_parallel_rows runs, which has chosen the ISA's primitive. */
void rg_sincos_bf16_row(const float *x, float mul, int64_t n, float scale, uint16_t *cb, uint16_t *sb, uint32_t *w);

/* Validation shared by the forward ops: sizes, head_dim, overflow of
 * rows*head_dim*out_bytes_per_elem, scale. */
int rg_validate_forward_shape(int64_t B, int64_t S, int64_t D, int64_t out_bytes_per_elem, float scale);

#endif
