/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_notes.c -- notes on runs and replications (a run that repeats
 * another, and whether they agreed).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rank.h"
#include "record.h"
#include "rg_util.h"

#include "registry_internal.h"

int rg_registry_add_note(rg_registry *g, int64_t id, const char *text, char *err, size_t errlen)
{
    return rg_registry_add_note_kind(g, id, "note", text, err, errlen);
}

int rg_registry_add_note_kind(rg_registry *g, int64_t id, const char *kind, const char *text, char *err,
                              size_t errlen)
{
    if (!kind || (strcmp(kind, "note") && strcmp(kind, "reproduction") && strcmp(kind, "flag"))) {
        snprintf(err, errlen, "a note's kind is note, reproduction or flag");
        return 2;
    }
    if (!text || !*text) {
        snprintf(err, errlen, "an empty note");
        return 2;
    }
    rg_run_row row;
    int rc = rg_registry_get(g, id, &row, NULL, err, errlen);
    if (rc) return rc;
    char now[32];
    reg_now_utc(now);
    if (reg_begin_write(g, err, errlen, "cannot start a write")) return 2;
    sqlite3_stmt *st;
    if (prep(g, "INSERT INTO notes (run_id, created_at, text, kind) VALUES (?,?,?,?)", &st) !=
        SQLITE_OK) {
        reg_fail(g, err, errlen, "cannot add the note");
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        reg_fail(g, err, errlen, "cannot add the note");
        release(g, st);
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    release(g, st);
    if (reg_exec(g, "COMMIT", err, errlen, "cannot commit the note")) {
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    return 0;
}

void rg_notes_free(rg_note *notes, size_t n)
{
    for (size_t i = 0; notes && i < n; i++) free(notes[i].text);
    free(notes);
}

int rg_registry_notes(rg_registry *g, int64_t id, rg_note **notes, size_t *n, char *err, size_t errlen)
{
    *notes = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT created_at, text, kind FROM notes WHERE run_id = ? ORDER BY id", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read notes");
    sqlite3_bind_int64(st, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_note *more = reg_grow(*notes, *n, &cap, sizeof **notes);
        if (!more) break;
        *notes = more;
        rg_note *x = &(*notes)[*n];
        reg_copy_col(st, 0, x->created_at, sizeof x->created_at);
        const unsigned char *t = sqlite3_column_text(st, 1);
        x->text = strdup(t ? (const char *)t : "");
        reg_copy_col(st, 2, x->kind, sizeof x->kind);
        if (!x->text) break;
        (*n)++;
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        rg_notes_free(*notes, *n);
        *notes = NULL;
        *n = 0;
        if (rc == SQLITE_ROW) {
            snprintf(err, errlen, "out of memory");
            return 2;
        }
        return reg_fail(g, err, errlen, "cannot read notes");
    }
    return 0;
}

int rg_registry_link_replication(rg_registry *g, int64_t original, int64_t replica, int agreed, int within,
                                 int total, int *upgraded, char *err, size_t errlen)
{
    *upgraded = 0;
    rg_run_row o, r;
    int rc = rg_registry_get(g, original, &o, NULL, err, errlen);
    if (!rc) rc = rg_registry_get(g, replica, &r, NULL, err, errlen);
    if (rc) return rc;
    char now[32];
    reg_now_utc(now);
    if (reg_begin_write(g, err, errlen, "cannot start a write")) return 2;
    sqlite3_stmt *st;
    if (prep(g,
                           "INSERT INTO replications (original_id, replica_id, agreed, within, total, created_at) "
                           "VALUES (?,?,?,?,?,?)", &st) != SQLITE_OK)
        goto dberr;
    sqlite3_bind_int64(st, 1, original);
    sqlite3_bind_int64(st, 2, replica);
    sqlite3_bind_int(st, 3, agreed);
    sqlite3_bind_int(st, 4, within);
    sqlite3_bind_int(st, 5, total);
    sqlite3_bind_text(st, 6, now, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    release(g, st);
    if (rc != SQLITE_DONE) goto dberr;
    /* Evidence rises only when the replica ran the same implementation on
     * the same comparison key, agreed, and the original passed. */
    if (agreed && !strcmp(o.implementation_digest, r.implementation_digest) &&
        !strcmp(o.comparison_key, r.comparison_key) && !strcmp(o.status, "passed")) {
        if (prep(g, "UPDATE runs SET evidence = 'replicated' WHERE id = ?", &st) !=
            SQLITE_OK)
            goto dberr;
        sqlite3_bind_int64(st, 1, original);
        rc = sqlite3_step(st);
        release(g, st);
        if (rc != SQLITE_DONE) goto dberr;
        *upgraded = strcmp(o.evidence, RG_EVIDENCE_REPLICATED) != 0;
    }
    if (reg_exec(g, "COMMIT", err, errlen, "cannot commit")) {
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        *upgraded = 0;
        return 2;
    }
    return 0;
dberr:
    reg_fail(g, err, errlen, "cannot record the replication");
    sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
    *upgraded = 0;
    return 2;
}

int rg_registry_replications(rg_registry *g, int64_t id, rg_replication **out, size_t *n, char *err,
                             size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g,
                           "SELECT original_id, replica_id, agreed, within, total, created_at FROM replications "
                           "WHERE original_id = ? OR replica_id = ? ORDER BY id", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read replications");
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_replication *more = reg_grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        rg_replication *x = &(*out)[(*n)++];
        x->original_id = sqlite3_column_int64(st, 0);
        x->replica_id = sqlite3_column_int64(st, 1);
        x->agreed = sqlite3_column_int(st, 2);
        x->within = sqlite3_column_int(st, 3);
        x->total = sqlite3_column_int(st, 4);
        reg_copy_col(st, 5, x->created_at, sizeof x->created_at);
    }
    release(g, st);
    if (reg_end_steps(g, rc, *out, err, errlen, "cannot read replications")) {
        *out = NULL;
        *n = 0;
        return 2;
    }
    return 0;
}
