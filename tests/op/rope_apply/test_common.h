/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rope_apply_common.h -- what the apply ops' tests share (088 forward, 068
 * backward; CPU in test_rope_apply.c, CUDA in test_gpu_rope_apply.c): a case
 * (shape, layout, dtypes, GQA, shared or per-batch cos/sin), its inputs in
 * their dtypes, the float64 references of both ops, and the check of an
 * output against them.
 *
 * The check: every element within u*|ref| + terms*1e-6 of the reference,
 * where u is the output dtype's rounding (2^-8 bf16, 2^-10 f16, 2^-22 f32)
 * and terms the products summed into it (2 for a rotated or gradient value,
 * heads x batches for grad_cos / grad_sin): the inputs are in [-2, 2], so a
 * product is at most 4 and float32 rounds each to within 2.4e-7.
 *
 * Header-only (static inline): a .h is not a test executable.
 */
#ifndef RG_TEST_ROPE_APPLY_COMMON_H
#define RG_TEST_ROPE_APPLY_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rope_apply/rope_apply.h"

enum { RA_Q, RA_K, RA_GQ, RA_GK, RA_COS, RA_SIN, RA_N };

typedef struct ra_case {
    int64_t B, S, D, hq, hk;
    ropegrad_layout layout;
    ropegrad_dtype dt, cdt;
    int per_batch;
} ra_case;

/* The pairs and partial rotary of a case (ra_cases: {0, 0}, rotate-half over the whole row). */
typedef struct ra_style {
    ropegrad_rotary_style style;
    int64_t R;   /* rotary_dim (0 = D); cos/sin are [.., R] */
} ra_style;

typedef struct ra_data {
    ropegrad_rope_apply_shape s;
    void *in[RA_N];            /* q, k, grad_q_out, grad_k_out, cos, sin (host, in their dtypes) */
    size_t bytes[RA_N];
    size_t gcs_bytes;          /* grad_cos's (and grad_sin's) */
    int64_t n_q, n_k, n_gcs;   /* elements */
    double *ref_fwd;           /* q_out, k_out */
    double *ref_bwd;           /* grad_q, grad_k, grad_cos, grad_sin */
} ra_data;

static inline uint64_t ra_next(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return *st >> 11;
}

/* n values uniform in [-2, 2], rounded to dt. */
static inline void *ra_fill(int64_t n, ropegrad_dtype dt, uint64_t *st)
{
    const size_t e = ropegrad_dtype_size(dt);
    void *p = malloc((size_t)n * e);
    if (!p) return NULL;
    for (int64_t i = 0; i < n; i++) {
        const float v = (float)((double)ra_next(st) / 9007199254740992.0 * 4.0 - 2.0);
        if (dt == ROPEGRAD_F32) ((float *)p)[i] = v;
        else if (dt == ROPEGRAD_BF16) ((uint16_t *)p)[i] = rg_bf16_rn_nan(v);
        else ((uint16_t *)p)[i] = rg_f16_rn(v);
    }
    return p;
}

static inline ropegrad_rope_apply_problem ra_forward_problem(const ra_data *d, void *const in[RA_N], void *q_out,
                                                             void *k_out)
{
    ropegrad_rope_apply_problem p = {d->s, in[RA_Q], in[RA_K], in[RA_COS], in[RA_SIN], q_out, k_out};
    return p;
}

static inline ropegrad_rope_apply_backward_problem ra_backward_problem(const ra_data *d, void *const in[RA_N],
                                                                       void *gq, void *gk, void *gcos, void *gsin)
{
    ropegrad_rope_apply_backward_problem p = {d->s,        in[RA_GQ],  in[RA_GK], in[RA_Q], in[RA_K], in[RA_COS],
                                              in[RA_SIN], gq,         gk,        gcos,     gsin};
    return p;
}

/* The case's inputs and both references in style sty; 0, or 1 when out of memory. */
static inline int ra_make_styled(ra_data *d, const ra_case *c, ra_style sty, uint64_t seed)
{
    memset(d, 0, sizeof *d);
    const int64_t R = sty.R ? sty.R : c->D;
    d->s = (ropegrad_rope_apply_shape){c->B,   c->S,   c->D, c->hq, c->hk, c->layout, c->dt, c->cdt,
                                       c->per_batch ? c->S * R : 0, sty.style, sty.R};
    d->n_q = c->B * c->hq * c->S * c->D;
    d->n_k = c->B * c->hk * c->S * c->D;
    d->n_gcs = (c->per_batch ? c->B : 1) * c->S * R;
    const int64_t n[RA_N] = {d->n_q, d->n_k, d->n_q, d->n_k, d->n_gcs, d->n_gcs};
    uint64_t st = seed * 2654435761ULL + 1;
    int oom = 0;
    for (int i = 0; i < RA_N; i++) {
        const ropegrad_dtype dt = i >= RA_COS ? c->cdt : c->dt;
        d->bytes[i] = (size_t)n[i] * ropegrad_dtype_size(dt);
        d->in[i] = ra_fill(n[i], dt, &st);
        oom |= d->in[i] == NULL;
    }
    d->gcs_bytes = d->bytes[RA_COS];
    d->ref_fwd = malloc((size_t)(d->n_q + d->n_k) * sizeof(double));
    d->ref_bwd = malloc((size_t)(d->n_q + d->n_k + 2 * d->n_gcs) * sizeof(double));
    if (oom || !d->ref_fwd || !d->ref_bwd) return 1;
    ropegrad_rope_apply_problem f = ra_forward_problem(d, d->in, NULL, NULL);
    ropegrad_rope_apply_backward_problem b = ra_backward_problem(d, d->in, NULL, NULL, NULL, NULL);
    if (ropegrad_rope_apply_reference(&f, d->ref_fwd) || ropegrad_rope_apply_backward_reference(&b, d->ref_bwd)) return 1;
    return 0;
}

static inline int ra_make(ra_data *d, const ra_case *c, uint64_t seed)
{
    return ra_make_styled(d, c, (ra_style){ROPEGRAD_ROTARY_HALF, 0}, seed);
}

static inline void ra_free(ra_data *d)
{
    for (int i = 0; i < RA_N; i++) free(d->in[i]);
    free(d->ref_fwd);
    free(d->ref_bwd);
    memset(d, 0, sizeof *d);
}

static inline double ra_unit(ropegrad_dtype dt)
{
    return dt == ROPEGRAD_BF16 ? 0x1p-8 : dt == ROPEGRAD_F16 ? 0x1p-10 : 0x1p-22;
}

/* Elements of out (n, dtype dt) outside the bound (the header's) of ref;
 * prints the first. */
static inline int64_t ra_count_bad(const char *what, const void *out, ropegrad_dtype dt, const double *ref, int64_t n,
                                   double terms)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const double v = (double)ropegrad_element_to_float(out, dt, i), err = fabs(v - ref[i]);
        if (!(err <= ra_unit(dt) * fabs(ref[i]) + terms * 1e-6)) {
            if (!bad) printf("%s: element %lld is %.9g, reference %.9g\n", what, (long long)i, v, ref[i]);
            bad++;
        }
    }
    return bad;
}

/* 1 when elements R..D-1 of a head row of out (n elements) differ from in's, byte for byte. */
static inline int ra_tail_differs(const ra_data *d, const void *in, const void *out, int64_t n)
{
    const int64_t D = d->s.head_dim, R = rg_apply_rotary_dim(&d->s);
    const size_t e = ropegrad_dtype_size(d->s.dtype);
    for (int64_t row = 0; row < n / D; row++)
        if (memcmp((const char *)out + (size_t)(row * D + R) * e, (const char *)in + (size_t)(row * D + R) * e,
                   (size_t)(D - R) * e))
            return 1;
    return 0;
}

/* Terms summed into a grad_cos / grad_sin element. */
static inline double ra_gcs_terms(const ra_data *d)
{
    return (double)(d->s.num_heads + d->s.num_kv_heads) * (d->s.cos_sin_batch_stride ? 1.0 : (double)d->s.batch_size);
}

/* The cases both tests run: the suites' layout and dtype, then every layout,
 * dtype pair, GQA ratio, shared and per-batch cos/sin, small and odd head_dims. */
static const ra_case ra_cases[] = {
    {2, 37, 128, 4, 2, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 0},
    {2, 37, 128, 4, 2, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 1},
    {3, 19, 128, 6, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, 1},
    {2, 23, 64, 8, 8, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_F32, 0},
    {2, 11, 128, 3, 3, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F16, ROPEGRAD_F32, 0},
    {1, 29, 96, 4, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F16, ROPEGRAD_F16, 1},
    {2, 13, 128, 2, 1, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_BF16, ROPEGRAD_F16, 1},
    {4, 5, 2, 2, 1, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_F32, ROPEGRAD_BF16, 0},
    {1, 3, 6, 5, 5, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 1},
    {1, 2, 1024, 2, 2, ROPEGRAD_LAYOUT_BSHD, ROPEGRAD_BF16, ROPEGRAD_BF16, 0},
};
#define RA_N_CASES ((int)(sizeof ra_cases / sizeof ra_cases[0]))

/* Variant v of the style and partial rotary at head_dim D: v & 1 the
 * interleaved style, v & 2 a rotary_dim below head_dim (about 3/8 of it, even,
 * not a multiple of 8 where head_dim allows; 0 when head_dim is 2). */
static inline ra_style ra_variant(int64_t D, int v)
{
    int64_t R = (D * 3 / 8) & ~(int64_t)1;
    if (R % 8 == 0 && R + 2 < D) R += 2;
    return (ra_style){v & 1 ? ROPEGRAD_ROTARY_INTERLEAVED : ROPEGRAD_ROTARY_HALF, v & 2 && D > 2 ? (R < 2 ? 2 : R) : 0};
}

#endif
