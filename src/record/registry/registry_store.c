/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_store.c -- storing runs in the registry: a verified manifest and
 * the copies of its figures in columns, imports of original bytes, the
 * migration that converts stored manifests, replacing a stored manifest.
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

static void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v)) sqlite3_bind_double(st, i, v);
    else sqlite3_bind_null(st, i);
}

static void bind_count(sqlite3_stmt *st, int i, int v)
{
    if (v >= 0) sqlite3_bind_int(st, i, v);
    else sqlite3_bind_null(st, i);
}

/* The columns copied from a manifest, in this order, from parameter `at`. */
#define MF_COLUMNS                                                                                                \
    "definition, comparison_key, implementation_digest, run_digest, device, backend, kernel, kernel_name, "      \
    "status, passed, total, primary_statistic, primary_ns, mean_ns, geomean_ns, sol_score, avg_speedup, "       \
    "fast_count, fast_total, source, external_id, family, architecture, manifest"
#define MF_N_COLUMNS 24

static int bind_manifest(sqlite3_stmt *st, int at, const rg_manifest *m, const char *key, const char *text)
{
    sqlite3_bind_text(st, at + 0, m->benchmark, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 2, m->implementation_digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 3, m->obj[RG_ROLE_RUN].digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 4, m->product, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 5, m->backend, -1, SQLITE_STATIC);
    bind_count(st, at + 6, m->kernel);
    sqlite3_bind_text(st, at + 7, m->kernel_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 8, m->status, -1, SQLITE_STATIC);
    bind_count(st, at + 9, m->passed);
    bind_count(st, at + 10, m->total);
    sqlite3_bind_text(st, at + 11, m->primary_statistic, -1, SQLITE_STATIC);
    bind_num(st, at + 12, m->primary_ns);
    bind_num(st, at + 13, m->suite_mean_ns);
    bind_num(st, at + 14, m->suite_geomean_ns);
    bind_num(st, at + 15, m->sol_score);
    bind_num(st, at + 16, m->avg_speedup);
    bind_num(st, at + 17, m->fast_1_count);
    bind_num(st, at + 18, m->fast_1_total);
    sqlite3_bind_text(st, at + 19, m->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 20, m->external_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 21, m->family, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 22, m->architecture, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 23, text, -1, SQLITE_STATIC);
    return at + MF_N_COLUMNS;
}

/* The run's comparison key, always by the written rule: a recorded key that
 * differs is refused, so a run enters only the group its own fields derive. */
static int manifest_key(const rg_manifest *m, char key[RG_DIGEST_LEN], char *err, size_t errlen)
{
    if (rg_comparison_key(m, key, err, errlen)) return 2;
    if (m->comparison_key_recorded && strcmp(key, m->comparison_key)) {
        snprintf(err, errlen, "comparisonKey %.80s is not the one the run's own fields derive (%s): refused",
                 m->comparison_key, key);
        return 2;
    }
    return 0;
}

static int store_workloads(rg_registry *g, int64_t rid, const rg_manifest *m)
{
    sqlite3_stmt *st = NULL;
    if (prep(g, "DELETE FROM run_workloads WHERE run_id = ?", &st) != SQLITE_OK) return 2;
    sqlite3_bind_int64(st, 1, rid);
    int rc = sqlite3_step(st);
    release(g, st);
    if (rc != SQLITE_DONE) return 2;
    if (prep(g,
                           "INSERT INTO run_workloads (run_id, idx, uuid, median_ns, min_ns, max_ns, mean_ns, "
                           "stddev_ns, bytes, t_sol_ns, t_b_ns, sol_score, pass) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", &st) != SQLITE_OK)
        return 2;
    for (size_t i = 0; i < m->n_workloads; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        /* run_workloads holds measurements: a workload the record names but did
         * not time (no run detail, e.g. a workload object alone) has no row. */
        if (!isfinite(w->median)) continue;
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        sqlite3_bind_int64(st, 1, rid);
        sqlite3_bind_int(st, 2, w->index);
        sqlite3_bind_text(st, 3, w->uuid, -1, SQLITE_STATIC);
        bind_num(st, 4, w->median);
        bind_num(st, 5, w->min);
        bind_num(st, 6, w->max);
        bind_num(st, 7, w->mean);
        bind_num(st, 8, w->stddev);
        bind_num(st, 9, w->bytes);
        bind_num(st, 10, w->t_sol_ns);
        bind_num(st, 11, w->t_b_ns);
        bind_num(st, 12, w->sol_score);
        sqlite3_bind_int(st, 13, w->pass);
        if (sqlite3_step(st) != SQLITE_DONE) {
            release(g, st);
            return 2;
        }
    }
    release(g, st);
    return 0;
}

/* Stores a manifest; bytes[nbytes] (NULL: none) is the text it arrived as,
 * kept to be served byte for byte (the index's /runs/ID.json). */
static int store_impl(rg_registry *g, const cJSON *manifest, const char *bytes, size_t nbytes,
                      const char *evidence, int64_t replicates_of, int64_t *id, int *existed, char *err,
                      size_t errlen)
{
    if (id) *id = 0;
    if (existed) *existed = 0;
    if (!g || !manifest || !evidence) {
        snprintf(err, errlen, "registry: nothing to store");
        return 2;
    }
    rg_manifest m;
    char key[RG_DIGEST_LEN];
    if (rg_manifest_read(manifest, &m, err, errlen)) return 2;
    if (manifest_key(&m, key, err, errlen)) {
        rg_manifest_free(&m);
        return 2;
    }
    char *text = rg_json_print(manifest, 0, err, errlen);
    if (!text) {
        rg_manifest_free(&m);
        return 2;
    }
    /* What is stored must read back strictly (a tree built with a repeated
     * member name prints as text the strict reader refuses; found by fuzzing). */
    if (!bytes) {
        char e2[RG_ERRLEN];
        cJSON *back = rg_json_parse_strict(text, strlen(text), "the manifest", e2, sizeof e2);
        if (!back) {
            snprintf(err, errlen, "registry: the manifest cannot be stored: %.400s", e2);
            free(text);
            rg_manifest_free(&m);
            return 2;
        }
        cJSON_Delete(back);
    }
    char now[32];
    reg_now_utc(now);
    sqlite3_stmt *st = NULL;
    int rc = 2, nested;
    if (reg_write_begin(g, &nested, err, errlen, "cannot start a write")) {
        free(text);
        rg_manifest_free(&m);
        return 2;
    }
    /* Already here (e.g. imported twice)? Then it is the same run. */
    if (prep(g, "SELECT id FROM runs WHERE run_digest = ?", &st) != SQLITE_OK) goto dberr;
    sqlite3_bind_text(st, 1, m.obj[RG_ROLE_RUN].digest, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        int64_t old = sqlite3_column_int64(st, 0);
        int merged = 1;
        if (id) *id = old;
        release(g, st);
        st = NULL;
        free(text);
        text = NULL;
        rc = reg_merge_copy(g, old, manifest, &m, now, &merged, err, errlen);
        if (existed) *existed = merged;
        if (rc) goto rollback;
        rg_manifest_free(&m);
        if (!reg_write_commit(g, nested, err, errlen, "cannot commit")) return 0;
        reg_write_rollback(g, nested);
        return 2;
    }
    release(g, st);
    st = NULL;
    if (prep(g,
                           "INSERT INTO runs (created_at, observed_at, evidence, replicates_of, " MF_COLUMNS
                           ", manifest_bytes, impl_name, impl_version, run_title) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st) != SQLITE_OK)
        goto dberr;
    sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, m.observed_at, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, evidence, -1, SQLITE_STATIC);
    if (replicates_of > 0) sqlite3_bind_int64(st, 4, replicates_of);
    else sqlite3_bind_null(st, 4);
    int at = bind_manifest(st, 5, &m, key, text);
    if (bytes) sqlite3_bind_blob64(st, at, bytes, nbytes, SQLITE_STATIC);
    else sqlite3_bind_null(st, at);
    sqlite3_bind_text(st, at + 1, m.impl_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 2, m.impl_version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, at + 3, m.obj[RG_ROLE_RUN].title, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) goto dberr;
    release(g, st);
    st = NULL;
    int64_t rid = sqlite3_last_insert_rowid(g->db);
    if (store_workloads(g, rid, &m) || reg_record_signatures(g, rid, manifest, now)) goto dberr;
    free(text);
    text = NULL;
    rg_manifest_free(&m);
    if (reg_write_commit(g, nested, err, errlen, "cannot commit the run")) goto rollback;
    if (id) *id = rid;
    return 0;
dberr:
    reg_fail(g, err, errlen, "cannot store the run");
rollback:
    if (st) release(g, st);
    free(text);
    rg_manifest_free(&m);
    reg_write_rollback(g, nested);
    return rc;
}

int rg_registry_store(rg_registry *g, const cJSON *manifest, const char *evidence, int64_t replicates_of,
                      int64_t *id, int *existed, char *err, size_t errlen)
{
    return store_impl(g, manifest, NULL, 0, evidence, replicates_of, id, existed, err, errlen);
}

/* Migration 1 -> 2, its C half: every stored manifest of the old format
 * (ManifestBundle) is converted to the current envelope in place, and its
 * row's copied columns follow. Runs inside migrate()'s transaction: any
 * failure rolls the whole migration back, nothing is lost. */
int reg_convert_stored_manifests(rg_registry *g, char *err, size_t errlen)
{
    sqlite3_stmt *sel = NULL, *upd = NULL;
    int rc = 2;
    if (prep(g, "SELECT id, manifest FROM runs ORDER BY id", &sel) != SQLITE_OK ||
        prep(g, "UPDATE runs SET (" MF_COLUMNS ") = (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                                  "WHERE id = ?", &upd) != SQLITE_OK) {
        reg_fail(g, err, errlen, "schema migration failed");
        goto out;
    }
    int step;
    while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t rid = sqlite3_column_int64(sel, 0);
        const char *text = (const char *)sqlite3_column_text(sel, 1);
        char what[96], e2[RG_ERRLEN];
        snprintf(what, sizeof what, "run #%lld", (long long)rid);
        cJSON *old = text ? rg_json_parse_strict(text, strlen(text), what, e2, sizeof e2) : NULL;
        if (!old || !rg_manifest_is_legacy(old)) {
            cJSON_Delete(old);
            continue;   /* already current (or unreadable: left as it is, refused when read) */
        }
        cJSON *doc = rg_manifest_convert_legacy(old, e2, sizeof e2);
        cJSON_Delete(old);
        char *ntext = doc ? rg_json_print(doc, 0, e2, sizeof e2) : NULL;
        rg_manifest m;
        char key[RG_DIGEST_LEN];
        int bad = !ntext || rg_manifest_read(doc, &m, e2, sizeof e2);
        cJSON_Delete(doc);
        if (!bad && manifest_key(&m, key, e2, sizeof e2)) {
            rg_manifest_free(&m);
            bad = 1;
        }
        if (bad) {
            snprintf(err, errlen, "%s: run #%lld: cannot convert its old manifest: %s", g->path, (long long)rid, e2);
            free(ntext);
            goto out;
        }
        sqlite3_reset(upd);
        sqlite3_clear_bindings(upd);
        int at = bind_manifest(upd, 1, &m, key, ntext);
        sqlite3_bind_int64(upd, at, rid);
        int ok = sqlite3_step(upd) == SQLITE_DONE && !store_workloads(g, rid, &m);
        rg_manifest_free(&m);
        free(ntext);
        if (!ok) {
            reg_fail(g, err, errlen, "schema migration failed");
            goto out;
        }
    }
    if (step != SQLITE_DONE) {
        reg_fail(g, err, errlen, "schema migration failed");
        goto out;
    }
    rc = 0;
out:
    release(g, sel);
    release(g, upd);
    return rc;
}


int rg_manifest_parse_verified(const char *bytes, size_t n, const char *trusted, cJSON **out, int *converted,
                               char *err, size_t errlen)
{
    *out = NULL;
    if (converted) *converted = 0;
    if (!bytes) {
        snprintf(err, errlen, "no manifest given");
        return 3;
    }
    char e2[RG_ERRLEN];
    cJSON *doc = rg_json_parse_strict(bytes, n, "manifest", e2, sizeof e2);
    if (!doc) {
        snprintf(err, errlen, "%s", e2);
        return 3;
    }
    if (rg_manifest_is_legacy(doc)) {   /* an old ManifestBundle: its own digests are checked as it converts */
        cJSON *nd = rg_manifest_convert_legacy(doc, e2, sizeof e2);
        cJSON_Delete(doc);
        if (!nd) {
            snprintf(err, errlen, "an old ManifestBundle that cannot be converted: %s", e2);
            return 1;
        }
        doc = nd;
        if (converted) *converted = 1;
    }
    rg_manifest m;
    if (rg_manifest_read(doc, &m, e2, sizeof e2)) {
        snprintf(err, errlen, "refused, it does not verify: %s", e2);
        cJSON_Delete(doc);
        return 3;
    }
    int rc = rg_manifest_verify_typed(&m, NULL, e2, sizeof e2);
    if (!rc) rc = rg_observed_at_check(m.observed_at, (double)time(NULL), e2, sizeof e2);
    if (rc) {
        snprintf(err, errlen, "refused, it does not verify: %s", e2);
    } else if ((rc = rg_signatures_check(&m, trusted, e2, sizeof e2)) != 0) {
        snprintf(err, errlen, "refused: %s", e2);
    } else {
        snprintf(err, errlen, "%s", e2);   /* what the signature check found, for the caller to say */
    }
    rg_manifest_free(&m);
    if (rc) {
        cJSON_Delete(doc);
        return rc == 1 ? 1 : 3;
    }
    *out = doc;
    return 0;
}

int rg_registry_store_bytes(rg_registry *g, const cJSON *manifest, const char *bytes, size_t n,
                            const char *evidence, int64_t *id, int *existed, char *err, size_t errlen)
{
    return store_impl(g, manifest, bytes, n, evidence, 0, id, existed, err, errlen);
}

int rg_registry_import(rg_registry *g, const char *bytes, size_t n, const char *evidence, int64_t *id,
                       int *existed, char *err, size_t errlen)
{
    if (id) *id = 0;
    if (existed) *existed = 0;
    cJSON *m;
    int converted;
    int rc = rg_manifest_parse_verified(bytes, n, NULL, &m, &converted, err, errlen);
    if (rc) return rc;
    /* The bytes are kept as they came unless they were an old bundle (then the converted text is the record). */
    rc = rg_registry_store_bytes(g, m, converted ? NULL : bytes, n, evidence, id, existed, err, errlen);
    cJSON_Delete(m);
    return rc == 1 ? 1 : rc ? 2 : 0;
}


int rg_registry_replace_manifest(rg_registry *g, int64_t id, const cJSON *doc, char *err, size_t errlen)
{
    rg_run_row row;
    rg_manifest m;
    int rc = rg_registry_get(g, id, &row, NULL, err, errlen);
    if (rc) return rc;
    if (rg_manifest_read(doc, &m, err, errlen)) return 2;
    int same = !strcmp(m.obj[RG_ROLE_RUN].digest, row.run_digest);
    rg_manifest_free(&m);
    if (!same) {
        snprintf(err, errlen, "run #%lld: the new manifest has another run digest", (long long)id);
        return 2;
    }
    char *text = rg_json_print(doc, 0, err, errlen);
    if (!text) return 2;
    if (reg_begin_write(g, err, errlen, "cannot start a write")) {
        free(text);
        return 2;
    }
    sqlite3_stmt *st = NULL;
    /* The bytes it arrived as are superseded: what is served is the signed copy. */
    rc = prep(g, "UPDATE runs SET manifest = ?, manifest_bytes = NULL WHERE id = ?", &st) ==
         SQLITE_OK;
    if (rc) {
        sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, id);
        rc = sqlite3_step(st) == SQLITE_DONE;
    }
    release(g, st);
    free(text);
    char now[32];
    reg_now_utc(now);
    if (rc) rc = !reg_record_signatures(g, id, doc, now);
    if (!rc) {
        reg_fail(g, err, errlen, "cannot store the manifest");
        sqlite3_exec(g->db, "ROLLBACK", NULL, NULL, NULL);
        return 2;
    }
    return reg_exec(g, "COMMIT", err, errlen, "cannot commit");
}
