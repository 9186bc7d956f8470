/* SPDX-License-Identifier: Apache-2.0 */
/* flush_gap.c -- the GPU idle gap before a timed call (flush_gap.h). */
#include <math.h>

#include "flush_gap.h"
#include "harness.h"

int rg_gap_before(const uint64_t *ends_sorted, size_t n, uint64_t first_start, double *gap_ns)
{
    size_t lo = 0, hi = n;   /* the first end after first_start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ends_sorted[mid] <= first_start) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return 1;
    *gap_ns = (double)(first_start - ends_sorted[lo - 1]);
    return 0;
}

double rg_gap_median_us(const double *gaps_ns, int n)
{
    rg_time_stats st;
    return rg_time_stats_finite(gaps_ns, n, &st) ? st.median / 1e3 : NAN;
}
