/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- the CPU path of L1/068: OpenMP threads over cos/sin rows
 * (rope_apply/rope_apply.h), each row's heads in turn through float32 rows
 * the compiler vectorizes (widen, rotate, accumulate, narrow: contiguous,
 * branch-free loops; the style's pairs over the first rotary_dim elements,
 * the rest copied), as 088's. A head's row is read whole before its
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

/* The interleaved style's sums: pairs (2i, 2i+1) of R = 2H elements. */
static void accumulate_pairs(const float *restrict g, const float *restrict x, int64_t H, float *restrict gc,
                             float *restrict gs)
{
    for (int64_t i = 0; i < H; i++) {
        gc[2 * i] += g[2 * i] * x[2 * i];
        gc[2 * i + 1] += g[2 * i + 1] * x[2 * i + 1];
        gs[2 * i] -= g[2 * i] * x[2 * i + 1];
        gs[2 * i + 1] += g[2 * i + 1] * x[2 * i];
    }
}

static void backward_head(void *ctx, int ti, int64_t off)
{
    rg_apply_cpu_row *w = ctx;
    const rg_apply_cpu_tensor *t = &w->ts[ti];
    float x[ROPEGRAD_MAX_HEAD_DIM], g[ROPEGRAD_MAX_HEAD_DIM], o[ROPEGRAD_MAX_HEAD_DIM];
    const int64_t R = rg_apply_rotary_dim(w->s);
    rg_apply_widen(t->g, w->s->dtype, off, R, g);
    if (w->gc) {
        rg_apply_widen(t->x, w->s->dtype, off, R, x);
        if (w->s->style == ROPEGRAD_ROTARY_INTERLEAVED) accumulate_pairs(g, x, R / 2, w->gc, w->gs);
        else accumulate_row(g, x, R / 2, w->gc, w->gs);
    }
    rg_apply_rotate_styled_f32(w->s->style, g, w->c, w->n, -1.0f, R / 2, o);
    rg_apply_narrow(o, R, t->out, w->s->dtype, off);
    rg_apply_copy_tail(w->s, t->g, t->out, off);
}

static void backward_rows(const void *ctx, int64_t r0, int64_t r1)
{
    const ropegrad_rope_apply_backward_problem *p = ctx;
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t D = rg_apply_rotary_dim(s);   /* grad_cos / grad_sin columns */
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
