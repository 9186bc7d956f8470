/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalog_import.c -- a KernelIndex catalog's benchmark runs into the
 * registry (catalog_import.h): selected by operation, verified by the digest
 * rule (the same steps as `runs import`), stored with what the catalog says
 * of them, in one transaction.
 */
#define _POSIX_C_SOURCE 200809L
#include "catalog_import.h"

#include "rg_term.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookups by id (the export's ids are UUIDs) ----------------------------------- */

typedef struct by_id {
    const char *id;
    size_t at;
} by_id;

static int cmp_by_id(const void *a, const void *b) { return strcmp(((const by_id *)a)->id, ((const by_id *)b)->id); }

/* An index over n rows of size bytes whose id is the char * at offset off. NULL when out of memory. */
static by_id *index_ids(const void *rows, size_t n, size_t size, size_t off)
{
    by_id *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix) return NULL;
    for (size_t i = 0; i < n; i++) {
        ix[i].id = *(char *const *)((const char *)rows + i * size + off);
        ix[i].at = i;
    }
    qsort(ix, n, sizeof *ix, cmp_by_id);
    return ix;
}

/* The row number of id, or (size_t)-1. */
static size_t find_id(const by_id *ix, size_t n, const char *id)
{
    by_id key = {id, 0};
    const by_id *hit = id && *id ? bsearch(&key, ix, n, sizeof *ix, cmp_by_id) : NULL;
    return hit ? hit->at : (size_t)-1;
}

/* ---- which operations ------------------------------------------------------------------- */

/* sel[i] = 1 for each operation asked for; a name that matches none is an
 * error when o->require_all. */
static int select_operations(const rg_catalog *c, const rg_catalog_import_opts *o, const by_id *ops, char *sel,
                             size_t *n_sel, const char *path, char *err, size_t errlen)
{
    *n_sel = 0;
    for (size_t i = 0; i < c->n_operations; i++) sel[i] = (char)(o->all_operations != 0);
    for (size_t k = 0; !o->all_operations && k < o->n_operations; k++) {
        const char *want = o->operations[k];
        int hit = 0;
        for (size_t i = 0; i < c->n_operations; i++) {
            const rg_ki_operation *op = &c->operations[i];
            if (!strcmp(op->name, want) || !strcmp(op->slug, want) || !strcmp(op->id, want)) sel[i] = 1, hit = 1;
        }
        for (size_t a = 0; a < c->n_aliases; a++) {
            if (strcmp(c->aliases[a].alias, want)) continue;
            size_t i = find_id(ops, c->n_operations, c->aliases[a].operation_id);
            if (i != (size_t)-1) sel[i] = 1, hit = 1;
        }
        if (!hit && o->require_all) {
            snprintf(err, errlen, "%s: no operation named '%.200s' (by name, alias or slug)", path, want);
            return 2;
        }
    }
    for (size_t i = 0; i < c->n_operations; i++) *n_sel += sel[i] != 0;
    return 0;
}

/* ---- the source's rank ------------------------------------------------------------------- */

typedef struct ranked {
    const char *key;
    double value;
    size_t run;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int k = strcmp(x->key, y->key);
    if (k) return k;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* rank[i], size[i] of every run of the file (0 when it does not rank):
 * passed, with a value, neither retracted nor superseded (superseded[i]). */
static int source_ranks(const rg_catalog *c, const char *superseded, int *rank, int *size)
{
    ranked *r = malloc((c->n_runs ? c->n_runs : 1) * sizeof *r);
    if (!r) return 2;
    size_t n = 0;
    for (size_t i = 0; i < c->n_runs; i++) {
        const rg_ki_run *x = &c->runs[i];
        rank[i] = size[i] = 0;
        if (strcmp(x->status, "passed") || !isfinite(x->primary_value) || x->retracted_at[0] || superseded[i]) continue;
        r[n++] = (ranked){x->comparison_key, x->primary_value, i};
    }
    qsort(r, n, sizeof *r, cmp_ranked);
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && !strcmp(r[b].key, r[a].key)) b++;
        for (size_t k = a; k < b; k++) {
            size_t first = k;   /* ties share the rank of the first of them */
            while (first > a && r[first - 1].value == r[k].value) first--;
            rank[r[k].run] = (int)(first - a + 1);
            size[r[k].run] = (int)(b - a);
        }
        a = b;
    }
    free(r);
    return 0;
}

/* ---- one run ----------------------------------------------------------------------------- */

/* s into dst[n], cut (when it must be) at a character boundary, never inside a UTF-8 sequence. */
static void put(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
    size_t len = strlen(dst);
    if (!s || len == strlen(s)) return;
    size_t k = len;
    while (k > 0 && ((unsigned char)dst[k - 1] & 0xC0) == 0x80) k--;   /* back to the last sequence's lead byte */
    if (k > 0 && ((unsigned char)dst[k - 1] & 0x80)) {
        unsigned char lead = (unsigned char)dst[k - 1];
        size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (len - (k - 1) < need) dst[k - 1] = '\0';   /* that sequence was cut: drop it */
    }
}

typedef struct ctx {
    const rg_catalog *c;
    const char *path;
    by_id *impls, *projects, *sources, *runs;
    const char **sup_by;            /* per run: the id of the run that supersedes it (NULL none) */
    int *rank, *size;
} ctx;

static void facts_of(const ctx *x, size_t i, rg_run_source_facts *f)
{
    const rg_catalog *c = x->c;
    const rg_ki_run *r = &c->runs[i];
    memset(f, 0, sizeof *f);
    put(f->catalog_id, sizeof f->catalog_id, r->id);
    size_t im = find_id(x->impls, c->n_implementations, r->implementation_id);
    if (im != (size_t)-1) {
        const rg_ki_implementation *m = &c->implementations[im];
        put(f->author, sizeof f->author, m->authors);
        put(f->source_revision, sizeof f->source_revision, m->source_revision);
        put(f->impl_title, sizeof f->impl_title, m->title);
        size_t p = find_id(x->projects, c->n_projects, m->project_id);
        if (p != (size_t)-1) put(f->project, sizeof f->project, c->projects[p].name);
    }
    size_t s = find_id(x->sources, c->n_sources, r->source_id);
    if (s != (size_t)-1) put(f->source_name, sizeof f->source_name, c->sources[s].name);
    put(f->published_at, sizeof f->published_at, r->published_at);
    f->source_rank = x->rank[i];
    f->source_group_size = x->size[i];
    f->reported = r->reported;
    f->reproduced = r->reproduced;
    f->replications = (int)(r->replications < 0 ? -1 : r->replications > 1000000 ? 1000000 : r->replications);
    put(f->retracted_at, sizeof f->retracted_at, r->retracted_at);
    put(f->retraction_reason, sizeof f->retraction_reason, r->retraction_reason);
    put(f->supersedes, sizeof f->supersedes, r->supersedes_id);
    put(f->superseded_by, sizeof f->superseded_by, x->sup_by[i]);
    put(f->catalog_key, sizeof f->catalog_key, r->comparison_key);
}

/* The row's own digests and figures agree with its verified manifest. */
static int row_agrees(const ctx *x, const rg_ki_run *r, const cJSON *doc, char *err, size_t errlen)
{
    rg_manifest m;
    char e2[RG_ERRLEN];
    if (rg_manifest_read(doc, &m, e2, sizeof e2)) {
        snprintf(err, errlen, "%s:%d: benchmark_runs.manifest: %s", x->path, r->line, e2);
        return 1;
    }
    const struct {
        const char *field, *row, *manifest;
    } same[] = {
        {"runDigest", r->run_digest, m.obj[RG_ROLE_RUN].digest},
        {"protocolKey", r->protocol_key, m.obj[RG_ROLE_PROTOCOL].digest},
        {"environmentKey", r->environment_key, m.obj[RG_ROLE_ENVIRONMENT].digest},
        {"observedAt", r->observed_at, m.observed_at},
        {"status", r->status, m.status},
    };
    int rc = 0;
    for (size_t k = 0; k < sizeof same / sizeof same[0] && !rc; k++)
        if (strcmp(same[k].row, same[k].manifest)) {
            char a[104], b[104];
            snprintf(err, errlen, "%s:%d: benchmark_runs.%s: %s is not its manifest's (%s)", x->path, r->line,
                     same[k].field, rg_catalog_printable(same[k].row, a, sizeof a),
                     rg_catalog_printable(same[k].manifest, b, sizeof b));
            rc = 1;
        }
    rg_manifest_free(&m);
    return rc;
}

/* The digest rule on the row's own digests: runDigest, protocolKey and
 * environmentKey are those of its manifest's objects. 0, or 1 with the line. */
static int row_digests(const ctx *x, const rg_ki_run *r, char *err, size_t errlen)
{
    const struct {
        const char *field, *member, *want;
    } d[] = {{"runDigest", "run", r->run_digest},
             {"protocolKey", "protocol", r->protocol_key},
             {"environmentKey", "environment", r->environment_key}};
    for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) {
        char got[RG_DIGEST_LEN], e2[RG_ERRLEN];
        const cJSON *obj = cJSON_GetObjectItemCaseSensitive(r->manifest, d[k].member);
        if (!cJSON_IsObject(obj)) {
            snprintf(err, errlen, "%s:%d: benchmark_runs.manifest.%s: missing", x->path, r->line, d[k].member);
            return 1;
        }
        if (rg_object_digest(obj, got, e2, sizeof e2)) {
            snprintf(err, errlen, "%s:%d: benchmark_runs.manifest.%s: %s", x->path, r->line, d[k].member, e2);
            return 1;
        }
        if (strcmp(got, d[k].want)) {
            char want[104];
            snprintf(err, errlen, "%s:%d: benchmark_runs.%s: %s is not the digest of its manifest's %s (%s)",
                     x->path, r->line, d[k].field, rg_catalog_printable(d[k].want, want, sizeof want), d[k].member,
                     got);
            return 1;
        }
    }
    return 0;
}

/* The names the pages show (who made it, its title and revision) read as
 * they are: UTF-8 without control, bidi or invisible characters. 0, or 2. */
static int facts_readable(const ctx *x, const rg_ki_run *r, const rg_run_source_facts *f, char *err, size_t errlen)
{
    const struct {
        const char *field, *text;
    } t[] = {{"projects.name", f->project},
             {"implementations.manifest.metadata.authors", f->author},
             {"implementations.title", f->impl_title},
             {"implementations.sourceRevision", f->source_revision}};
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        size_t at;
        unsigned cp;
        const char *why;
        if (rg_text_check(t[k].text, &at, &why)) {
            snprintf(err, errlen, "%s:%d: the run's %s: %s at byte %zu", x->path, r->line, t[k].field, why, at);
            return 2;
        }
        if (rg_text_find_spoofing(t[k].text, &at, &cp)) {
            snprintf(err, errlen, "%s:%d: the run's %s: U+%04X at byte %zu (text that reads other than it is)",
                     x->path, r->line, t[k].field, cp, at);
            return 2;
        }
    }
    return 0;
}

/* Verifies, stores and describes run i: 0, 1 it does not verify, 2 error. */
static int import_run(const ctx *x, rg_registry *g, size_t i, rg_catalog_import_result *res, char *err,
                      size_t errlen)
{
    const rg_ki_run *r = &x->c->runs[i];
    char e2[RG_ERRLEN];
    if (row_digests(x, r, err, errlen)) return 1;
    char *text = rg_json_print(r->manifest, 0, e2, sizeof e2);
    if (!text) {
        snprintf(err, errlen, "%s:%d: benchmark_runs.manifest: %s", x->path, r->line, e2);
        return 2;
    }
    size_t n = strlen(text);
    cJSON *doc = NULL;
    int converted = 0;
    int rc = rg_manifest_parse_verified(text, n, NULL, &doc, &converted, e2, sizeof e2);
    if (!rc && converted) {
        snprintf(e2, sizeof e2, "an old ManifestBundle, not a catalog manifest");
        rc = 3;
    }
    if ((rc == 1 || rc == 3) && !converted) {   /* its digests hold (row_digests): what ropegrad's reader refuses */
        if (!res->unreadable++)
            snprintf(res->unreadable_why, sizeof res->unreadable_why, "line %d: %.200s", r->line, e2);
        free(text);
        return 0;
    }
    if (rc) {
        snprintf(err, errlen, "%s:%d: benchmark_runs.manifest: %s", x->path, r->line, e2);
        rc = rc == 1 ? 1 : 2;
    } else {
        rc = row_agrees(x, r, doc, err, errlen);
    }
    int64_t id = 0;
    int existed = 0, changed = 0;
    if (!rc && rg_registry_store_bytes(g, doc, text, n, RG_EVIDENCE_IMPORTED, &id, &existed, e2, sizeof e2)) {
        snprintf(err, errlen, "%s:%d: benchmark_runs: cannot store the run: %s", x->path, r->line, e2);
        rc = 2;
    }
    if (!rc) {
        rg_run_source_facts f;
        facts_of(x, i, &f);
        if (facts_readable(x, r, &f, err, errlen)) rc = 2;
        else if (rg_registry_set_source_facts(g, id, &f, &changed, e2, sizeof e2)) {
            snprintf(err, errlen, "%s:%d: benchmark_runs: %s", x->path, r->line, e2);
            rc = 2;
        }
        res->retracted += f.retracted_at[0] != 0;
        res->superseded += f.superseded_by[0] != 0;
    }
    if (!rc) {
        res->runs++;
        if (existed) res->already++, res->updated += changed != 0;
        else res->stored++;
    }
    cJSON_Delete(doc);
    free(text);
    return rc;
}

/* ---- the import ------------------------------------------------------------------------- */

int rg_catalog_import(rg_registry *g, const rg_catalog *c, const char *path, const rg_catalog_import_opts *o,
                      rg_catalog_import_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    ctx x = {.c = c, .path = path};
    by_id *ops = index_ids(c->operations, c->n_operations, sizeof *c->operations, offsetof(rg_ki_operation, id));
    x.impls = index_ids(c->implementations, c->n_implementations, sizeof *c->implementations,
                        offsetof(rg_ki_implementation, id));
    x.projects = index_ids(c->projects, c->n_projects, sizeof *c->projects, offsetof(rg_ki_project, id));
    x.sources = index_ids(c->sources, c->n_sources, sizeof *c->sources, offsetof(rg_ki_source, id));
    x.runs = index_ids(c->runs, c->n_runs, sizeof *c->runs, offsetof(rg_ki_run, id));
    char *sel = calloc(c->n_operations + 1, 1), *superseded = calloc(c->n_runs + 1, 1);
    x.sup_by = calloc(c->n_runs + 1, sizeof *x.sup_by);
    x.rank = calloc(c->n_runs + 1, sizeof *x.rank);
    x.size = calloc(c->n_runs + 1, sizeof *x.size);
    int rc = 2;
    if (!ops || !x.impls || !x.projects || !x.sources || !x.runs || !sel || !superseded || !x.sup_by || !x.rank ||
        !x.size) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (select_operations(c, o, ops, sel, &res->operations, path, err, errlen)) goto out;
    for (size_t i = 0; i < c->n_runs; i++) {   /* who supersedes whom */
        size_t old = find_id(x.runs, c->n_runs, c->runs[i].supersedes_id);
        if (old != (size_t)-1) {
            superseded[old] = 1;
            x.sup_by[old] = c->runs[i].id;
        }
    }
    if (source_ranks(c, superseded, x.rank, x.size)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (rg_registry_begin(g, err, errlen)) goto out;
    rc = 0;
    for (size_t i = 0; i < c->n_runs && !rc; i++) {
        size_t im = find_id(x.impls, c->n_implementations, c->runs[i].implementation_id);
        if (im == (size_t)-1) {
            char idp[84];
            snprintf(err, errlen, "%s:%d: benchmark_runs.implementationId: %s names no implementation of the file",
                     path, c->runs[i].line, rg_catalog_printable(c->runs[i].implementation_id, idp, sizeof idp));
            rc = 2;
            break;
        }
        size_t op = find_id(ops, c->n_operations, c->implementations[im].operation_id);
        if (op == (size_t)-1 || !sel[op]) continue;
        if (strcmp(c->runs[i].status, "passed")) {
            res->not_passed++;
            continue;
        }
        rc = import_run(&x, g, i, res, err, errlen);
    }
    if (rc) rg_registry_rollback(g);
    else if (rg_registry_commit(g, err, errlen)) rc = 2;
    if (rc) {
        size_t ops_matched = res->operations;
        memset(res, 0, sizeof *res);
        res->operations = ops_matched;   /* nothing was stored */
    }
out:
    free(ops);
    free(x.impls);
    free(x.projects);
    free(x.sources);
    free(x.runs);
    free(sel);
    free(superseded);
    free(x.sup_by);
    free(x.rank);
    free(x.size);
    return rc;
}
