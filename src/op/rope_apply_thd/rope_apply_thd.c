/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_thd.c -- validation of the packed-sequence table ops (forward
 * and backward share it: rope_apply_thd.h). */
#include <stdint.h>

#include "rope_apply_thd.h"

/* q, k, cos, sin, cu_seqlens (or position_ids), q_out, k_out. */
static int spans(const ropegrad_rope_apply_thd_problem *p, rg_apply_span t[7])
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    const size_t ce = ropegrad_dtype_size(s->cos_sin_dtype);
    const size_t table = (size_t)p->table_len * (size_t)rg_apply_rotary_dim(s) * ce;
    t[0] = rg_apply_heads_span(s, p->q, s->num_heads);
    t[1] = rg_apply_heads_span(s, p->k, s->num_kv_heads);
    t[2] = (rg_apply_span){p->cos, table, ce};
    t[3] = (rg_apply_span){p->sin, table, ce};
    if (p->cu_seqlens)
        t[4] = (rg_apply_span){p->cu_seqlens, (size_t)(p->num_seqs + 1) * sizeof(int32_t), sizeof(int32_t)};
    else
        t[4] = (rg_apply_span){p->position_ids, (size_t)s->seq_len * (size_t)(p->position_bits / 8),
                               (size_t)(p->position_bits / 8)};
    t[5] = rg_apply_heads_span(s, p->q_out, s->num_heads);
    t[6] = rg_apply_heads_span(s, p->k_out, s->num_kv_heads);
    return 7;
}

static int validate_description(const ropegrad_rope_apply_thd_problem *p)
{
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    const ropegrad_rope_apply_shape *s = &p->shape;
    int rc = rg_apply_validate_shape(s);
    if (rc) return rc;
    /* packed sequences: [total_tokens, heads, head_dim], one table shared by every token */
    if (s->layout != ROPEGRAD_LAYOUT_BSHD || s->batch_size != 1 || s->cos_sin_batch_stride != 0)
        return ROPEGRAD_ERR_UNSUPPORTED;
    if (p->table_len < 1) return ROPEGRAD_ERR_BAD_SIZE;
    if (p->table_len > INT64_MAX / 4 / rg_apply_rotary_dim(s)) return ROPEGRAD_ERR_OVERFLOW;
    if (p->cu_seqlens) {   /* token indices in int32, as cu_seqlens holds them */
        if (p->num_seqs < 1) return ROPEGRAD_ERR_BAD_SIZE;
        if (s->seq_len > INT32_MAX || p->num_seqs >= INT32_MAX) return ROPEGRAD_ERR_OVERFLOW;
    } else if (p->position_bits != 32 && p->position_bits != 64) {
        return ROPEGRAD_ERR_BAD_DTYPE;
    }
    if (!p->q || !p->k || !p->cos || !p->sin || (!p->cu_seqlens && !p->position_ids)) return ROPEGRAD_ERR_NULL_POINTER;
    return ROPEGRAD_OK;
}

int rg_thd_validate(const ropegrad_rope_apply_thd_problem *p, int outputs)
{
    int rc = validate_description(p);
    if (rc) return rc;
    if (outputs && (!p->q_out || !p->k_out)) return ROPEGRAD_ERR_NULL_OUTPUT;
    rg_apply_span t[7];
    const int n = spans(p, t);
    if (rg_apply_misaligned(t, outputs ? n : 5)) return ROPEGRAD_ERR_MISALIGNED;
    if (outputs && (rg_apply_output_overlaps(&t[5], t, n, 0) || rg_apply_output_overlaps(&t[6], t, n, 1)))
        return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

int rg_thd_check_positions(const ropegrad_rope_apply_thd_problem *p)
{
    if (p->cu_seqlens) {
        if (p->cu_seqlens[0] != 0 || p->cu_seqlens[p->num_seqs] != p->shape.seq_len) return ROPEGRAD_ERR_BAD_SIZE;
        for (int64_t j = 0; j < p->num_seqs; j++) {
            if (p->cu_seqlens[j + 1] < p->cu_seqlens[j]) return ROPEGRAD_ERR_BAD_SIZE;
            if (p->cu_seqlens[j + 1] - p->cu_seqlens[j] > p->table_len) return ROPEGRAD_ERR_BAD_SIZE;
        }
        return ROPEGRAD_OK;
    }
    for (int64_t t = 0; t < p->shape.seq_len; t++) {
        const int64_t pos = rg_thd_position(p, t);
        if (pos < 0 || pos >= p->table_len) return ROPEGRAD_ERR_BAD_SIZE;
    }
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_thd_validate(const ropegrad_rope_apply_thd_problem *p)
{
    return rg_thd_validate(p, 1);
}
