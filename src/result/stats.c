/* SPDX-License-Identifier: Apache-2.0 */
/* stats.c -- summary statistics of a run's per-iteration times. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void rg_time_stats_compute(const double *samples, int n, rg_time_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n <= 0 || !samples) return;
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) return;
    memcpy(v, samples, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    st->mean = sum / n;
    st->median = (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    st->min = v[0];
    st->max = v[n - 1];
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (v[i] - st->mean) * (v[i] - st->mean);
    st->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    free(v);
}

int rg_time_stats_finite(const double *values, int n, rg_time_stats *st)
{
    double *v = n > 0 && values ? malloc((size_t)n * sizeof *v) : NULL;
    int k = 0;
    for (int i = 0; v && i < n; i++)
        if (isfinite(values[i])) v[k++] = values[i];
    rg_time_stats_compute(v, k, st);
    free(v);
    return k;
}

void rg_result_set_samples(rg_workload_result *wr, double *samples_ns, int n)
{
    wr->samples_ns = samples_ns;
    wr->n_samples = n;
    wr->timed = 1;
    rg_time_stats_compute(samples_ns, n, &wr->time_ns);
    wr->gbps = wr->time_ns.median > 0 ? wr->bytes / wr->time_ns.median : 0; /* bytes/ns = GB/s */
}
