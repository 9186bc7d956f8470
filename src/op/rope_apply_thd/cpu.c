/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- the CPU path of the packed-sequence table ops (forward and
 * backward, by the rotation's sign): OpenMP threads over tokens
 * (rg_cpu_parallel_rows); a token's table row widened once
 * (rg_apply_cpu_load_cos_sin) and used for every head of q and k at it; each
 * head's row through 088's own float32 row functions (widen, rotate in the
 * style, narrow; the rest of the row copied, in place: not touched) -- the
 * bits 088's and 068's CPU paths give on the gathered per-token table. */
#include <stdint.h>

#include "rope_apply_thd.h"

typedef struct thd_ctx {
    const ropegrad_rope_apply_thd_problem *p;
    float sign;
} thd_ctx;

static void token_rows(const void *vctx, int64_t r0, int64_t r1)
{
    const thd_ctx *ctx = vctx;
    const ropegrad_rope_apply_thd_problem *p = ctx->p;
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t R = rg_apply_rotary_dim(s);
    const void *in[2] = {p->q, p->k};
    void *out[2] = {p->q_out, p->k_out};
    const int64_t heads[2] = {s->num_heads, s->num_kv_heads};
    rg_apply_cpu_row row = {.s = s, .cos = p->cos, .sin = p->sin}, *w = &row;
    float x[ROPEGRAD_MAX_HEAD_DIM], o[ROPEGRAD_MAX_HEAD_DIM];
    for (int64_t t = r0; t < r1; t++) {
        rg_apply_cpu_load_cos_sin(w, rg_thd_position(p, t) * R);
        for (int ti = 0; ti < 2; ti++)
            for (int64_t h = 0; h < heads[ti]; h++) {
                const int64_t off = rg_apply_head_row(s, heads[ti], 0, h, t);
                rg_apply_widen(in[ti], s->dtype, off, R, x);
                rg_apply_rotate_styled_f32(s->style, x, w->c, w->n, ctx->sign, R / 2, o);
                rg_apply_narrow(o, R, out[ti], s->dtype, off);
                rg_apply_copy_tail(s, in[ti], out[ti], off);
            }
    }
}

int rg_thd_cpu(const ropegrad_rope_apply_thd_problem *p, float sign, int num_threads)
{
    int rc = rg_thd_validate(p, 1);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    if ((rc = rg_thd_check_positions(p)) != ROPEGRAD_OK) return rc;
    const thd_ctx ctx = {p, sign};
    const ropegrad_rope_apply_shape *s = &p->shape;
    rg_cpu_parallel_rows(s->seq_len, (s->num_heads + s->num_kv_heads) * s->head_dim, num_threads, token_rows, &ctx);
    return ROPEGRAD_OK;
}

int ropegrad_rope_apply_thd_cpu(const ropegrad_rope_apply_thd_problem *p, int num_threads)
{
    return rg_thd_cpu(p, 1.0f, num_threads);
}
