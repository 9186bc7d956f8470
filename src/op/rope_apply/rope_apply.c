/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply.c -- validation of the apply ops (L1/088 forward, L1/068
 * backward): shapes, pointers, alignment, and which outputs may alias which
 * inputs (only an output given its own input's pointer: in place). */
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
    if (s->cos_sin_batch_stride < 0) return ROPEGRAD_ERR_BAD_STRIDE;
    /* Every element offset (of q, k, both together, and cos/sin), times 4 bytes, fits in int64. */
    const int64_t row_bytes = s->head_dim * 4;
    if (s->num_heads > INT64_MAX / 2 - s->num_kv_heads) return ROPEGRAD_ERR_OVERFLOW;
    const int64_t heads = s->num_heads + s->num_kv_heads;
    if (s->batch_size > INT64_MAX / s->seq_len) return ROPEGRAD_ERR_OVERFLOW;
    const int64_t rows = s->batch_size * s->seq_len;
    if (heads > INT64_MAX / rows || rows * heads > INT64_MAX / row_bytes) return ROPEGRAD_ERR_OVERFLOW;
    if ((uint64_t)(rows * heads * row_bytes) > (uint64_t)SIZE_MAX) return ROPEGRAD_ERR_OVERFLOW;
    if (s->cos_sin_batch_stride && s->cos_sin_batch_stride != s->seq_len * s->head_dim) return ROPEGRAD_ERR_UNSUPPORTED;
    return ROPEGRAD_OK;
}

/* A tensor as the checks see it: where, how many bytes, and its element size. */
typedef struct span {
    const void *p;
    size_t bytes, align;
} span;

static span heads_span(const ropegrad_rope_apply_shape *s, const void *p, int64_t heads)
{
    const size_t e = ropegrad_dtype_size(s->dtype);
    return (span){p, (size_t)rg_apply_heads_elems(s, heads) * e, e};
}

static span cs_span(const ropegrad_rope_apply_shape *s, const void *p)
{
    const size_t e = ropegrad_dtype_size(s->cos_sin_dtype);
    const int64_t elems = (s->batch_size - 1) * s->cos_sin_batch_stride + s->seq_len * s->head_dim;
    return (span){p, (size_t)elems * e, e};
}

static span grad_cs_span(const ropegrad_rope_apply_shape *s, const void *p)
{
    const size_t e = ropegrad_dtype_size(s->cos_sin_dtype);
    return (span){p, (size_t)rg_apply_grad_cs_elems(s) * e, e};
}

static int misaligned(const span *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i].p && (uintptr_t)t[i].p % t[i].align) return 1;
    return 0;
}

/* Output o overlaps one of the tensors t[0..n) other than itself, or other
 * than t[same] when it is exactly that tensor (in place; same < 0: none). */
static int output_overlaps(const span *o, const span *t, int n, int same)
{
    for (int i = 0; i < n; i++) {
        if (t + i == o || (i == same && t[i].p == o->p)) continue;
        if (rg_ranges_overlap(o->p, o->bytes, t[i].p, t[i].bytes)) return 1;
    }
    return 0;
}

/* 088: tensors q, k, cos, sin, q_out, k_out. */
static int forward_spans(const ropegrad_rope_apply_problem *p, span t[6])
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    t[0] = heads_span(s, p->q, s->num_heads);
    t[1] = heads_span(s, p->k, s->num_kv_heads);
    t[2] = cs_span(s, p->cos);
    t[3] = cs_span(s, p->sin);
    t[4] = heads_span(s, p->q_out, s->num_heads);
    t[5] = heads_span(s, p->k_out, s->num_kv_heads);
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
    span t[6];
    const int n = forward_spans(p, t);
    if (misaligned(t, n)) return ROPEGRAD_ERR_MISALIGNED;
    if (output_overlaps(&t[4], t, n, 0) || output_overlaps(&t[5], t, n, 1)) return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

/* The reference's check: the inputs only (it writes doubles elsewhere). */
int rg_apply_validate_reference(const ropegrad_rope_apply_problem *p)
{
    int rc = validate_forward_inputs(p);
    if (rc) return rc;
    span t[6];
    forward_spans(p, t);
    return misaligned(t, 4) ? ROPEGRAD_ERR_MISALIGNED : ROPEGRAD_OK;
}

/* 068: tensors grad_q_out, grad_k_out, q, k, cos, sin, grad_q, grad_k, grad_cos, grad_sin. */
static int backward_spans(const ropegrad_rope_apply_backward_problem *p, span t[10])
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    t[0] = heads_span(s, p->grad_q_out, s->num_heads);
    t[1] = heads_span(s, p->grad_k_out, s->num_kv_heads);
    t[2] = heads_span(s, p->q, s->num_heads);
    t[3] = heads_span(s, p->k, s->num_kv_heads);
    t[4] = cs_span(s, p->cos);
    t[5] = cs_span(s, p->sin);
    t[6] = heads_span(s, p->grad_q, s->num_heads);
    t[7] = heads_span(s, p->grad_k, s->num_kv_heads);
    t[8] = grad_cs_span(s, p->grad_cos);
    t[9] = grad_cs_span(s, p->grad_sin);
    return 10;
}

static int validate_backward_inputs(const ropegrad_rope_apply_backward_problem *p, int need_qk)
{
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    int rc = rg_apply_validate_shape(&p->shape);
    if (rc) return rc;
    if (!p->grad_q_out || !p->grad_k_out || !p->cos || !p->sin) return ROPEGRAD_ERR_NULL_POINTER;
    if (need_qk && (!p->q || !p->k)) return ROPEGRAD_ERR_NULL_POINTER;
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_backward_validate(const ropegrad_rope_apply_backward_problem *p)
{
    int rc = validate_backward_inputs(p, p && (p->grad_cos || p->grad_sin));
    if (rc) return rc;
    if (!p->grad_q || !p->grad_k || !p->grad_cos != !p->grad_sin) return ROPEGRAD_ERR_NULL_OUTPUT;
    span t[10];
    const int n = backward_spans(p, t);
    if (misaligned(t, n)) return ROPEGRAD_ERR_MISALIGNED;
    if (output_overlaps(&t[6], t, n, 0) || output_overlaps(&t[7], t, n, 1) || output_overlaps(&t[8], t, n, -1) ||
        output_overlaps(&t[9], t, n, -1))
        return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

int rg_apply_backward_validate_reference(const ropegrad_rope_apply_backward_problem *p)
{
    int rc = validate_backward_inputs(p, 1);
    if (rc) return rc;
    span t[10];
    backward_spans(p, t);
    return misaligned(t, 6) ? ROPEGRAD_ERR_MISALIGNED : ROPEGRAD_OK;
}
