/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_sources.c -- what a run's source says of it beyond its manifest
 * (record.h, rg_run_source_facts): the names and dates in the runs table's
 * columns (listed with every row), the rest in run_sources. Written by
 * `runs import-catalog`; nothing here is covered by a digest.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "record.h"

#include "registry_internal.h"

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
    if (s && *s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, i);
}

static void bind_int_or_null(sqlite3_stmt *st, int i, int v, int unknown_below)
{
    if (v >= unknown_below) sqlite3_bind_int(st, i, v);
    else sqlite3_bind_null(st, i);
}

/* The columns the facts go to: runs (10) and run_sources (11), in the order
 * bind_facts binds them. */
#define RUNS_FACTS "project, author, source_revision, published_at, source_rank, source_group_size, retracted_at"
#define SOURCES_FACTS                                                                                             \
    "catalog_id, impl_title, source_name, reported, reproduced, replications, retraction_reason, supersedes, "    \
    "superseded_by, catalog_key"

static void bind_runs_facts(sqlite3_stmt *st, const rg_run_source_facts *f)
{
    bind_text_or_null(st, 1, f->project);
    bind_text_or_null(st, 2, f->author);
    bind_text_or_null(st, 3, f->source_revision);
    bind_text_or_null(st, 4, f->published_at);
    bind_int_or_null(st, 5, f->source_rank, 1);
    bind_int_or_null(st, 6, f->source_group_size, 1);
    bind_text_or_null(st, 7, f->retracted_at);
}

static void bind_sources_facts(sqlite3_stmt *st, int at, const rg_run_source_facts *f)
{
    sqlite3_bind_text(st, at, f->catalog_id, -1, SQLITE_STATIC);
    bind_text_or_null(st, at + 1, f->impl_title);
    bind_text_or_null(st, at + 2, f->source_name);
    bind_int_or_null(st, at + 3, f->reported, 0);
    bind_int_or_null(st, at + 4, f->reproduced, 0);
    bind_int_or_null(st, at + 5, f->replications, 0);
    bind_text_or_null(st, at + 6, f->retraction_reason);
    bind_text_or_null(st, at + 7, f->supersedes);
    bind_text_or_null(st, at + 8, f->superseded_by);
    bind_text_or_null(st, at + 9, f->catalog_key);
}

/* One statement with the facts bound, stepped to its end: 0, or 2. */
static int run_facts_stmt(rg_registry *g, const char *sql, int64_t id, const rg_run_source_facts *f, int sources)
{
    sqlite3_stmt *st = NULL;
    if (prep(g, sql, &st) != SQLITE_OK) return 2;
    if (sources) {
        sqlite3_bind_int64(st, 1, id);
        bind_sources_facts(st, 2, f);
    } else {
        bind_runs_facts(st, f);
        sqlite3_bind_int64(st, 8, id);
    }
    int rc = sqlite3_step(st);
    release(g, st);
    return rc == SQLITE_DONE ? 0 : 2;
}

/* 1 when a and b say the same (as stored: an unknown count reads back as -1/0). */
static int same_facts(const rg_run_source_facts *a, const rg_run_source_facts *b)
{
    const char *sa[] = {a->catalog_id, a->project, a->author, a->source_revision, a->impl_title, a->source_name,
                        a->published_at, a->retracted_at, a->retraction_reason, a->supersedes, a->superseded_by,
                        a->catalog_key};
    const char *sb[] = {b->catalog_id, b->project, b->author, b->source_revision, b->impl_title, b->source_name,
                        b->published_at, b->retracted_at, b->retraction_reason, b->supersedes, b->superseded_by,
                        b->catalog_key};
    for (size_t i = 0; i < sizeof sa / sizeof sa[0]; i++)
        if (strcmp(sa[i], sb[i])) return 0;
    return (a->source_rank > 0 ? a->source_rank : 0) == (b->source_rank > 0 ? b->source_rank : 0) &&
           (a->source_group_size > 0 ? a->source_group_size : 0) == (b->source_group_size > 0 ? b->source_group_size : 0) &&
           (a->reported >= 0 ? a->reported : -1) == (b->reported >= 0 ? b->reported : -1) &&
           (a->reproduced >= 0 ? a->reproduced : -1) == (b->reproduced >= 0 ? b->reproduced : -1) &&
           (a->replications >= 0 ? a->replications : -1) == (b->replications >= 0 ? b->replications : -1);
}

int rg_registry_set_source_facts(rg_registry *g, int64_t id, const rg_run_source_facts *f, int *changed, char *err,
                                 size_t errlen)
{
    if (changed) *changed = 0;
    if (!g || !f) {
        snprintf(err, errlen, "registry: no source facts to store");
        return 2;
    }
    rg_run_source_facts old;
    int found;
    if (rg_registry_source_facts(g, id, &old, &found, err, errlen)) return 2;
    if (found && same_facts(&old, f)) return 0;   /* a re-import changes nothing */
    int nested;
    if (reg_write_begin(g, &nested, err, errlen, "cannot start a write")) return 2;
    if (run_facts_stmt(g, "UPDATE runs SET (" RUNS_FACTS ") = (?,?,?,?,?,?,?) WHERE id = ?", id, f, 0) ||
        run_facts_stmt(g, "INSERT OR REPLACE INTO run_sources (run_id, " SOURCES_FACTS ") VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       id, f, 1)) {
        reg_fail(g, err, errlen, "cannot store what the source says of the run");
        reg_write_rollback(g, nested);
        return 2;
    }
    if (reg_write_commit(g, nested, err, errlen, "cannot commit")) {
        reg_write_rollback(g, nested);
        return 2;
    }
    if (changed) *changed = 1;
    return 0;
}

static int col_int(sqlite3_stmt *st, int i, int unknown)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? unknown : sqlite3_column_int(st, i);
}

int rg_registry_source_facts(rg_registry *g, int64_t id, rg_run_source_facts *f, int *found, char *err,
                             size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->reported = f->reproduced = f->replications = -1;
    *found = 0;
    sqlite3_stmt *st = NULL;
    if (prep(g, "SELECT " RUNS_FACTS ", " SOURCES_FACTS " FROM runs JOIN run_sources ON run_sources.run_id = runs.id "
                "WHERE runs.id = ?", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read what the source says of the run");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *found = 1;
        reg_copy_col(st, 0, f->project, sizeof f->project);
        reg_copy_col(st, 1, f->author, sizeof f->author);
        reg_copy_col(st, 2, f->source_revision, sizeof f->source_revision);
        reg_copy_col(st, 3, f->published_at, sizeof f->published_at);
        f->source_rank = col_int(st, 4, 0);
        f->source_group_size = col_int(st, 5, 0);
        reg_copy_col(st, 6, f->retracted_at, sizeof f->retracted_at);
        reg_copy_col(st, 7, f->catalog_id, sizeof f->catalog_id);
        reg_copy_col(st, 8, f->impl_title, sizeof f->impl_title);
        reg_copy_col(st, 9, f->source_name, sizeof f->source_name);
        f->reported = col_int(st, 10, -1);
        f->reproduced = col_int(st, 11, -1);
        f->replications = col_int(st, 12, -1);
        reg_copy_col(st, 13, f->retraction_reason, sizeof f->retraction_reason);
        reg_copy_col(st, 14, f->supersedes, sizeof f->supersedes);
        reg_copy_col(st, 15, f->superseded_by, sizeof f->superseded_by);
        reg_copy_col(st, 16, f->catalog_key, sizeof f->catalog_key);
        rc = SQLITE_DONE;
    }
    release(g, st);
    return rc == SQLITE_DONE ? 0 : reg_fail(g, err, errlen, "cannot read what the source says of the run");
}
