/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_core_scalar.h -- rg_sincos_core1(x, &s, &c): the GPU's float sin/cos
 * (cpu_sincos_core.h) one value at a time, in plain C that C++ compiles too
 * (dev/common/sincos_bound.cu compares it with the GPU's on the host). |x| <=
 * RG_CORE_FAST_MAX. fmaf is one instruction where the file is
 * built with FMA (the SIMD files), a libm call (exact all the same) where it
 * is not. */
#ifndef ROPEGRAD_OP_CPU_CORE_SCALAR_H
#define ROPEGRAD_OP_CPU_CORE_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The GPU's float sin/cos (rope_math.cuh's rg_sincos_core), its range and its
 * error bound, the same constants (dev/common/sincos_bound.cu asserts they equal
 * RG_SINCOS_FAST_MAX, RG_SINCOS_ULPS and RG_SINCOS_ULPS_SCALED; rope_math.cuh
 * says why the bound is in ulps of the value and why 7 with a scale): for
 * every float x with |x| <= RG_CORE_FAST_MAX, sin and cos are within fewer
 * than RG_CORE_ULPS ulps of the value returned, checked on every such float by
 * dev/common/sincos_bound.cu (GPU) and dev/common/sincos_bound_cpu.c (this code). */
#define RG_CORE_FAST_MAX 4.0e6f
#define RG_CORE_ULPS 3
#define RG_CORE_ULPS_SCALED 7

static inline uint32_t rg_float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float rg_bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#define RG_CORE_NAME rg_sincos_core1
#define RG_VF float
#define RG_VI uint32_t
#define RG_F(c) (c)
#define RG_I(c) ((uint32_t)(c))
#define RG_FMA(a, b, c) fmaf(a, b, c)
#define RG_FNMA(a, b, c) fmaf(-(a), b, c)
#define RG_MULF(a, b) ((a) * (b))
#define RG_SUBF(a, b) ((a) - (b))
#define RG_BITS rg_float_bits
#define RG_FLOAT rg_bits_float
#define RG_ANDI(a, b) ((a) & (b))
#define RG_ADDI(a, b) ((a) + (b))
#define RG_XORI(a, b) ((a) ^ (b))
#define RG_SHL30(i) ((i) << 30)
#define RG_SEL_ODD(q, a, b) (((q) & 1u) ? (a) : (b))
#include "cpu_sincos_core.h"

#endif
