/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chart.h -- the index's three charts, as inline SVG appended to a buffer:
 *
 *   rg_chart_latency    a run's latency per workload (log scale) with its
 *                       T_SOL and reference bars where the record has them;
 *   rg_chart_bandwidth  a run's achieved bandwidth per workload under the
 *                       device's datasheet peak;
 *   rg_chart_trend      an implementation line's primary statistic over its
 *                       runs, oldest first, with each run's interval;
 *   rg_chart_field      a comparison group's top implementations side by
 *                       side: achieved bandwidth per workload, % of peak;
 *   rg_chart_records    the best figure of a group by date (a staircase);
 *   rg_chart_ratio      two runs' time ratio per workload, with intervals.
 *
 * Every chart is 950 units wide and fills its column (width 100%), has axis
 * titles, and a legend that names exactly the series it draws (legend
 * entries carry data-legend="S", drawn marks data-series="S"). Axes come
 * from ticks.h (round ticks, one unit per axis). Every string goes through
 * rg_html_esc; NaN, Inf, 0 and denormal figures are left out, never iterated on.
 */
#ifndef RG_INDEX_CHART_H
#define RG_INDEX_CHART_H

#include <stddef.h>

#include "model.h"
#include "rank.h"
#include "rg_util.h"

#define RG_CHART_WIDTH 950

void rg_chart_latency(rg_buf *b, const rg_run_view *v);
void rg_chart_bandwidth(rg_buf *b, const rg_run_view *v);
/* e: the line's runs, oldest first (rg_registry_line). */
void rg_chart_trend(rg_buf *b, const rg_ranked *e, size_t n);
/* A problem page's group: its top implementations (g->series, at most
 * RG_FIELD_CHART_LINES: the top five and the reference), workloads on the x
 * axis ordered by bytes moved and labelled by shape, y the achieved
 * bandwidth as a share of the GPU's peak (100% = the speed-of-light floor;
 * GB/s where the peak is not known), with the ceiling the group's shortest
 * time (launch latency) puts on each workload. */
void rg_chart_field(rg_buf *b, const rg_group_view *g);
/* A records page's group: every dated run that may rank, the records, and
 * the staircase of the best figure by date. */
void rg_chart_records(rg_buf *b, const rg_records_group *r);
/* A compare page: per workload (ordered by bytes moved, labelled by shape)
 * the ratio with its interval, and the line at 1. */
void rg_chart_ratio(rg_buf *b, const rg_compare_view *v);

#endif
