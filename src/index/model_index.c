/* SPDX-License-Identifier: Apache-2.0 */
/* model_index.c -- the front page's view (model.h): each comparison group
 * with its run count and #1, each current group's #1 as its problem page
 * shows it (read from the problems' fields), the newest runs and the
 * regressions of the latest revisions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static double positive_or_nan(double v) { return isfinite(v) ? v : NAN; }

static void copy(char *dst, size_t n, const char *s) { snprintf(dst, n, "%s", s ? s : ""); }

/* "geomean of per-workload medians" for ropegrad's statistic, else its name (as model.c). */
static const char *stat_label(const char *stat)
{
    if (!strcmp(stat, "geomean")) return "geomean of per-workload medians";
    if (!strcmp(stat, "mean") || !*stat) return "mean";
    return stat;
}

/* ---- the front page's headline figures ------------------------------------------------------ */

/* The leaders of one problem's current groups, appended to v->leaders (room for cap). */
static int problem_leaders(rg_registry *g, const char *def, rg_index_view *v, size_t cap, char *err, size_t errlen)
{
    rg_problem_view pv;
    int rc = rg_model_problem(g, def, &pv, err, errlen);
    if (rc == 1) return 0;   /* gone since the list was read */
    if (rc) return 2;
    for (size_t i = 0; i < pv.n_groups && v->n_leaders < cap; i++) {
        const rg_group_view *gv = &pv.groups[i];
        const rg_rank_entry *e = gv->superseded ? NULL : rg_group_first(gv);
        if (!e) continue;
        rg_index_leader *l = &v->leaders[v->n_leaders++];
        snprintf(l->definition, sizeof l->definition, "%s", def);
        snprintf(l->words, sizeof l->words, "%s", gv->words);
        snprintf(l->name, sizeof l->name, "%s", *e->name ? e->name : e->kernel);
        snprintf(l->primary_stat, sizeof l->primary_stat, "%s", gv->primary_stat);
        snprintf(l->comparison_key, sizeof l->comparison_key, "%s", gv->comparison_key);
        l->id = e->id;
        l->primary_ns = e->primary_ns;
        l->measured = !strcmp(e->trust, "measured");
    }
    rg_model_problem_free(&pv);
    return 0;
}

int rg_model_index_leaders(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    free(v->leaders);
    v->n_leaders = 0;
    v->leaders = calloc(v->n ? v->n : 1, sizeof *v->leaders);   /* at most one per group */
    if (!v->leaders) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < v->n; i++) {
        if (i && !strcmp(v->rows[i].definition, v->rows[i - 1].definition)) continue;
        if (problem_leaders(g, v->rows[i].definition, v, v->n, err, errlen)) return 2;
    }
    v->leaders_listed = 1;
    return 0;
}

/* Each group's #1 (primary figure, statistic, workloads): the headline figures. */
static int index_best(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    v->best = calloc(v->n ? v->n : 1, sizeof *v->best);
    if (!v->best) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < v->n; i++) {
        rg_index_best *b = &v->best[i];
        b->primary_ns = NAN;
        b->n_workloads = -1;
        if (v->rows[i].best_id <= 0) continue;
        rg_run_row r;
        rg_manifest m;
        if (rg_registry_get_display(g, v->rows[i].best_id, &r, &m, err, errlen)) return 2;
        rg_model_display_name(&m, &r, b->name, sizeof b->name);
        snprintf(b->harness, sizeof b->harness, "%.100s%s%.50s", m.harness_name, m.harness_version[0] ? " " : "",
                 m.harness_version);
        rg_manifest_free(&m);
        b->primary_ns = positive_or_nan(r.primary_ns);
        b->n_workloads = r.n_workloads;
        copy(b->primary_stat, sizeof b->primary_stat, stat_label(r.primary_statistic));
    }
    return 0;
}

/* The RG_LATEST_RUNS newest runs, newest first. */
static int index_latest(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(g, &rows, &n, err, errlen)) return 2;
    size_t keep = n < RG_LATEST_RUNS ? n : RG_LATEST_RUNS;
    for (size_t i = 0; i < keep; i++) v->latest[i] = rows[n - 1 - i];
    v->n_latest = keep;
    free(rows);
    return 0;
}

int rg_model_index(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (rg_registry_problems(g, NULL, &v->rows, &v->n, err, errlen)) return 2;
    if (index_best(g, v, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    int64_t total = 0;
    for (size_t i = 0; i < v->n; i++) total += v->rows[i].runs;
    if (total > RG_INTERVAL_RANK_MAX) return 0;
    if (index_latest(g, v, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    v->latest_listed = 1;
    if (rg_model_index_leaders(g, v, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    if (rg_registry_regressions(g, RG_STATS_ALPHA, RG_STATS_THRESHOLD, 1, &v->alerts, &v->n_alerts, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    v->alerts_checked = 1;
    return 0;
}

void rg_model_index_free(rg_index_view *v)
{
    rg_regressions_free(v->alerts, v->n_alerts);
    free(v->rows);
    free(v->best);
    free(v->leaders);
    memset(v, 0, sizeof *v);
}
