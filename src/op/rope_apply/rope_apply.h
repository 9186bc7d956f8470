/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply.h -- what the apply ops' files share (088 forward, 068 backward;
 * not public): where a head's row and a cos/sin row start, the rows the
 * paths iterate, and the row conversions of the CPU path. */
#ifndef ROPEGRAD_OP_ROPE_APPLY_H
#define ROPEGRAD_OP_ROPE_APPLY_H

#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "ropegrad.h"

/* Element offset of head h's row at (b, s) in a q- or k-shaped tensor of `heads` heads. */
static inline int64_t rg_apply_head_row(const ropegrad_rope_apply_shape *s, int64_t heads, int64_t b, int64_t h,
                                        int64_t si)
{
    if (s->layout == ROPEGRAD_LAYOUT_BSHD) return ((b * s->seq_len + si) * heads + h) * s->head_dim;
    return ((b * heads + h) * s->seq_len + si) * s->head_dim;
}

/* Element offset of the cos/sin row of (b, s). */
static inline int64_t rg_apply_cs_row(const ropegrad_rope_apply_shape *s, int64_t b, int64_t si)
{
    return b * s->cos_sin_batch_stride + si * s->head_dim;
}

/* The paths iterate over cos/sin rows, so a row's cos and sin are read once
 * and its grad_cos / grad_sin are written by one thread: B*S rows when each
 * batch has its own, S when they share one (each row then covers every batch).
 * Row r is position r % S of batches [b0, b1). */
static inline int64_t rg_apply_cs_rows(const ropegrad_rope_apply_shape *s)
{
    return s->cos_sin_batch_stride ? s->batch_size * s->seq_len : s->seq_len;
}

static inline void rg_apply_row_batches(const ropegrad_rope_apply_shape *s, int64_t r, int64_t *b0, int64_t *b1)
{
    *b0 = s->cos_sin_batch_stride ? r / s->seq_len : 0;
    *b1 = s->cos_sin_batch_stride ? *b0 + 1 : s->batch_size;
}

/* The walk every path makes over cos/sin row r: for each batch it covers,
 * batch(ctx, offset of its cos/sin row), then head(ctx, t, offset) for each
 * head row of q (t = 0) and of k (t = 1) at that position. */
typedef void (*rg_apply_batch_fn)(void *ctx, int64_t cs_off);
typedef void (*rg_apply_head_fn)(void *ctx, int t, int64_t off);

static inline void rg_apply_walk_row(const ropegrad_rope_apply_shape *s, int64_t r, rg_apply_batch_fn batch,
                                     rg_apply_head_fn head, void *ctx)
{
    const int64_t si = r % s->seq_len, heads[2] = {s->num_heads, s->num_kv_heads};
    int64_t b0, b1;
    rg_apply_row_batches(s, r, &b0, &b1);
    for (int64_t b = b0; b < b1; b++) {
        batch(ctx, rg_apply_cs_row(s, b, si));
        for (int t = 0; t < 2; t++)
            for (int64_t h = 0; h < heads[t]; h++) head(ctx, t, rg_apply_head_row(s, heads[t], b, h, si));
    }
}

/* Elements of q (heads = num_heads) or k; of cos/sin as addressed; of grad_cos. */
static inline int64_t rg_apply_heads_elems(const ropegrad_rope_apply_shape *s, int64_t heads)
{
    return s->batch_size * heads * s->seq_len * s->head_dim;
}

static inline int64_t rg_apply_grad_cs_elems(const ropegrad_rope_apply_shape *s)
{
    return rg_apply_cs_rows(s) * s->head_dim;
}

/* Checks sizes, head_dim, heads, layout, dtypes, stride and overflow. */
int rg_apply_validate_shape(const ropegrad_rope_apply_shape *s);

/* The references' checks: the inputs only (they write doubles elsewhere);
 * the backward's needs q and k. */
int rg_apply_validate_reference(const ropegrad_rope_apply_problem *p);
int rg_apply_backward_validate_reference(const ropegrad_rope_apply_backward_problem *p);

/* ---- the CPU path's row conversions ---- */

/* float32 -> IEEE binary16 bits, nearest even (subnormals by the FPU's own
 * rounding, overflow to Inf, NaN kept quiet). */
static inline uint16_t rg_f16_rn(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    u &= 0x7fffffffu;
    if (u >= 0x47800000u) return (uint16_t)(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (u < 0x38800000u) {   /* adding 0.5 leaves the f16 subnormal in the low bits, rounded */
        float g;
        memcpy(&g, &u, sizeof g);
        g += 0.5f;
        memcpy(&u, &g, sizeof u);
        return (uint16_t)(sign | (u - 0x3f000000u));
    }
    const uint32_t odd = (u >> 13) & 1u;
    u += 0xc8000fffu + odd;   /* exponent 127 -> 15 bias, then round the 13 dropped bits */
    return (uint16_t)(sign | (u >> 13));
}

/* float32 -> bf16 bits, nearest even, NaN kept. */
static inline uint16_t rg_bf16_rn_nan(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return rg_bf16_rn(f);
}

/* n elements of base (dtype dt) from element off, widened to dst. */
static inline void rg_apply_widen(const void *base, ropegrad_dtype dt, int64_t off, int64_t n, float *dst)
{
    if (dt == ROPEGRAD_F32) {
        memcpy(dst, (const float *)base + off, (size_t)n * sizeof(float));
        return;
    }
    const uint16_t *h = (const uint16_t *)base + off;
    if (dt == ROPEGRAD_BF16)
        for (int64_t i = 0; i < n; i++) dst[i] = ropegrad_bf16_to_float(h[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = ropegrad_f16_to_float(h[i]);
}

/* n floats of src rounded to dtype dt, to base from element off. */
static inline void rg_apply_narrow(const float *src, int64_t n, void *base, ropegrad_dtype dt, int64_t off)
{
    if (dt == ROPEGRAD_F32) {
        memcpy((float *)base + off, src, (size_t)n * sizeof(float));
        return;
    }
    uint16_t *h = (uint16_t *)base + off;
    if (dt == ROPEGRAD_BF16)
        for (int64_t i = 0; i < n; i++) h[i] = rg_bf16_rn_nan(src[i]);
    else
        for (int64_t i = 0; i < n; i++) h[i] = rg_f16_rn(src[i]);
}

#endif
