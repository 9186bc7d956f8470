/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pos_common.h -- what the apply-from-positions tests share (CPU:
 * test_rope_apply_pos.c, CUDA: test_gpu_rope_apply_pos.c): a case (shape,
 * layout, dtypes, GQA, style, rotary_dim, int32/int64 positions or packed
 * sequences, scale), its inputs, the float64 references of both ops, the
 * check of an output against them, and 088's table built from 011's output.
 *
 * The check (088's, tests/op/rope_apply/test_common.h): every element within
 * u*|ref| + 2e-6 of the reference, u the output dtype's rounding (2^-8 bf16,
 * 2^-10 f16, 2^-22 f32): the inputs are in [-2, 2] and |scale| <= 1, so each
 * of the two products is at most 2 and float32 rounds it to within 2.4e-7.
 *
 * Header-only (static inline): a .h is not a test executable.
 */
#ifndef RG_TEST_ROPE_APPLY_POS_COMMON_H
#define RG_TEST_ROPE_APPLY_POS_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rope_apply_pos/rope_apply_pos.h"

typedef struct rp_case {
    int64_t B, S, D, R, hq, hk;
    ropegrad_layout layout;
    ropegrad_dtype dt, cdt;
    ropegrad_rotary_style style;
    int bits;              /* 32 or 64 */
    int nseq;              /* > 0: packed sequences (B = 1, BSHD) of random lengths summing to S */
    float scale;
    int64_t max_pos;       /* positions uniform in [0, max_pos) */
} rp_case;

typedef struct rp_data {
    ropegrad_rope_apply_pos_problem p;   /* q_out, k_out NULL */
    void *q, *k, *ids;
    int32_t *cu;
    float *inv;
    int64_t *pos64;        /* every token's position (for 011's table) */
    size_t q_bytes, k_bytes;
    int64_t n_q, n_k;
    double *ref_fwd, *ref_bwd;
} rp_data;

static inline uint64_t rp_next(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return *st >> 11;
}

/* n values uniform in [-lim, lim], rounded to dt (the packed table tests' tables take lim 1). */
static inline void *rp_fill_within(int64_t n, ropegrad_dtype dt, double lim, uint64_t *st)
{
    void *p = malloc((size_t)(n > 0 ? n : 1) * ropegrad_dtype_size(dt));
    if (!p) return NULL;
    for (int64_t i = 0; i < n; i++) {
        const float v = (float)(((double)rp_next(st) / 9007199254740992.0 * 2.0 - 1.0) * lim);
        if (dt == ROPEGRAD_F32) ((float *)p)[i] = v;
        else if (dt == ROPEGRAD_BF16) ((uint16_t *)p)[i] = rg_bf16_rn_nan(v);
        else ((uint16_t *)p)[i] = rg_f16_rn(v);
    }
    return p;
}

/* n values uniform in [-2, 2], rounded to dt. */
static inline void *rp_fill(int64_t n, ropegrad_dtype dt, uint64_t *st) { return rp_fill_within(n, dt, 2.0, st); }

/* cu[0..nseq]: 0, nseq - 1 random cut points in [0, total] sorted (repeats make empty sequences), total. */
static inline void rp_cut_points(int32_t *cu, int nseq, int64_t total, uint64_t *st)
{
    cu[0] = 0;
    cu[nseq] = (int32_t)total;
    for (int j = 1; j < nseq; j++) cu[j] = (int32_t)(rp_next(st) % (uint64_t)(total + 1));
    for (int j = 1; j < nseq; j++)
        for (int m = j; m > 1 && cu[m] < cu[m - 1]; m--) {
            const int32_t x = cu[m];
            cu[m] = cu[m - 1], cu[m - 1] = x;
        }
}

/* The case's inputs and both references; 0, or 1 when out of memory. */
static inline int rp_make(rp_data *d, const rp_case *c, uint64_t seed)
{
    memset(d, 0, sizeof *d);
    uint64_t st = seed * 2654435761ULL + 1;
    const int64_t tokens = c->B * c->S, R = c->R ? c->R : c->D;
    d->n_q = tokens * c->hq * c->D;
    d->n_k = tokens * c->hk * c->D;
    d->q_bytes = (size_t)d->n_q * ropegrad_dtype_size(c->dt);
    d->k_bytes = (size_t)d->n_k * ropegrad_dtype_size(c->dt);
    d->q = rp_fill(d->n_q, c->dt, &st);
    d->k = rp_fill(d->n_k, c->dt, &st);
    d->inv = malloc((size_t)(R / 2) * sizeof(float));
    d->pos64 = malloc((size_t)tokens * sizeof(int64_t));
    d->ids = malloc((size_t)tokens * (size_t)(c->bits / 8));
    d->cu = malloc((size_t)(c->nseq + 1) * sizeof(int32_t));
    d->ref_fwd = malloc((size_t)(d->n_q + d->n_k) * sizeof(double));
    d->ref_bwd = malloc((size_t)(d->n_q + d->n_k) * sizeof(double));
    if (!d->q || !d->k || !d->inv || !d->pos64 || !d->ids || !d->cu || !d->ref_fwd || !d->ref_bwd) return 1;
    for (int64_t i = 0; i < R / 2; i++)   /* Hugging Face's default: 1 / 10000^(2i/R) */
        d->inv[i] = (float)(1.0 / pow(10000.0, (double)(2 * i) / (double)R));
    if (c->nseq > 0) {
        rp_cut_points(d->cu, c->nseq, c->S, &st);
        for (int j = 0; j < c->nseq; j++)
            for (int32_t t = d->cu[j]; t < d->cu[j + 1]; t++) d->pos64[t] = t - d->cu[j];
    } else {
        for (int64_t t = 0; t < tokens; t++) {
            d->pos64[t] = (int64_t)(rp_next(&st) % (uint64_t)c->max_pos);
            if (c->bits == 32) ((int32_t *)d->ids)[t] = (int32_t)d->pos64[t];
            else ((int64_t *)d->ids)[t] = d->pos64[t];
        }
    }
    const ropegrad_rope_apply_shape s = {c->B, c->S, c->D, c->hq, c->hk, c->layout, c->dt, c->cdt, 0, ROPEGRAD_ROTARY_HALF, 0};
    d->p = (ropegrad_rope_apply_pos_problem){s, c->style, c->R, c->nseq > 0 ? NULL : d->ids, c->bits,
                                             c->nseq > 0 ? d->cu : NULL, c->nseq, d->inv, c->scale, d->q, d->k, NULL, NULL};
    if (ropegrad_rope_apply_pos_reference(&d->p, d->ref_fwd) ||
        ropegrad_rope_apply_pos_backward_reference(&d->p, d->ref_bwd))
        return 1;
    return 0;
}

static inline void rp_free(rp_data *d)
{
    free(d->q);
    free(d->k);
    free(d->ids);
    free(d->cu);
    free(d->inv);
    free(d->pos64);
    free(d->ref_fwd);
    free(d->ref_bwd);
    memset(d, 0, sizeof *d);
}

static inline double rp_unit(ropegrad_dtype dt)
{
    return dt == ROPEGRAD_BF16 ? 0x1p-8 : dt == ROPEGRAD_F16 ? 0x1p-10 : 0x1p-22;
}

/* Elements of out (n, dtype dt) outside the bound (the header's) of ref; prints the first. */
static inline int64_t rp_count_bad(const char *what, const void *out, ropegrad_dtype dt, const double *ref, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const double v = (double)ropegrad_element_to_float(out, dt, i), err = fabs(v - ref[i]);
        if (!(err <= rp_unit(dt) * fabs(ref[i]) + 2e-6)) {
            if (!bad) printf("%s: element %lld is %.9g, reference %.9g\n", what, (long long)i, v, ref[i]);
            bad++;
        }
    }
    return bad;
}

/* 1 when elements R..D-1 of a head row of out (n elements) differ from in's, byte for byte. */
static inline int rp_tail_differs(const rp_data *d, const void *in, const void *out, int64_t n)
{
    const ropegrad_rope_apply_shape *s = &d->p.shape;
    const int64_t D = s->head_dim, R = rg_pos_rotary_dim(&d->p);
    const size_t e = ropegrad_dtype_size(s->dtype);
    for (int64_t row = 0; row < n / D; row++)
        if (memcmp((const char *)out + (size_t)(row * D + R) * e, (const char *)in + (size_t)(row * D + R) * e,
                   (size_t)(D - R) * e))
            return 1;
    return 0;
}

/* The frequency index table column j of rotary_dim R uses in style st:
 * rotate-half tables are cat(freqs, freqs), interleaved ones repeat each. */
static inline int64_t rp_table_freq(ropegrad_rotary_style st, int64_t j, int64_t R)
{
    return st == ROPEGRAD_ROTARY_INTERLEAVED ? j / 2 : j % (R / 2);
}

/* 088's cos and sin tables [B,S,R] (cos_sin_batch_stride S*R, R the case's
 * rotary_dim) in the case's style's column order (ropegrad.h), holding the
 * op's values: bf16 from 011 (ropegrad_rope_forward_cpu at head_dim R on every
 * token's position, de-interleaved and its columns placed), f32 from libm's
 * double sin/cos rounded once. 0, or 1 on failure. */
static inline int rp_table(const rp_data *d, void **cos_out, void **sin_out)
{
    const ropegrad_rope_apply_shape *s = &d->p.shape;
    const int64_t tokens = s->batch_size * s->seq_len, R = rg_pos_rotary_dim(&d->p);
    const size_t e = ropegrad_dtype_size(s->cos_sin_dtype);
    void *c = malloc((size_t)(tokens * R) * e), *n = malloc((size_t)(tokens * R) * e);
    *cos_out = c, *sin_out = n;
    if (!c || !n) return 1;
    if (s->cos_sin_dtype == ROPEGRAD_BF16) {
        uint16_t *cs = malloc((size_t)(tokens * R * 2) * sizeof(uint16_t));
        if (!cs) return 1;
        ropegrad_rope_forward_problem f = {1, tokens, R, d->pos64, d->inv, d->p.attention_scaling, cs};
        const int rc = ropegrad_rope_forward_cpu(&f, 0);
        for (int64_t t = 0; t < tokens; t++)
            for (int64_t j = 0; j < R; j++) {   /* 011's column i (and i + R/2) holds frequency i */
                const int64_t src = t * R + rp_table_freq(d->p.style, j, R);
                ((uint16_t *)c)[t * R + j] = cs[2 * src], ((uint16_t *)n)[t * R + j] = cs[2 * src + 1];
            }
        free(cs);
        return rc != 0;
    }
    if (s->cos_sin_dtype != ROPEGRAD_F32) return 1;
    for (int64_t t = 0; t < tokens; t++)
        for (int64_t j = 0; j < R; j++) {
            const double x = (double)((float)d->pos64[t] * d->inv[rp_table_freq(d->p.style, j, R)]);
            ((float *)c)[t * R + j] = (float)((double)d->p.attention_scaling * cos(x));
            ((float *)n)[t * R + j] = (float)((double)d->p.attention_scaling * sin(x));
        }
    return 0;
}

/* The cases both tests run: every style, rotary_dim equal to and below
 * head_dim, dtype, cos/sin dtype, layout, GQA ratio, int32 and int64
 * positions, packed sequences, small and large head_dims, positions up to
 * 3e5 (x = 3e5 rad at inv_freq[0] = 1), scales 1 and below. */
static const rp_case rp_cases[] = {
    {2, 37, 128, 0, 4, 2, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 64, 0, 1.0f, 4096},
    {3, 19, 128, 0, 6, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 32, 0, 1.0f, 300000},
    {2, 23, 64, 32, 8, 8, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_F32, ROPEGRAD_ROTARY_HALF, 64, 0, 0.7071f, 8192},
    {2, 11, 128, 64, 3, 3, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F16, ROPEGRAD_F16, ROPEGRAD_ROTARY_INTERLEAVED, 64, 0, 1.0f, 70000},
    {1, 29, 96, 0, 4, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F32, ROPEGRAD_ROTARY_INTERLEAVED, 32, 0, 1.0f, 300000},
    {2, 13, 128, 0, 2, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_BF16, ROPEGRAD_ROTARY_INTERLEAVED, 64, 0, 0.5f, 100},
    {4, 5, 2, 0, 2, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 32, 0, 1.0f, 1000},
    {1, 3, 6, 2, 5, 5, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_ROTARY_HALF, 64, 0, 1.0f, 1000},
    {1, 2, 1024, 0, 2, 2, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_INTERLEAVED, 64, 0, 1.0f, 300000},
    {1, 3, 1024, 258, 2, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F16, ROPEGRAD_F32, ROPEGRAD_ROTARY_HALF, 32, 0, 1.0f, 300000},
    {1, 61, 128, 0, 8, 2, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 32, 5, 1.0f, 0},
    {1, 47, 80, 40, 4, 4, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_F32, ROPEGRAD_ROTARY_INTERLEAVED, 64, 4, 1.0f, 0},
    {1, 33, 64, 16, 6, 3, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_HALF, 64, 7, 0.9f, 0},
    {2, 9, 72, 0, 12, 4, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_BF16, ROPEGRAD_ROTARY_INTERLEAVED, 32, 0, 1.0f, 300000},
};
#define RP_N_CASES ((int)(sizeof rp_cases / sizeof rp_cases[0]))

#endif
