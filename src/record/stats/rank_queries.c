/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rank_queries.c -- the registry's answers that need the ranking rule
 * (rank.h): a run's rank in its group with the group's #1, and every
 * problem group with its #1. Here, not in registry_query.c, so that the
 * registry's queries do not call back into the ranking built on them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "record.h"
#include "registry_internal.h"

/* Counts on the (comparison_key, status, primary_ns) index, so a run page
 * costs O(log n) whatever the size of its group (the index's load benchmark
 * has 10,000 runs in one group). Same order as before: the primary statistic ascending,
 * ties by id. */
int rg_registry_rank_of(rg_registry *g, int64_t id, int *rank, int *group_size, int64_t *first, char *err,
                        size_t errlen)
{
    *rank = 0;
    *group_size = 0;
    *first = 0;
    rg_run_row row;
    int rc = rg_registry_get(g, id, &row, NULL, err, errlen);
    if (rc) return rc;
    int64_t size = 0, before = 0;
    /* Ranked: passed with a primary figure (a `check` run times nothing). */
    int ranked = !strcmp(row.status, "passed") && isfinite(row.primary_ns);
    if (reg_query_i64(g,
                  "SELECT COUNT(*) FROM runs WHERE comparison_key = ? AND status = 'passed' "
                  "AND primary_ns IS NOT NULL",
                  row.comparison_key, 0, 0, &size) ||
        (ranked &&
         reg_query_i64(g,
                   "SELECT COUNT(*) FROM runs WHERE comparison_key = ?1 AND status = 'passed' "
                   "AND (primary_ns < ?2 OR (primary_ns = ?2 AND id < ?3))",
                   row.comparison_key, row.primary_ns, id, &before)))
        return reg_fail(g, err, errlen, "cannot rank runs");
    *group_size = (int)size;
    if (ranked) *rank = (int)before + 1;
    return rg_registry_first(g, row.comparison_key, first, err, errlen);   /* the one #1 (rank.h) */
}

int rg_registry_problems(rg_registry *g, const char *definition, rg_problem_row **out, size_t *n, char *err,
                         size_t errlen)
{
    if (rg_registry_problem_groups(g, definition, out, n, err, errlen)) return 2;
    for (size_t i = 0; i < *n; i++)   /* each group's #1: the one definition (rank.h) */
        if (rg_registry_first(g, (*out)[i].comparison_key, &(*out)[i].best_id, err, errlen)) {
            free(*out);
            *out = NULL;
            *n = 0;
            return 2;
        }
    return 0;
}
