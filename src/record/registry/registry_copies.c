/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry_copies.c -- copies of one run (issue 24): the signatures a run
 * gathered, the metadata on which two copies disagreed.
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

/* Lists every signature doc carries (by key id) for run rid; one already
 * listed keeps the date it was first received. */
int reg_record_signatures(rg_registry *g, int64_t rid, const cJSON *doc, const char *now)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "signatures");
    if (!cJSON_IsArray(list) || !list->child) return 0;
    sqlite3_stmt *st;
    if (prep(g, "INSERT OR IGNORE INTO run_signatures (run_id, key_id, created_at) VALUES (?,?,?)", &st) != SQLITE_OK)
        return 2;
    int rc = 0;
    for (const cJSON *s = list->child; s && !rc; s = s->next) {
        const char *kid = rg_json_str(s, "keyId");
        if (!kid) continue;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, rid);
        sqlite3_bind_text(st, 2, kid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : 2;
    }
    release(g, st);
    return rc;
}

static int has_key_id(const cJSON *list, const char *kid)
{
    for (const cJSON *s = cJSON_IsArray(list) ? list->child : NULL; s; s = s->next) {
        const char *k = rg_json_str(s, "keyId");
        if (k && !strcmp(k, kid)) return 1;
    }
    return 0;
}

/* The most signatures a manifest keeps (rg_manifest's signatures[]). */
#define RG_MAX_SIGNATURES ((int)(sizeof ((rg_manifest *)0)->signatures / sizeof ((rg_manifest *)0)->signatures[0]))

/* Appends to stored's signatures list those of offered whose key is not
 * there yet; returns how many (-1 out of memory, -2 more than a manifest keeps). */
static int add_new_signatures(cJSON *stored, const cJSON *offered)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(offered, "signatures");
    cJSON *list = cJSON_GetObjectItemCaseSensitive(stored, "signatures");
    int added = 0;
    for (const cJSON *s = cJSON_IsArray(in) ? in->child : NULL; s; s = s->next) {
        const char *kid = rg_json_str(s, "keyId");
        if (!kid || has_key_id(list, kid)) continue;
        if (cJSON_GetArraySize(list) >= RG_MAX_SIGNATURES) return -2;
        if (!list && !(list = cJSON_AddArrayToObject(stored, "signatures"))) return -1;
        cJSON *copy = cJSON_Duplicate(s, 1);
        if (!copy || !cJSON_AddItemToArray(list, copy)) {
            cJSON_Delete(copy);
            return -1;
        }
        added++;
    }
    return added;
}

/* Keeps a metadata member in which the offered copy differs from the
 * stored one (once per distinct offered value). 1 recorded, 0 nothing new, -1 error. */
static int record_conflict(rg_registry *g, int64_t rid, const char *member, const cJSON *stored, const cJSON *offered,
                           const char *now)
{
    if (cJSON_Compare(stored, offered, 1) || (!stored && !offered)) return 0;
    char e2[RG_ERRLEN];
    char *a = stored ? rg_json_print(stored, 0, e2, sizeof e2) : strdup("null");
    char *b = offered ? rg_json_print(offered, 0, e2, sizeof e2) : strdup("null");
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (a && b &&
        prep(g,
                           "INSERT INTO run_conflicts (run_id, created_at, member, stored, offered) "
                           "SELECT ?1,?2,?3,?4,?5 WHERE NOT EXISTS (SELECT 1 FROM run_conflicts WHERE run_id = ?1 AND member = ?3 AND "
                           "offered = ?5)", &st) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, rid);
        sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, member, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, a, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, b, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_DONE) rc = sqlite3_changes(g->db) > 0;
    }
    release(g, st);
    free(a);
    free(b);
    return rc;
}

/* Each role's metadata (not digested) in which the copies differ. */
static int record_conflicts(rg_registry *g, int64_t rid, const cJSON *stored, const cJSON *offered, const char *now)
{
    int any = 0;
    for (int role = 0; role < RG_N_ROLES; role++) {
        const cJSON *so = cJSON_GetObjectItemCaseSensitive(stored, rg_role_name(role));
        const cJSON *oo = cJSON_GetObjectItemCaseSensitive(offered, rg_role_name(role));
        if (!so || !oo) continue;
        char member[48];
        snprintf(member, sizeof member, "%s.metadata", rg_role_name(role));
        int r = record_conflict(g, rid, member, cJSON_GetObjectItemCaseSensitive(so, "metadata"),
                                cJSON_GetObjectItemCaseSensitive(oo, "metadata"), now);
        if (r < 0) return -1;
        any |= r;
    }
    return any;
}

static int update_stored_text(rg_registry *g, int64_t rid, const cJSON *doc, char *err, size_t errlen)
{
    char *text = rg_json_print(doc, 0, err, errlen);
    if (!text) return 2;
    sqlite3_stmt *st;
    int ok = prep(g, "UPDATE runs SET manifest = ?, manifest_bytes = NULL WHERE id = ?", &st) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, rid);
        ok = sqlite3_step(st) == SQLITE_DONE;
        release(g, st);
    }
    free(text);
    return ok ? 0 : reg_fail(g, err, errlen, "cannot store the run's signatures");
}

/* A later copy of stored run rid (same run digest), inside store_impl's
 * transaction: its valid signatures are added to the stored manifest (which
 * is then what is served), and metadata in which it differs is kept as a
 * conflict. *existed gets 1 | RG_STORED_SIGNED | RG_STORED_CONFLICT.
 * 0, 1 refused (a bad signature, too many), 2 a registry error. */
int reg_merge_copy(rg_registry *g, int64_t rid, const cJSON *offered, const rg_manifest *om, const char *now,
                      int *existed, char *err, size_t errlen)
{
    char e2[RG_ERRLEN];
    *existed = 1;
    if (om->n_signatures && rg_signatures_check(om, NULL, e2, sizeof e2)) {
        snprintf(err, errlen, "registry: refused, a signature of the new copy does not verify: %.400s", e2);
        return 1;
    }
    char *text = NULL;
    if (reg_get_row(g, rid, NULL, &text, err, errlen)) return 2;
    cJSON *stored = rg_json_parse_strict(text, strlen(text), "the stored manifest", e2, sizeof e2);
    free(text);
    if (!stored) {
        snprintf(err, errlen, "registry: run #%lld: %.400s", (long long)rid, e2);
        return 2;
    }
    int conflicts = record_conflicts(g, rid, stored, offered, now);
    int added = conflicts < 0 ? -1 : add_new_signatures(stored, offered);
    int rc = 0;
    if (added == -2) {
        snprintf(err, errlen, "registry: refused, run #%lld would carry more than %d signatures", (long long)rid,
                 RG_MAX_SIGNATURES);
        rc = 1;
    } else if (conflicts < 0 || added < 0) {
        rc = reg_fail(g, err, errlen, "cannot keep the new copy");
    } else if (added && (update_stored_text(g, rid, stored, err, errlen) || reg_record_signatures(g, rid, stored, now))) {
        rc = reg_fail(g, err, errlen, "cannot store the run's signatures");
    }
    cJSON_Delete(stored);
    if (!rc) *existed |= (added > 0 ? RG_STORED_SIGNED : 0) | (conflicts > 0 ? RG_STORED_CONFLICT : 0);
    return rc;
}

/* Migration 3 -> 4, its C half: the signatures stored manifests carry, each
 * listed with its run's receipt time. */
int reg_index_stored_signatures(rg_registry *g, char *err, size_t errlen)
{
    sqlite3_stmt *sel = NULL;
    if (prep(g, "SELECT id, created_at, manifest FROM runs ORDER BY id", &sel) != SQLITE_OK)
        return reg_fail(g, err, errlen, "schema migration failed");
    int step, rc = 0;
    while (!rc && (step = sqlite3_step(sel)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(sel, 2);
        char e2[RG_ERRLEN], when[32];
        reg_copy_col(sel, 1, when, sizeof when);
        cJSON *doc = text ? rg_json_parse_strict(text, strlen(text), "a stored manifest", e2, sizeof e2) : NULL;
        /* an unreadable manifest is left as it is: refused when read */
        if (doc) rc = reg_record_signatures(g, sqlite3_column_int64(sel, 0), doc, when);
        cJSON_Delete(doc);
    }
    release(g, sel);
    if (rc || step != SQLITE_DONE) return reg_fail(g, err, errlen, "schema migration failed");
    return 0;
}

int rg_registry_signatures(rg_registry *g, int64_t id, rg_run_signature **out, size_t *n, char *err, size_t errlen)
{
    if (!g || !out || !n) {
        snprintf(err, errlen, "signatures: no registry or output");
        return 2;
    }
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g, "SELECT key_id, created_at FROM run_signatures WHERE run_id = ? ORDER BY id", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read signatures");
    sqlite3_bind_int64(st, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_run_signature *more = reg_grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        reg_copy_col(st, 0, (*out)[*n].key_id, sizeof (*out)[*n].key_id);
        reg_copy_col(st, 1, (*out)[*n].received_at, sizeof (*out)[*n].received_at);
        (*n)++;
    }
    release(g, st);
    if (reg_end_steps(g, rc, *out, err, errlen, "cannot read signatures")) {
        *out = NULL;
        *n = 0;
        return 2;
    }
    return 0;
}

void rg_run_conflicts_free(rg_run_conflict *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].stored);
        free(c[i].offered);
    }
    free(c);
}

int rg_registry_conflicts(rg_registry *g, int64_t id, rg_run_conflict **out, size_t *n, char *err, size_t errlen)
{
    if (!g || !out || !n) {
        snprintf(err, errlen, "conflicts: no registry or output");
        return 2;
    }
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(g,
                           "SELECT member, created_at, stored, offered FROM run_conflicts WHERE run_id = ? ORDER BY id", &st) != SQLITE_OK)
        return reg_fail(g, err, errlen, "cannot read conflicts");
    sqlite3_bind_int64(st, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rg_run_conflict *more = reg_grow(*out, *n, &cap, sizeof **out);
        if (!more) break;
        *out = more;
        rg_run_conflict *x = &(*out)[*n];
        reg_copy_col(st, 0, x->member, sizeof x->member);
        reg_copy_col(st, 1, x->received_at, sizeof x->received_at);
        const char *a = (const char *)sqlite3_column_text(st, 2), *b = (const char *)sqlite3_column_text(st, 3);
        x->stored = strdup(a ? a : "null");
        x->offered = strdup(b ? b : "null");
        if (!x->stored || !x->offered) {
            free(x->stored);
            free(x->offered);
            break;
        }
        (*n)++;
    }
    release(g, st);
    if (rc != SQLITE_DONE) {
        rg_run_conflicts_free(*out, *n);
        *out = NULL;
        *n = 0;
        if (rc == SQLITE_ROW) {
            snprintf(err, errlen, "out of memory");
            return 2;
        }
        return reg_fail(g, err, errlen, "cannot read conflicts");
    }
    return 0;
}
