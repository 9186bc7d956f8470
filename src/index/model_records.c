/* SPDX-License-Identifier: Apache-2.0 */
/* model_records.c -- records over time (model.h): per comparison group of a
 * problem (one GPU, one harness version, one statistic), every run that may
 * rank (measured here, or reported by its source) by the date it was
 * observed (published where none is recorded) -- and the runs that set a new
 * best figure: KernelIndex's record staircase. Runs of an older protocol,
 * suspect, busy, partial, damaged and failed runs set no record. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int by_date(const void *x, const void *y)
{
    const rg_record_point *a = x, *b = y;
    int c = strcmp(a->date, b->date);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

static int may_rank(const rg_rank_entry *e)
{
    return !e->superseded && (!strcmp(e->trust, "measured") || !strcmp(e->trust, "reported")) &&
           isfinite(e->primary_ns) && e->primary_ns > 0;
}

static int records_group(const rg_group_view *gv, rg_records_group *rg, char *err, size_t errlen)
{
    snprintf(rg->words, sizeof rg->words, "%s", gv->words);
    snprintf(rg->device, sizeof rg->device, "%s", gv->device);
    snprintf(rg->primary_stat, sizeof rg->primary_stat, "%s", gv->primary_stat);
    snprintf(rg->comparison_key, sizeof rg->comparison_key, "%s", gv->comparison_key);
    rg->superseded = gv->superseded;
    rg->p = calloc(gv->n ? gv->n : 1, sizeof *rg->p);
    if (!rg->p) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    for (size_t i = 0; i < gv->n; i++) {
        const rg_rank_entry *e = &gv->e[i];
        if (!may_rank(e) || !e->date[0]) continue;
        rg_record_point *p = &rg->p[rg->n++];
        p->id = e->id;
        p->primary_ns = e->primary_ns;
        p->gain = NAN;
        snprintf(p->name, sizeof p->name, "%s", e->name);
        snprintf(p->date, sizeof p->date, "%s", e->date);
        snprintf(p->trust, sizeof p->trust, "%s", e->trust);
    }
    qsort(rg->p, rg->n, sizeof *rg->p, by_date);
    double best = INFINITY;
    for (size_t i = 0; i < rg->n; i++) {
        rg_record_point *p = &rg->p[i];
        if (!(p->primary_ns < best)) continue;
        p->record = 1;
        p->gain = isfinite(best) ? best / p->primary_ns : NAN;
        best = p->primary_ns;
        rg->n_records++;
    }
    return 0;
}

int rg_model_records(rg_registry *g, const char *definition, rg_records_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    rg_problem_view pv;
    int rc = rg_model_problem(g, definition, &pv, err, errlen);
    if (rc) return rc;
    snprintf(v->definition, sizeof v->definition, "%s", pv.definition);
    v->groups = calloc(pv.n_groups ? pv.n_groups : 1, sizeof *v->groups);
    if (!v->groups) {
        snprintf(err, errlen, "out of memory");
        rc = 2;
    }
    for (size_t i = 0; !rc && i < pv.n_groups; i++, v->n_groups++)
        rc = records_group(&pv.groups[i], &v->groups[i], err, errlen);
    rg_model_problem_free(&pv);
    if (rc) rg_model_records_free(v);
    return rc;
}

void rg_model_records_free(rg_records_view *v)
{
    for (size_t i = 0; v->groups && i < v->n_groups; i++) free(v->groups[i].p);
    free(v->groups);
    memset(v, 0, sizeof *v);
}
