/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stmt_cache.c -- prepared SQLite statements kept per connection (see
 * stmt_cache.h).
 */
#include "stmt_cache.h"

#include <string.h>

static int slot_of(const rg_stmt_cache *c, const sqlite3_stmt *st)
{
    for (int i = 0; i < RG_STMT_SLOTS; i++)
        if (c->st[i] && c->st[i] == st) return i;
    return -1;
}

static int slot_for_sql(const rg_stmt_cache *c, const char *sql)
{
    for (int i = 0; i < RG_STMT_SLOTS; i++)
        if (c->st[i] && !strcmp(sqlite3_sql(c->st[i]), sql)) return i;
    return -1;
}

/* A free slot, or the oldest one not handed out (its statement finalized); -1: all out. */
static int slot_to_fill(rg_stmt_cache *c)
{
    for (int i = 0; i < RG_STMT_SLOTS; i++)
        if (!c->st[i]) return i;
    for (int k = 0; k < RG_STMT_SLOTS; k++) {
        int i = (int)(c->next++ % RG_STMT_SLOTS);
        if (!c->out[i]) {
            sqlite3_finalize(c->st[i]);
            c->st[i] = NULL;
            return i;
        }
    }
    return -1;
}

int rg_stmt_prepare(rg_stmt_cache *c, sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
    if (st) *st = NULL;
    if (!c || !db || !sql || !st) return SQLITE_MISUSE;
    int i = slot_for_sql(c, sql);
    if (i >= 0 && !c->out[i]) {
        c->out[i] = 1;
        *st = c->st[i];
        return SQLITE_OK;
    }
    if (i >= 0)   /* a nested use of the same query: a statement of its own */
        return sqlite3_prepare_v2(db, sql, -1, st, NULL);
    int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK || !*st) return rc;
    i = slot_to_fill(c);
    if (i >= 0) {
        c->st[i] = *st;
        c->out[i] = 1;
    }
    return SQLITE_OK;
}

void rg_stmt_release(rg_stmt_cache *c, sqlite3_stmt *st)
{
    if (!st) return;
    int i = c ? slot_of(c, st) : -1;
    if (i < 0) {
        sqlite3_finalize(st);
        return;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    c->out[i] = 0;
}

void rg_stmt_cache_clear(rg_stmt_cache *c)
{
    if (!c) return;
    for (int i = 0; i < RG_STMT_SLOTS; i++) sqlite3_finalize(c->st[i]);
    memset(c, 0, sizeof *c);
}
