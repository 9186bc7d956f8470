/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rank_tables.h -- the rank order of comparison groups, kept for one
 * registry generation and shared by the server's threads.
 *
 * A table holds the passed runs of one group (per registry file and
 * comparison key) in rank order, the primary figure ascending, ties by id,
 * and the group's #1 (rg_registry_first_of, rank.h). A run page then ranks
 * by binary search instead of ordering its group (10,000 runs in the load
 * benchmark) on every render. A table is valid for the generation it was
 * built at (rg_registry_generation moves with every write): the first page
 * of a new generation builds it, once; pages of the same group asked for
 * meanwhile wait for that build instead of building it again.
 */
#ifndef RG_RANK_TABLES_H
#define RG_RANK_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* row's rank in its comparison group at generation gen (0 when it is not
 * ranked: failed, or not timed), the group's size (its passed, timed runs)
 * and #1's id (0: none). 0, or 2 with a message. */
int rg_rank_tables_rank(rg_registry *g, int64_t gen, const rg_run_row *row, int *rank, int *group_size,
                        int64_t *first, char *err, size_t errlen);

/* Builds the table of comparison_key at g's current generation unless it
 * is there (the writer calls it after a push, so that the first page of the
 * new generation finds it). 0, or 2 with a message. */
int rg_rank_tables_warm(rg_registry *g, const char *comparison_key, char *err, size_t errlen);

/* How many tables were built since the process started (for tests). */
unsigned long rg_rank_tables_builds(void);

#endif
