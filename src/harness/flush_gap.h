/* SPDX-License-Identifier: Apache-2.0 */
/* flush_gap.h -- the GPU idle gap before a timed call (flush_gap.c): how
 * long the GPU sat with nothing to do between the end of the last activity
 * before an iteration (in practice the harness's cold-L2 flush memset) and
 * the iteration's first activity. Pure arithmetic over CUPTI timestamps
 * (cupti_span_cuda.c feeds it), so it is tested without a GPU
 * (tests/harness/test_flush_gap.c). */
#ifndef ROPEGRAD_FLUSH_GAP_H
#define ROPEGRAD_FLUSH_GAP_H

#include <stddef.h>
#include <stdint.h>

/* The idle gap before an activity starting at first_start: first_start
 * minus the latest of ends_sorted[n] (ascending) that is at or before it,
 * in ns, into *gap_ns. 0, or 1 when no activity ended by then (*gap_ns
 * untouched). An activity still running at first_start does not count. */
int rg_gap_before(const uint64_t *ends_sorted, size_t n, uint64_t first_start, double *gap_ns);

/* The median of the finite values of gaps_ns[n] (ns), in microseconds; NAN
 * when there are none. */
double rg_gap_median_us(const double *gaps_ns, int n);

#endif
