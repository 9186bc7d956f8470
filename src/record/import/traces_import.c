/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traces_import.c -- the official evaluator's traces as a run in the
 * KernelIndex envelope (traces_import.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "traces_import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_parts.h"
#include "record.h"
#include "rg_util.h"

static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }
static void add_num(cJSON *o, const char *k, double v) { cJSON_AddItemToObject(o, k, num_or_null(v)); }
static void add_str(cJSON *o, const char *k, const char *v) { cJSON_AddItemToObject(o, k, cJSON_CreateString(v ? v : "")); }

/* A trace matched to its suite workload. */
typedef struct matched {
    const rg_trace *t;
    const rg_workload *w;
} matched;

static int by_index(const void *a, const void *b)
{
    int x = ((const matched *)a)->w->index, y = ((const matched *)b)->w->index;
    return (x > y) - (x < y);
}

/* The trace's axis name, NAN when it has none. */
static double trace_axis(const rg_trace *t, const char *name)
{
    for (size_t i = 0; i < t->n_axes; i++)
        if (!strcmp(t->axes[i].name, name)) return t->axes[i].value;
    return NAN;
}

/* Every trace's workload in the suite by uuid, with the same axes. */
static matched *match_workloads(const rg_traces *t, const rg_suite *s, char *err, size_t errlen)
{
    matched *m = calloc(t->n, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < t->n; i++) {
        const rg_trace *tr = &t->t[i];
        for (size_t k = 0; k < s->n_workloads && !m[i].w; k++)
            if (!strcmp(s->workloads[k].uuid, tr->uuid)) m[i].w = &s->workloads[k];
        if (!m[i].w) {
            snprintf(err, errlen, "line %d: workload %.64s is not in suite %.200s (match by uuid)", tr->line, tr->uuid,
                     s->name);
            free(m);
            return NULL;
        }
        const struct {
            const char *name;
            int64_t v;
        } ax[] = {{"batch_size", m[i].w->batch_size}, {"seq_len", m[i].w->seq_len}, {"head_dim", m[i].w->head_dim}};
        for (size_t k = 0; k < sizeof ax / sizeof ax[0]; k++) {
            double v = trace_axis(tr, ax[k].name);
            if (!isnan(v) && v != (double)ax[k].v) {
                snprintf(err, errlen, "line %d: workload %.64s has %s %.0f, the suite's has %lld", tr->line, tr->uuid,
                         ax[k].name, v, (long long)ax[k].v);
                free(m);
                return NULL;
            }
        }
        m[i].t = tr;
    }
    qsort(m, t->n, sizeof *m, by_index);
    return m;
}

/* The earliest timestamp as RFC 3339 into out: the evaluator writes
 * datetime.now().isoformat(), local time with no offset, which is read as
 * UTC (*naive set). 0, or 2 when one is no ISO 8601 date-time. */
static int observed_at(const rg_traces *t, char *out, size_t n, int *naive, char *err, size_t errlen)
{
    double best = INFINITY;
    *naive = 0;
    for (size_t i = 0; i < t->n; i++) {
        char ts[48];
        double e;
        snprintf(ts, sizeof ts, "%s", t->t[i].timestamp);
        if (rg_rfc3339_parse(ts, &e)) {
            snprintf(ts, sizeof ts, "%sZ", t->t[i].timestamp);
            if (rg_rfc3339_parse(ts, &e)) {
                snprintf(err, errlen, "line %d: evaluation.timestamp \"%.40s\" is not an ISO 8601 date-time",
                         t->t[i].line, t->t[i].timestamp);
                return 2;
            }
            *naive = 1;
        }
        if (e < best) best = e, snprintf(out, n, "%s", ts);
    }
    return 0;
}

/* The evaluator's protocol, as the BenchmarkProtocol spec: {object, member, text}. */
static const struct {
    const char *object, *key, *text;
} protocol_text[] = {
    {"harness", "name", "SOL-ExecBench official evaluator"},
    {"harness", "version", "as installed where it ran (the traces do not record it)"},
    {"correctness", "reference", "the definition's PyTorch reference, run on the GPU in float32"},
    {"correctness", "comparator", "sol_execbench core/bench/correctness.py"},
    {"correctness", "element", "ok when |out - ref| <= max_atol + max_rtol * |ref| (both cast to float32)"},
    {"correctness", "workload", "correct when matched ratio >= required_matched_ratio over each of the evaluator's "
                                "correctness rounds (10 by default) of fresh inputs"},
    {"correctness", "failures", "any NaN/Inf; an all-zero output where the reference is not; wrong shape or dtype; "
                                "REWARD_HACK (monkey-patching, thread injection, lazy outputs)"},
    {"measurement", "timer", "sol-execbench-cupti"},
    {"measurement", "primaryStatistic", "geomean"},
    {"measurement", "perWorkloadStatistic", "median"},
    {"measurement", "unit", "ns"},
    {"measurement", "timedSpan", "all GPU activity (kernels, memcpy, memset) the call issues, inputs re-staged at a "
                                 "shifted address and the host synchronized every iteration, cold L2"},
    {"measurement", "defaults", "warmup 10, iterations 50, seed 200 unless the call's --config changed them (the "
                                "traces do not record it)"},
    {"comparability", "family", "sol_execbench_official_evaluator"},
    {"comparability", "notes", "geomean of the official evaluator's per-workload medians, imported from its "
                               "traces.jsonl. Comparable within one definition and workload set and GPU product."},
};

static cJSON *protocol_spec(void)
{
    cJSON *p = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof protocol_text / sizeof protocol_text[0]; i++) {
        cJSON *o = cJSON_GetObjectItemCaseSensitive(p, protocol_text[i].object);
        if (!o) o = cJSON_AddObjectToObject(p, protocol_text[i].object);
        add_str(o, protocol_text[i].key, protocol_text[i].text);
    }
    return p;
}

static cJSON *environment_spec(const rg_traces *t)
{
    cJSON *s = cJSON_CreateObject();
    cJSON *hw = cJSON_AddObjectToObject(s, "hardware");
    add_str(hw, "vendor", "nvidia");
    add_str(hw, "product", t->hardware);
    add_str(hw, "architecture", "unknown");
    cJSON *lib = cJSON_AddObjectToObject(cJSON_AddObjectToObject(s, "software"), "libraries");
    for (size_t i = 0; i < t->n_libs; i++) add_str(lib, t->libs[i].key, t->libs[i].value);
    return s;
}

static cJSON *implementation_spec(const rg_traces *t)
{
    cJSON *s = cJSON_CreateObject();
    add_str(s, "name", t->solution);
    add_str(s, "kernelName", t->solution);
    add_str(s, "measuredBy", "SOL-ExecBench official evaluator");
    return s;
}

/* Where T_SOL and T_b come from on this GPU (the same rule as ropegrad's
 * own runs, manifest_build.c sol_block). */
typedef struct sol_src {
    int figures;
    double tbps;
    const char *product;
} sol_src;

static cJSON *sol_block(const rg_traces *t, const rg_suite *s, sol_src *src)
{
    memset(src, 0, sizeof *src);
    src->figures = rg_manifest_sol_from_figures(t->hardware, s);
    if (!src->figures) src->tbps = rg_datasheet_bandwidth_tbps(t->hardware, &src->product);
    cJSON *o = cJSON_CreateObject();
    char detail[512];
    const char *slash = strrchr(s->figures_file, '/'), *figures = slash ? slash + 1 : s->figures_file;
    if (src->figures) {
        add_str(o, "tSol", "suite-figures");
        snprintf(detail, sizeof detail, "%.60s figures from %.300s", s->figures_gpu, figures);
        add_str(o, "tSolDetail", detail);
        add_str(o, "baseline", "suite-figures");
    } else {
        if (src->tbps > 0) {
            add_str(o, "tSol", "datasheet");
            snprintf(detail, sizeof detail, "bytes any kernel must move / %s datasheet bandwidth %g TB/s",
                     src->product, src->tbps);
            add_num(o, "datasheetTBps", src->tbps);
        } else {
            add_str(o, "tSol", "none");
            snprintf(detail, sizeof detail, "GPU not in the datasheet table");
        }
        add_str(o, "tSolDetail", detail);
        add_str(o, "baseline", "reference-same-call");
        add_str(o, "baselineDetail", "the definition's PyTorch reference, timed by the evaluator in the same call "
                                     "on the same GPU (reference_latency_ms)");
    }
    if (s->have_figures) {
        add_str(o, "figuresFile", figures);
        add_str(o, "figuresGpu", s->figures_gpu);
    }
    return o;
}

/* One workload's row: what ropegrad's own rows hold, from the trace. */
static cJSON *row(const matched *m, const rg_suite *s, const sol_src *src)
{
    const rg_trace *t = m->t;
    const int timed = !rg_trace_failed(t);
    double bytes = m->w->bytes;
    double t_k = timed ? t->latency_ms * 1e6 : NAN, t_sol = NAN, t_b = NAN;
    if (src->figures) {
        t_sol = m->w->sol_ms * 1e6;
        t_b = m->w->baseline_ms * 1e6;
    } else {
        if (src->tbps > 0) t_sol = bytes / (src->tbps * 1e3);
        if (t->reference_latency_ms > 0) t_b = t->reference_latency_ms * 1e6;
    }
    double score = timed ? rg_sol_score(t_k, t_sol, t_b) : NAN;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", m->w->index);
    add_str(o, "uuid", m->w->uuid);
    add_num(o, "bytes", bytes);
    add_num(o, "median", t_k);
    add_num(o, "gbps", timed ? bytes / t_k : NAN);
    cJSON_AddArrayToObject(o, "samples_ns");
    cJSON_AddBoolToObject(o, "pass", timed);
    add_str(o, "status", t->status);
    add_num(o, "max_abs_err", t->max_abs_err);
    add_num(o, "max_rel_err", t->max_rel_err);
    if (t->has_correctness) {
        cJSON_AddBoolToObject(o, "has_nan", t->has_nan);
        cJSON_AddBoolToObject(o, "has_inf", t->has_inf);
    }
    char reason[256] = "";
    if (!timed) snprintf(reason, sizeof reason, "%s%s%.200s", t->status, t->log_line[0] ? ": " : "", t->log_line);
    add_str(o, "reason", reason);
    add_num(o, "t_k_ns", t_k);
    add_num(o, "t_sol_ns", timed ? t_sol : NAN);
    add_num(o, "t_b_ns", timed ? t_b : NAN);
    add_num(o, "reference_latency_ns", t->reference_latency_ms > 0 ? t->reference_latency_ms * 1e6 : NAN);
    add_num(o, "sol_score", score);
    add_num(o, "speedup", timed && isfinite(t_b) ? t_b / t_k : NAN);
    add_str(o, "timestamp", t->timestamp);
    return o;
}

static cJSON *run_spec(const rg_traces *t, const rg_suite *s, const matched *m, const char *when, int naive)
{
    sol_src src;
    cJSON *sol = sol_block(t, s, &src);
    cJSON *rows = cJSON_CreateArray();
    int passed = 0;
    for (size_t i = 0; i < t->n; i++) {
        cJSON_AddItemToArray(rows, row(&m[i], s, &src));
        passed += !rg_trace_failed(m[i].t);
    }
    double mean, geomean;
    rg_manifest_row_stats(rows, &mean, &geomean);
    cJSON *run = cJSON_CreateObject();
    add_str(run, "status", passed == (int)t->n ? "passed" : "failed");
    cJSON *tm = cJSON_AddObjectToObject(run, "timing");
    cJSON *lat = cJSON_AddObjectToObject(tm, "latencyNs");
    add_num(lat, "geomean", geomean);
    add_num(lat, "mean", mean);
    add_str(tm, "primaryStatistic", "geomean");
    add_str(run, "observedAt", when);
    cJSON *sn = cJSON_AddObjectToObject(run, "sourceNative");
    add_str(sn, "source", "sol-execbench");
    add_str(sn, "benchmark", s->name);
    add_str(sn, "solution", t->solution);
    add_str(sn, "format", "SOL-ExecBench traces.jsonl (one Trace per workload)");
    if (naive) add_str(sn, "observedAtNote", "the evaluator's timestamps carry no offset (local time); read as UTC");
    cJSON_AddItemToObject(sn, "metrics", rg_manifest_metrics(rows, geomean / 1e6));
    cJSON *d = cJSON_AddObjectToObject(run, "ropegrad");
    cJSON *corr = cJSON_AddObjectToObject(d, "correctness");
    cJSON_AddNumberToObject(corr, "passed", passed);
    cJSON_AddNumberToObject(corr, "total", (double)t->n);
    cJSON_AddItemToObject(d, "sol", sol);
    cJSON_AddItemToObject(d, "workloads", rows);
    return run;
}

static cJSON *build(const rg_traces *t, const rg_suite *s, char *err, size_t errlen)
{
    if (!t || !s || !t->n || !s->n_workloads) {
        snprintf(err, errlen, "traces import: no traces or no suite");
        return NULL;
    }
    if (strcmp(t->definition, s->name)) {
        snprintf(err, errlen, "the traces are of definition \"%.100s\", the suite in %.200s is \"%.100s\"",
                 t->definition, s->dir, s->name);
        return NULL;
    }
    char when[48];
    int naive;
    if (observed_at(t, when, sizeof when, &naive, err, errlen)) return NULL;
    matched *m = match_workloads(t, s, err, errlen);
    if (!m) return NULL;
    cJSON *wl = cJSON_CreateObject();
    add_str(wl, "definition", s->name);
    cJSON *list = cJSON_AddArrayToObject(wl, "workloads");
    for (size_t i = 0; i < t->n; i++) cJSON_AddItemToArray(list, rg_manifest_workload_entry(m[i].w, s->axis_names));
    cJSON *spec[RG_N_ROLES] = {run_spec(t, s, m, when, naive), protocol_spec(), environment_spec(t), wl,
                               implementation_spec(t)};
    free(m);
    char run_name[128], run_title[256], env_title[256], wl_title[256], impl_title[256];
    char stamp[32];
    size_t k = 0;
    for (const char *c = when; *c && k + 1 < sizeof stamp; c++)
        if ((*c >= '0' && *c <= '9')) stamp[k++] = *c;
    stamp[k] = 0;
    snprintf(run_name, sizeof run_name, "sol-execbench-official-%s", stamp);
    snprintf(run_title, sizeof run_title, "%.80s · %.80s · %.80s", t->solution, s->name, t->hardware);
    snprintf(env_title, sizeof env_title, "%.200s", t->hardware);
    snprintf(wl_title, sizeof wl_title, "workloads of %.200s", s->name);
    snprintf(impl_title, sizeof impl_title, "%.200s (measured by the official evaluator)", t->solution);
    const char *const names[RG_N_ROLES] = {run_name, "sol-execbench-official-protocol", "environment", s->name,
                                           t->solution};
    const char *const titles[RG_N_ROLES] = {run_title, "SOL-ExecBench official evaluator", env_title, wl_title,
                                            impl_title};
    return rg_manifest_assemble(spec, names, titles, err, errlen);
}

cJSON *rg_traces_manifest(const rg_traces *t, const rg_suite *s, char *err, size_t errlen)
{
    cJSON *m = build(t, s, err, errlen);
    for (char *c = err; !m && c && *c; c++)   /* strings from the file: one line, no control bytes */
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    return m;
}
