/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stmt_cache.h -- prepared SQLite statements kept per connection.
 *
 * A served page runs about ten queries; preparing each one again per page
 * (parsing the SQL, planning it) cost about a quarter of an uncached run
 * page. The registry keeps one cache per connection: rg_stmt_prepare hands
 * out the cached statement for that SQL text (or prepares it once), and
 * rg_stmt_release resets it -- which ends its read transaction, so a held
 * statement never pins an old snapshot -- and clears its bindings. A
 * statement asked for while its cached copy is out (a nested query) is
 * prepared apart and finalized on release. Not thread-safe: one cache per
 * connection, one connection per thread.
 */
#ifndef RG_STMT_CACHE_H
#define RG_STMT_CACHE_H

#include <sqlite3.h>

#define RG_STMT_SLOTS 48

typedef struct rg_stmt_cache {
    sqlite3_stmt *st[RG_STMT_SLOTS];
    unsigned char out[RG_STMT_SLOTS];   /* handed out, not yet released */
    unsigned next;                      /* the slot the next new statement takes when all are full */
} rg_stmt_cache;

/* The statement for sql on db: SQLITE_OK with *st set, or SQLite's error
 * code with *st NULL (an invalid argument: SQLITE_MISUSE). */
int rg_stmt_prepare(rg_stmt_cache *c, sqlite3 *db, const char *sql, sqlite3_stmt **st);
/* Gives st back (NULL: nothing to do): reset and kept, or finalized. */
void rg_stmt_release(rg_stmt_cache *c, sqlite3_stmt *st);
/* Finalizes every kept statement (before the connection closes). */
void rg_stmt_cache_clear(rg_stmt_cache *c);

#endif
