/* SPDX-License-Identifier: Apache-2.0 */
/* forward_common.h -- cases and checks shared by the forward ops' tests
 * (test_forward.c on the CPU, test_gpu_forward.c on CUDA).
 *
 * Include after <cmocka.h> (fc_assert_case asserts). A case is an 011 problem (positions + inv_freq) and the 012 problem of the
 * same arguments (freqs = the float32 products), or random / huge freqs. The
 * checks:
 *   - every output element is the bf16 nearest to the float64 reference
 *     (the ops promise correct rounding), computed here independently of the
 *     library: the two bf16 neighbours compared in double, ties to even;
 *   - so max abs error <= that of a plain float32 evaluation (cosf/sinf of
 *     the float32 argument, times the scale in float, rounded to bf16), which
 *     is checked and printed as well: the accuracy rule for real positions. */
#ifndef RG_TEST_FORWARD_COMMON_H
#define RG_TEST_FORWARD_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ropegrad.h"

/* bf16 nearest to d (finite), ties to even, by comparing the two neighbours. */
static inline uint16_t fc_bf16_nearest(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;   /* toward zero, away from zero */
    float flo, fhi;
    memcpy(&flo, &lo, 4);
    memcpy(&fhi, &hi, 4);
    double elo = fabs(d - (double)flo), ehi = fabs(d - (double)fhi);
    if (elo < ehi) return (uint16_t)(lo >> 16);
    if (ehi < elo) return (uint16_t)(hi >> 16);
    return (uint16_t)(((lo >> 16) & 1u) ? (hi >> 16) : (lo >> 16));
}

static inline double fc_bf16_value(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return (double)f;
}

static inline uint16_t fc_bf16_rn_float(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint64_t fc_state;
static inline uint64_t fc_next(void)
{
    uint64_t z = (fc_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline double fc_uniform(void) { return ((fc_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

/* 012's freqs: FC_RANDOM uniform in [-10, 10]; FC_HUGE to 2^79; FC_HOSTILE
 * signed zeros, subnormals, tiny normals, floats next to multiples of pi/2
 * (sin or cos near zero, where a relative error bound matters) and arguments
 * to 1e9. */
enum { FC_LLAMA3 = 0, FC_THETA_1E6 = 1, FC_RANDOM = 2, FC_HUGE = 3, FC_HOSTILE = 4, FC_LAST = FC_HOSTILE };

typedef struct fc_case {
    int64_t B, S, D;
    int kind;            /* FC_* */
    float scale;
    int64_t *pos;        /* [B,S] (FC_LLAMA3, FC_THETA_1E6) */
    float *inv;          /* [D/2] */
    float *freqs;        /* [B,S,D/2]: pos*inv as float32 products, or random */
} fc_case;

static inline void fc_llama3(float *inv, int64_t D)
{
    for (int64_t d = 0; d < D / 2; d++) {
        const float f = 1.0f / powf(500000.0f, (float)(2 * d) / (float)D);
        const float wavelen = (float)(2.0 * 3.14159265358979323846) / f;
        float sm = (8192.0f / wavelen - 1.0f) / 3.0f;
        sm = sm < 0 ? 0 : sm > 1 ? 1 : sm;
        inv[d] = (1.0f - sm) * f + sm * (f / 8.0f);
    }
}

static inline float fc_hostile(void)
{
    const double u = fc_uniform(), v = fc_uniform();
    const double sign = fc_uniform() < 0.5 ? -1.0 : 1.0;
    if (u < 0.1) return (float)(sign * 0.0);
    if (u < 0.25) return (float)(sign * ldexp(v, -126 - (int)(fc_uniform() * 23)));   /* subnormal */
    if (u < 0.4) return (float)(sign * ldexp(1.0 + v, -126 + (int)(fc_uniform() * 110)));   /* tiny normal */
    if (u < 0.8) {   /* a float next to k*pi/2, k up to ~2^21, nudged by a few ulps */
        float x = (float)((double)(int64_t)(v * 2e6) * 1.5707963267948966);
        for (int k = (int)(fc_uniform() * 7) - 3; k != 0; k += k < 0 ? 1 : -1) x = nextafterf(x, k < 0 ? -INFINITY : INFINITY);
        return (float)sign * x;
    }
    return (float)(sign * v * 1e9);
}

/* Positions: packed sequences, different per batch, reaching pos_max. */
static inline void fc_make(fc_case *c, int64_t B, int64_t S, int64_t D, int kind, float scale, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->B = B, c->S = S, c->D = D, c->kind = kind, c->scale = scale;
    const int64_t H = D / 2, rows = B * S;
    fc_state = seed;
    c->pos = malloc((size_t)rows * 8);
    c->inv = malloc((size_t)H * 4);
    c->freqs = malloc((size_t)(rows * H) * 4);
    if (kind == FC_LLAMA3) fc_llama3(c->inv, D);
    else
        for (int64_t d = 0; d < H; d++) c->inv[d] = (float)(1.0 / pow(1e6, 2.0 * (double)d / (double)D));
    const int64_t pos_max = kind == FC_LLAMA3 ? 131071 : 262143;
    for (int64_t b = 0; b < B; b++) {
        /* each batch: a run of documents starting at a random position */
        int64_t p = (int64_t)(fc_uniform() * (double)pos_max);
        for (int64_t s = 0; s < S; s++) {
            if (fc_uniform() < 0.01) p = (int64_t)(fc_uniform() * 64);   /* a new document */
            c->pos[b * S + s] = p > pos_max ? pos_max - (p % 7) : p;
            p += 1 + (int64_t)(fc_uniform() * (double)(pos_max / (S + 1)));
        }
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t d = 0; d < H; d++) {
            float x;
            if (kind == FC_RANDOM) x = (float)((fc_uniform() - 0.5) * 20.0);
            else if (kind == FC_HUGE) x = (float)((fc_uniform() - 0.5) * ldexp(1.0, (int)(fc_uniform() * 80)));
            else if (kind == FC_HOSTILE) x = fc_hostile();
            else x = (float)c->pos[r] * c->inv[d];
            c->freqs[r * H + d] = x;
        }
}

static inline void fc_free(fc_case *c)
{
    free(c->pos);
    free(c->inv);
    free(c->freqs);
    memset(c, 0, sizeof *c);
}

typedef struct fc_result {
    int64_t n, n_not_nearest;
    double max_err, max_err_plain;
} fc_result;

/* out[n] (bf16 bits) against ref[n] (float64) and the plain float32 values plain[n]. */
static inline void fc_compare(const uint16_t *out, const double *ref, const uint16_t *plain, int64_t n, fc_result *r)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    for (int64_t i = 0; i < n; i++) {
        if (out[i] != fc_bf16_nearest(ref[i])) r->n_not_nearest++;
        const double e = fabs(fc_bf16_value(out[i]) - ref[i]), ep = fabs(fc_bf16_value(plain[i]) - ref[i]);
        if (!(e <= r->max_err)) r->max_err = e;   /* NaN sticks */
        if (ep > r->max_err_plain) r->max_err_plain = ep;
    }
}

/* Plain float32 evaluations, in each op's output layout. */
static inline void fc_plain_011(const fc_case *c, uint16_t *out)
{
    const int64_t D = c->D, H = D / 2;
    for (int64_t r = 0; r < c->B * c->S; r++)
        for (int64_t j = 0; j < D; j++) {
            const float x = (float)c->pos[r] * c->inv[j % H];
            out[(r * D + j) * 2] = fc_bf16_rn_float(cosf(x) * c->scale);
            out[(r * D + j) * 2 + 1] = fc_bf16_rn_float(sinf(x) * c->scale);
        }
}

static inline void fc_plain_012(const fc_case *c, uint16_t *out)
{
    const int64_t D = c->D, H = D / 2, n = c->B * c->S * D;
    for (int64_t r = 0; r < c->B * c->S; r++)
        for (int64_t j = 0; j < D; j++) {
            const float x = c->freqs[r * H + j % H];
            out[r * D + j] = fc_bf16_rn_float(cosf(x) * c->scale);
            out[n + r * D + j] = fc_bf16_rn_float(sinf(x) * c->scale);
        }
}

/* Prints one case's figures and asserts the rule: every element the nearest
 * bf16, so max error no worse than the plain float32 evaluation's. */
static inline void fc_assert_case(const char *what, size_t k, size_t off, const fc_case *c, const fc_result *r11,
                                  const fc_result *r12)
{
    printf("%s case %zu offset %zu (B=%lld S=%lld D=%lld kind %d): 011 max err %.3e (plain float32 %.3e), "
           "012 %.3e (%.3e), not nearest %lld/%lld\n",
           what, k, off, (long long)c->B, (long long)c->S, (long long)c->D, c->kind, r11->max_err, r11->max_err_plain,
           r12->max_err, r12->max_err_plain, (long long)(r11->n_not_nearest + r12->n_not_nearest),
           (long long)(r11->n + r12->n));
    assert_int_equal(r11->n_not_nearest, 0);
    assert_int_equal(r12->n_not_nearest, 0);
    assert_true(r11->max_err <= r11->max_err_plain);
    assert_true(r12->max_err <= r12->max_err_plain);
}

/* The error of out[n] (bf16 bits) against ref[n] in bf16 ulps of the exact
 * value (the spacing of the bf16 values at |ref|; a zero must be exact):
 * the largest, and how many are not the nearest bf16. */
static inline double fc_bf16_ulps(uint16_t out, double ref)
{
    const double e = fabs(fc_bf16_value(out) - ref);
    if (ref == 0.0) return e == 0.0 ? 0.0 : INFINITY;
    int ex;
    frexp(ref, &ex);                                    /* |ref| in [2^(ex-1), 2^ex) */
    const double spacing = ldexp(1.0, (ex - 1 < -126 ? -126 : ex - 1) - 7);
    return e / spacing;
}

typedef struct fc_ulps {
    int64_t n, n_not_nearest;
    double max_ulps;
} fc_ulps;

/* 012's output (cos then sin) against the reference, in ulps. */
static inline void fc_ulps_012(const fc_case *c, const uint16_t *out, fc_ulps *res)
{
    const int64_t n = 2 * c->B * c->S * c->D;
    double *ref = malloc((size_t)n * 8);
    ropegrad_cos_sin_problem h = {c->B, c->S, c->D, c->freqs, c->scale, NULL, NULL};
    memset(res, 0, sizeof *res);
    res->max_ulps = INFINITY;   /* "not compared" unless all goes well */
    if (ref && ropegrad_cos_sin_reference(&h, ref) == 0) {
        res->n = n;
        res->max_ulps = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double u = fc_bf16_ulps(out[i], ref[i]);
            if (!(u <= res->max_ulps)) res->max_ulps = u;   /* NaN sticks */
            if (out[i] != fc_bf16_nearest(ref[i])) res->n_not_nearest++;
        }
    }
    free(ref);
}

/* Compares a path's 011 output (B*S*D*2 bf16) with the reference and the plain float32 values. */
static inline void fc_check_011(const fc_case *c, const uint16_t *out, fc_result *res)
{
    const int64_t n = c->B * c->S * c->D * 2;
    uint16_t *plain = malloc((size_t)n * 2);
    double *ref = malloc((size_t)n * 8);
    ropegrad_rope_forward_problem h = {c->B, c->S, c->D, c->pos, c->inv, c->scale, NULL};
    memset(res, 0, sizeof *res);
    res->n_not_nearest = -1;   /* "not compared" unless all goes well */
    if (plain && ref && ropegrad_rope_forward_reference(&h, ref) == 0) {
        fc_plain_011(c, plain);
        fc_compare(out, ref, plain, n, res);
    }
    free(plain);
    free(ref);
}

/* The same for 012's output (cos then sin, 2*B*S*D bf16). */
static inline void fc_check_012(const fc_case *c, const uint16_t *out, fc_result *res)
{
    const int64_t n = 2 * c->B * c->S * c->D;
    uint16_t *plain = malloc((size_t)n * 2);
    double *ref = malloc((size_t)n * 8);
    ropegrad_cos_sin_problem h = {c->B, c->S, c->D, c->freqs, c->scale, NULL, NULL};
    memset(res, 0, sizeof *res);
    res->n_not_nearest = -1;
    if (plain && ref && ropegrad_cos_sin_reference(&h, ref) == 0) {
        fc_plain_012(c, plain);
        fc_compare(out, ref, plain, n, res);
    }
    free(plain);
    free(ref);
}

#endif
