/* SPDX-License-Identifier: Apache-2.0 */
/* model_field.c -- a problem page's field (model.h): in each comparison
 * group, the reference run that "x reference" is taken from, and the
 * per-workload medians of the implementations its chart draws. The
 * reference is a run the registry holds (`python3 -m ropegrad bench --impl
 * reference` records one), so the figure can be followed to its record. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* "cuda reference (torch eager) torch 2.5.1": the backend, then the name. */
static int is_reference(const rg_rank_entry *e)
{
    const char *sp = strchr(e->kernel, ' ');
    return sp && !strncmp(sp + 1, RG_REFERENCE_RUN_NAME, strlen(RG_REFERENCE_RUN_NAME));
}

static int usable(const rg_rank_entry *e)
{
    return !strcmp(e->status, "passed") && isfinite(e->primary_ns) && e->primary_ns > 0;
}

static void find_reference(rg_group_view *gv)
{
    gv->ref_id = 0;
    gv->ref_ns = NAN;
    for (size_t i = 0; i < gv->n; i++) {
        const rg_rank_entry *e = &gv->e[i];
        if (is_reference(e) && usable(e) && (!gv->ref_id || e->primary_ns < gv->ref_ns)) {
            gv->ref_id = e->id;
            gv->ref_ns = e->primary_ns;
        }
    }
    for (size_t i = 0; i < gv->n; i++) {
        rg_rank_entry *e = &gv->e[i];
        e->x_ref_run = gv->ref_id && usable(e) ? gv->ref_ns / e->primary_ns : NAN;
    }
}

static void series_free(rg_field_series *s)
{
    free(s->index);
    free(s->pass);
    free(s->median);
    memset(s, 0, sizeof *s);
}

/* Entry e's per-workload medians from its manifest (s->n 0: none). 0, or 2
 * on error (s left empty). */
static int load_series(rg_registry *g, const rg_rank_entry *e, rg_field_series *s, char *err, size_t errlen)
{
    rg_run_row row;
    rg_manifest m;
    memset(s, 0, sizeof *s);
    s->id = e->id;
    snprintf(s->kernel, sizeof s->kernel, "%s", e->kernel);
    int rc = rg_registry_get_display(g, e->id, &row, &m, err, errlen);
    if (rc == 2 && !rg_registry_get(g, e->id, &row, NULL, err, errlen)) return 0;   /* damaged (rank.h): no series */
    if (rc) return rc == 1 ? 0 : 2;   /* gone since the group was read: no series */
    size_t n = m.n_workloads;
    s->index = calloc(n ? n : 1, sizeof *s->index);
    s->pass = calloc(n ? n : 1, sizeof *s->pass);
    s->median = calloc(n ? n : 1, sizeof *s->median);
    if (!s->index || !s->pass || !s->median) {
        rg_manifest_free(&m);
        series_free(s);
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        const rg_mf_workload *w = &m.workloads[i];
        s->index[i] = w->index;
        s->pass[i] = w->pass;
        s->median[i] = isfinite(w->median) && w->median > 0 ? w->median : NAN;
    }
    s->n = n;
    rg_manifest_free(&m);
    return 0;
}

static int group_field(rg_registry *g, rg_group_view *gv, char *err, size_t errlen)
{
    find_reference(gv);
    size_t want = gv->n < RG_FIELD_MAX_SERIES ? gv->n : RG_FIELD_MAX_SERIES;
    gv->series = calloc(want ? want : 1, sizeof *gv->series);
    if (!gv->series) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < want; i++) {
        rg_field_series *s = &gv->series[gv->n_series];
        if (load_series(g, &gv->e[i], s, err, errlen)) return 2;
        if (s->n) gv->n_series++;
        else series_free(s);
    }
    return 0;
}

int rg_model_field(rg_registry *g, rg_problem_view *v, char *err, size_t errlen)
{
    if (!g || !v) {
        snprintf(err, errlen, "rg_model_field: missing argument");
        return 2;
    }
    for (size_t i = 0; i < v->n_groups; i++)
        if (group_field(g, &v->groups[i], err, errlen)) return 2;
    return 0;
}

void rg_model_field_free(rg_group_view *gv)
{
    if (!gv) return;
    for (size_t i = 0; gv->series && i < gv->n_series; i++) series_free(&gv->series[i]);
    free(gv->series);
    gv->series = NULL;
    gv->n_series = 0;
}
