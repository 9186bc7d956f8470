/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_digest.c -- runs named by content: the local ids of the runs whose
 * run digest begins with a given prefix of hex digits (the index's
 * /runs/<8 hex> URLs).
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "record.h"

#include "registry_internal.h"

int rg_registry_find_digest(rg_registry *g, const char *hex, int64_t *ids, size_t max, size_t *n, char *err,
                            size_t errlen)
{
    *n = 0;
    size_t len = hex ? strlen(hex) : 0;
    if (!g || !ids || !max || len < 4 || len > 64 || strspn(hex, "0123456789abcdef") != len) {
        snprintf(err, errlen, "a run digest prefix is 4 to 64 lowercase hex digits");
        return 2;
    }
    char lo[80], hi[80];
    /* A range on the unique index of run_digest: [sha256:HEX, sha256:HEX~) ('~' sorts after every hex digit). */
    snprintf(lo, sizeof lo, "sha256:%s", hex);
    snprintf(hi, sizeof hi, "sha256:%s~", hex);
    sqlite3_stmt *st;
    if (prep(g, "SELECT id FROM runs WHERE run_digest >= ? AND run_digest < ? ORDER BY id LIMIT ?", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot look the run digest up");
    sqlite3_bind_text(st, 1, lo, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, hi, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) ids[(*n)++] = sqlite3_column_int64(st, 0);
    release(g, st);
    if (rc != SQLITE_DONE) {
        *n = 0;
        return reg_fail(g, err, errlen, "cannot look the run digest up");
    }
    return 0;
}
