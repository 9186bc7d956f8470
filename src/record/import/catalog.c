/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalog.c -- KernelIndex's catalog export read strictly into typed rows
 * (catalog.h). Each known table is a list of its members (name, type,
 * where in the row's struct); a row must hold exactly those members. The
 * lines come from the file as it is or through libzstd's streaming decoder.
 */
#define _POSIX_C_SOURCE 200809L
#include "catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef RG_HAVE_ZSTD
#include <zstd.h>
#endif

#include "strict_json.h"

const char *rg_catalog_printable(const char *s, char *out, size_t n)
{
    snprintf(out, n, "%s", s ? s : "");
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    return out;
}

/* ---- the lines of the file ---------------------------------------------------- */

typedef struct lines {
    const char *path;
    FILE *f;
    int zst, eof, frame_done;
    char *buf;                      /* decoded bytes [start, len) not yet handed out */
    size_t start, len, cap;
    unsigned char *in;              /* compressed input (zstd) */
    size_t in_pos, in_len;
#ifdef RG_HAVE_ZSTD
    ZSTD_DCtx *dctx;
#endif
} lines;

#define CHUNK ((size_t)1 << 20)

static int lines_open(lines *l, const char *path, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->path = path;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return 2;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return 2;
    }
    l->f = fdopen(fd, "rb");
    if (!l->f) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return 2;
    }
    unsigned char magic[4] = {0};
    size_t got = fread(magic, 1, 4, l->f);
    l->zst = got == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd;
    rewind(l->f);
    l->cap = 4 * CHUNK;
    l->buf = malloc(l->cap);
    if (!l->buf) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    if (!l->zst) return 0;
#ifdef RG_HAVE_ZSTD
    l->in = malloc(CHUNK);
    l->dctx = ZSTD_createDCtx();
    if (!l->in || !l->dctx) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return 0;
#else
    snprintf(err, errlen, "%s: zstd-compressed, and this ropegrad was built without libzstd (Debian: libzstd-dev): "
                          "decompress it first (zstd -d)", path);
    return 2;
#endif
}

static void lines_close(lines *l)
{
    if (l->f) fclose(l->f);
    free(l->buf);
    free(l->in);
#ifdef RG_HAVE_ZSTD
    ZSTD_freeDCtx(l->dctx);
#endif
    memset(l, 0, sizeof *l);
}

/* More decoded bytes after buf[len]: 0 (l->eof set at the end), or 2. */
static int lines_fill(lines *l, char *err, size_t errlen)
{
    if (l->start > 0) {   /* what was handed out makes room */
        memmove(l->buf, l->buf + l->start, l->len - l->start);
        l->len -= l->start;
        l->start = 0;
    }
    if (l->cap - l->len < CHUNK) {
        if (l->cap >= RG_CATALOG_MAX_LINE + 2 * CHUNK) return 0;   /* the caller says the line is too long */
        char *nb = realloc(l->buf, l->cap * 2);
        if (!nb) {
            snprintf(err, errlen, "out of memory");
            return 2;
        }
        l->buf = nb;
        l->cap *= 2;
    }
    if (!l->zst) {
        size_t got = fread(l->buf + l->len, 1, l->cap - l->len, l->f);
        l->len += got;
        if (got == 0) {
            if (ferror(l->f)) {
                snprintf(err, errlen, "%s: read error", l->path);
                return 2;
            }
            l->eof = 1;
        }
        return 0;
    }
#ifdef RG_HAVE_ZSTD
    size_t before = l->len;
    while (l->len == before) {
        if (l->in_pos == l->in_len) {
            l->in_len = fread(l->in, 1, CHUNK, l->f);
            l->in_pos = 0;
            if (l->in_len == 0) {
                if (ferror(l->f)) {
                    snprintf(err, errlen, "%s: read error", l->path);
                    return 2;
                }
                if (!l->frame_done) {
                    snprintf(err, errlen, "%s: the zstd stream ends early (a truncated file)", l->path);
                    return 2;
                }
                l->eof = 1;
                return 0;
            }
        }
        ZSTD_inBuffer zin = {l->in, l->in_len, l->in_pos};
        ZSTD_outBuffer zout = {l->buf + l->len, l->cap - l->len, 0};
        size_t r = ZSTD_decompressStream(l->dctx, &zout, &zin);
        if (ZSTD_isError(r)) {
            snprintf(err, errlen, "%s: not a readable zstd stream: %s", l->path, ZSTD_getErrorName(r));
            return 2;
        }
        l->frame_done = r == 0;
        l->in_pos = zin.pos;
        l->len += zout.pos;
    }
#endif
    return 0;
}

/* The next line (without its newline) into line and n: 1, 0 at the end, 2 error. */
static int lines_next(lines *l, const char **line, size_t *n, int lineno, char *err, size_t errlen)
{
    for (;;) {
        char *nl = l->len > l->start ? memchr(l->buf + l->start, '\n', l->len - l->start) : NULL;
        if (nl) {
            *line = l->buf + l->start;
            *n = (size_t)(nl - *line);
            l->start += *n + 1;
            break;
        }
        if (l->len - l->start > RG_CATALOG_MAX_LINE) {
            snprintf(err, errlen, "%s:%d: a line longer than %zu bytes", l->path, lineno, RG_CATALOG_MAX_LINE);
            return 2;
        }
        if (l->eof) {
            if (l->len == l->start) return 0;
            *line = l->buf + l->start;   /* the last line, without a newline */
            *n = l->len - l->start;
            l->start = l->len;
            break;
        }
        size_t had = l->len - l->start;
        if (lines_fill(l, err, errlen)) return 2;
        if (!l->eof && l->len - l->start == had) {
            snprintf(err, errlen, "%s:%d: a line longer than %zu bytes", l->path, lineno, RG_CATALOG_MAX_LINE);
            return 2;
        }
    }
    if (*n > RG_CATALOG_MAX_LINE) {
        snprintf(err, errlen, "%s:%d: a line longer than %zu bytes", l->path, lineno, RG_CATALOG_MAX_LINE);
        return 2;
    }
    return 1;
}

/* ---- the tables ------------------------------------------------------------------ */

enum {
    F_STR,      /* a string */
    F_STR_N,    /* a string or null */
    F_NUM_N,    /* a number or null */
    F_NUM,      /* a number */
    F_INT,      /* an integer */
    F_INT_N,    /* an integer or null */
    F_BOOL,     /* true or false */
    F_OBJ,      /* an object */
    F_OBJ_N,    /* an object or null */
    F_STRS,     /* an array of strings (joined by ", ") */
};
#define NOT_KEPT ((size_t)-1)

typedef struct field {
    const char *name;
    int type;
    size_t off;                     /* in the row's struct; NOT_KEPT: checked, not kept */
} field;

#define S(T, m) offsetof(T, m)

static const field f_source[] = {
    {"id", F_STR, S(rg_ki_source, id)},         {"slug", F_STR, S(rg_ki_source, slug)},
    {"kind", F_STR, S(rg_ki_source, kind)},     {"name", F_STR, S(rg_ki_source, name)},
    {"policy", F_OBJ_N, S(rg_ki_source, has_policy)}, {"createdAt", F_STR, S(rg_ki_source, created_at)},
};
static const field f_project[] = {
    {"id", F_STR, S(rg_ki_project, id)},
    {"slug", F_STR, S(rg_ki_project, slug)},
    {"name", F_STR, S(rg_ki_project, name)},
    {"normalizedName", F_STR, S(rg_ki_project, normalized_name)},
    {"canonicalUrl", F_STR_N, S(rg_ki_project, canonical_url)},
    {"licenseExpression", F_STR_N, S(rg_ki_project, license)},
    {"manifest", F_OBJ, NOT_KEPT},
    {"createdAt", F_STR, S(rg_ki_project, created_at)},
};
static const field f_operation[] = {
    {"id", F_STR, S(rg_ki_operation, id)},
    {"slug", F_STR, S(rg_ki_operation, slug)},
    {"family", F_STR, S(rg_ki_operation, family)},
    {"name", F_STR, S(rg_ki_operation, name)},
    {"schemaVersion", F_STR, S(rg_ki_operation, schema_version)},
    {"semanticDigest", F_STR, S(rg_ki_operation, semantic_digest)},
    {"manifest", F_OBJ, NOT_KEPT},
    {"tags", F_STRS, S(rg_ki_operation, tags)},
    {"createdAt", F_STR, S(rg_ki_operation, created_at)},
    {"supersedesId", F_STR_N, S(rg_ki_operation, supersedes_id)},
};
static const field f_alias[] = {
    {"operationId", F_STR, S(rg_ki_alias, operation_id)},
    {"alias", F_STR, S(rg_ki_alias, alias)},
};
static const field f_workload[] = {
    {"id", F_STR, S(rg_ki_workload, id)},
    {"operationId", F_STR, S(rg_ki_workload, operation_id)},
    {"workloadDigest", F_STR, S(rg_ki_workload, workload_digest)},
    {"schemaVersion", F_STR, S(rg_ki_workload, schema_version)},
    {"manifest", F_OBJ, NOT_KEPT},
    {"shapeSummary", F_STR, S(rg_ki_workload, shape_summary)},
    {"dtypes", F_STRS, S(rg_ki_workload, dtypes)},
    {"layoutKeys", F_STRS, S(rg_ki_workload, layout_keys)},
    {"createdAt", F_STR, S(rg_ki_workload, created_at)},
};
static const field f_implementation[] = {
    {"id", F_STR, S(rg_ki_implementation, id)},
    {"projectId", F_STR, S(rg_ki_implementation, project_id)},
    {"operationId", F_STR, S(rg_ki_implementation, operation_id)},
    {"slug", F_STR, S(rg_ki_implementation, slug)},
    {"implementationDigest", F_STR, S(rg_ki_implementation, implementation_digest)},
    {"sourceRevision", F_STR_N, S(rg_ki_implementation, source_revision)},
    {"language", F_STR_N, S(rg_ki_implementation, language)},
    {"framework", F_STR_N, S(rg_ki_implementation, framework)},
    {"targetArchitectures", F_STRS, S(rg_ki_implementation, target_architectures)},
    {"licenseExpression", F_STR_N, S(rg_ki_implementation, license)},
    {"sourceAvailable", F_BOOL, S(rg_ki_implementation, source_available)},
    {"installable", F_BOOL, S(rg_ki_implementation, installable)},
    {"title", F_STR, S(rg_ki_implementation, title)},
    {"installKind", F_STR_N, S(rg_ki_implementation, install_kind)},
    {"installCommand", F_STR_N, S(rg_ki_implementation, install_command)},
    {"licenseDeclared", F_STR_N, S(rg_ki_implementation, license_declared)},
    {"manifest", F_OBJ, NOT_KEPT},   /* its authors are read by impl_authors() */
    {"createdAt", F_STR, S(rg_ki_implementation, created_at)},
    {"supersedesId", F_STR_N, S(rg_ki_implementation, supersedes_id)},
};
static const field f_run[] = {
    {"id", F_STR, S(rg_ki_run, id)},
    {"runDigest", F_STR, S(rg_ki_run, run_digest)},
    {"implementationId", F_STR, S(rg_ki_run, implementation_id)},
    {"workloadId", F_STR, S(rg_ki_run, workload_id)},
    {"sourceId", F_STR, S(rg_ki_run, source_id)},
    {"status", F_STR, S(rg_ki_run, status)},
    {"observedAt", F_STR, S(rg_ki_run, observed_at)},
    {"publishedAt", F_STR_N, S(rg_ki_run, published_at)},
    {"hardwareVendor", F_STR_N, S(rg_ki_run, hardware_vendor)},
    {"hardwareModel", F_STR_N, S(rg_ki_run, hardware_model)},
    {"hardwareArchitecture", F_STR_N, S(rg_ki_run, hardware_architecture)},
    {"driverMajor", F_INT_N, S(rg_ki_run, driver_major)},
    {"cudaMajor", F_INT_N, S(rg_ki_run, cuda_major)},
    {"protocolKey", F_STR, S(rg_ki_run, protocol_key)},
    {"environmentKey", F_STR, S(rg_ki_run, environment_key)},
    {"correctnessKey", F_STR_N, S(rg_ki_run, correctness_key)},
    {"comparisonKey", F_STR, S(rg_ki_run, comparison_key)},
    {"primaryMetric", F_STR, S(rg_ki_run, primary_metric)},
    {"primaryValue", F_NUM_N, S(rg_ki_run, primary_value)},
    {"primaryUnit", F_STR_N, S(rg_ki_run, primary_unit)},
    {"sampleCount", F_INT_N, S(rg_ki_run, sample_count)},
    {"uncertaintyLow", F_NUM_N, S(rg_ki_run, uncertainty_low)},
    {"uncertaintyHigh", F_NUM_N, S(rg_ki_run, uncertainty_high)},
    {"reported", F_BOOL, S(rg_ki_run, reported)},
    {"reproducedByKernelindex", F_BOOL, S(rg_ki_run, reproduced)},
    {"independentReplicationCount", F_INT, S(rg_ki_run, replications)},
    {"sourceAvailable", F_BOOL, S(rg_ki_run, source_available)},
    {"installable", F_BOOL, S(rg_ki_run, installable)},
    {"licenseExpression", F_STR_N, S(rg_ki_run, license)},
    {"primaryStatistic", F_STR_N, S(rg_ki_run, primary_statistic)},
    {"hasRawEvidence", F_BOOL, S(rg_ki_run, has_raw_evidence)},
    {"sourceNative", F_BOOL, S(rg_ki_run, source_native)},
    {"environmentSummary", F_STR_N, S(rg_ki_run, environment_summary)},
    {"manifest", F_OBJ, S(rg_ki_run, manifest)},
    {"supersedesId", F_STR_N, S(rg_ki_run, supersedes_id)},
    {"retractedAt", F_STR_N, S(rg_ki_run, retracted_at)},
    {"retractionReason", F_STR_N, S(rg_ki_run, retraction_reason)},
};
static const field f_measurement[] = {
    {"id", F_STR, S(rg_ki_measurement, id)},
    {"runId", F_STR, S(rg_ki_measurement, run_id)},
    {"metric", F_STR, S(rg_ki_measurement, metric)},
    {"statistic", F_STR, S(rg_ki_measurement, statistic)},
    {"unit", F_STR, S(rg_ki_measurement, unit)},
    {"value", F_NUM, S(rg_ki_measurement, value)},
    {"sampleCount", F_INT_N, S(rg_ki_measurement, sample_count)},
};
static const field f_event[] = {
    {"id", F_STR, S(rg_ki_record_event, id)},
    {"comparisonKey", F_STR, S(rg_ki_record_event, comparison_key)},
    {"runId", F_STR, S(rg_ki_record_event, run_id)},
    {"previousRunId", F_STR_N, S(rg_ki_record_event, previous_run_id)},
    {"policyVersion", F_STR, S(rg_ki_record_event, policy_version)},
    {"cause", F_STR, S(rg_ki_record_event, cause)},
    {"at", F_STR, S(rg_ki_record_event, at)},
    {"createdAt", F_STR, S(rg_ki_record_event, created_at)},
};
static const field f_artifact[] = {
    {"id", F_STR, S(rg_ki_artifact, id)},
    {"contentDigest", F_STR, S(rg_ki_artifact, content_digest)},
    {"kind", F_STR, S(rg_ki_artifact, kind)},
    {"mediaType", F_STR, S(rg_ki_artifact, media_type)},
    {"sizeBytes", F_INT, S(rg_ki_artifact, size_bytes)},
    {"storage", F_STR, S(rg_ki_artifact, storage)},
    {"uri", F_STR_N, S(rg_ki_artifact, uri)},
    {"license", F_STR_N, S(rg_ki_artifact, license)},
    {"createdAt", F_STR, S(rg_ki_artifact, created_at)},
};

typedef struct table {
    const char *name;
    const field *f;
    size_t nf, size;
    size_t arr, count;              /* offsets of the array and its count in rg_catalog */
} table;

#define TABLE(name, f, T, arr, count)                                                                   \
    {name, f, sizeof f / sizeof f[0], sizeof(T), offsetof(rg_catalog, arr), offsetof(rg_catalog, count)}
static const table tables[] = {
    TABLE("sources", f_source, rg_ki_source, sources, n_sources),
    TABLE("projects", f_project, rg_ki_project, projects, n_projects),
    TABLE("operations", f_operation, rg_ki_operation, operations, n_operations),
    TABLE("operation_aliases", f_alias, rg_ki_alias, aliases, n_aliases),
    TABLE("workloads", f_workload, rg_ki_workload, workloads, n_workloads),
    TABLE("implementations", f_implementation, rg_ki_implementation, implementations, n_implementations),
    TABLE("benchmark_runs", f_run, rg_ki_run, runs, n_runs),
    TABLE("measurements", f_measurement, rg_ki_measurement, measurements, n_measurements),
    TABLE("record_events", f_event, rg_ki_record_event, events, n_events),
    TABLE("artifacts", f_artifact, rg_ki_artifact, artifacts, n_artifacts),
};
#define N_TABLES (sizeof tables / sizeof tables[0])

/* The fields of a table are at most 64. */
_Static_assert(sizeof f_run / sizeof f_run[0] <= 64, "a table of more than 64 fields");

static const char *type_text(int type)
{
    static const char *const t[] = {"a string",       "a string or null", "a number or null", "a number",
                                    "an integer",     "an integer or null", "true or false",  "an object",
                                    "an object or null", "an array of strings"};
    return t[type];
}

/* The strings of an array joined by ", " (malloc'd), NULL when it holds anything else. */
static char *join_strings(const cJSON *a)
{
    size_t n = 1;
    const cJSON *x;
    cJSON_ArrayForEach(x, a) {
        if (!cJSON_IsString(x)) return NULL;
        n += strlen(x->valuestring) + 2;
    }
    char *out = malloc(n);
    if (!out) return NULL;
    out[0] = '\0';
    cJSON_ArrayForEach(x, a) {
        if (out[0]) strcat(out, ", ");
        strcat(out, x->valuestring);
    }
    return out;
}

/* One member into its place in the row's struct: 0, or 1 (wrong type) / 3 (out of memory). */
static int take(const field *f, cJSON *v, char *row, cJSON *parent)
{
    int null = cJSON_IsNull(v);
    char **sp = f->off == NOT_KEPT ? NULL : (char **)(void *)(row + f->off);   /* NOT_KEPT: nothing to point at */
    switch (f->type) {
    case F_STR:
    case F_STR_N:
        if (!(cJSON_IsString(v) || (null && f->type == F_STR_N))) return 1;
        if (f->off == NOT_KEPT) return 0;
        return (*sp = strdup(null ? "" : v->valuestring)) ? 0 : 3;
    case F_NUM:
    case F_NUM_N:
        if (!(cJSON_IsNumber(v) || (null && f->type == F_NUM_N))) return 1;
        if (f->off != NOT_KEPT) *(double *)(row + f->off) = null ? NAN : v->valuedouble;
        return 0;
    case F_INT:
    case F_INT_N:
        if (null && f->type == F_INT_N) {
            if (f->off != NOT_KEPT) *(int64_t *)(row + f->off) = -1;
            return 0;
        }
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9e15) return 1;
        if (f->off != NOT_KEPT) *(int64_t *)(row + f->off) = (int64_t)v->valuedouble;
        return 0;
    case F_BOOL:
        if (!cJSON_IsBool(v)) return 1;
        if (f->off != NOT_KEPT) *(int *)(row + f->off) = cJSON_IsTrue(v);
        return 0;
    case F_OBJ:
    case F_OBJ_N:
        if (!(cJSON_IsObject(v) || (null && f->type == F_OBJ_N))) return 1;
        if (f->off == NOT_KEPT) return 0;
        if (f->type == F_OBJ_N) {   /* presence only (a source's policy) */
            *(int *)(row + f->off) = !null;
            return 0;
        }
        *(cJSON **)(row + f->off) = cJSON_DetachItemViaPointer(parent, v);
        return 0;
    case F_STRS:
        if (!cJSON_IsArray(v)) return 1;
        if (f->off == NOT_KEPT) return 0;
        {
            const cJSON *x;
            cJSON_ArrayForEach(x, v) if (!cJSON_IsString(x)) return 1;
        }
        return (*sp = join_strings(v)) ? 0 : 3;
    }
    return 1;
}

/* An implementation's authors: manifest.metadata.authors[].name, joined. */
static int impl_authors(rg_ki_implementation *im, const cJSON *rowobj)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rowobj, "manifest"), "metadata"), "authors");
    size_t n = 1;
    const cJSON *x;
    cJSON_ArrayForEach(x, a) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(x, "name");
        if (cJSON_IsString(name)) n += strlen(name->valuestring) + 2;
    }
    im->authors = malloc(n);
    if (!im->authors) return 3;
    im->authors[0] = '\0';
    cJSON_ArrayForEach(x, a) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(x, "name");
        if (!cJSON_IsString(name)) continue;
        if (im->authors[0]) strcat(im->authors, ", ");
        strcat(im->authors, name->valuestring);
    }
    return 0;
}

static void free_row(const table *t, char *row)
{
    for (size_t i = 0; i < t->nf; i++) {
        const field *f = &t->f[i];
        if (f->off == NOT_KEPT) continue;
        if (f->type == F_STR || f->type == F_STR_N || f->type == F_STRS) free(*(char **)(row + f->off));
        if (f->type == F_OBJ) cJSON_Delete(*(cJSON **)(row + f->off));
    }
    if (t->f == f_implementation) free(((rg_ki_implementation *)(void *)row)->authors);
}

/* Room for one more row of table t in c: a pointer to it (zeroed), NULL when out of memory. */
static char *new_row(rg_catalog *c, const table *t)
{
    char **arr = (char **)((char *)c + t->arr);
    size_t *count = (size_t *)((char *)c + t->count);
    size_t n = *count;
    if ((n & (n - 1)) == 0) {   /* grow at 0, 1, 2, 4, ... */
        size_t cap = n ? 2 * n : 1;
        char *p = realloc(*arr, cap * t->size);
        if (!p) return NULL;
        *arr = p;
    }
    char *row = *arr + n * t->size;
    memset(row, 0, t->size);
    return row;
}

/* One row of table t (rowobj) into c: 0, or 2 with the line's message. */
static int read_row(rg_catalog *c, const table *t, cJSON *rowobj, const char *path, int lineno, char *err,
                    size_t errlen)
{
    char *row = new_row(c, t);
    if (!row) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    uint64_t seen = 0;
    cJSON *v = rowobj->child, *next;
    int rc = 0;
    for (; v && !rc; v = next) {
        next = v->next;   /* a kept object is detached */
        size_t i = 0;
        while (i < t->nf && strcmp(t->f[i].name, v->string)) i++;
        if (i == t->nf) {
            char name[96];
            snprintf(err, errlen, "%s:%d: %s.%s: a field this reader does not know", path, lineno, t->name,
                     rg_catalog_printable(v->string, name, sizeof name));
            rc = 2;
        } else {
            seen |= (uint64_t)1 << i;
            int r = take(&t->f[i], v, row, rowobj);
            if (r == 1) snprintf(err, errlen, "%s:%d: %s.%s: expected %s", path, lineno, t->name, t->f[i].name,
                                 type_text(t->f[i].type));
            else if (r) snprintf(err, errlen, "out of memory");
            rc = r ? 2 : 0;
        }
    }
    for (size_t i = 0; i < t->nf && !rc; i++)
        if (!(seen & ((uint64_t)1 << i))) {
            snprintf(err, errlen, "%s:%d: %s.%s: missing", path, lineno, t->name, t->f[i].name);
            rc = 2;
        }
    if (!rc && t->f == f_implementation && impl_authors((rg_ki_implementation *)(void *)row, rowobj)) {
        snprintf(err, errlen, "out of memory");
        rc = 2;
    }
    if (!rc && t->f == f_run) ((rg_ki_run *)(void *)row)->line = lineno;
    if (rc) {
        free_row(t, row);
        return 2;
    }
    (*(size_t *)((char *)c + t->count))++;
    return 0;
}

static void count_skipped(rg_catalog *c, const char *name)
{
    c->skipped_rows++;
    char printable[sizeof c->skipped[0].table];
    rg_catalog_printable(name, printable, sizeof printable);   /* tables told apart by their printable name */
    for (size_t i = 0; i < c->n_skipped; i++)
        if (!strcmp(c->skipped[i].table, printable)) {
            c->skipped[i].rows++;
            return;
        }
    if (c->n_skipped < sizeof c->skipped / sizeof c->skipped[0]) {
        rg_catalog_printable(name, c->skipped[c->n_skipped].table, sizeof c->skipped[0].table);
        c->skipped[c->n_skipped++].rows = 1;
    }
}

/* One line: {"table": T, "row": {...}} exactly. */
static int read_line(rg_catalog *c, const char *text, size_t n, const char *path, int lineno, char *err,
                     size_t errlen)
{
    char what[600], e2[512];
    snprintf(what, sizeof what, "%.500s:%d", path, lineno);
    if (n == 0) {
        snprintf(err, errlen, "%s: an empty line", what);
        return 2;
    }
    cJSON *doc = rg_json_parse_strict(text, n, what, e2, sizeof e2);
    if (!doc) {
        snprintf(err, errlen, "%s", e2);
        return 2;
    }
    int rc = 2;
    const cJSON *tname = cJSON_GetObjectItemCaseSensitive(doc, "table");
    cJSON *row = cJSON_GetObjectItemCaseSensitive(doc, "row");
    if (!cJSON_IsObject(doc) || cJSON_GetArraySize(doc) != 2 || !cJSON_IsString(tname) || !cJSON_IsObject(row)) {
        snprintf(err, errlen, "%s: expected {\"table\": NAME, \"row\": {...}}", what);
        goto out;
    }
    rc = 0;
    size_t i = 0;
    while (i < N_TABLES && strcmp(tables[i].name, tname->valuestring)) i++;
    if (i == N_TABLES) count_skipped(c, tname->valuestring);
    else rc = read_row(c, &tables[i], row, path, lineno, err, errlen);
out:
    cJSON_Delete(doc);
    return rc;
}

int rg_catalog_read(const char *path, rg_catalog *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    lines l;
    if (lines_open(&l, path, err, errlen)) {
        lines_close(&l);
        return 2;
    }
    int rc = 0, lineno = 0;
    for (;;) {
        const char *text;
        size_t n;
        int r = lines_next(&l, &text, &n, lineno + 1, err, errlen);
        if (r == 0) break;
        if (r == 2 || read_line(out, text, n, path, ++lineno, err, errlen)) {
            rc = 2;
            break;
        }
    }
    out->lines = (size_t)lineno;
    lines_close(&l);
    if (!rc && lineno == 0) {
        snprintf(err, errlen, "%s: no lines (an empty catalog)", path);
        rc = 2;
    }
    if (rc) rg_catalog_free(out);
    return rc;
}

void rg_catalog_free(rg_catalog *c)
{
    for (size_t k = 0; k < N_TABLES; k++) {
        const table *t = &tables[k];
        char *arr = *(char **)((char *)c + t->arr);
        size_t n = *(size_t *)((char *)c + t->count);
        for (size_t i = 0; i < n; i++) free_row(t, arr + i * t->size);
        free(arr);
    }
    memset(c, 0, sizeof *c);
}
