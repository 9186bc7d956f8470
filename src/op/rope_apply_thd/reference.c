/* SPDX-License-Identifier: Apache-2.0 */
/* reference.c -- the float64 reference of the packed-sequence table ops
 * (forward and backward, by the rotation's sign): token t's table row
 * (rg_thd_position) widened exactly, each head's row too, the rotation in
 * double (088's reference rows, rope_apply/rope_apply.h); one OpenMP thread
 * per token. */
#include <stdint.h>

#include "rope_apply_thd.h"

static void token_row(const ropegrad_rope_apply_thd_problem *p, double sign, int64_t t, double *out)
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t D = s->head_dim, R = rg_apply_rotary_dim(s);
    rg_apply_ref_row row = {.s = s, .cos = p->cos, .sin = p->sin, .out = out}, *w = &row;
    rg_apply_ref_load_cos_sin(w, rg_thd_position(p, t) * R);
    const void *in[2] = {p->q, p->k};
    const int64_t heads[2] = {s->num_heads, s->num_kv_heads}, base[2] = {0, rg_apply_heads_elems(s, s->num_heads)};
    double x[ROPEGRAD_MAX_HEAD_DIM];
    for (int ti = 0; ti < 2; ti++)
        for (int64_t h = 0; h < heads[ti]; h++) {
            const int64_t off = rg_apply_head_row(s, heads[ti], 0, h, t);
            double *o = out + base[ti] + off;
            rg_apply_load_row_f64(in[ti], s->dtype, off, D, x);
            rg_apply_rotate_styled_f64(s->style, x, w->c, w->n, sign, R / 2, o);
            for (int64_t d = R; d < D; d++) o[d] = x[d];
        }
}

int rg_thd_reference(const ropegrad_rope_apply_thd_problem *p, float sign, double *out)
{
    int rc = rg_thd_validate(p, 0);
    if (rc) return rc;
    if (!out) return ROPEGRAD_ERR_NULL_OUTPUT;
    if ((rc = rg_thd_check_positions(p)) != ROPEGRAD_OK) return rc;
    const int64_t tokens = p->shape.seq_len;
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t t = 0; t < tokens; t++) token_row(p, (double)sign, t, out);
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_thd_reference(const ropegrad_rope_apply_thd_problem *p, double *out)
{
    return rg_thd_reference(p, 1.0f, out);
}
