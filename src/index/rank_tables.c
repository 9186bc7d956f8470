/* SPDX-License-Identifier: Apache-2.0 */
/* rank_tables.c -- rank order of comparison groups per registry generation (rank_tables.h). */
#include "rank_tables.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"

typedef struct rank_table {
    char file[4096], key[RG_DIGEST_LEN];
    int64_t gen;
    int64_t *ids;
    double *primary;
    size_t n;
    int64_t first;                  /* #1: rg_registry_first_of (rank.h), not ids[0] */
    int valid;
    int building;                   /* a thread is building this key's table of generation building_gen */
    int64_t building_gen;
} rank_table;

#define RANK_TABLES 16
static rank_table tables[RANK_TABLES];
static unsigned next_slot;
static unsigned long builds;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t built = PTHREAD_COND_INITIALIZER;

unsigned long rg_rank_tables_builds(void)
{
    pthread_mutex_lock(&mu);
    unsigned long n = builds;
    pthread_mutex_unlock(&mu);
    return n;
}

static int same_group(const rank_table *t, const char *file, const char *key)
{
    return (t->valid || t->building) && !strcmp(t->key, key) && !strcmp(t->file, file);
}

/* The slot of (file, key), else a free one, else the next one not being built (mu held). */
static rank_table *slot_for(const char *file, const char *key)
{
    for (unsigned i = 0; i < RANK_TABLES; i++)
        if (same_group(&tables[i], file, key)) return &tables[i];
    for (unsigned i = 0; i < RANK_TABLES; i++)
        if (!tables[i].valid && !tables[i].building) return &tables[i];
    for (unsigned i = 0; i < RANK_TABLES; i++) {
        rank_table *t = &tables[next_slot++ % RANK_TABLES];
        if (!t->building) return t;
    }
    return NULL;   /* all sixteen being built: build without keeping it */
}

/* Orders the group of key in g (the current generation). On an error out
 * holds no arrays (all its pointers NULL): the callers free out's arrays
 * whatever happened, and must not free them twice. */
static int build(rg_registry *g, const char *key, rank_table *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (rg_registry_group_order(g, key, &out->ids, &out->primary, &out->n, err, errlen) ||
        rg_registry_first_of(g, out->ids, out->n, &out->first, err, errlen)) {
        free(out->ids);
        free(out->primary);
        memset(out, 0, sizeof *out);
        return 2;
    }
    return 0;
}

/* Moves fresh (built at gen) into t unless t holds a newer generation (mu
 * held): 1 when kept (fresh is emptied), 0 when not (fresh is left as it is). */
static int install(rank_table *t, rank_table *fresh, const char *file, const char *key, int64_t gen)
{
    if (!t || (t->valid && t->gen > gen)) return 0;
    free(t->ids);
    free(t->primary);
    t->ids = fresh->ids;
    t->primary = fresh->primary;
    t->n = fresh->n;
    t->first = fresh->first;
    t->gen = gen;
    t->valid = 1;
    snprintf(t->file, sizeof t->file, "%s", file);
    snprintf(t->key, sizeof t->key, "%s", key);
    fresh->ids = NULL;
    fresh->primary = NULL;
    return 1;
}

/* The table of (g's file, key) at generation gen, found, waited for or
 * built (into scratch, whose arrays the caller frees, when no slot keeps
 * it); called and returns with mu held. NULL with a message on error. */
static rank_table *table_at(rg_registry *g, int64_t gen, const char *key, rank_table *scratch, char *err,
                            size_t errlen)
{
    const char *file = rg_registry_file(g);
    for (;;) {
        rank_table *t = slot_for(file, key);
        if (t && t->valid && t->gen == gen && same_group(t, file, key)) return t;
        if (t && t->building && t->building_gen == gen && same_group(t, file, key)) {
            pthread_cond_wait(&built, &mu);   /* another thread builds this very table */
            continue;
        }
        /* Build it here; claim the slot unless another generation is being built in it. */
        int claimed = t && !t->building;
        if (claimed) {
            if (!same_group(t, file, key)) {   /* a slot taken over from another group */
                free(t->ids);
                free(t->primary);
                memset(t, 0, sizeof *t);
                snprintf(t->file, sizeof t->file, "%s", file);
                snprintf(t->key, sizeof t->key, "%s", key);
            }
            t->building = 1;
            t->building_gen = gen;
        }
        pthread_mutex_unlock(&mu);
        int rc = build(g, key, scratch, err, errlen);
        pthread_mutex_lock(&mu);
        builds++;
        if (claimed) t->building = 0;
        pthread_cond_broadcast(&built);
        if (rc) return NULL;
        scratch->valid = 1;
        scratch->gen = gen;
        /* Kept for the next pages, unless a newer generation's table got
         * there first: then this page ranks with its own build (scratch). */
        if ((claimed || (t && same_group(t, file, key))) && install(t, scratch, file, key, gen)) return t;
        return scratch;
    }
}

/* (primary, id) of slot i against (x, id) in rank order. */
static int before(const rank_table *t, size_t i, double x, int64_t id)
{
    return t->primary[i] < x || (t->primary[i] == x && t->ids[i] < id);
}

int rg_rank_tables_rank(rg_registry *g, int64_t gen, const rg_run_row *row, int *rank, int *group_size,
                        int64_t *first, char *err, size_t errlen)
{
    if (!g || !row || !rank || !group_size || !first) {
        snprintf(err, errlen, "rank tables: missing argument");
        return 2;
    }
    *rank = *group_size = 0;
    *first = 0;
    rank_table scratch = {.ids = NULL};
    pthread_mutex_lock(&mu);
    const rank_table *t = table_at(g, gen, row->comparison_key, &scratch, err, errlen);
    if (t) {
        *group_size = (int)t->n;
        *first = t->first;
        if (!strcmp(row->status, "passed") && isfinite(row->primary_ns)) {   /* else: failed, or not timed */
            size_t lo = 0, hi = t->n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (before(t, mid, row->primary_ns, row->id)) lo = mid + 1;
                else hi = mid;
            }
            if (lo < t->n && t->ids[lo] == row->id) *rank = (int)lo + 1;
        }
    }
    pthread_mutex_unlock(&mu);
    free(scratch.ids);
    free(scratch.primary);
    return t ? 0 : 2;
}

int rg_rank_tables_warm(rg_registry *g, const char *comparison_key, char *err, size_t errlen)
{
    int64_t gen;
    if (!g || !comparison_key) {
        snprintf(err, errlen, "rank tables: missing argument");
        return 2;
    }
    if (rg_registry_generation(g, &gen, err, errlen)) return 2;
    rank_table scratch = {.ids = NULL};
    pthread_mutex_lock(&mu);
    const rank_table *t = table_at(g, gen, comparison_key, &scratch, err, errlen);
    pthread_mutex_unlock(&mu);
    free(scratch.ids);
    free(scratch.primary);
    return t ? 0 : 2;
}
