/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_query.c -- reading the registry: rows, stored manifests, ranks,
 * a problem's runs, the generation that moves with every write.
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

#include "record.h"
#include "rg_util.h"

#include "registry_internal.h"

void reg_copy_col(sqlite3_stmt *st, int i, char *dst, size_t n)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    snprintf(dst, n, "%s", s ? (const char *)s : "");
}

double reg_col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* After a step loop that ended with rc: 0 when it ran to the end; else arr
 * is freed and err says why (out of memory when it stopped on a row). */
int reg_end_steps(rg_registry *g, int rc, void *arr, char *err, size_t errlen, const char *what)
{
    if (rc == SQLITE_DONE) return 0;
    free(arr);
    if (rc == SQLITE_ROW) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return reg_fail(g, err, errlen, what);
}

/* arr (n used of *cap elements of size bytes) with room for one more: arr
 * itself or its reallocation, NULL when out of memory (arr is left as it was). */
void *reg_grow(void *arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return arr;
    size_t c = *cap ? *cap * 2 : 16;
    void *q = realloc(arr, c * size);
    if (q) *cap = c;
    return q;
}

void reg_read_row(sqlite3_stmt *st, rg_run_row *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    reg_copy_col(st, 1, r->created_at, sizeof r->created_at);
    reg_copy_col(st, 2, r->observed_at, sizeof r->observed_at);
    reg_copy_col(st, 3, r->evidence, sizeof r->evidence);
    r->replicates_of = sqlite3_column_int64(st, 4);
    reg_copy_col(st, 5, r->definition, sizeof r->definition);
    reg_copy_col(st, 6, r->comparison_key, sizeof r->comparison_key);
    reg_copy_col(st, 7, r->implementation_digest, sizeof r->implementation_digest);
    reg_copy_col(st, 8, r->run_digest, sizeof r->run_digest);
    reg_copy_col(st, 9, r->device, sizeof r->device);
    reg_copy_col(st, 10, r->backend, sizeof r->backend);
    reg_copy_col(st, 11, r->kernel_name, sizeof r->kernel_name);
    reg_copy_col(st, 12, r->status, sizeof r->status);
    r->kernel = sqlite3_column_int(st, 13);
    r->passed = sqlite3_column_int(st, 14);
    r->total = sqlite3_column_int(st, 15);
    r->n_workloads = sqlite3_column_int(st, 16);
    r->mean_ns = reg_col_num(st, 17);
    r->geomean_ns = reg_col_num(st, 18);
    r->sol_score = reg_col_num(st, 19);
    reg_copy_col(st, 20, r->primary_statistic, sizeof r->primary_statistic);
    r->primary_ns = reg_col_num(st, 21);
    r->avg_speedup = reg_col_num(st, 22);
    r->fast_count = reg_col_num(st, 23);
    r->fast_total = reg_col_num(st, 24);
    reg_copy_col(st, 25, r->source, sizeof r->source);
    reg_copy_col(st, 26, r->external_id, sizeof r->external_id);
    reg_copy_col(st, 27, r->family, sizeof r->family);
    reg_copy_col(st, 28, r->architecture, sizeof r->architecture);
    reg_copy_col(st, 29, r->impl_name, sizeof r->impl_name);
    reg_copy_col(st, 30, r->impl_version, sizeof r->impl_version);
    reg_copy_col(st, 31, r->run_title, sizeof r->run_title);
    reg_copy_col(st, 32, r->project, sizeof r->project);
    reg_copy_col(st, 33, r->author, sizeof r->author);
    reg_copy_col(st, 34, r->source_revision, sizeof r->source_revision);
    reg_copy_col(st, 35, r->published_at, sizeof r->published_at);
    r->source_rank = sqlite3_column_int(st, 36);
    r->source_group_size = sqlite3_column_int(st, 37);
    reg_copy_col(st, 38, r->retracted_at, sizeof r->retracted_at);
}

int rg_registry_list(rg_registry *g, rg_run_row **rows, size_t *n, char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT " ROW_COLUMNS " FROM runs ORDER BY id", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot list runs");
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_run_row *more = reg_grow(*rows, *n, &cap, sizeof **rows);
        if (more) *rows = more;
        else {
            release(g, st);
            free(*rows);
            *rows = NULL;
            *n = 0;
            snprintf(err, errlen, "out of memory");
            return 2;
        }
        reg_read_row(st, &(*rows)[(*n)++]);
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        free(*rows);
        *rows = NULL;
        *n = 0;
        return reg_fail(g, err, errlen, "cannot list runs");
    }
    return 0;
}

/* A malloc'd copy of column col of st (n bytes, NUL-terminated), NULL when out of memory. */
static char *column_copy(sqlite3_stmt *st, int col, size_t *n)
{
    const void *p = sqlite3_column_blob(st, col);
    size_t len = (size_t)sqlite3_column_bytes(st, col);
    char *out = malloc(len + 1);
    if (!out) return NULL;
    if (len) memcpy(out, p, len);
    out[len] = 0;
    if (n) *n = len;
    return out;
}

/* Binds id to st (a query of one run) and steps to its row: 0 there; else
 * st is released, 1 when there is no such run ("no run #ID", after the
 * registry's path when with_path), 2 on error. */
static int step_run(rg_registry *g, sqlite3_stmt *st, int64_t id, int with_path, char *err, size_t errlen)
{
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return 0;
    release(g, st);
    if (rc != SQLITE_DONE) return reg_fail(g, err, errlen, "cannot read runs");
    snprintf(err, errlen, "%s%sno run #%lld", with_path ? g->path : "", with_path ? ": " : "", (long long)id);
    return 1;
}

/* Run id's row and, when asked for, its stored text (manifest) and its
 * served bytes (those it arrived as, else the text), in one query. */
static int get_row_bytes(rg_registry *g, int64_t id, rg_run_row *row, char **text, char **bytes, size_t *nbytes,
                         char *err, size_t errlen)
{
    if (text) *text = NULL;
    if (bytes) *bytes = NULL;
    sqlite3_stmt *st;
    if (prep(g, bytes ? "SELECT " ROW_COLUMNS ", manifest, COALESCE(manifest_bytes, CAST(manifest AS BLOB)) "
                        "FROM runs WHERE id = ?"
                      : "SELECT " ROW_COLUMNS ", manifest FROM runs WHERE id = ?",
             &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read runs");
    int rc = step_run(g, st, id, 1, err, errlen);
    if (rc) return rc;
    rg_run_row tmp;
    reg_read_row(st, row ? row : &tmp);
    int oom = (text && !(*text = column_copy(st, ROW_N_COLUMNS, NULL))) ||
              (bytes && !(*bytes = column_copy(st, ROW_N_COLUMNS + 1, nbytes)));
    release(g, st);
    if (oom) {
        if (text) free(*text), *text = NULL;
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return 0;
}

int reg_get_row(rg_registry *g, int64_t id, rg_run_row *row, char **text, char *err, size_t errlen)
{
    return get_row_bytes(g, id, row, text, NULL, NULL, err, errlen);
}

int rg_registry_get_text(rg_registry *g, int64_t id, char **text, char *err, size_t errlen)
{
    return reg_get_row(g, id, NULL, text, err, errlen);
}

/* manifest read from text, the stored text of run id. */
static int read_stored(rg_registry *g, int64_t id, const char *text, rg_manifest *manifest, int flags, char *err,
                       size_t errlen)
{
    char what[128], e2[RG_ERRLEN];
    snprintf(what, sizeof what, "run #%lld's stored manifest", (long long)id);
    cJSON *doc = rg_json_parse_strict(text, strlen(text), what, e2, sizeof e2);
    if (!doc || rg_manifest_read_opts(doc, manifest, flags, e2, sizeof e2)) {
        cJSON_Delete(doc);
        snprintf(err, errlen, "%s: run #%lld: its stored manifest is not readable: %s", g->path, (long long)id, e2);
        return 2;
    }
    cJSON_Delete(doc);
    return 0;
}

static int get_manifest(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, int flags, char *err,
                        size_t errlen)
{
    if (manifest) memset(manifest, 0, sizeof *manifest);
    char *text = NULL;
    int rc = reg_get_row(g, id, row, manifest ? &text : NULL, err, errlen);
    if (rc || !manifest) return rc;
    rc = read_stored(g, id, text, manifest, flags, err, errlen);
    free(text);
    return rc;
}

int rg_registry_get(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char *err, size_t errlen)
{
    return get_manifest(g, id, row, manifest, 0, err, errlen);
}

int rg_registry_get_display(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char *err,
                            size_t errlen)
{
    int rc = get_manifest(g, id, row, manifest, RG_MF_NO_DIGESTS, err, errlen);
    if (!rc && manifest && row) snprintf(manifest->obj[RG_ROLE_RUN].digest, RG_DIGEST_LEN, "%s", row->run_digest);
    return rc;
}

int rg_registry_get_page(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char **text,
                         char **bytes, size_t *nbytes, char *err, size_t errlen)
{
    if (text) *text = NULL;
    if (bytes) *bytes = NULL;
    if (!g || !row || !manifest || !text || !bytes || !nbytes) {
        snprintf(err, errlen, "rg_registry_get_page: missing argument");
        return 2;
    }
    memset(manifest, 0, sizeof *manifest);
    int rc = get_row_bytes(g, id, row, text, bytes, nbytes, err, errlen);
    if (!rc) rc = read_stored(g, id, *text, manifest, RG_MF_NO_DIGESTS, err, errlen);
    if (rc) {
        free(*text);
        free(*bytes);
        *text = *bytes = NULL;
        return rc;
    }
    snprintf(manifest->obj[RG_ROLE_RUN].digest, RG_DIGEST_LEN, "%s", row->run_digest);
    return 0;
}

/* One integer from sql with the comparison key (when not NULL; and maybe
 * two more parameters) bound; *out 0 when there is no row. */
int reg_query_i64(rg_registry *g, const char *sql, const char *key, double x, int64_t y, int64_t *out)
{
    sqlite3_stmt *st;
    *out = 0;
    if (prep(g, sql, &st) != SQLITE_OK) return 2;
    if (key) sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    if (sqlite3_bind_parameter_count(st) >= 3) {
        sqlite3_bind_double(st, 2, x);
        sqlite3_bind_int64(st, 3, y);
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    release(g, st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : 2;
}



int rg_registry_manifest_bytes(rg_registry *g, int64_t id, char **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT COALESCE(manifest_bytes, CAST(manifest AS BLOB)) FROM runs WHERE id = ?", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read runs");
    int rc = step_run(g, st, id, 0, err, errlen);
    if (rc) return rc;
    *out = column_copy(st, 0, n);
    release(g, st);
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return 0;
}

int rg_registry_list_problem(rg_registry *g, const char *definition, const rg_problem_row *groups, size_t ng,
                             int per_group, rg_run_row **rows, size_t *n, char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    if (!definition || (!groups && ng)) {
        snprintf(err, errlen, "no problem or no groups given");
        return 2;
    }
    /* Per group, on the (comparison_key, status, primary_ns) index: the
     * passed runs with a primary figure in rank order, then the others
     * (failed, or not timed); at most per_group. */
    static const char *const sql[2] = {
        "SELECT " ROW_COLUMNS " FROM runs WHERE comparison_key = ?1 AND status = 'passed' AND definition = ?2 "
        "AND primary_ns IS NOT NULL ORDER BY primary_ns ASC, id ASC LIMIT ?3",
        "SELECT " ROW_COLUMNS " FROM runs WHERE comparison_key = ?1 AND (status <> 'passed' OR primary_ns IS NULL) "
        "AND definition = ?2 ORDER BY id ASC LIMIT ?3"};
    size_t cap = 0;
    int rc = 0;
    for (size_t k = 0; k < ng && !rc; k++) {
        int64_t left = per_group > 0 ? per_group : INT64_MAX;
        for (int pass = 0; pass < 2 && left > 0 && !rc; pass++) {
            sqlite3_stmt *st;
            if (prep(g, sql[pass], &st) != SQLITE_OK) {
                rc = reg_fail(g, err, errlen, "cannot list runs");
                break;
            }
            sqlite3_bind_text(st, 1, groups[k].comparison_key, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(st, 2, definition, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, 3, left);
            int step;
            while ((step = sqlite3_step(st)) == SQLITE_ROW) {
                rg_run_row *more = reg_grow(*rows, *n, &cap, sizeof **rows);
                if (!more) break;
                *rows = more;
                reg_read_row(st, &(*rows)[(*n)++]);
                left--;
            }
            release(g, st);
            if (step == SQLITE_ROW) {
                snprintf(err, errlen, "out of memory");
                rc = 2;
            } else if (step != SQLITE_DONE) {
                rc = reg_fail(g, err, errlen, "cannot list runs");
            }
        }
    }
    if (rc) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}

int rg_registry_problem_groups(rg_registry *g, const char *definition, rg_problem_row **out, size_t *n, char *err,
                               size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    /* On the (definition, comparison_key) index: counted, not sorted. */
#define PROBLEMS_SQL(where)                                                                                        \
    "SELECT definition, comparison_key, "                                                                          \
    "(SELECT r.device FROM runs r WHERE r.comparison_key = runs.comparison_key LIMIT 1), COUNT(*), "             \
    "0 FROM runs " where                                                                                          \
    " GROUP BY definition, comparison_key ORDER BY definition, comparison_key"
    if (prep(g, definition ? PROBLEMS_SQL("WHERE definition = ?1") : PROBLEMS_SQL(""), &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot list problems");
    if (definition) sqlite3_bind_text(st, 1, definition, -1, SQLITE_TRANSIENT);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_problem_row *more = reg_grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        rg_problem_row *x = &(*out)[(*n)++];
        memset(x, 0, sizeof *x);
        reg_copy_col(st, 0, x->definition, sizeof x->definition);
        reg_copy_col(st, 1, x->comparison_key, sizeof x->comparison_key);
        reg_copy_col(st, 2, x->device, sizeof x->device);
        x->runs = sqlite3_column_int64(st, 3);
        x->best_id = sqlite3_column_int64(st, 4);
    }
    release(g, st);
    if (reg_end_steps(g, rc, *out, err, errlen, "cannot list problems")) {
        *out = NULL;
        *n = 0;
        return 2;
    }
    return 0;
}


int rg_registry_generation(rg_registry *g, int64_t *gen, char *err, size_t errlen)
{
    /* Any stored run, note, replication, signature or conflict moves one of these. */
    if (reg_query_i64(g, "SELECT (SELECT COALESCE(MAX(id),0) FROM runs) * 1000003 + (SELECT COALESCE(MAX(id),0) FROM "
                     "notes) * 1009 + (SELECT COALESCE(MAX(id),0) FROM replications) + (SELECT COALESCE(MAX(id),0) "
                     "FROM run_signatures) * 7919 + (SELECT COALESCE(MAX(id),0) FROM run_conflicts) * 104729",
                  NULL, 0, 0, gen))
        return reg_fail(g, err, errlen, "cannot read the registry");
    return 0;
}

const char *rg_registry_file(const rg_registry *g) { return g ? g->path : ""; }

int rg_registry_group_order(rg_registry *g, const char *comparison_key, int64_t **ids, double **geomean, size_t *n,
                            char *err, size_t errlen)
{
    *ids = NULL;
    *geomean = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g,
                           "SELECT id, primary_ns FROM runs WHERE comparison_key = ? AND status = 'passed' "
                           "AND primary_ns IS NOT NULL ORDER BY primary_ns ASC, id ASC", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot rank runs");
    sqlite3_bind_text(st, 1, comparison_key ? comparison_key : "", -1, SQLITE_TRANSIENT);
    size_t cap_i = 0, cap_g = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t *mi = reg_grow(*ids, *n, &cap_i, sizeof **ids);
        if (mi) *ids = mi;
        double *mg = mi ? reg_grow(*geomean, *n, &cap_g, sizeof **geomean) : NULL;
        if (!mg) break;
        *geomean = mg;
        (*ids)[*n] = sqlite3_column_int64(st, 0);
        (*geomean)[(*n)++] = sqlite3_column_double(st, 1);
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        free(*ids);
        free(*geomean);
        *ids = NULL;
        *geomean = NULL;
        *n = 0;
        return rc == SQLITE_ROW ? (snprintf(err, errlen, "out of memory"), 2) : reg_fail(g, err, errlen, "cannot rank runs");
    }
    return 0;
}
