/* SPDX-License-Identifier: Apache-2.0 */
/* reference.c -- the float64 reference of L1/068: every input widened
 * exactly, every product and sum in double, one OpenMP thread per cos/sin
 * row (rope_apply/rope_apply.h), as 088's. */
#include <stdint.h>

#include "rope_apply/rope_apply.h"

/* grad_cos += g*x and grad_sin += g*rotate(x) over one head's rotary part
 * (R = 2H elements; pairs (i, i+H) rotate-half, (2i, 2i+1) interleaved). */
static void accumulate_row(ropegrad_rotary_style st, const double *g, const double *x, int64_t H, double *gc,
                           double *gs)
{
    const int il = st == ROPEGRAD_ROTARY_INTERLEAVED;
    for (int64_t i = 0; i < H; i++) {
        const int64_t a = il ? 2 * i : i, b = il ? a + 1 : i + H;
        gc[a] += g[a] * x[a];
        gc[b] += g[b] * x[b];
        gs[a] -= g[a] * x[b];
        gs[b] += g[b] * x[a];
    }
}

static void backward_head(void *ctx, int ti, int64_t off)
{
    rg_apply_ref_row *w = ctx;
    const rg_apply_ref_tensor *t = &w->ts[ti];
    double x[ROPEGRAD_MAX_HEAD_DIM], g[ROPEGRAD_MAX_HEAD_DIM];
    const int64_t D = w->s->head_dim, R = rg_apply_rotary_dim(w->s);
    double *o = w->out + t->out_base + off;
    rg_apply_load_row_f64(t->g, w->s->dtype, off, D, g);
    rg_apply_load_row_f64(t->x, w->s->dtype, off, D, x);
    rg_apply_rotate_styled_f64(w->s->style, g, w->c, w->n, -1.0, R / 2, o);
    for (int64_t d = R; d < D; d++) o[d] = g[d];
    accumulate_row(w->s->style, g, x, R / 2, w->gc, w->gs);
}

static void backward_row(const ropegrad_rope_apply_backward_problem *p, int64_t r, double *out)
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t R = rg_apply_rotary_dim(s);
    const int64_t nq = rg_apply_heads_elems(s, s->num_heads), nk = rg_apply_heads_elems(s, s->num_kv_heads);
    rg_apply_ref_row w = {.s = s, .cos = p->cos, .sin = p->sin, .out = out};
    w.ts[0] = (rg_apply_ref_tensor){p->q, p->grad_q_out, s->num_heads, 0};
    w.ts[1] = (rg_apply_ref_tensor){p->k, p->grad_k_out, s->num_kv_heads, nq};
    w.gc = out + nq + nk + r * R;
    w.gs = w.gc + rg_apply_grad_cs_elems(s);
    for (int64_t d = 0; d < R; d++) w.gc[d] = w.gs[d] = 0.0;
    rg_apply_walk_row(s, r, rg_apply_ref_load_cos_sin, backward_head, &w);
}

int ropegrad_rope_apply_backward_reference(const ropegrad_rope_apply_backward_problem *p, double *out)
{
    int rc = rg_apply_backward_validate_reference(p);
    if (rc) return rc;
    if (!out) return ROPEGRAD_ERR_NULL_OUTPUT;
    const int64_t rows = rg_apply_cs_rows(&p->shape);
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t r = 0; r < rows; r++) backward_row(p, r, out);
    return ROPEGRAD_OK;
}
