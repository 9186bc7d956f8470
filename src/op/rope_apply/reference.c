/* SPDX-License-Identifier: Apache-2.0 */
/* reference.c -- the float64 references of the apply ops (L1/088
 * forward, L1/068 backward): every input widened exactly, every product and
 * sum in double, one OpenMP thread per cos/sin row (rope_apply.h). */
#include <stdint.h>

#include "rope_apply.h"

/* One of q and k as a path walks it: its tensors, its heads, and where its
 * values start in the reference's output. */
typedef struct ref_tensor {
    const void *x, *g;   /* the forward's input; the backward's incoming gradient (NULL in the forward) */
    int64_t heads, out_base;
} ref_tensor;

static void load_row(const void *base, ropegrad_dtype dt, int64_t off, int64_t n, double *dst)
{
    for (int64_t i = 0; i < n; i++) dst[i] = (double)ropegrad_element_to_float(base, dt, off + i);
}

/* o = x*c + sign*rotate_half(x)*n: sign +1 is 088's out, -1 068's grad_x. */
static void rotate_row(const double *x, const double *c, const double *n, double sign, int64_t H, double *o)
{
    for (int64_t d = 0; d < H; d++) {
        o[d] = x[d] * c[d] - sign * x[d + H] * n[d];
        o[d + H] = x[d + H] * c[d + H] + sign * x[d] * n[d + H];
    }
}

/* One cos/sin row being computed: the tensors, the row's cos and sin, and
 * (backward) its grad_cos / grad_sin sums. */
typedef struct ref_row {
    const ropegrad_rope_apply_shape *s;
    const void *cos, *sin;
    ref_tensor ts[2];    /* q's and k's */
    double *out, *gc, *gs;
    double c[ROPEGRAD_MAX_HEAD_DIM], n[ROPEGRAD_MAX_HEAD_DIM];
} ref_row;

static void load_cos_sin(void *ctx, int64_t cs_off)
{
    ref_row *w = ctx;
    load_row(w->cos, w->s->cos_sin_dtype, cs_off, w->s->head_dim, w->c);
    load_row(w->sin, w->s->cos_sin_dtype, cs_off, w->s->head_dim, w->n);
}

static void forward_head(void *ctx, int ti, int64_t off)
{
    ref_row *w = ctx;
    const ref_tensor *t = &w->ts[ti];
    double x[ROPEGRAD_MAX_HEAD_DIM];
    load_row(t->x, w->s->dtype, off, w->s->head_dim, x);
    rotate_row(x, w->c, w->n, 1.0, w->s->head_dim / 2, w->out + t->out_base + off);
}

static void forward_row(const ropegrad_rope_apply_problem *p, int64_t r, double *out)
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    ref_row w = {.s = s, .cos = p->cos, .sin = p->sin, .out = out};
    w.ts[0] = (ref_tensor){p->q, NULL, s->num_heads, 0};
    w.ts[1] = (ref_tensor){p->k, NULL, s->num_kv_heads, rg_apply_heads_elems(s, s->num_heads)};
    rg_apply_walk_row(s, r, load_cos_sin, forward_head, &w);
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

/* grad_cos += g*x and grad_sin += g*rotate_half(x) over one head's row. */
static void accumulate_row(const double *g, const double *x, int64_t H, double *gc, double *gs)
{
    for (int64_t d = 0; d < H; d++) {
        gc[d] += g[d] * x[d];
        gc[d + H] += g[d + H] * x[d + H];
        gs[d] -= g[d] * x[d + H];
        gs[d + H] += g[d + H] * x[d];
    }
}

static void backward_head(void *ctx, int ti, int64_t off)
{
    ref_row *w = ctx;
    const ref_tensor *t = &w->ts[ti];
    double x[ROPEGRAD_MAX_HEAD_DIM], g[ROPEGRAD_MAX_HEAD_DIM];
    const int64_t D = w->s->head_dim;
    load_row(t->g, w->s->dtype, off, D, g);
    load_row(t->x, w->s->dtype, off, D, x);
    rotate_row(g, w->c, w->n, -1.0, D / 2, w->out + t->out_base + off);
    accumulate_row(g, x, D / 2, w->gc, w->gs);
}

static void backward_row(const ropegrad_rope_apply_backward_problem *p, int64_t r, double *out)
{
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t D = s->head_dim;
    const int64_t nq = rg_apply_heads_elems(s, s->num_heads), nk = rg_apply_heads_elems(s, s->num_kv_heads);
    ref_row w = {.s = s, .cos = p->cos, .sin = p->sin, .out = out};
    w.ts[0] = (ref_tensor){p->q, p->grad_q_out, s->num_heads, 0};
    w.ts[1] = (ref_tensor){p->k, p->grad_k_out, s->num_kv_heads, nq};
    w.gc = out + nq + nk + r * D;
    w.gs = w.gc + rg_apply_grad_cs_elems(s);
    for (int64_t d = 0; d < D; d++) w.gc[d] = w.gs[d] = 0.0;
    rg_apply_walk_row(s, r, load_cos_sin, backward_head, &w);
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
