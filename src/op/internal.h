/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h -- helpers shared by the op's implementations (not public). */
#ifndef ROPEGRAD_OP_INTERNAL_H
#define ROPEGRAD_OP_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "ropegrad.h"

/* bfloat16 is the top half of a float32: widening is a shift. */
static inline float rg_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE binary16 -> float32, exact for every input (subnormals, Inf, NaN). */
static inline float rg_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0x1f) {                 /* Inf / NaN */
        u = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {             /* normal */
        u = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {             /* +-0 */
        u = sign;
    } else {                           /* subnormal: renormalize */
        exp = 113;
        while (!(man & 0x400u)) {
            man <<= 1;
            exp--;
        }
        man &= 0x3ffu;
        u = sign | (exp << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Element i of a grad tensor of dtype dt, widened to float. */
static inline float rg_load_grad(const void *base, ropegrad_dtype dt, int64_t i)
{
    switch (dt) {
    case ROPEGRAD_BF16: return rg_bf16_to_f32(((const uint16_t *)base)[i]);
    case ROPEGRAD_F16:  return rg_f16_to_f32(((const uint16_t *)base)[i]);
    default:            return ((const float *)base)[i];
    }
}

/* Validation minus the output pointer check (the reference writes elsewhere). */
int rg_validate_inputs(const ropegrad_problem *p);

/* 1 when the byte ranges [a, a+a_bytes) and [b, b+b_bytes) share a byte (0 for
 * a NULL pointer or an empty range). For any op's aliasing check. */
int rg_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/* ROPEGRAD_ERR_OVERLAP when out_bytes at out overlap any input range of p
 * (shapes as declared in ropegrad.h), else 0. Only after rg_validate_inputs. */
int rg_check_output_overlap(const ropegrad_problem *p, const void *out, size_t out_bytes);

#endif
