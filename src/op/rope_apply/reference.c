/* SPDX-License-Identifier: Apache-2.0 */
/* reference.c -- the float64 reference of L1/088 (068's is
 * rope_apply_backward/reference.c): every input widened exactly, every
 * product and sum in double, one OpenMP thread per cos/sin row (rope_apply.h). */
#include <stdint.h>

#include "rope_apply.h"

void rg_apply_ref_load_cos_sin(void *ctx, int64_t cs_off)
{
    rg_apply_ref_row *w = ctx;
    const int64_t R = rg_apply_rotary_dim(w->s);
    rg_apply_load_row_f64(w->cos, w->s->cos_sin_dtype, cs_off, R, w->c);
    rg_apply_load_row_f64(w->sin, w->s->cos_sin_dtype, cs_off, R, w->n);
}

static void forward_head(void *ctx, int ti, int64_t off)
{
    rg_apply_ref_row *w = ctx;
    const rg_apply_ref_tensor *t = &w->ts[ti];
    double x[ROPEGRAD_MAX_HEAD_DIM], *o = w->out + t->out_base + off;
    const int64_t D = w->s->head_dim, R = rg_apply_rotary_dim(w->s);
    rg_apply_load_row_f64(t->x, w->s->dtype, off, D, x);
    rg_apply_rotate_styled_f64(w->s->style, x, w->c, w->n, 1.0, R / 2, o);
    for (int64_t d = R; d < D; d++) o[d] = x[d];
}

static void forward_row(const ropegrad_rope_apply_problem *p, int64_t r, double *out)
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    rg_apply_ref_row w = {.s = s, .cos = p->cos, .sin = p->sin, .out = out};
    w.ts[0] = (rg_apply_ref_tensor){p->q, NULL, s->num_heads, 0};
    w.ts[1] = (rg_apply_ref_tensor){p->k, NULL, s->num_kv_heads, rg_apply_heads_elems(s, s->num_heads)};
    rg_apply_walk_row(s, r, rg_apply_ref_load_cos_sin, forward_head, &w);
}

int ropegrad_rope_apply_reference(const ropegrad_rope_apply_problem *p, double *out)
{
    int rc = rg_apply_validate_reference(p);
    if (rc) return rc;
    if (!out) return ROPEGRAD_ERR_NULL_OUTPUT;
    const int64_t rows = rg_apply_cs_rows(&p->shape);
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t r = 0; r < rows; r++) forward_row(p, r, out);
    return ROPEGRAD_OK;
}
