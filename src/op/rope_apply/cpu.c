/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- the CPU path of L1/088 (068's, rope_apply_backward/cpu.c, walks
 * its rows the same way): OpenMP threads over cos/sin rows (rope_apply.h),
 * each row's heads in turn through float32 rows the compiler vectorizes
 * (widen, rotate, narrow: contiguous, branch-free loops; the style's pairs
 * over the first rotary_dim elements, the rest copied). A head's row is
 * read whole before its output row is written, so in place is safe. */
#include <stdint.h>

#include "rope_apply.h"

void rg_apply_cpu_load_cos_sin(void *ctx, int64_t cs_off)
{
    rg_apply_cpu_row *w = ctx;
    const int64_t R = rg_apply_rotary_dim(w->s);
    rg_apply_widen(w->cos, w->s->cos_sin_dtype, cs_off, R, w->c);
    rg_apply_widen(w->sin, w->s->cos_sin_dtype, cs_off, R, w->n);
}

static void forward_head(void *ctx, int ti, int64_t off)
{
    rg_apply_cpu_row *w = ctx;
    const rg_apply_cpu_tensor *t = &w->ts[ti];
    float x[ROPEGRAD_MAX_HEAD_DIM], o[ROPEGRAD_MAX_HEAD_DIM];
    const int64_t R = rg_apply_rotary_dim(w->s);
    rg_apply_widen(t->x, w->s->dtype, off, R, x);
    rg_apply_rotate_styled_f32(w->s->style, x, w->c, w->n, 1.0f, R / 2, o);
    rg_apply_narrow(o, R, t->out, w->s->dtype, off);
    rg_apply_copy_tail(w->s, t->x, t->out, off);
}

static void forward_rows(const void *ctx, int64_t r0, int64_t r1)
{
    const ropegrad_rope_apply_problem *p = ctx;
    const ropegrad_rope_apply_shape *s = &p->shape;
    rg_apply_cpu_row w = {.s = s, .cos = p->cos, .sin = p->sin};
    w.ts[0] = (rg_apply_cpu_tensor){p->q, NULL, p->q_out, s->num_heads};
    w.ts[1] = (rg_apply_cpu_tensor){p->k, NULL, p->k_out, s->num_kv_heads};
    for (int64_t r = r0; r < r1; r++) rg_apply_walk_row(s, r, rg_apply_cpu_load_cos_sin, forward_head, &w);
}

int ropegrad_rope_apply_cpu(const ropegrad_rope_apply_problem *p, int num_threads)
{
    int rc = ropegrad_rope_apply_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    rg_cpu_parallel_rows(rg_apply_cs_rows(&p->shape), rg_apply_row_work(&p->shape), num_threads, forward_rows, p);
    return ROPEGRAD_OK;
}
