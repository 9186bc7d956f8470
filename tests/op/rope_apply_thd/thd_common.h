/* SPDX-License-Identifier: Apache-2.0 */
/*
 * thd_common.h -- what the packed-sequence table tests share (CPU:
 * test_rope_apply_thd.c, CUDA: test_gpu_rope_apply_thd.c): a case (tokens,
 * head_dim, rotary_dim, GQA, dtypes, style, cu_seqlens or int32/int64
 * position_ids, table length), its inputs (q, k and a table of random values
 * in [-1, 1], every column distinct, so a wrong column or row shows), the
 * float64 references of both ops, the check of an output against them, and
 * the per-token table gathered by hand for 088 and 068. The generator, the
 * fill, the cut points and the check are the positions tests' (pos_common.h).
 *
 * The check (088's, tests/op/rope_apply/test_common.h): every element within
 * u*|ref| + 2e-6 of the reference, u the output dtype's rounding (2^-8 bf16,
 * 2^-10 f16, 2^-22 f32): inputs in [-2, 2], table values in [-1, 1], so each
 * product is at most 2 and float32 rounds it to within 2.4e-7.
 *
 * Header-only (static inline): a .h is not a test executable.
 */
#ifndef RG_TEST_ROPE_APPLY_THD_COMMON_H
#define RG_TEST_ROPE_APPLY_THD_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op/rope_apply_pos/pos_common.h"   /* its generator, fill, cut points and check */
#include "rope_apply_thd/rope_apply_thd.h"

typedef struct rt_case {
    int64_t T, D, R, hq, hk;
    ropegrad_dtype dt, cdt;
    ropegrad_rotary_style style;
    int nseq;              /* > 0: cu_seqlens of nseq random lengths summing to T; 0: position_ids */
    int bits;              /* position_ids: 32 or 64 */
    int64_t table_len;     /* position_ids uniform in [0, table_len); with cu_seqlens at least the longest */
} rt_case;

typedef struct rt_data {
    ropegrad_rope_apply_thd_problem p;   /* q_out, k_out NULL */
    void *q, *k, *cos, *sin, *ids;
    int32_t *cu;
    int64_t *pos64;        /* every token's position */
    size_t q_bytes, k_bytes, table_bytes;
    int64_t n_q, n_k;
    double *ref_fwd, *ref_bwd;
} rt_data;

static inline int64_t rt_rotary_dim(const rt_case *c)
{
    return c->R ? c->R : c->D;
}

/* The case's inputs and both references; 0, or 1 on failure. */
static inline int rt_make(rt_data *d, const rt_case *c, uint64_t seed)
{
    memset(d, 0, sizeof *d);
    uint64_t st = seed * 2654435761ULL + 1;
    const int64_t T = c->T, R = rt_rotary_dim(c);
    int64_t table_len = c->table_len;
    d->n_q = T * c->hq * c->D;
    d->n_k = T * c->hk * c->D;
    d->q_bytes = (size_t)d->n_q * ropegrad_dtype_size(c->dt);
    d->k_bytes = (size_t)d->n_k * ropegrad_dtype_size(c->dt);
    d->q = rp_fill(d->n_q, c->dt, &st);
    d->k = rp_fill(d->n_k, c->dt, &st);
    d->pos64 = malloc((size_t)T * sizeof(int64_t));
    d->ids = malloc((size_t)T * (size_t)(c->bits / 8));
    d->cu = malloc((size_t)(c->nseq + 1) * sizeof(int32_t));
    d->ref_fwd = malloc((size_t)(d->n_q + d->n_k) * sizeof(double));
    d->ref_bwd = malloc((size_t)(d->n_q + d->n_k) * sizeof(double));
    if (!d->q || !d->k || !d->pos64 || !d->ids || !d->cu || !d->ref_fwd || !d->ref_bwd) return 1;
    if (c->nseq > 0) {
        rp_cut_points(d->cu, c->nseq, T, &st);
        for (int j = 0; j < c->nseq; j++) {
            if (d->cu[j + 1] - d->cu[j] > table_len) table_len = d->cu[j + 1] - d->cu[j];
            for (int32_t t = d->cu[j]; t < d->cu[j + 1]; t++) d->pos64[t] = t - d->cu[j];
        }
    } else {
        for (int64_t t = 0; t < T; t++) {
            d->pos64[t] = (int64_t)(rp_next(&st) % (uint64_t)table_len);
            if (c->bits == 32) ((int32_t *)d->ids)[t] = (int32_t)d->pos64[t];
            else ((int64_t *)d->ids)[t] = d->pos64[t];
        }
    }
    d->table_bytes = (size_t)(table_len * R) * ropegrad_dtype_size(c->cdt);
    d->cos = rp_fill_within(table_len * R, c->cdt, 1.0, &st);
    d->sin = rp_fill_within(table_len * R, c->cdt, 1.0, &st);
    if (!d->cos || !d->sin) return 1;
    const ropegrad_rope_apply_shape s = {1, T, c->D, c->hq, c->hk, ROPEGRAD_LAYOUT_BSHD, c->dt, c->cdt, 0, c->style, c->R};
    d->p = (ropegrad_rope_apply_thd_problem){s, d->cos, d->sin, table_len, c->nseq > 0 ? d->cu : NULL, c->nseq,
                                             c->nseq > 0 ? NULL : d->ids, c->bits, d->q, d->k, NULL, NULL};
    if (ropegrad_rope_apply_thd_reference(&d->p, d->ref_fwd) ||
        ropegrad_rope_apply_thd_backward_reference(&d->p, d->ref_bwd))
        return 1;
    return 0;
}

static inline void rt_free(rt_data *d)
{
    free(d->q);
    free(d->k);
    free(d->cos);
    free(d->sin);
    free(d->ids);
    free(d->cu);
    free(d->pos64);
    free(d->ref_fwd);
    free(d->ref_bwd);
    memset(d, 0, sizeof *d);
}

/* 1 when elements R..D-1 of a head row of out (n elements) differ from in's, byte for byte. */
static inline int rt_tail_differs(const rt_data *d, const void *in, const void *out, int64_t n)
{
    const ropegrad_rope_apply_shape *s = &d->p.shape;
    const int64_t D = s->head_dim, R = rg_apply_rotary_dim(s);
    const size_t e = ropegrad_dtype_size(s->dtype);
    for (int64_t row = 0; row < n / D; row++)
        if (memcmp((const char *)out + (size_t)(row * D + R) * e, (const char *)in + (size_t)(row * D + R) * e,
                   (size_t)(D - R) * e))
            return 1;
    return 0;
}

/* The per-token tables [T, R] 088 and 068 take: row t is the table's row
 * pos(t), copied by hand. 0, or 1 when out of memory. */
static inline int rt_gather(const rt_data *d, void **cos_out, void **sin_out)
{
    const ropegrad_rope_apply_shape *s = &d->p.shape;
    const size_t row = (size_t)rg_apply_rotary_dim(s) * ropegrad_dtype_size(s->cos_sin_dtype);
    char *c = malloc((size_t)s->seq_len * row), *n = malloc((size_t)s->seq_len * row);
    *cos_out = c, *sin_out = n;
    if (!c || !n) return 1;
    for (int64_t t = 0; t < s->seq_len; t++) {
        memcpy(c + (size_t)t * row, (const char *)d->cos + (size_t)d->pos64[t] * row, row);
        memcpy(n + (size_t)t * row, (const char *)d->sin + (size_t)d->pos64[t] * row, row);
    }
    return 0;
}

/* 088's problem (and 068's shape) on the gathered tables: [S, R] shared, B = 1, BSHD. */
static inline ropegrad_rope_apply_problem rt_table_problem(const rt_data *d, const void *cos, const void *sin)
{
    return (ropegrad_rope_apply_problem){d->p.shape, d->p.q, d->p.k, cos, sin, NULL, NULL};
}

/* The cases both tests run: every style, rotary_dim equal to and below
 * head_dim, dtype, cos/sin dtype, GQA ratio, cu_seqlens (with empty
 * sequences) and int32/int64 position_ids, small and large head_dims, a
 * single row table, head_dims off the 16-byte units (the CUDA path's element
 * fallback), and token counts that put several tokens in a CUDA block. */
static const rt_case rt_cases[] = {
    {61, 128, 0, 8, 2, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 5, 64, 1},
    {47, 80, 40, 4, 4, ROPEGRAD_F32, ROPEGRAD_F32, ROPEGRAD_ROTARY_INTERLEAVED, 4, 64, 1},
    {33, 64, 16, 6, 3, ROPEGRAD_F16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 7, 64, 1},
    {57, 128, 0, 4, 1, ROPEGRAD_BF16, ROPEGRAD_F32, ROPEGRAD_ROTARY_INTERLEAVED, 0, 32, 4096},
    {40, 128, 64, 6, 2, ROPEGRAD_F16, ROPEGRAD_F16, ROPEGRAD_ROTARY_INTERLEAVED, 0, 64, 300},
    {29, 96, 0, 4, 1, ROPEGRAD_F32, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 0, 32, 50},
    {19, 6, 2, 5, 5, ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_ROTARY_HALF, 3, 64, 1},
    {23, 2, 0, 2, 1, ROPEGRAD_F32, ROPEGRAD_BF16, ROPEGRAD_ROTARY_INTERLEAVED, 0, 64, 1},
    {3, 1024, 258, 2, 1, ROPEGRAD_F16, ROPEGRAD_F32, ROPEGRAD_ROTARY_HALF, 0, 64, 7},
    {2, 1024, 0, 2, 2, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_INTERLEAVED, 2, 32, 1},
    {1000, 128, 0, 32, 8, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 9, 64, 1},
    {777, 64, 0, 2, 1, ROPEGRAD_F32, ROPEGRAD_F32, ROPEGRAD_ROTARY_HALF, 0, 64, 2048},
    {9, 72, 0, 12, 4, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_INTERLEAVED, 1, 32, 1},
};
#define RT_N_CASES ((int)(sizeof rt_cases / sizeof rt_cases[0]))

#endif
