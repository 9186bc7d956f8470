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
 *   rg_chart_field      a comparison group's implementations side by side:
 *                       each one's median per workload (log scale).
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
/* A problem page's group: every implementation's median per workload (log
 * scale), one coloured series each (g->series, model_field.c). */
void rg_chart_field(rg_buf *b, const rg_group_view *g);

#endif
