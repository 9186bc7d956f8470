/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traces.c -- the official evaluator's traces.jsonl, read strictly (traces.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "traces.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "rg_util.h"
#include "strict_json.h"

/* The reading of one line: where messages point. */
typedef struct rd {
    char *err;
    size_t errlen;
    const char *what;
    int line;
    int bad;
} rd;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void fail(rd *x, const char *fmt, ...)
{
    if (x->bad) return;
    x->bad = 1;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)   /* names and values from the file: one line, no control bytes */
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    snprintf(x->err, x->errlen, "%.200s line %d: %s", x->what, x->line, msg);
}

static const char *const statuses[] = {"PASSED",        "INCORRECT_SHAPE", "INCORRECT_NUMERICAL",
                                       "INCORRECT_DTYPE", "RUNTIME_ERROR",  "COMPILE_ERROR",
                                       "TIMEOUT",       "REWARD_HACK",     "INVALID_REFERENCE"};

int rg_trace_failed(const rg_trace *t) { return !t || strcmp(t->status, "PASSED") != 0; }

/* o is an object whose members are all in allowed (NULL-terminated). */
static const cJSON *object_of(rd *x, const cJSON *o, const char *where, const char *const *allowed)
{
    if (!cJSON_IsObject(o)) {
        fail(x, "%s is not an object", where);
        return NULL;
    }
    for (const cJSON *c = o->child; c; c = c->next) {
        int known = 0;
        for (size_t k = 0; allowed[k]; k++) known |= !strcmp(c->string, allowed[k]);
        if (!known) fail(x, "%s has a member \"%.60s\" the evaluator's Trace model does not have", where, c->string);
    }
    return x->bad ? NULL : o;
}

/* A required non-empty string into dst (refused when it does not fit). */
static void text(rd *x, const cJSON *o, const char *k, const char *where, char *dst, size_t n, int may_be_empty)
{
    const cJSON *v = rg_json_get(o, k);
    if (!cJSON_IsString(v) || (!may_be_empty && !v->valuestring[0])) {
        fail(x, "%s.%s is missing or not a%s string", where, k, may_be_empty ? "" : " non-empty");
        return;
    }
    if (strlen(v->valuestring) >= n) {
        fail(x, "%s.%s is longer than %zu bytes", where, k, n - 1);
        return;
    }
    snprintf(dst, n, "%s", v->valuestring);
}

/* A required number >= 0. */
static double non_negative(rd *x, const cJSON *o, const char *k, const char *where)
{
    const cJSON *v = rg_json_get(o, k);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble)) {
        fail(x, "%s.%s is missing or not a non-negative number", where, k);
        return NAN;
    }
    return v->valuedouble;
}

static int flag(rd *x, const cJSON *o, const char *k, const char *where)
{
    const cJSON *v = rg_json_get(o, k);
    if (!v) return 0;   /* default false */
    if (!cJSON_IsBool(v)) fail(x, "%s.%s is not true or false", where, k);
    return cJSON_IsTrue(v);
}

static void read_workload(rd *x, const cJSON *w, rg_trace *t)
{
    static const char *const keys[] = {"axes", "inputs", "uuid", "tolerance", NULL};
    if (!object_of(x, w, "workload", keys)) return;
    text(x, w, "uuid", "workload", t->uuid, sizeof t->uuid, 0);
    const cJSON *axes = rg_json_get(w, "axes");
    if (!cJSON_IsObject(axes)) fail(x, "workload.axes is missing or not an object");
    for (const cJSON *a = axes ? axes->child : NULL; a && !x->bad; a = a->next) {
        if (!cJSON_IsNumber(a) || a->valuedouble < 0 || a->valuedouble != floor(a->valuedouble) ||
            a->valuedouble > 9007199254740992.0) {
            fail(x, "workload.axes.%.60s is not a non-negative whole number", a->string);
            return;
        }
        if (t->n_axes == sizeof t->axes / sizeof t->axes[0] || strlen(a->string) >= sizeof t->axes[0].name) {
            fail(x, "workload.axes: more than 8 axes or a name longer than 31 bytes");
            return;
        }
        snprintf(t->axes[t->n_axes].name, sizeof t->axes[0].name, "%s", a->string);
        t->axes[t->n_axes++].value = a->valuedouble;
    }
    if (!cJSON_IsObject(rg_json_get(w, "inputs"))) fail(x, "workload.inputs is missing or not an object");
    const cJSON *tol = rg_json_get(w, "tolerance");
    if (tol && !cJSON_IsObject(tol)) fail(x, "workload.tolerance is not an object");
}

static void read_correctness(rd *x, const cJSON *c, rg_trace *t)
{
    static const char *const keys[] = {"max_relative_error", "max_absolute_error", "has_nan", "has_inf", "extra", NULL};
    if (!object_of(x, c, "evaluation.correctness", keys)) return;
    t->has_correctness = 1;
    t->max_rel_err = non_negative(x, c, "max_relative_error", "evaluation.correctness");
    t->max_abs_err = non_negative(x, c, "max_absolute_error", "evaluation.correctness");
    t->has_nan = flag(x, c, "has_nan", "evaluation.correctness");
    t->has_inf = flag(x, c, "has_inf", "evaluation.correctness");
    const cJSON *extra = rg_json_get(c, "extra");
    if (extra && !cJSON_IsNull(extra) && !cJSON_IsObject(extra)) fail(x, "evaluation.correctness.extra is not an object");
}

static void read_performance(rd *x, const cJSON *p, rg_trace *t)
{
    static const char *const keys[] = {"latency_ms", "reference_latency_ms", "speedup_factor", NULL};
    if (!object_of(x, p, "evaluation.performance", keys)) return;
    t->has_performance = 1;
    t->latency_ms = non_negative(x, p, "latency_ms", "evaluation.performance");
    t->reference_latency_ms = non_negative(x, p, "reference_latency_ms", "evaluation.performance");
    t->speedup_factor = non_negative(x, p, "speedup_factor", "evaluation.performance");
    if (x->bad) return;
    /* Only a PASSED workload has performance, and it was timed. */
    if (!(t->latency_ms >= RG_TRACE_MIN_MS && t->latency_ms <= RG_TRACE_MAX_MS))
        fail(x, "evaluation.performance.latency_ms %.17g is outside [%g, %g] ms", t->latency_ms, RG_TRACE_MIN_MS,
             RG_TRACE_MAX_MS);
    else if (t->reference_latency_ms > RG_TRACE_MAX_MS)
        fail(x, "evaluation.performance.reference_latency_ms %.17g is above %g ms", t->reference_latency_ms,
             RG_TRACE_MAX_MS);
    if (x->bad) return;
    /* eval_driver.py: speedup = ref / latency if latency > 0 else 0. */
    double want = t->latency_ms > 0 ? t->reference_latency_ms / t->latency_ms : 0;
    if (fabs(t->speedup_factor - want) > 1e-9 * fmax(fabs(want), 1e-300) + 1e-300)
        fail(x, "evaluation.performance.speedup_factor %.17g is not reference_latency_ms / latency_ms (%.17g)",
             t->speedup_factor, want);
}

/* The log's last non-empty line, printable ASCII only (the reason shown). */
static void last_log_line(const char *log, char *dst, size_t n)
{
    dst[0] = 0;
    const char *end = log + strlen(log);
    while (end > log && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ')) end--;
    const char *start = end;
    while (start > log && start[-1] != '\n') start--;
    size_t k = 0;
    for (const char *p = start; p < end && k + 1 < n; p++) dst[k++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    dst[k] = 0;
}

/* The nullable table of docs/trace.md (Evaluation's model validator). */
static void status_shape(rd *x, const rg_trace *t)
{
    int passed = !strcmp(t->status, "PASSED"), numerical = !strcmp(t->status, "INCORRECT_NUMERICAL");
    if ((passed || numerical) != t->has_correctness)
        fail(x, "evaluation.correctness must be %s when status is %s", t->has_correctness ? "null" : "present",
             t->status);
    else if (passed != t->has_performance)
        fail(x, "evaluation.performance must be %s when status is %s", t->has_performance ? "null" : "present",
             t->status);

}

static void read_evaluation(rd *x, const cJSON *e, rg_trace *t, rg_traces *all)
{
    static const char *const keys[] = {"status", "environment", "timestamp", "log", "correctness", "performance", NULL};
    static const char *const env_keys[] = {"hardware", "libs", NULL};
    if (!object_of(x, e, "evaluation", keys)) return;
    text(x, e, "status", "evaluation", t->status, sizeof t->status, 0);
    int known = 0;
    for (size_t k = 0; !x->bad && k < sizeof statuses / sizeof statuses[0]; k++) known |= !strcmp(t->status, statuses[k]);
    if (!x->bad && !known) fail(x, "evaluation.status \"%.40s\" is not one of the evaluator's statuses", t->status);
    text(x, e, "timestamp", "evaluation", t->timestamp, sizeof t->timestamp, 0);
    const cJSON *log = rg_json_get(e, "log");
    if (log && !cJSON_IsString(log)) fail(x, "evaluation.log is not a string");
    else if (log) last_log_line(log->valuestring, t->log_line, sizeof t->log_line);
    const cJSON *env = object_of(x, rg_json_get(e, "environment"), "evaluation.environment", env_keys);
    char hw[256] = "";
    text(x, env, "hardware", "evaluation.environment", hw, sizeof hw, 0);
    const cJSON *libs = env ? rg_json_get(env, "libs") : NULL;
    if (libs && !cJSON_IsObject(libs)) fail(x, "evaluation.environment.libs is not an object");
    for (const cJSON *l = libs ? libs->child : NULL; l && !x->bad; l = l->next)
        if (!cJSON_IsString(l)) fail(x, "evaluation.environment.libs.%.60s is not a string", l->string);
    if (x->bad) return;
    if (!all->hardware[0]) {
        snprintf(all->hardware, sizeof all->hardware, "%s", hw);
        for (const cJSON *l = libs ? libs->child : NULL; l && all->n_libs < RG_MF_MAX_KV; l = l->next) {
            snprintf(all->libs[all->n_libs].key, sizeof all->libs[0].key, "%s", l->string);
            snprintf(all->libs[all->n_libs++].value, sizeof all->libs[0].value, "%s", l->valuestring);
        }
    } else if (strcmp(all->hardware, hw)) {
        fail(x, "evaluation.environment.hardware \"%.80s\" differs from the first line's \"%.80s\"", hw, all->hardware);
        return;
    }
    const cJSON *c = rg_json_get(e, "correctness"), *p = rg_json_get(e, "performance");
    if (c && !cJSON_IsNull(c)) read_correctness(x, c, t);
    if (p && !cJSON_IsNull(p)) read_performance(x, p, t);
    if (!x->bad) status_shape(x, t);
}

/* One line's top level: definition and solution the same on every line. */
static void read_trace(rd *x, const cJSON *doc, rg_trace *t, rg_traces *all)
{
    static const char *const keys[] = {"definition", "workload", "solution", "evaluation", NULL};
    if (!object_of(x, doc, "the trace", keys)) return;
    char def[256] = "", sol[256] = "";
    text(x, doc, "definition", "trace", def, sizeof def, 0);
    const cJSON *e = rg_json_get(doc, "evaluation");
    if (!x->bad && (!e || cJSON_IsNull(e))) {
        fail(x, "a workload-only trace (no evaluation): not the result of a run");
        return;
    }
    text(x, doc, "solution", "trace", sol, sizeof sol, 0);
    if (x->bad) return;
    if (!all->definition[0]) {
        snprintf(all->definition, sizeof all->definition, "%s", def);
        snprintf(all->solution, sizeof all->solution, "%s", sol);
    } else if (strcmp(all->definition, def) || strcmp(all->solution, sol)) {
        fail(x, "definition/solution \"%.80s\"/\"%.80s\" differ from the first line's", def, sol);
        return;
    }
    t->max_abs_err = t->max_rel_err = t->latency_ms = t->reference_latency_ms = t->speedup_factor = NAN;
    read_workload(x, rg_json_get(doc, "workload"), t);
    if (!x->bad) read_evaluation(x, e, t, all);
    for (size_t i = 0; !x->bad && i < all->n; i++)
        if (!strcmp(all->t[i].uuid, t->uuid)) fail(x, "workload %.64s appears twice (also line %d)", t->uuid, all->t[i].line);
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

void rg_traces_free(rg_traces *t)
{
    if (!t) return;
    free(t->t);
    memset(t, 0, sizeof *t);
}

int rg_traces_parse(const char *text, size_t len, const char *what, rg_traces *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    rd x = {err, errlen, what ? what : "traces", 0, 0};
    if (!text) {
        snprintf(err, errlen, "%.200s: no text", x.what);
        return 2;
    }
    for (size_t pos = 0; pos < len && !x.bad;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        x.line++;
        if (!blank(text + pos, n)) {
            if (out->n == RG_TRACES_MAX) {
                fail(&x, "more than %d traces", RG_TRACES_MAX);
                break;
            }
            rg_trace *grown = realloc(out->t, (out->n + 1) * sizeof *out->t);
            if (!grown) {
                fail(&x, "out of memory");
                break;
            }
            out->t = grown;
            rg_trace *t = &out->t[out->n];
            memset(t, 0, sizeof *t);
            t->line = x.line;
            char where[240], e2[RG_ERRLEN];
            snprintf(where, sizeof where, "%.200s line %d", x.what, x.line);
            cJSON *doc = rg_json_parse_strict(text + pos, n, where, e2, sizeof e2);
            if (!doc) {
                x.bad = 1;
                snprintf(err, errlen, "%s", e2);
                break;
            }
            read_trace(&x, doc, t, out);
            cJSON_Delete(doc);
            if (!x.bad) out->n++;
        }
        pos += n + (nl ? 1 : 0);
    }
    if (!x.bad && !out->n) {
        snprintf(err, errlen, "%.200s: no traces (an empty file)", x.what);
        x.bad = 1;
    }
    if (x.bad) {
        rg_traces_free(out);
        return 2;
    }
    return 0;
}

int rg_traces_read(const char *path, rg_traces *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t n;
    char *bytes = rg_read_file_bounded(path, RG_JSON_MAX_MANIFEST, &n, err, errlen);
    if (!bytes) return 2;
    int rc = rg_traces_parse(bytes, n, path, out, err, errlen);
    free(bytes);
    return rc;
}

int rg_traces_sniff(const char *text, size_t len)
{
    size_t pos = 0;
    while (pos < len && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r' || text[pos] == '\n')) pos++;
    const char *nl = pos < len ? memchr(text + pos, '\n', len - pos) : NULL;
    size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
    cJSON *doc = n ? cJSON_ParseWithLength(text + pos, n) : NULL;
    int yes = cJSON_IsObject(doc) && cJSON_IsString(rg_json_get(doc, "definition")) &&
              cJSON_IsObject(rg_json_get(doc, "workload"));
    cJSON_Delete(doc);
    return yes;
}
