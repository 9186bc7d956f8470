/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_backward.c -- validation of L1/068, the backward of applying
 * the rotary embedding: shapes, pointers, alignment, and which outputs may
 * alias which inputs (only grad_q / grad_k given grad_q_out's / grad_k_out's
 * pointer: in place). The shape's checks are 088's (rope_apply/rope_apply.h). */
#include <stdint.h>

#include "rope_apply/rope_apply.h"

/* 068: tensors grad_q_out, grad_k_out, q, k, cos, sin, grad_q, grad_k, grad_cos, grad_sin. */
static int backward_spans(const ropegrad_rope_apply_backward_problem *p, rg_apply_span t[10])
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    t[0] = rg_apply_heads_span(s, p->grad_q_out, s->num_heads);
    t[1] = rg_apply_heads_span(s, p->grad_k_out, s->num_kv_heads);
    t[2] = rg_apply_heads_span(s, p->q, s->num_heads);
    t[3] = rg_apply_heads_span(s, p->k, s->num_kv_heads);
    t[4] = rg_apply_cs_span(s, p->cos);
    t[5] = rg_apply_cs_span(s, p->sin);
    t[6] = rg_apply_heads_span(s, p->grad_q, s->num_heads);
    t[7] = rg_apply_heads_span(s, p->grad_k, s->num_kv_heads);
    t[8] = rg_apply_grad_cs_span(s, p->grad_cos);
    t[9] = rg_apply_grad_cs_span(s, p->grad_sin);
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
    rg_apply_span t[10];
    const int n = backward_spans(p, t);
    if (rg_apply_misaligned(t, n)) return ROPEGRAD_ERR_MISALIGNED;
    if (rg_apply_output_overlaps(&t[6], t, n, 0) || rg_apply_output_overlaps(&t[7], t, n, 1) ||
        rg_apply_output_overlaps(&t[8], t, n, -1) || rg_apply_output_overlaps(&t[9], t, n, -1))
        return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

int rg_apply_backward_validate_reference(const ropegrad_rope_apply_backward_problem *p)
{
    int rc = validate_backward_inputs(p, 1);
    if (rc) return rc;
    rg_apply_span t[10];
    backward_spans(p, t);
    return rg_apply_misaligned(t, 6) ? ROPEGRAD_ERR_MISALIGNED : ROPEGRAD_OK;
}
