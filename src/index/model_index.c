/* SPDX-License-Identifier: Apache-2.0 */
/* model_index.c -- the front page's headline figures (model.h): each
 * current comparison group's #1 as its problem page shows it, read from the
 * problems' fields, beside rg_model_index's view. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

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

int rg_model_front(rg_registry *g, rg_index_view *v, char *err, size_t errlen)
{
    if (rg_model_index(g, v, err, errlen)) return 2;
    if (v->latest_listed && rg_model_index_leaders(g, v, err, errlen)) {
        rg_model_index_free(v);
        return 2;
    }
    return 0;
}
