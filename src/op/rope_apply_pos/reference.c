/* SPDX-License-Identifier: Apache-2.0 */
/* reference.c -- the float64 reference of the apply-from-positions ops
 * (forward and backward, by the rotation's sign): each cos/sin the value the
 * op defines (libm's double sin/cos of the float32 argument, times the scale,
 * rounded once to cos_sin_dtype), every input widened exactly, the rotation
 * in double; one OpenMP thread per token. */
#include <math.h>
#include <stdint.h>

#include "rope_apply_pos.h"

/* scale*cos(x) or scale*sin(x) (d) rounded once to cdt, as a double. */
static double round_to(ropegrad_dtype cdt, double d)
{
    if (cdt == ROPEGRAD_BF16) return (double)ropegrad_bf16_to_float(rg_bf16_rn_double(d));
    if (cdt == ROPEGRAD_F16) return (double)rg_pos_f16_rn_double(d);
    return (double)(float)d;
}

static void token_row(const ropegrad_rope_apply_pos_problem *p, double sign, int64_t t, double *out)
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t D = s->head_dim, R = rg_pos_rotary_dim(p), H = R / 2, b = t / s->seq_len, si = t % s->seq_len;
    const float pos = (float)rg_pos_position(p, t);
    double c[ROPEGRAD_MAX_HEAD_DIM / 2], n[ROPEGRAD_MAX_HEAD_DIM / 2], x[ROPEGRAD_MAX_HEAD_DIM];
    for (int64_t i = 0; i < H; i++) {
        const double a = (double)(pos * p->inv_freq[i]);   /* the float32 product */
        c[i] = round_to(s->cos_sin_dtype, (double)p->attention_scaling * cos(a));
        n[i] = round_to(s->cos_sin_dtype, (double)p->attention_scaling * sin(a));
    }
    const void *in[2] = {p->q, p->k};
    const int64_t heads[2] = {s->num_heads, s->num_kv_heads}, base[2] = {0, rg_apply_heads_elems(s, s->num_heads)};
    for (int ti = 0; ti < 2; ti++)
        for (int64_t h = 0; h < heads[ti]; h++) {
            const int64_t off = rg_apply_head_row(s, heads[ti], b, h, si);
            rg_apply_load_row_f64(in[ti], s->dtype, off, D, x);
            double *o = out + base[ti] + off;
            for (int64_t i = 0; i < H; i++) {
                const int64_t a = p->style == ROPEGRAD_ROTARY_HALF ? i : 2 * i;
                const int64_t bb = p->style == ROPEGRAD_ROTARY_HALF ? i + H : 2 * i + 1;
                o[a] = x[a] * c[i] - sign * x[bb] * n[i];
                o[bb] = x[bb] * c[i] + sign * x[a] * n[i];
            }
            for (int64_t d = R; d < D; d++) o[d] = x[d];
        }
}

int rg_pos_reference(const ropegrad_rope_apply_pos_problem *p, float sign, double *out)
{
    int rc = rg_pos_validate(p, 0);
    if (rc) return rc;
    if (!out) return ROPEGRAD_ERR_NULL_OUTPUT;
    if ((rc = rg_pos_check_seqlens(p)) != ROPEGRAD_OK) return rc;
    const int64_t tokens = p->shape.batch_size * p->shape.seq_len;
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t t = 0; t < tokens; t++) token_row(p, (double)sign, t, out);
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_pos_reference(const ropegrad_rope_apply_pos_problem *p, double *out)
{
    return rg_pos_reference(p, 1.0f, out);
}
