/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_internal.h -- what the files of the registry share (not for the
 * rest of ropegrad: record.h is the registry's interface). The registry is
 * split by job: registry_open.c (opening, schema, migrations),
 * registry_sql.c (errors, retries, transactions), registry_store.c,
 * registry_query.c, registry_notes.c, registry_copies.c.
 */
#ifndef RG_REGISTRY_INTERNAL_H
#define RG_REGISTRY_INTERNAL_H

#include <sqlite3.h>

#include "record.h"
#include "stmt_cache.h"

struct rg_registry {
    sqlite3 *db;
    int read_only;
    int busy;                       /* the last failed step was SQLITE_BUSY/LOCKED (rg_registry_busy) */
    int full;                       /* the last failure was a full disk or the file size limit (rg_registry_full) */
    char path[4096];
    rg_stmt_cache stmts;            /* this connection's prepared statements */
};

static inline int prep(rg_registry *g, const char *sql, sqlite3_stmt **st)
{
    return rg_stmt_prepare(&g->stmts, g->db, sql, st);
}
static inline void release(rg_registry *g, sqlite3_stmt *st) { rg_stmt_release(&g->stmts, st); }

/* The columns of an rg_run_row, in reg_read_row's order (ROW_N_COLUMNS of
 * them): the run's own, then the names and what its source says of it
 * (schema 5: NULL for runs stored before, and for facts no source gave). */
#define ROW_COLUMNS                                                                                                \
    "id, created_at, observed_at, evidence, COALESCE(replicates_of, 0), definition, comparison_key, "             \
    "implementation_digest, run_digest, device, backend, kernel_name, status, COALESCE(kernel, -1), "             \
    "COALESCE(passed, -1), COALESCE(total, -1), "                                                               \
    "(SELECT COUNT(*) FROM run_workloads w WHERE w.run_id = runs.id), mean_ns, geomean_ns, sol_score, "          \
    "primary_statistic, primary_ns, avg_speedup, fast_count, fast_total, source, external_id, family, architecture, "   \
    "impl_name, impl_version, run_title, project, author, source_revision, published_at, "                       \
    "COALESCE(source_rank, 0), COALESCE(source_group_size, 0), retracted_at"
#define ROW_N_COLUMNS 39

/* ---- registry_sql.c ---- */

/* Now, as "YYYY-MM-DDTHH:MM:SSZ". */
void reg_now_utc(char out[32]);
/* err = "PATH: what: SQLite's message"; notes a busy failure; returns 2. */
int reg_fail(rg_registry *g, char *err, size_t errlen, const char *what);
/* 1 for SQLITE_BUSY and SQLITE_LOCKED. */
int reg_busy_code(int rc);
/* Prepares sql and takes its first step, both retried while busy: the step's code. */
int reg_first_step(rg_registry *g, const char *sql, sqlite3_stmt **st);
/* An opening step failed with rc: "busy" when it was, else reg_fail. */
int reg_fail_open(rg_registry *g, int rc, char *err, size_t errlen, const char *what);
/* sqlite3_exec of sql: 0, or 2 with "PATH: what: message". */
int reg_exec(rg_registry *g, const char *sql, char *err, size_t errlen, const char *what);
/* BEGIN IMMEDIATE, retried while busy: 0 or 2. */
int reg_begin_write(rg_registry *g, char *err, size_t errlen, const char *what);
/* A write that may run inside a caller's transaction (rg_registry_begin):
 * then a savepoint (*nested = 1), else BEGIN IMMEDIATE. Its end: commit
 * (RELEASE or COMMIT, 0 or 2) or roll back (to the savepoint, or all). */
int reg_write_begin(rg_registry *g, int *nested, char *err, size_t errlen, const char *what);
int reg_write_commit(rg_registry *g, int nested, char *err, size_t errlen, const char *what);
void reg_write_rollback(rg_registry *g, int nested);

/* ---- registry_query.c ---- */

void reg_copy_col(sqlite3_stmt *st, int i, char *dst, size_t n);
/* Column i as a double, NaN when NULL. */
double reg_col_num(sqlite3_stmt *st, int i);
/* After a step loop that ended with rc: 0 at the end; else arr is freed and err says why. */
int reg_end_steps(rg_registry *g, int rc, void *arr, char *err, size_t errlen, const char *what);
/* arr (n used of *cap, size bytes each) with room for one more, NULL when out of memory. */
void *reg_grow(void *arr, size_t n, size_t *cap, size_t size);
/* A row of ROW_COLUMNS into r. */
void reg_read_row(sqlite3_stmt *st, rg_run_row *r);
/* One integer from sql with the comparison key (and maybe x, y) bound; *out 0 when no row. */
int reg_query_i64(rg_registry *g, const char *sql, const char *key, double x, int64_t y, int64_t *out);
/* Run id's row and, when text is not NULL, its stored manifest text (malloc'd). 0, 1 no such run, 2. */
int reg_get_row(rg_registry *g, int64_t id, rg_run_row *row, char **text, char *err, size_t errlen);

/* ---- registry_store.c ---- */

/* Migration 1 -> 2: stored manifests converted to the current envelope. */
int reg_convert_stored_manifests(rg_registry *g, char *err, size_t errlen);

/* ---- registry_copies.c ---- */

/* Another copy (offered, read as om) of stored run rid: its new signatures
 * and its metadata conflicts recorded. 0, 1 refused, 2 error. */
int reg_merge_copy(rg_registry *g, int64_t rid, const cJSON *offered, const rg_manifest *om, const char *now,
                   int *existed, char *err, size_t errlen);
/* The signatures of doc recorded for run rid. */
int reg_record_signatures(rg_registry *g, int64_t rid, const cJSON *doc, const char *now);
/* Migration 3 -> 4: the signatures of stored manifests indexed. */
int reg_index_stored_signatures(rg_registry *g, char *err, size_t errlen);

#endif
