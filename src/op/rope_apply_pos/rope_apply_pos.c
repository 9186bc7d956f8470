/* SPDX-License-Identifier: Apache-2.0 */
/* rope_apply_pos.c -- validation of the apply-from-positions ops (forward and
 * backward share it: rope_apply_pos.h) and their cos/sin values on the CPU. */
#include <math.h>
#include <stdint.h>

#include "rope_apply_pos.h"

/* q, k, position_ids (or cu_seqlens), inv_freq, q_out, k_out. */
static int spans(const ropegrad_rope_apply_pos_problem *p, rg_apply_span t[6])
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    t[0] = rg_apply_heads_span(s, p->q, s->num_heads);
    t[1] = rg_apply_heads_span(s, p->k, s->num_kv_heads);
    if (p->cu_seqlens)
        t[2] = (rg_apply_span){p->cu_seqlens, (size_t)(p->num_seqs + 1) * sizeof(int32_t), sizeof(int32_t)};
    else
        t[2] = (rg_apply_span){p->position_ids, (size_t)(s->batch_size * s->seq_len) * (size_t)(p->position_bits / 8),
                               (size_t)(p->position_bits / 8)};
    t[3] = (rg_apply_span){p->inv_freq, (size_t)(rg_pos_rotary_dim(p) / 2) * sizeof(float), sizeof(float)};
    t[4] = rg_apply_heads_span(s, p->q_out, s->num_heads);
    t[5] = rg_apply_heads_span(s, p->k_out, s->num_kv_heads);
    return 6;
}

static int validate_description(const ropegrad_rope_apply_pos_problem *p)
{
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    const ropegrad_rope_apply_shape *s = &p->shape;
    if (s->cos_sin_batch_stride != 0) return ROPEGRAD_ERR_UNSUPPORTED;
    int rc = rg_apply_validate_shape(s);
    if (rc) return rc;
    if (p->style != ROPEGRAD_ROTARY_HALF && p->style != ROPEGRAD_ROTARY_INTERLEAVED) return ROPEGRAD_ERR_UNSUPPORTED;
    if (p->rotary_dim < 0 || p->rotary_dim > s->head_dim || (p->rotary_dim & 1)) return ROPEGRAD_ERR_BAD_HEAD_DIM;
    if (p->position_bits != 32 && p->position_bits != 64) return ROPEGRAD_ERR_BAD_DTYPE;
    if (!isfinite(p->attention_scaling)) return ROPEGRAD_ERR_NONFINITE_SCALE;
    if (p->cu_seqlens) {
        /* packed sequences: [total_tokens, heads, head_dim], token indices in int32 */
        if (s->layout != ROPEGRAD_LAYOUT_BSHD || s->batch_size != 1) return ROPEGRAD_ERR_UNSUPPORTED;
        if (p->num_seqs < 1) return ROPEGRAD_ERR_BAD_SIZE;
        if (s->seq_len > INT32_MAX || p->num_seqs >= INT32_MAX) return ROPEGRAD_ERR_OVERFLOW;
    }
    if (!p->q || !p->k || !p->inv_freq || (!p->cu_seqlens && !p->position_ids)) return ROPEGRAD_ERR_NULL_POINTER;
    return ROPEGRAD_OK;
}

int rg_pos_validate(const ropegrad_rope_apply_pos_problem *p, int outputs)
{
    int rc = validate_description(p);
    if (rc) return rc;
    if (outputs && (!p->q_out || !p->k_out)) return ROPEGRAD_ERR_NULL_OUTPUT;
    rg_apply_span t[6];
    const int n = spans(p, t);
    if (rg_apply_misaligned(t, outputs ? n : 4)) return ROPEGRAD_ERR_MISALIGNED;
    if (outputs && (rg_apply_output_overlaps(&t[4], t, n, 0) || rg_apply_output_overlaps(&t[5], t, n, 1)))
        return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

int rg_pos_check_seqlens(const ropegrad_rope_apply_pos_problem *p)
{
    if (!p->cu_seqlens) return ROPEGRAD_OK;
    if (p->cu_seqlens[0] != 0 || p->cu_seqlens[p->num_seqs] != p->shape.seq_len) return ROPEGRAD_ERR_BAD_SIZE;
    for (int64_t j = 0; j < p->num_seqs; j++)
        if (p->cu_seqlens[j + 1] < p->cu_seqlens[j]) return ROPEGRAD_ERR_BAD_SIZE;
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_pos_validate(const ropegrad_rope_apply_pos_problem *p)
{
    return rg_pos_validate(p, 1);
}

void rg_pos_cos_sin_row(const float *inv_freq, float pos, int64_t n, float scale, ropegrad_dtype cdt, float *c,
                        float *s)
{
    if (cdt == ROPEGRAD_BF16) {
        uint16_t cb[ROPEGRAD_MAX_HEAD_DIM / 2], sb[ROPEGRAD_MAX_HEAD_DIM / 2];
        rg_sincos_bf16_row(inv_freq, pos, n, scale, cb, sb, NULL);
        for (int64_t i = 0; i < n; i++) c[i] = ropegrad_bf16_to_float(cb[i]), s[i] = ropegrad_bf16_to_float(sb[i]);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const double x = (double)(inv_freq[i] * pos);   /* the float32 product */
        const double dc = (double)scale * cos(x), ds = (double)scale * sin(x);
        if (cdt == ROPEGRAD_F32) c[i] = (float)dc, s[i] = (float)ds;
        else c[i] = rg_pos_f16_rn_double(dc), s[i] = rg_pos_f16_rn_double(ds);
    }
}
