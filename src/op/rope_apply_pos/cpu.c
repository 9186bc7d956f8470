/* SPDX-License-Identifier: Apache-2.0 */
/* cpu.c -- the CPU path of the apply-from-positions ops (forward and
 * backward, by the rotation's sign): OpenMP threads over tokens
 * (rg_cpu_parallel_rows); a token's cos/sin computed once (the sin/cos core of
 * the ISA chosen, rounded to cos_sin_dtype: rg_pos_cos_sin_row) and used for
 * every head of q and k at it; each head's row widened to float32, rotated by
 * 088's own row function (rotate-half) or the interleaved pairs' loop
 * (contiguous, branch-free: the compiler vectorizes them), narrowed once. A
 * row's rotary part is read whole before it is written, so in place is safe;
 * the rest of the row is copied byte for byte (in place: not touched). */
#include <stdint.h>
#include <string.h>

#include "rope_apply_pos.h"

typedef struct pos_ctx {
    const ropegrad_rope_apply_pos_problem *p;
    float sign;
} pos_ctx;

/* o = the interleaved pairs (2i, 2i+1) of x rotated: 088's arithmetic on them. */
static void rotate_interleaved(const float *restrict x, const float *restrict c, const float *restrict n, float sign,
                               int64_t H, float *restrict o)
{
    for (int64_t i = 0; i < H; i++) {
        o[2 * i] = x[2 * i] * c[i] - sign * x[2 * i + 1] * n[i];
        o[2 * i + 1] = x[2 * i + 1] * c[i] + sign * x[2 * i] * n[i];
    }
}

static void token_rows(const void *vctx, int64_t r0, int64_t r1)
{
    const pos_ctx *ctx = vctx;
    const ropegrad_rope_apply_pos_problem *p = ctx->p;
    const ropegrad_rope_apply_shape *s = &p->shape;
    const int64_t D = s->head_dim, R = rg_pos_rotary_dim(p), H = R / 2;
    const size_t e = ropegrad_dtype_size(s->dtype), tail = (size_t)(D - R) * e;
    const int half = p->style == ROPEGRAD_ROTARY_HALF;
    const void *in[2] = {p->q, p->k};
    void *out[2] = {p->q_out, p->k_out};
    const int64_t heads[2] = {s->num_heads, s->num_kv_heads};
    float c[ROPEGRAD_MAX_HEAD_DIM], n[ROPEGRAD_MAX_HEAD_DIM], x[ROPEGRAD_MAX_HEAD_DIM], o[ROPEGRAD_MAX_HEAD_DIM];
    for (int64_t t = r0; t < r1; t++) {
        const int64_t b = t / s->seq_len, si = t % s->seq_len;
        rg_pos_cos_sin_row(p->inv_freq, (float)rg_pos_position(p, t), H, p->attention_scaling, s->cos_sin_dtype, c, n);
        if (half) {   /* the table's row: each half the same values */
            memcpy(c + H, c, (size_t)H * sizeof(float));
            memcpy(n + H, n, (size_t)H * sizeof(float));
        }
        for (int ti = 0; ti < 2; ti++)
            for (int64_t h = 0; h < heads[ti]; h++) {
                const int64_t off = rg_apply_head_row(s, heads[ti], b, h, si);
                rg_apply_widen(in[ti], s->dtype, off, R, x);
                if (half) rg_apply_rotate_row_f32(x, c, n, ctx->sign, H, o);
                else rotate_interleaved(x, c, n, ctx->sign, H, o);
                rg_apply_narrow(o, R, out[ti], s->dtype, off);
                if (tail && out[ti] != in[ti])
                    memcpy((char *)out[ti] + (size_t)(off + R) * e, (const char *)in[ti] + (size_t)(off + R) * e, tail);
            }
    }
}

void rg_pos_cpu(const ropegrad_rope_apply_pos_problem *p, float sign, int num_threads)
{
    const pos_ctx ctx = {p, sign};
    const ropegrad_rope_apply_shape *s = &p->shape;
    rg_cpu_parallel_rows(s->batch_size * s->seq_len, (s->num_heads + s->num_kv_heads) * s->head_dim, num_threads,
                         token_rows, &ctx);
}

int ropegrad_rope_apply_pos_cpu(const ropegrad_rope_apply_pos_problem *p, int num_threads)
{
    int rc = ropegrad_rope_apply_pos_validate(p);
    if (rc) return rc;
    if (num_threads < 0) return ROPEGRAD_ERR_BAD_THREADS;
    if ((rc = rg_pos_check_seqlens(p)) != ROPEGRAD_OK) return rc;
    rg_pos_cpu(p, 1.0f, num_threads);
    return ROPEGRAD_OK;
}
