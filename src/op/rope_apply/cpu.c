/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- the CPU paths of the apply ops (L1/088 forward, L1/068
 * backward): OpenMP threads over cos/sin rows (rope_apply.h), each row's
 * heads in turn through float32 rows the compiler vectorizes (widen, rotate,
 * accumulate, narrow: contiguous, branch-free loops). A head's row is read
 * whole before its output row is written, so in place is safe. */
#include <stdint.h>

#include "rope_apply.h"

/* One of q and k as a path walks it. */
typedef struct cpu_tensor {
    const void *x, *g;   /* the forward's input; the backward's incoming gradient */
    void *out;           /* 088's rotated tensor, 068's gradient */
    int64_t heads;
} cpu_tensor;

/* o = x*c + sign*rotate_half(x)*n: sign +1 is 088's out, -1 068's grad_x. */
static void rotate_row(const float *restrict x, const float *restrict c, const float *restrict n, float sign,
                       int64_t H, float *restrict o)
{
    for (int64_t d = 0; d < H; d++) {
        o[d] = x[d] * c[d] - sign * x[d + H] * n[d];
        o[d + H] = x[d + H] * c[d + H] + sign * x[d] * n[d + H];
    }
}

/* grad_cos += g*x and grad_sin += g*rotate_half(x) over one head's row. */
static void accumulate_row(const float *restrict g, const float *restrict x, int64_t H, float *restrict gc,
                           float *restrict gs)
{
    for (int64_t d = 0; d < H; d++) {
        gc[d] += g[d] * x[d];
        gc[d + H] += g[d + H] * x[d + H];
        gs[d] -= g[d] * x[d + H];
        gs[d + H] += g[d + H] * x[d];
    }
}

/* One cos/sin row being computed: the tensors, the row's cos and sin, and
 * (backward) its grad_cos / grad_sin sums (NULL: not wanted). */
typedef struct cpu_row {
    const ropegrad_rope_apply_shape *s;
    const void *cos, *sin;
    cpu_tensor ts[2];    /* q's and k's */
    float *gc, *gs;
    float c[ROPEGRAD_MAX_HEAD_DIM], n[ROPEGRAD_MAX_HEAD_DIM];
} cpu_row;

static void load_cos_sin(void *ctx, int64_t cs_off)
{
    cpu_row *w = ctx;
    rg_apply_widen(w->cos, w->s->cos_sin_dtype, cs_off, w->s->head_dim, w->c);
    rg_apply_widen(w->sin, w->s->cos_sin_dtype, cs_off, w->s->head_dim, w->n);
}

static void forward_head(void *ctx, int ti, int64_t off)
{
    cpu_row *w = ctx;
    const cpu_tensor *t = &w->ts[ti];
    float x[ROPEGRAD_MAX_HEAD_DIM], o[ROPEGRAD_MAX_HEAD_DIM];
    const int64_t D = w->s->head_dim;
    rg_apply_widen(t->x, w->s->dtype, off, D, x);
    rotate_row(x, w->c, w->n, 1.0f, D / 2, o);
    rg_apply_narrow(o, D, t->out, w->s->dtype, off);
}

static void forward_rows(const void *ctx, int64_t r0, int64_t r1)
{
    const ropegrad_rope_apply_problem *p = ctx;
    const ropegrad_rope_apply_shape *s = &p->shape;
    cpu_row w = {.s = s, .cos = p->cos, .sin = p->sin};
    w.ts[0] = (cpu_tensor){p->q, NULL, p->q_out, s->num_heads};
    w.ts[1] = (cpu_tensor){p->k, NULL, p->k_out, s->num_kv_heads};
    for (int64_t r = r0; r < r1; r++) rg_apply_walk_row(s, r, load_cos_sin, forward_head, &w);
}

/* Elements a cos/sin row's work touches, for rg_cpu_parallel_rows' chunking. */
static int64_t row_work(const ropegrad_rope_apply_shape *s)
{
    const int64_t batches = s->cos_sin_batch_stride ? 1 : s->batch_size;
    return batches * (s->num_heads + s->num_kv_heads) * s->head_dim;
}

int ropegrad_rope_apply_cpu(const ropegrad_rope_apply_problem *p, int num_threads)
{
    int rc = ropegrad_rope_apply_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    rg_cpu_parallel_rows(rg_apply_cs_rows(&p->shape), row_work(&p->shape), num_threads, forward_rows, p);
    return ROPEGRAD_OK;
}

static void backward_head(void *ctx, int ti, int64_t off)
{
    cpu_row *w = ctx;
    const cpu_tensor *t = &w->ts[ti];
    float x[ROPEGRAD_MAX_HEAD_DIM], g[ROPEGRAD_MAX_HEAD_DIM], o[ROPEGRAD_MAX_HEAD_DIM];
    const int64_t D = w->s->head_dim;
    rg_apply_widen(t->g, w->s->dtype, off, D, g);
    if (w->gc) {
        rg_apply_widen(t->x, w->s->dtype, off, D, x);
        accumulate_row(g, x, D / 2, w->gc, w->gs);
    }
    rotate_row(g, w->c, w->n, -1.0f, D / 2, o);
    rg_apply_narrow(o, D, t->out, w->s->dtype, off);
}

static void backward_rows(const void *ctx, int64_t r0, int64_t r1)
{
    const ropegrad_rope_apply_backward_problem *p = ctx;
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t D = s->head_dim;
    float gc[ROPEGRAD_MAX_HEAD_DIM], gs[ROPEGRAD_MAX_HEAD_DIM];
    cpu_row w = {.s = s, .cos = p->cos, .sin = p->sin, .gc = p->grad_cos ? gc : NULL, .gs = gs};
    w.ts[0] = (cpu_tensor){p->q, p->grad_q_out, p->grad_q, s->num_heads};
    w.ts[1] = (cpu_tensor){p->k, p->grad_k_out, p->grad_k, s->num_kv_heads};
    for (int64_t r = r0; r < r1; r++) {
        for (int64_t d = 0; d < D; d++) gc[d] = gs[d] = 0.0f;
        rg_apply_walk_row(s, r, load_cos_sin, backward_head, &w);
        if (!p->grad_cos) continue;
        rg_apply_narrow(gc, D, p->grad_cos, s->cos_sin_dtype, r * D);
        rg_apply_narrow(gs, D, p->grad_sin, s->cos_sin_dtype, r * D);
    }
}

int ropegrad_rope_apply_backward_cpu(const ropegrad_rope_apply_backward_problem *p, int num_threads)
{
    int rc = ropegrad_rope_apply_backward_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    rg_cpu_parallel_rows(rg_apply_cs_rows(&p->shape), row_work(&p->shape), num_threads, backward_rows, p);
    return ROPEGRAD_OK;
}
