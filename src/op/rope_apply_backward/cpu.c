/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- the CPU path of L1/068: OpenMP threads over cos/sin rows
 * (rope_apply/rope_apply.h), each row's heads in turn through float32 rows
 * the compiler vectorizes (widen, rotate, accumulate, narrow: contiguous,
 * branch-free loops), as 088's. A head's row is read whole before its
 * gradient row is written, so in place is safe. */
#include <stdint.h>

#include "rope_apply/rope_apply.h"

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

static void backward_head(void *ctx, int ti, int64_t off)
{
    rg_apply_cpu_row *w = ctx;
    const rg_apply_cpu_tensor *t = &w->ts[ti];
    float x[ROPEGRAD_MAX_HEAD_DIM], g[ROPEGRAD_MAX_HEAD_DIM], o[ROPEGRAD_MAX_HEAD_DIM];
    const int64_t D = w->s->head_dim;
    rg_apply_widen(t->g, w->s->dtype, off, D, g);
    if (w->gc) {
        rg_apply_widen(t->x, w->s->dtype, off, D, x);
        accumulate_row(g, x, D / 2, w->gc, w->gs);
    }
    rg_apply_rotate_row_f32(g, w->c, w->n, -1.0f, D / 2, o);
    rg_apply_narrow(o, D, t->out, w->s->dtype, off);
}

static void backward_rows(const void *ctx, int64_t r0, int64_t r1)
{
    const ropegrad_rope_apply_backward_problem *p = ctx;
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t D = s->head_dim;
    float gc[ROPEGRAD_MAX_HEAD_DIM], gs[ROPEGRAD_MAX_HEAD_DIM];
    rg_apply_cpu_row w = {.s = s, .cos = p->cos, .sin = p->sin, .gc = p->grad_cos ? gc : NULL, .gs = gs};
    w.ts[0] = (rg_apply_cpu_tensor){p->q, p->grad_q_out, p->grad_q, s->num_heads};
    w.ts[1] = (rg_apply_cpu_tensor){p->k, p->grad_k_out, p->grad_k, s->num_kv_heads};
    for (int64_t r = r0; r < r1; r++) {
        for (int64_t d = 0; d < D; d++) gc[d] = gs[d] = 0.0f;
        rg_apply_walk_row(s, r, rg_apply_cpu_load_cos_sin, backward_head, &w);
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
    rg_cpu_parallel_rows(rg_apply_cs_rows(&p->shape), rg_apply_row_work(&p->shape), num_threads, backward_rows, p);
    return ROPEGRAD_OK;
}
