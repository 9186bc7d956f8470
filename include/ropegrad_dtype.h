/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ropegrad_dtype.h -- reading the 16-bit element types of include/ropegrad.h
 * as float: header only (static inline), so a plugin (ropegrad_impl.h) that
 * includes it still links nothing of ropegrad. The library, its harness and
 * examples/plugin-014 all widen bf16 and fp16 with these.
 *
 * Both conversions are exact: every bf16 and every IEEE binary16 value,
 * subnormals, infinities and NaN included, is a float32 value (a NaN keeps its
 * sign and payload).
 */
#ifndef ROPEGRAD_DTYPE_H
#define ROPEGRAD_DTYPE_H

#include <stdint.h>
#include <string.h>

#include "ropegrad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bfloat16 bits as float: bfloat16 is the top half of a float32. */
static inline float ropegrad_bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE binary16 (fp16) bits as float. */
static inline float ropegrad_f16_to_float(uint16_t h)
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

/* Element i of a tensor of dtype dt (ROPEGRAD_BF16, ROPEGRAD_F16; any other
 * value reads float32) at base, as float. */
static inline float ropegrad_element_to_float(const void *base, ropegrad_dtype dt, int64_t i)
{
    switch (dt) {
    case ROPEGRAD_BF16: return ropegrad_bf16_to_float(((const uint16_t *)base)[i]);
    case ROPEGRAD_F16:  return ropegrad_f16_to_float(((const uint16_t *)base)[i]);
    default:            return ((const float *)base)[i];
    }
}

#ifdef __cplusplus
}
#endif

#endif
