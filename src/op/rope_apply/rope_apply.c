/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply.c -- validation of L1/088 and what 068's shares with it
 * (rope_apply.h): shapes, pointers, alignment, and which outputs may alias
 * which inputs (only an output given its own input's pointer: in place). */
#include <stdint.h>

#include "rope_apply.h"

static int valid_dtype(ropegrad_dtype dt)
{
    return ropegrad_dtype_size(dt) != 0;
}

int rg_apply_validate_shape(const ropegrad_rope_apply_shape *s)
{
    if (s->batch_size < 1 || s->seq_len < 1 || s->num_heads < 1 || s->num_kv_heads < 1) return ROPEGRAD_ERR_BAD_SIZE;
    if (s->head_dim < 2 || s->head_dim > ROPEGRAD_MAX_HEAD_DIM || (s->head_dim & 1)) return ROPEGRAD_ERR_BAD_HEAD_DIM;
    if (!valid_dtype(s->dtype) || !valid_dtype(s->cos_sin_dtype)) return ROPEGRAD_ERR_BAD_DTYPE;
    if (s->layout != ROPEGRAD_LAYOUT_BHSD && s->layout != ROPEGRAD_LAYOUT_BSHD) return ROPEGRAD_ERR_UNSUPPORTED;
    if (s->style != ROPEGRAD_ROTARY_HALF && s->style != ROPEGRAD_ROTARY_INTERLEAVED) return ROPEGRAD_ERR_UNSUPPORTED;
    if (s->rotary_dim < 0 || s->rotary_dim > s->head_dim || (s->rotary_dim & 1)) return ROPEGRAD_ERR_BAD_HEAD_DIM;
    if (s->cos_sin_batch_stride < 0) return ROPEGRAD_ERR_BAD_STRIDE;
    /* Every element offset (of q, k, both together, and cos/sin), times 4 bytes, fits in int64. */
    const int64_t row_bytes = s->head_dim * 4;
    if (s->num_heads > INT64_MAX / 2 - s->num_kv_heads) return ROPEGRAD_ERR_OVERFLOW;
    const int64_t heads = s->num_heads + s->num_kv_heads;
    if (s->batch_size > INT64_MAX / s->seq_len) return ROPEGRAD_ERR_OVERFLOW;
    const int64_t rows = s->batch_size * s->seq_len;
    if (heads > INT64_MAX / rows || rows * heads > INT64_MAX / row_bytes) return ROPEGRAD_ERR_OVERFLOW;
    if ((uint64_t)(rows * heads * row_bytes) > (uint64_t)SIZE_MAX) return ROPEGRAD_ERR_OVERFLOW;
    if (s->cos_sin_batch_stride && s->cos_sin_batch_stride != s->seq_len * rg_apply_rotary_dim(s))
        return ROPEGRAD_ERR_UNSUPPORTED;
    return ROPEGRAD_OK;
}

rg_apply_span rg_apply_heads_span(const ropegrad_rope_apply_shape *s, const void *p, int64_t heads)
{
    const size_t e = ropegrad_dtype_size(s->dtype);
    return (rg_apply_span){p, (size_t)rg_apply_heads_elems(s, heads) * e, e};
}

rg_apply_span rg_apply_cs_span(const ropegrad_rope_apply_shape *s, const void *p)
{
    const size_t e = ropegrad_dtype_size(s->cos_sin_dtype);
    const int64_t elems = (s->batch_size - 1) * s->cos_sin_batch_stride + s->seq_len * rg_apply_rotary_dim(s);
    return (rg_apply_span){p, (size_t)elems * e, e};
}

rg_apply_span rg_apply_grad_cs_span(const ropegrad_rope_apply_shape *s, const void *p)
{
    const size_t e = ropegrad_dtype_size(s->cos_sin_dtype);
    return (rg_apply_span){p, (size_t)rg_apply_grad_cs_elems(s) * e, e};
}

int rg_apply_misaligned(const rg_apply_span *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i].p && (uintptr_t)t[i].p % t[i].align) return 1;
    return 0;
}

int rg_apply_output_overlaps(const rg_apply_span *o, const rg_apply_span *t, int n, int same)
{
    for (int i = 0; i < n; i++) {
        if (t + i == o || (i == same && t[i].p == o->p)) continue;
        if (rg_ranges_overlap(o->p, o->bytes, t[i].p, t[i].bytes)) return 1;
    }
    return 0;
}

/* 088: tensors q, k, cos, sin, q_out, k_out. */
static int forward_spans(const ropegrad_rope_apply_problem *p, rg_apply_span t[6])
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    t[0] = rg_apply_heads_span(s, p->q, s->num_heads);
    t[1] = rg_apply_heads_span(s, p->k, s->num_kv_heads);
    t[2] = rg_apply_cs_span(s, p->cos);
    t[3] = rg_apply_cs_span(s, p->sin);
    t[4] = rg_apply_heads_span(s, p->q_out, s->num_heads);
    t[5] = rg_apply_heads_span(s, p->k_out, s->num_kv_heads);
    return 6;
}

static int validate_forward_inputs(const ropegrad_rope_apply_problem *p)
{
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    int rc = rg_apply_validate_shape(&p->shape);
    if (rc) return rc;
    if (!p->q || !p->k || !p->cos || !p->sin) return ROPEGRAD_ERR_NULL_POINTER;
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_validate(const ropegrad_rope_apply_problem *p)
{
    int rc = validate_forward_inputs(p);
    if (rc) return rc;
    if (!p->q_out || !p->k_out) return ROPEGRAD_ERR_NULL_OUTPUT;
    rg_apply_span t[6];
    const int n = forward_spans(p, t);
    if (rg_apply_misaligned(t, n)) return ROPEGRAD_ERR_MISALIGNED;
    if (rg_apply_output_overlaps(&t[4], t, n, 0) || rg_apply_output_overlaps(&t[5], t, n, 1)) return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

/* The reference's check: the inputs only (it writes doubles elsewhere). */
int rg_apply_validate_reference(const ropegrad_rope_apply_problem *p)
{
    int rc = validate_forward_inputs(p);
    if (rc) return rc;
    rg_apply_span t[6];
    forward_spans(p, t);
    return rg_apply_misaligned(t, 4) ? ROPEGRAD_ERR_MISALIGNED : ROPEGRAD_OK;
}
