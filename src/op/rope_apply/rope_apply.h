/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply.h -- what the apply ops' files share (088 forward here, 068
 * backward in src/op/rope_apply_backward/; not public): where a head's row
 * and a cos/sin row start, the rows the paths iterate, the checks, and the
 * rows the CPU paths and the references compute. */
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

/* rotary_dim with 0 read as head_dim: the columns of a cos/sin row. */
static inline int64_t rg_apply_rotary_dim(const ropegrad_rope_apply_shape *s)
{
    return s->rotary_dim ? s->rotary_dim : s->head_dim;
}

/* 1 for the suites' case, which the fast kernels take: rotate-half over the whole row. */
static inline int rg_apply_default_style(const ropegrad_rope_apply_shape *s)
{
    return s->style == ROPEGRAD_ROTARY_HALF && rg_apply_rotary_dim(s) == s->head_dim;
}

/* Element offset of the cos/sin row of (b, s). */
static inline int64_t rg_apply_cs_row(const ropegrad_rope_apply_shape *s, int64_t b, int64_t si)
{
    return b * s->cos_sin_batch_stride + si * rg_apply_rotary_dim(s);
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
    return rg_apply_cs_rows(s) * rg_apply_rotary_dim(s);
}

/* Checks sizes, head_dim, heads, layout, dtypes, style, rotary_dim, stride and overflow. */
int rg_apply_validate_shape(const ropegrad_rope_apply_shape *s);

/* A tensor as the checks see it: where, how many bytes, and its element size. */
typedef struct rg_apply_span {
    const void *p;
    size_t bytes, align;
} rg_apply_span;

/* A q- or k-shaped tensor of `heads` heads; cos or sin as addressed; grad_cos or grad_sin. */
rg_apply_span rg_apply_heads_span(const ropegrad_rope_apply_shape *s, const void *p, int64_t heads);
rg_apply_span rg_apply_cs_span(const ropegrad_rope_apply_shape *s, const void *p);
rg_apply_span rg_apply_grad_cs_span(const ropegrad_rope_apply_shape *s, const void *p);
/* 1 when a non-NULL tensor of t[0..n) is not aligned to its element size. */
int rg_apply_misaligned(const rg_apply_span *t, int n);
/* Output o overlaps one of the tensors t[0..n) other than itself, or other
 * than t[same] when it is exactly that tensor (in place; same < 0: none). */
int rg_apply_output_overlaps(const rg_apply_span *o, const rg_apply_span *t, int n, int same);

/* The references' checks: the inputs only (they write doubles elsewhere);
 * the backward's (rope_apply_backward.c) needs q and k. */
int rg_apply_validate_reference(const ropegrad_rope_apply_problem *p);
int rg_apply_backward_validate_reference(const ropegrad_rope_apply_backward_problem *p);

/* ---- the float64 references' rows (reference.c, rope_apply_backward/reference.c) ---- */

/* One of q and k as a reference walks it: its tensors, its heads, and where
 * its values start in the reference's output. */
typedef struct rg_apply_ref_tensor {
    const void *x, *g;   /* the forward's input; the backward's incoming gradient (NULL in the forward) */
    int64_t heads, out_base;
} rg_apply_ref_tensor;

/* One cos/sin row being computed: the tensors, the row's cos and sin, and
 * (backward) its grad_cos / grad_sin sums. */
typedef struct rg_apply_ref_row {
    const ropegrad_rope_apply_shape *s;
    const void *cos, *sin;
    rg_apply_ref_tensor ts[2];    /* q's and k's */
    double *out, *gc, *gs;
    double c[ROPEGRAD_MAX_HEAD_DIM], n[ROPEGRAD_MAX_HEAD_DIM];
} rg_apply_ref_row;

/* n elements of base (dtype dt) from element off, widened exactly to dst. */
static inline void rg_apply_load_row_f64(const void *base, ropegrad_dtype dt, int64_t off, int64_t n, double *dst)
{
    for (int64_t i = 0; i < n; i++) dst[i] = (double)ropegrad_element_to_float(base, dt, off + i);
}

/* o = x*c + sign*rotate_half(x)*n: sign +1 is 088's out, -1 068's grad_x. */
static inline void rg_apply_rotate_row_f64(const double *x, const double *c, const double *n, double sign, int64_t H,
                                           double *o)
{
    for (int64_t d = 0; d < H; d++) {
        o[d] = x[d] * c[d] - sign * x[d + H] * n[d];
        o[d + H] = x[d + H] * c[d + H] + sign * x[d] * n[d + H];
    }
}

/* The interleaved style's o = x*c + sign*rotate_pairs(x)*n over R = 2H
 * elements (pairs (2i, 2i+1), table column d for element d). */
static inline void rg_apply_rotate_pairs_f64(const double *x, const double *c, const double *n, double sign, int64_t H,
                                             double *o)
{
    for (int64_t i = 0; i < H; i++) {
        o[2 * i] = x[2 * i] * c[2 * i] - sign * x[2 * i + 1] * n[2 * i];
        o[2 * i + 1] = x[2 * i + 1] * c[2 * i + 1] + sign * x[2 * i] * n[2 * i + 1];
    }
}

/* The first R = 2H elements of a row rotated in style st. */
static inline void rg_apply_rotate_styled_f64(ropegrad_rotary_style st, const double *x, const double *c,
                                              const double *n, double sign, int64_t H, double *o)
{
    if (st == ROPEGRAD_ROTARY_INTERLEAVED) rg_apply_rotate_pairs_f64(x, c, n, sign, H, o);
    else rg_apply_rotate_row_f64(x, c, n, sign, H, o);
}

/* rg_apply_walk_row's batch callback: the row's cos and sin (ctx: an rg_apply_ref_row). */
void rg_apply_ref_load_cos_sin(void *ctx, int64_t cs_off);

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

/* ---- the CPU paths' rows (cpu.c, rope_apply_backward/cpu.c) ---- */

/* One of q and k as a CPU path walks it. */
typedef struct rg_apply_cpu_tensor {
    const void *x, *g;   /* the forward's input; the backward's incoming gradient */
    void *out;           /* 088's rotated tensor, 068's gradient */
    int64_t heads;
} rg_apply_cpu_tensor;

/* One cos/sin row being computed: the tensors, the row's cos and sin, and
 * (backward) its grad_cos / grad_sin sums (NULL: not wanted). */
typedef struct rg_apply_cpu_row {
    const ropegrad_rope_apply_shape *s;
    const void *cos, *sin;
    rg_apply_cpu_tensor ts[2];    /* q's and k's */
    float *gc, *gs;
    float c[ROPEGRAD_MAX_HEAD_DIM], n[ROPEGRAD_MAX_HEAD_DIM];
} rg_apply_cpu_row;

/* o = x*c + sign*rotate_half(x)*n: sign +1 is 088's out, -1 068's grad_x. */
static inline void rg_apply_rotate_row_f32(const float *restrict x, const float *restrict c, const float *restrict n,
                                           float sign, int64_t H, float *restrict o)
{
    for (int64_t d = 0; d < H; d++) {
        o[d] = x[d] * c[d] - sign * x[d + H] * n[d];
        o[d + H] = x[d + H] * c[d + H] + sign * x[d] * n[d + H];
    }
}

/* The interleaved style's o = x*c + sign*rotate_pairs(x)*n over R = 2H
 * elements (pairs (2i, 2i+1), table column d for element d). */
static inline void rg_apply_rotate_pairs_f32(const float *restrict x, const float *restrict c, const float *restrict n,
                                             float sign, int64_t H, float *restrict o)
{
    for (int64_t i = 0; i < H; i++) {
        o[2 * i] = x[2 * i] * c[2 * i] - sign * x[2 * i + 1] * n[2 * i];
        o[2 * i + 1] = x[2 * i + 1] * c[2 * i + 1] + sign * x[2 * i] * n[2 * i + 1];
    }
}

/* The first R = 2H elements of a row rotated in style st. */
static inline void rg_apply_rotate_styled_f32(ropegrad_rotary_style st, const float *restrict x,
                                              const float *restrict c, const float *restrict n, float sign, int64_t H,
                                              float *restrict o)
{
    if (st == ROPEGRAD_ROTARY_INTERLEAVED) rg_apply_rotate_pairs_f32(x, c, n, sign, H, o);
    else rg_apply_rotate_row_f32(x, c, n, sign, H, o);
}

/* Elements R..D-1 of a head's row at off copied from x to out (not when in place). */
static inline void rg_apply_copy_tail(const ropegrad_rope_apply_shape *s, const void *x, void *out, int64_t off)
{
    const int64_t R = rg_apply_rotary_dim(s);
    if (R == s->head_dim || out == x) return;
    const size_t e = ropegrad_dtype_size(s->dtype);
    memcpy((char *)out + (size_t)(off + R) * e, (const char *)x + (size_t)(off + R) * e, (size_t)(s->head_dim - R) * e);
}

/* rg_apply_walk_row's batch callback: the row's cos and sin (ctx: an rg_apply_cpu_row). */
void rg_apply_cpu_load_cos_sin(void *ctx, int64_t cs_off);

/* Elements a cos/sin row's work touches, for rg_cpu_parallel_rows' chunking. */
static inline int64_t rg_apply_row_work(const ropegrad_rope_apply_shape *s)
{
    const int64_t batches = s->cos_sin_batch_stride ? 1 : s->batch_size;
    return batches * (s->num_heads + s->num_kv_heads) * s->head_dim;
}

#endif
