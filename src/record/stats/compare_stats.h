/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compare_stats.h -- comparing two runs' per-iteration samples, without
 * assuming any distribution (kernel times are skewed and have outliers).
 *
 *   rg_shift_estimate   the Hodges-Lehmann estimate of the ratio B/A (the
 *                       median of all pairwise ratios b_j / a_i), its
 *                       distribution-free confidence interval (Mann-Whitney
 *                       order statistics of the pairwise log-ratios), and the
 *                       two-sided Mann-Whitney U test's p-value (normal
 *                       approximation, tie and continuity corrections).
 *   rg_shift_verdict    FAST / SLOW / SAME / UNCLEAR from that estimate, an
 *                       alpha and a minimum effect (threshold): a change is
 *                       claimed only when it is both significant and, with
 *                       the stated confidence, larger than the threshold.
 *   rg_median_interval  a distribution-free confidence interval of a median
 *                       (binomial order statistics).
 *   rg_rank_intervals   competition ranks that never claim an order the
 *                       intervals cannot support: a run's rank is 1 + the
 *                       number of runs whose whole interval lies below its own.
 *
 * Every function validates its arguments and returns 0, or -1 (NULL or empty
 * samples, a sample that is not finite or not positive, conf outside (0,1)).
 */
#ifndef RG_COMPARE_STATS_H
#define RG_COMPARE_STATS_H

/* Defaults of `runs check` and of the intervals shown by compare and rank. */
#define RG_STATS_CONF 0.95       /* confidence of every interval */
#define RG_STATS_ALPHA 0.01      /* significance level of the U test */
#define RG_STATS_THRESHOLD 0.05  /* minimum effect: 5% */

typedef struct rg_shift {
    double ratio;    /* Hodges-Lehmann estimate of B/A */
    double lo, hi;   /* its confidence interval (lo may be 0 and hi INFINITY for tiny samples) */
    double u;        /* Mann-Whitney U of B (count of pairs with b > a, ties count one half) */
    double p;        /* two-sided p-value of the U test */
    int na, nb;
} rg_shift;

typedef enum rg_verdict {
    RG_VERDICT_SAME = 0,     /* the interval lies within [1/(1+t), 1+t], or no significant difference inside it */
    RG_VERDICT_FAST = 1,     /* significant, and the whole interval is below 1/(1+t) */
    RG_VERDICT_SLOW = 2,     /* significant, and the whole interval is above 1+t */
    RG_VERDICT_UNCLEAR = 3,  /* anything else: the data cannot say */
} rg_verdict;

int rg_shift_estimate(const double *a, int na, const double *b, int nb, double conf, rg_shift *out);
rg_verdict rg_shift_verdict(const rg_shift *s, double alpha, double threshold);
const char *rg_verdict_name(rg_verdict v);

int rg_median_interval(const double *x, int n, double conf, double *lo, double *hi);

/* lo[i] <= hi[i] for each of n runs; rank[i] gets 1 + #{j : hi[j] < lo[i]}. */
int rg_rank_intervals(int n, const double *lo, const double *hi, int *rank);

/* The standard normal quantile, by bisection on erfc (no approximation
 * formula); p in (0, 1). */
double rg_normal_quantile(double p);

#endif
