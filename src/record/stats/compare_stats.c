/* SPDX-License-Identifier: Apache-2.0 */
/* compare_stats.c -- distribution-free comparison of two sample sets (see compare_stats.h). */
#include "compare_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pairwise log-ratios are materialized: cap their count (50 x 50 samples is
 * the usual case; 2000 x 2000 still fits). */
#define RG_STATS_MAX_PAIRS 4000000L

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int valid_samples(const double *x, int n)
{
    if (!x || n <= 0) return 0;
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]) || x[i] <= 0) return 0;
    return 1;
}

double rg_normal_quantile(double p)
{
    if (!(p > 0 && p < 1)) return NAN;
    /* Phi(z) = erfc(-z / sqrt 2) / 2 is increasing in z: bisect. */
    double lo = -40, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Two-sided Mann-Whitney U test of B against A: U of B and its p-value. */
static void mann_whitney(const double *a, int na, const double *b, int nb, double *u_out, double *p_out)
{
    int n = na + nb;
    struct item { double v; int from_b; } *it = malloc((size_t)n * sizeof *it);
    if (!it) { *u_out = NAN; *p_out = NAN; return; }
    for (int i = 0; i < na; i++) it[i] = (struct item){a[i], 0};
    for (int j = 0; j < nb; j++) it[na + j] = (struct item){b[j], 1};
    qsort(it, (size_t)n, sizeof *it, cmp_double);   /* by v, the first member */
    double rank_sum_b = 0, ties = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && it[j + 1].v == it[i].v) j++;
        double mid = 0.5 * ((i + 1) + (j + 1));      /* mid-rank of the tie block */
        for (int k = i; k <= j; k++)
            if (it[k].from_b) rank_sum_b += mid;
        double t = j - i + 1;
        ties += t * t * t - t;
        i = j + 1;
    }
    free(it);
    double u = rank_sum_b - 0.5 * nb * (nb + 1.0);
    double mean = 0.5 * na * (double)nb;
    double var = na * (double)nb / 12.0 * ((n + 1.0) - ties / ((double)n * (n - 1.0)));
    *u_out = u;
    if (!(var > 0)) { *p_out = 1.0; return; }   /* every value tied */
    double d = fabs(u - mean) - 0.5;            /* continuity correction */
    if (d < 0) d = 0;
    double z = d / sqrt(var);
    double p = erfc(z / sqrt(2.0));
    *p_out = p > 1 ? 1 : p;
}

int rg_shift_estimate(const double *a, int na, const double *b, int nb, double conf, rg_shift *out)
{
    if (!out || !valid_samples(a, na) || !valid_samples(b, nb) || !(conf > 0 && conf < 1)) return -1;
    long k = (long)na * nb;
    if (k > RG_STATS_MAX_PAIRS) return -1;
    double *d = malloc((size_t)k * sizeof *d);
    if (!d) return -1;
    long m = 0;
    for (int i = 0; i < na; i++) {
        double la = log(a[i]);
        for (int j = 0; j < nb; j++) d[m++] = log(b[j]) - la;
    }
    qsort(d, (size_t)k, sizeof *d, cmp_double);
    memset(out, 0, sizeof *out);
    out->na = na;
    out->nb = nb;
    out->ratio = exp((k & 1) ? d[k / 2] : 0.5 * (d[k / 2 - 1] + d[k / 2]));
    /* Distribution-free interval: the C-th smallest and C-th largest pairwise
     * difference, C = floor(mn/2 - z sqrt(mn(m+n+1)/12)) (normal approximation
     * of U's distribution). C < 1: the samples are too few for this confidence. */
    double z = rg_normal_quantile(0.5 + 0.5 * conf);
    double c = floor(0.5 * (double)k - z * sqrt((double)na * nb * (na + nb + 1.0) / 12.0));
    if (c >= 1) {
        long ci = (long)c;
        out->lo = exp(d[ci - 1]);
        out->hi = exp(d[k - ci]);
    } else {
        out->lo = 0;
        out->hi = INFINITY;
    }
    free(d);
    mann_whitney(a, na, b, nb, &out->u, &out->p);
    return isnan(out->p) ? -1 : 0;
}

rg_verdict rg_shift_verdict(const rg_shift *s, double alpha, double threshold)
{
    if (!s || !(alpha > 0 && alpha < 1) || !(threshold >= 0) || isnan(s->ratio)) return RG_VERDICT_UNCLEAR;
    double up = 1 + threshold, down = 1 / (1 + threshold);
    int significant = s->p < alpha;
    if (significant && s->lo > up) return RG_VERDICT_SLOW;
    if (significant && s->hi < down) return RG_VERDICT_FAST;
    if (!significant || (s->lo >= down && s->hi <= up)) return RG_VERDICT_SAME;
    return RG_VERDICT_UNCLEAR;
}

const char *rg_verdict_name(rg_verdict v)
{
    switch (v) {
    case RG_VERDICT_SAME: return "SAME";
    case RG_VERDICT_FAST: return "FAST";
    case RG_VERDICT_SLOW: return "SLOW";
    default: return "UNCLEAR";
    }
}

/* log P(X = k) for X ~ Binomial(n, 1/2). */
static double log_binom_half(int n, int k)
{
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) - n * log(2.0);
}

int rg_median_interval(const double *x, int n, double conf, double *lo, double *hi)
{
    if (!lo || !hi || !valid_samples(x, n) || !(conf > 0 && conf < 1)) return -1;
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) return -1;
    memcpy(v, x, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    /* The largest k with P(X < k) <= (1 - conf) / 2: [x_(k), x_(n-k+1)] (1-based)
     * covers the median with probability >= conf. */
    double tail = 0.5 * (1 - conf), cdf = 0;
    int k = 0;
    for (int j = 0; j < n; j++) {
        double next = cdf + exp(log_binom_half(n, j));   /* P(X <= j) = P(X < j+1) */
        if (next > tail) break;
        cdf = next;
        k = j + 1;
    }
    if (k >= 1) {
        *lo = v[k - 1];
        *hi = v[n - k];
    } else {
        *lo = 0;
        *hi = INFINITY;
    }
    free(v);
    return 0;
}

int rg_rank_intervals(int n, const double *lo, const double *hi, int *rank)
{
    if (n < 0 || (n > 0 && (!lo || !hi || !rank))) return -1;
    for (int i = 0; i < n; i++)
        if (isnan(lo[i]) || isnan(hi[i]) || lo[i] > hi[i]) return -1;
    if (n == 0) return 0;
    double *h = malloc((size_t)n * sizeof *h);
    if (!h) return -1;
    memcpy(h, hi, (size_t)n * sizeof *h);
    qsort(h, (size_t)n, sizeof *h, cmp_double);
    for (int i = 0; i < n; i++) {
        /* count of upper bounds strictly below lo[i] (run i's own hi >= lo[i] never counts) */
        int a = 0, b = n;
        while (a < b) {
            int mid = a + (b - a) / 2;
            if (h[mid] < lo[i]) a = mid + 1;
            else b = mid;
        }
        rank[i] = 1 + a;
    }
    free(h);
    return 0;
}
