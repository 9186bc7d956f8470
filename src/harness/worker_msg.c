/* SPDX-License-Identifier: Apache-2.0 */
/* worker_msg.c -- the worker's one framed message (worker.h): a run's
 * result written field by field from one table per struct, and read back
 * through the same tables, strictly: every member present, of its type and
 * range, nothing else. Doubles that are not finite travel as the strings
 * "nan", "inf" and "-inf" (JSON has none), so a result crosses unchanged. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "strict_json.h"
#include "worker.h"

#define MAX_EXACT 9007199254740992.0   /* 2^53: integers a JSON number holds exactly */
#define MAX_WORKLOADS 1000000

typedef enum { F_STR, F_INT, F_I64, F_U64, F_DBL, F_I64S, F_OBJ } ftype;

typedef struct field {
    const char *key;
    ftype type;
    size_t off, size;              /* F_STR: the buffer's size; F_I64S: the count */
    const struct field *sub;       /* F_OBJ: the member struct's table (NULL-keyed end) */
    long long lo, hi;              /* F_INT: the range */
} field;

#define STR(T, m) {#m, F_STR, offsetof(T, m), sizeof(((T *)0)->m), NULL, 0, 0}
#define INT(T, m, lo, hi) {#m, F_INT, offsetof(T, m), 0, NULL, lo, hi}
#define I64(T, m) {#m, F_I64, offsetof(T, m), 0, NULL, 0, 0}
#define DBL(T, m) {#m, F_DBL, offsetof(T, m), 0, NULL, 0, 0}
#define OBJ(T, m, t) {#m, F_OBJ, offsetof(T, m), 0, t, 0, 0}
#define END {NULL, F_STR, 0, 0, NULL, 0, 0}

static const field check_fields[] = {
    INT(rg_check, pass, 0, 1), DBL(rg_check, max_abs_err), DBL(rg_check, max_rel_err),
    DBL(rg_check, matched_ratio), I64(rg_check, n), I64(rg_check, n_matched), I64(rg_check, n_nonfinite),
    I64(rg_check, n_abs_only), STR(rg_check, reason), END,
};

static const field time_fields[] = {
    DBL(rg_time_stats, mean), DBL(rg_time_stats, median), DBL(rg_time_stats, min), DBL(rg_time_stats, max),
    DBL(rg_time_stats, stddev), END,
};

static const field share_fields[] = {
    INT(rg_cpu_share, known, 0, 1), DBL(rg_cpu_share, other_cpus), DBL(rg_cpu_share, steal_cpus),
    DBL(rg_cpu_share, span_s), END,
};

static const field env_fields[] = {
    STR(rg_env, hostname), STR(rg_env, os), STR(rg_env, cpu_model), INT(rg_env, cpu_threads, 0, INT_MAX),
    STR(rg_env, cpu_isa), STR(rg_env, gpu_name), STR(rg_env, gpu_arch), INT(rg_env, gpu_sm_count, 0, INT_MAX),
    I64(rg_env, gpu_l2_bytes), DBL(rg_env, gpu_mem_bandwidth_gbps), STR(rg_env, driver_version),
    STR(rg_env, cuda_runtime_version), INT(rg_env, sm_clock_mhz_start, -1, INT_MAX),
    INT(rg_env, sm_clock_mhz_end, -1, INT_MAX), INT(rg_env, mem_clock_mhz_start, -1, INT_MAX),
    INT(rg_env, mem_clock_mhz_end, -1, INT_MAX), STR(rg_env, ropegrad_version), STR(rg_env, build_flags),
    INT(rg_env, load_known, 0, 1), DBL(rg_env, load_avg_1m), INT(rg_env, load_cpus, 0, INT_MAX),
    OBJ(rg_env, cpu_share, share_fields), END,
};

/* samples_ns travels beside these (its length is n_samples). */
static const field workload_fields[] = {
    INT(rg_workload_result, index, 0, INT_MAX), STR(rg_workload_result, uuid), I64(rg_workload_result, batch_size),
    I64(rg_workload_result, seq_len), I64(rg_workload_result, head_dim),
    {"axes", F_I64S, offsetof(rg_workload_result, axes), RG_OP_MAX_AXES, NULL, 0, 0},
    STR(rg_workload_result, sizes), DBL(rg_workload_result, bytes), OBJ(rg_workload_result, check, check_fields),
    OBJ(rg_workload_result, yardstick, check_fields), INT(rg_workload_result, have_yardstick, 0, 1),
    INT(rg_workload_result, rounds_run, 0, INT_MAX), INT(rg_workload_result, reward_hack, 0, 1),
    INT(rg_workload_result, timed, 0, 1), OBJ(rg_workload_result, time_ns, time_fields),
    DBL(rg_workload_result, gbps), DBL(rg_workload_result, sol_ms), DBL(rg_workload_result, baseline_ms),
    STR(rg_workload_result, timer), INT(rg_workload_result, span_kernels, -1, INT_MAX),
    INT(rg_workload_result, span_memcpy, -1, INT_MAX), INT(rg_workload_result, span_memset, -1, INT_MAX),
    DBL(rg_workload_result, flush_gap_us), END,
};

/* workloads travel beside these; axis_names and impl are the parent's own. */
static const field result_fields[] = {
    STR(rg_run_result, suite), STR(rg_run_result, suite_dir), STR(rg_run_result, op),
    STR(rg_run_result, reference), STR(rg_run_result, backend), INT(rg_run_result, kernel, 0, 1000),
    STR(rg_run_result, kernel_name), STR(rg_run_result, device), STR(rg_run_result, timer),
    STR(rg_run_result, cold_l2), STR(rg_run_result, inputs), INT(rg_run_result, warmup, 0, 1000000),
    INT(rg_run_result, iterations, 0, 1000000), {"seed", F_U64, offsetof(rg_run_result, seed), 0, NULL, 0, 0},
    INT(rg_run_result, rounds, 0, 1000), INT(rg_run_result, ground_truth, 0, 1), INT(rg_run_result, restage, 0, 1),
    INT(rg_run_result, span, 0, 1), INT(rg_run_result, sync, 0, 1), INT(rg_run_result, settle, 0, 1),
    STR(rg_run_result, same_kernels), STR(rg_run_result, started_at), OBJ(rg_run_result, env, env_fields),
    INT(rg_run_result, passed, 0, MAX_WORKLOADS), INT(rg_run_result, total, 0, MAX_WORKLOADS),
    DBL(rg_run_result, mean_ns), DBL(rg_run_result, geomean_ns), STR(rg_run_result, stopped), END,
};

/* ---- writing ---------------------------------------------------------------------------- */

/* Numbers written with every digit they need (cJSON's own printing keeps
 * 15 significant digits when they compare "equal" within an epsilon). */
static cJSON *dbl_json(double v)
{
    if (!isfinite(v)) return cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    return cJSON_CreateRaw(text);
}

static cJSON *int_json(long long v)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", v);
    return cJSON_CreateRaw(text);
}

static cJSON *field_json(const field *f, const char *base);

/* The struct at base as an object of its table's members; NULL when out of memory. */
static cJSON *fields_json(const field *t, const char *base)
{
    cJSON *o = cJSON_CreateObject();
    for (; o && t->key; t++) {
        cJSON *v = field_json(t, base);
        if (!v || !cJSON_AddItemToObject(o, t->key, v)) {
            cJSON_Delete(v);
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

static cJSON *field_json(const field *f, const char *base)
{
    const char *p = base + f->off;
    int iv;
    int64_t lv;
    uint64_t uv;
    double dv;
    switch (f->type) {
    case F_STR: return cJSON_CreateString(p);
    case F_INT: memcpy(&iv, p, sizeof iv); return int_json(iv);
    case F_I64: memcpy(&lv, p, sizeof lv); return int_json((long long)lv);
    case F_U64: memcpy(&uv, p, sizeof uv); return uv <= (uint64_t)LLONG_MAX ? int_json((long long)uv) : NULL;
    case F_DBL: memcpy(&dv, p, sizeof dv); return dbl_json(dv);
    case F_OBJ: return fields_json(f->sub, p);
    case F_I64S: {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; a && i < f->size; i++) {
            memcpy(&lv, p + i * sizeof lv, sizeof lv);
            if (!cJSON_AddItemToArray(a, int_json((long long)lv))) {
                cJSON_Delete(a);
                return NULL;
            }
        }
        return a;
    }
    }
    return NULL;
}

static cJSON *workload_json(const rg_workload_result *w)
{
    cJSON *o = fields_json(workload_fields, (const char *)w);
    cJSON *s = o ? cJSON_AddArrayToObject(o, "samples_ns") : NULL;
    for (int i = 0; s && w->samples_ns && i < w->n_samples; i++)
        if (!cJSON_AddItemToArray(s, dbl_json(w->samples_ns[i]))) s = NULL;
    if (!s) cJSON_Delete(o);
    return s ? o : NULL;
}

static cJSON *result_json(const rg_run_result *r)
{
    cJSON *o = fields_json(result_fields, (const char *)r);
    cJSON *ws = o ? cJSON_AddArrayToObject(o, "workloads") : NULL;
    for (size_t i = 0; ws && i < r->n_workloads; i++)
        if (!cJSON_AddItemToArray(ws, workload_json(&r->workloads[i]))) ws = NULL;
    if (!ws) cJSON_Delete(o);
    return ws ? o : NULL;
}

/* "RGW1", the length, the text. */
static unsigned char *frame(cJSON *doc, size_t *len, char *err, size_t errlen)
{
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    size_t n = text ? strlen(text) : 0;
    unsigned char *buf = text && n <= RG_WORKER_MAX_JSON ? malloc(RG_WORKER_HEADER + n) : NULL;
    if (!buf) {
        free(text);
        snprintf(err, errlen, "the worker's message: out of memory or over %zu bytes", RG_WORKER_MAX_JSON);
        return NULL;
    }
    memcpy(buf, RG_WORKER_MAGIC, 4);
    for (int i = 0; i < 4; i++) buf[4 + i] = (unsigned char)(n >> (8 * (3 - i)));
    memcpy(buf + RG_WORKER_HEADER, text, n);
    free(text);
    *len = RG_WORKER_HEADER + n;
    return buf;
}

unsigned char *rg_worker_frame_result(const rg_run_result *r, const rg_run_impl *impl, size_t *len, char *err,
                                      size_t errlen)
{
    if (!r || !len) {
        snprintf(err, errlen, "rg_worker_frame_result: missing argument");
        return NULL;
    }
    cJSON *doc = cJSON_CreateObject(), *im = cJSON_CreateObject();
    if (im) {
        cJSON_AddStringToObject(im, "name", impl ? impl->name : "");
        cJSON_AddStringToObject(im, "version", impl ? impl->version : "");
        if (impl && impl->meta_json) cJSON_AddStringToObject(im, "meta", impl->meta_json);
        else cJSON_AddNullToObject(im, "meta");
    }
    if (doc) {
        cJSON_AddNumberToObject(doc, "worker", 1);
        if (!cJSON_AddItemToObject(doc, "impl", im)) cJSON_Delete(im);
        cJSON *res = result_json(r);
        if (!cJSON_AddItemToObject(doc, "result", res)) cJSON_Delete(res);
    } else {
        cJSON_Delete(im);
    }
    return frame(doc, len, err, errlen);
}

unsigned char *rg_worker_frame_refusal(const char *line, size_t *len, char *err, size_t errlen)
{
    if (!line || !len) {
        snprintf(err, errlen, "rg_worker_frame_refusal: missing argument");
        return NULL;
    }
    cJSON *doc = cJSON_CreateObject();
    if (doc) {
        cJSON_AddNumberToObject(doc, "worker", 1);
        cJSON_AddStringToObject(doc, "refusal", line);
    }
    return frame(doc, len, err, errlen);
}

int rg_worker_write_all(int fd, const unsigned char *buf, size_t len, char *err, size_t errlen)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            snprintf(err, errlen, "writing the worker's message: %s", w < 0 ? strerror(errno) : "nothing written");
            return 1;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* A reader's place in the document, for its one-line message. */
typedef struct reader {
    char *err;
    size_t errlen;
} reader;

static int bad(reader *rd, const char *path, const char *key, const char *why)
{
    snprintf(rd->err, rd->errlen, "the worker's message: %s%s%s %s", path, key ? "." : "", key ? key : "", why);
    return 1;
}

static int read_number(reader *rd, const char *path, const field *f, const cJSON *v, double lo, double hi,
                       double *out)
{
    if (!cJSON_IsNumber(v)) return bad(rd, path, f->key, "is not a number");
    double d = v->valuedouble;
    if (d != floor(d) || d < lo || d > hi) return bad(rd, path, f->key, "is not an integer in range");
    *out = d;
    return 0;
}

static int read_double(reader *rd, const char *path, const char *key, const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 0;
    }
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    if (!strcmp(s, "nan")) *out = NAN;
    else if (!strcmp(s, "inf")) *out = INFINITY;
    else if (!strcmp(s, "-inf")) *out = -INFINITY;
    else return bad(rd, path, key, "is not a number, \"nan\", \"inf\" or \"-inf\"");
    return 0;
}

static int read_fields(reader *rd, const char *path, const field *t, const cJSON *o, char *base, int extra);

static int read_int64s(reader *rd, const char *path, const field *f, const cJSON *v, char *p)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != (int)f->size)
        return bad(rd, path, f->key, "is not an array of the op's axes");
    size_t i = 0;
    for (const cJSON *x = v->child; x; x = x->next, i++) {
        double d;
        if (read_number(rd, path, f, x, -MAX_EXACT, MAX_EXACT, &d)) return 1;
        int64_t lv = (int64_t)d;
        memcpy(p + i * sizeof lv, &lv, sizeof lv);
    }
    return 0;
}

static int read_field(reader *rd, const char *path, const field *f, const cJSON *v, char *base)
{
    char *p = base + f->off;
    double d;
    switch (f->type) {
    case F_STR:
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= f->size)
            return bad(rd, path, f->key, "is not a string that fits");
        memcpy(p, v->valuestring, strlen(v->valuestring) + 1);
        return 0;
    case F_INT: {
        if (read_number(rd, path, f, v, (double)f->lo, (double)f->hi, &d)) return 1;
        int iv = (int)d;
        memcpy(p, &iv, sizeof iv);
        return 0;
    }
    case F_I64:
    case F_U64: {
        if (read_number(rd, path, f, v, f->type == F_U64 ? 0 : -MAX_EXACT, MAX_EXACT, &d)) return 1;
        if (f->type == F_U64) {
            uint64_t uv = (uint64_t)d;
            memcpy(p, &uv, sizeof uv);
        } else {
            int64_t lv = (int64_t)d;
            memcpy(p, &lv, sizeof lv);
        }
        return 0;
    }
    case F_DBL:
        if (read_double(rd, path, f->key, v, &d)) return 1;
        memcpy(p, &d, sizeof d);
        return 0;
    case F_I64S: return read_int64s(rd, path, f, v, p);
    case F_OBJ: {
        char sub[96];
        snprintf(sub, sizeof sub, "%.60s.%s", path, f->key);
        return read_fields(rd, sub, f->sub, v, p, 0);
    }
    }
    return bad(rd, path, f->key, "has an unknown type");
}

/* Every member of table t from object o into base; o holds them and
 * `extra` more members (read by the caller), nothing else. */
static int read_fields(reader *rd, const char *path, const field *t, const cJSON *o, char *base, int extra)
{
    if (!cJSON_IsObject(o)) return bad(rd, path, NULL, "is not an object");
    int n = 0;
    for (; t->key; t++, n++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, t->key);
        if (!v) return bad(rd, path, t->key, "is missing");
        if (read_field(rd, path, t, v, base)) return 1;
    }
    if (cJSON_GetArraySize(o) != n + extra) return bad(rd, path, NULL, "has members it should not have");
    return 0;
}

static int read_samples(reader *rd, const char *path, const cJSON *a, rg_workload_result *w)
{
    if (!cJSON_IsArray(a)) return bad(rd, path, "samples_ns", "is not an array");
    const int n = cJSON_GetArraySize(a);
    w->samples_ns = n ? malloc((size_t)n * sizeof *w->samples_ns) : NULL;
    if (n && !w->samples_ns) return bad(rd, path, "samples_ns", "does not fit in memory");
    int i = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++)
        if (read_double(rd, path, "samples_ns", x, &w->samples_ns[i])) return 1;
    w->n_samples = n;
    return 0;
}

static int read_workloads(reader *rd, const cJSON *a, rg_run_result *r)
{
    if (!cJSON_IsArray(a)) return bad(rd, "$.result", "workloads", "is not an array");
    const int n = cJSON_GetArraySize(a);
    if (n < 1 || n > MAX_WORKLOADS) return bad(rd, "$.result", "workloads", "has no workload or too many");
    r->workloads = calloc((size_t)n, sizeof *r->workloads);
    if (!r->workloads) return bad(rd, "$.result", "workloads", "does not fit in memory");
    r->n_workloads = (size_t)n;
    size_t i = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "$.result.workloads[%zu]", i);
        rg_workload_result *w = &r->workloads[i];
        if (read_fields(rd, path, workload_fields, x, (char *)w, 1) ||
            read_samples(rd, path, cJSON_GetObjectItemCaseSensitive(x, "samples_ns"), w))
            return 1;
        if (w->timed && w->n_samples < 1) return bad(rd, path, "samples_ns", "is empty for a timed workload");
    }
    if (r->passed > n || r->total != n) return bad(rd, "$.result", "total", "does not count its workloads");
    return 0;
}

/* "impl": {"name", "version", "meta"}: meta null or the text of a JSON object. */
static int read_impl(reader *rd, const cJSON *im, rg_worker_msg *m)
{
    static const field impl_fields[] = {STR(rg_worker_msg, name), STR(rg_worker_msg, version), END};
    if (read_fields(rd, "$.impl", impl_fields, im, (char *)m, 1)) return 1;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(im, "meta");
    if (cJSON_IsNull(meta)) return 0;
    if (!cJSON_IsString(meta)) return bad(rd, "$.impl", "meta", "is neither null nor a string");
    char why[RG_ERRLEN];
    cJSON *j = rg_json_parse_strict(meta->valuestring, strlen(meta->valuestring), "meta", why, sizeof why);
    int ok = cJSON_IsObject(j);
    cJSON_Delete(j);
    if (!ok) return bad(rd, "$.impl", "meta", "is not the text of a JSON object");
    m->meta_json = strdup(meta->valuestring);
    return m->meta_json ? 0 : bad(rd, "$.impl", "meta", "does not fit in memory");
}

static int read_doc(reader *rd, const cJSON *doc, rg_worker_msg *m)
{
    if (!cJSON_IsObject(doc)) return bad(rd, "$", NULL, "is not an object");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "worker");
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) return bad(rd, "$", "worker", "is not 1");
    const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(doc, "refusal");
    if (refusal) {
        if (cJSON_GetArraySize(doc) != 2) return bad(rd, "$", NULL, "has members a refusal has not");
        if (!cJSON_IsString(refusal) || !refusal->valuestring[0] || strlen(refusal->valuestring) >= sizeof m->refusal ||
            strpbrk(refusal->valuestring, "\r\n"))
            return bad(rd, "$", "refusal", "is not one line of text");
        snprintf(m->refusal, sizeof m->refusal, "%s", refusal->valuestring);
        m->refused = 1;
        return 0;
    }
    if (cJSON_GetArraySize(doc) != 3) return bad(rd, "$", NULL, "is not {worker, impl, result}");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(doc, "result");
    if (read_impl(rd, cJSON_GetObjectItemCaseSensitive(doc, "impl"), m) ||
        read_fields(rd, "$.result", result_fields, res, (char *)&m->result, 1))
        return 1;
    return read_workloads(rd, cJSON_GetObjectItemCaseSensitive(res, "workloads"), &m->result);
}

int rg_worker_msg_parse(const unsigned char *buf, size_t n, rg_worker_msg *m, char *err, size_t errlen)
{
    if (m) memset(m, 0, sizeof *m);
    if (!m || (!buf && n)) {
        snprintf(err, errlen, "rg_worker_msg_parse: missing argument");
        return 1;
    }
    reader rd = {err, errlen};
    if (n < RG_WORKER_HEADER || memcmp(buf, RG_WORKER_MAGIC, 4))
        return bad(&rd, "frame", NULL, n ? "does not start with RGW1 and a length" : "is empty: nothing was sent");
    size_t len = 0;
    for (int i = 0; i < 4; i++) len = len << 8 | buf[4 + i];
    if (len > RG_WORKER_MAX_JSON) return bad(&rd, "frame", NULL, "announces more than the 256 MiB limit");
    if (n - RG_WORKER_HEADER != len)
        return bad(&rd, "frame", NULL, n - RG_WORKER_HEADER < len ? "is cut short" : "is followed by more bytes");
    char why[RG_ERRLEN];
    cJSON *doc = rg_json_parse_strict((const char *)buf + RG_WORKER_HEADER, len, "the worker's message", why,
                                      sizeof why);
    if (!doc) {
        snprintf(err, errlen, "%s", why);
        return 1;
    }
    int rc = read_doc(&rd, doc, m);
    cJSON_Delete(doc);
    if (rc) rg_worker_msg_free(m);
    return rc;
}

void rg_worker_msg_free(rg_worker_msg *m)
{
    if (!m) return;
    free(m->meta_json);
    rg_run_result_free(&m->result);
    memset(m, 0, sizeof *m);
}
