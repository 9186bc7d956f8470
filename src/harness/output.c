/* SPDX-License-Identifier: Apache-2.0 */
/* output.c -- a run as a table (for people) and as JSON (for machines).
 *
 * The JSON is written to a temporary file beside the target and renamed into
 * place, so a reader never sees a partial document and a failed write leaves
 * nothing behind. NaN / Inf (an untimed workload, an error over a NaN output)
 * become JSON null. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "atomic_file.h"
#include "harness.h"

/* ---- table -------------------------------------------------------------------------- */

/* v with prec digits, fixed ('f') or scientific ('e'); "-" for NaN, "inf" for Inf. */
static void fmt_num(char *dst, size_t n, char style, int prec, double v)
{
    if (isnan(v))
        snprintf(dst, n, "-");
    else if (isinf(v))
        snprintf(dst, n, "inf");
    else if (style == 'e')
        snprintf(dst, n, "%.*e", prec, v);
    else
        snprintf(dst, n, "%.*f", prec, v);
}

/* A run made by `check` (no timing): its table has no timing columns or lines. */
static int is_timed(const rg_run_result *r) { return r->iterations > 0; }

/* One workload's figures as the tables print them. */
typedef struct row_text {
    char t[32], g[32], ae[32], re[32], mr[32];   /* time_us, GB/s, max abs/rel error, matched ratio */
} row_text;

static void row_format(const rg_workload_result *w, row_text *x)
{
    fmt_num(x->t, sizeof x->t, 'f', 3, w->timed ? w->time_ns.median / 1e3 : NAN);
    fmt_num(x->g, sizeof x->g, 'f', 1, w->timed ? w->gbps : NAN);
    fmt_num(x->ae, sizeof x->ae, 'e', 3, w->check.max_abs_err);
    fmt_num(x->re, sizeof x->re, 'e', 3, w->check.max_rel_err);
    fmt_num(x->mr, sizeof x->mr, 'f', 5, w->check.matched_ratio);
}

/* The flush gaps of the workloads that have one: their median, min and max
 * (one line; nothing when none has one: CUDA events, the CPU). */
static void print_flush_gap(const rg_run_result *r, FILE *f)
{
    double *v = malloc((r->n_workloads ? r->n_workloads : 1) * sizeof *v);
    if (!v) return;
    for (size_t i = 0; i < r->n_workloads; i++) v[i] = r->workloads[i].flush_gap_us;
    rg_time_stats st;
    const int n = rg_time_stats_finite(v, (int)r->n_workloads, &st);
    free(v);
    if (n)
        fprintf(f, "flush gap (GPU idle between the flush and the call, median per workload): median %.3f us, "
                   "min %.3f, max %.3f over %d workloads\n", st.median, st.min, st.max, n);
}

void rg_run_print_table(const rg_run_result *r, void *file)
{
    FILE *f = file ? (FILE *)file : stdout;
    if (!r) return;
    const int timed = is_timed(r);
    fprintf(f, "%-8s %5s %6s ", "workload", "B", "S");
    for (int a = 0; a < RG_OP_MAX_AXES && r->axis_names[a]; a++) fprintf(f, "%12s ", r->axis_names[a]);
    if (timed)
        fprintf(f, "%12s %9s %11s %11s %9s  %s\n", "time_us", "GB/s",
                "max_abs_err", "max_rel_err", "matched", "pass");
    else
        fprintf(f, "%11s %11s %9s  %s\n", "max_abs_err", "max_rel_err", "matched",
                "pass");
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *w = &r->workloads[i];
        row_text x;
        row_format(w, &x);
        fprintf(f, "%-8d %5lld %6lld ", w->index, (long long)w->batch_size, (long long)w->seq_len);
        for (int a = 0; a < RG_OP_MAX_AXES && r->axis_names[a]; a++) fprintf(f, "%12lld ", (long long)w->axes[a]);
        if (timed) fprintf(f, "%12s %9s ", x.t, x.g);
        fprintf(f, "%11s %11s %9s  %s", x.ae, x.re, x.mr, w->check.pass ? "yes" : "NO");
        if (!w->check.pass) fprintf(f, "  %s", w->check.reason);
        else if (w->check.n_abs_only)   /* a large max_rel_err on a passing row: say which rule passed it */
            fprintf(f, " (%lld within atol only)", (long long)w->check.n_abs_only);
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < r->n_workloads; i++)
        if (r->workloads[i].check.pass && r->workloads[i].check.n_abs_only) {
            fprintf(f, "within atol only: values whose error is within atol + rtol*|ref| but beyond rtol*|ref| "
                       "(references near zero); max_rel_err counts them\n");
            break;
        }
    fprintf(f, "passed %d/%d\n", r->passed, r->total);
    fprintf(f, "correctness: %d round%s of fresh seeded inputs per workload against the %s reference, reward-hack "
               "checks on\n", r->rounds, r->rounds == 1 ? "" : "s", rg_ground_truth_name(r->ground_truth));
    fprintf(f, "backend %s (kernel %d: %s), device %s\n", r->backend, r->kernel, r->kernel_name, r->device);
    if (timed) {
        char m[32], gm[32];
        fmt_num(m, sizeof m, 'f', 3, r->mean_ns / 1e3);
        fmt_num(gm, sizeof gm, 'f', 3, r->geomean_ns / 1e3);
        fprintf(f, "mean of per-workload medians: %s us   geometric mean: %s us\n", m, gm);
        fprintf(f, "timer %s, cold cache: %s, inputs %s, seed %llu, warmup %d, iterations %d\n", r->timer, r->cold_l2,
                r->inputs, (unsigned long long)r->seed, r->warmup, r->iterations);
        if (!strcmp(r->backend, "cuda")) {
            fprintf(f, "restage %s, span %s, sync %s, settle %s; same kernels every iteration: %s\n",
                    rg_restage_name(r->restage), rg_span_name(r->span), rg_sync_name(r->sync),
                    rg_settle_name(r->settle), r->same_kernels);
            print_flush_gap(r, f);
        }
    } else {
        fprintf(f, "inputs %s, seed %llu (correctness only, not timed)\n", r->inputs, (unsigned long long)r->seed);
    }
}

/* The same rows as a Markdown table (md) or CSV (csv, RFC 4180: the reason
 * column quoted). Columns: workload, B, S, [time_us, GB/s,] max_abs_err,
 * max_rel_err, matched, pass, reason. */
static void print_rows(const rg_run_result *r, FILE *f, int csv)
{
    const int timed = is_timed(r);
    const char *sep = csv ? "," : " | ", *open = csv ? "" : "| ", *close = csv ? "" : " |";
    fprintf(f, "%sworkload%sB%sS%s", open, sep, sep, sep);
    int n_axes = 0;
    for (; n_axes < RG_OP_MAX_AXES && r->axis_names[n_axes]; n_axes++) fprintf(f, "%s%s", r->axis_names[n_axes], sep);
    if (timed) fprintf(f, "time_us%sGB/s%s", sep, sep);
    fprintf(f, "max_abs_err%smax_rel_err%smatched%spass%sreason%s\n", sep, sep, sep, sep, close);
    if (!csv) {
        fprintf(f, "|---:|---:|---:|");
        for (int a = 0; a < n_axes; a++) fprintf(f, "---:|");
        fprintf(f, "%s---:|---:|---:|---|---|\n", timed ? "---:|---:|" : "");
    }
    for (size_t i = 0; i < r->n_workloads; i++) {
        const rg_workload_result *w = &r->workloads[i];
        row_text x;
        row_format(w, &x);
        fprintf(f, "%s%d%s%lld%s%lld%s", open, w->index, sep, (long long)w->batch_size, sep, (long long)w->seq_len, sep);
        for (int a = 0; a < n_axes; a++) fprintf(f, "%lld%s", (long long)w->axes[a], sep);
        if (timed) fprintf(f, "%s%s%s%s", x.t, sep, x.g, sep);
        fprintf(f, "%s%s%s%s%s%s%s%s", x.ae, sep, x.re, sep, x.mr, sep, w->check.pass ? "yes" : "no", sep);
        /* The reason is our own text, but quote it for CSV and keep '|' out of a Markdown cell. */
        if (csv) fputc('"', f);
        for (const char *c = w->check.pass ? "" : w->check.reason; *c; c++) {
            if (csv && *c == '"') fputc('"', f);
            fputc(!csv && *c == '|' ? '/' : *c, f);
        }
        fprintf(f, "%s%s\n", csv ? "\"" : "", close);
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

/* A number, or null when it is not finite (JSON has no NaN). */
static cJSON *num(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* cJSON_Add* return NULL on allocation failure; one flag collects them all. */
typedef struct jb {
    int oom;
} jb;

static void add(jb *b, cJSON *obj, const char *key, cJSON *item)
{
    if (!item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        b->oom = 1;
    }
}

static void add_str(jb *b, cJSON *obj, const char *key, const char *s)
{
    add(b, obj, key, cJSON_CreateString(s ? s : ""));
}

static void add_num(jb *b, cJSON *obj, const char *key, double v)
{
    add(b, obj, key, num(v));
}

static cJSON *env_json(jb *b, const rg_env *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        b->oom = 1;
        return NULL;
    }
    add_str(b, o, "hostname", e->hostname);
    add_str(b, o, "os", e->os);
    add_str(b, o, "cpu_model", e->cpu_model);
    add_num(b, o, "cpu_threads", e->cpu_threads);
    add_str(b, o, "cpu_isa", e->cpu_isa);
    add_str(b, o, "gpu_name", e->gpu_name);
    add_str(b, o, "gpu_arch", e->gpu_arch);
    add_num(b, o, "gpu_sm_count", e->gpu_sm_count);
    add_num(b, o, "gpu_l2_bytes", (double)e->gpu_l2_bytes);
    add_num(b, o, "gpu_mem_bandwidth_gbps", e->gpu_mem_bandwidth_gbps);
    add_str(b, o, "driver_version", e->driver_version);
    add_str(b, o, "cuda_runtime_version", e->cuda_runtime_version);
    add_num(b, o, "sm_clock_mhz_start", e->sm_clock_mhz_start);
    add_num(b, o, "sm_clock_mhz_end", e->sm_clock_mhz_end);
    add_num(b, o, "mem_clock_mhz_start", e->mem_clock_mhz_start);
    add_num(b, o, "mem_clock_mhz_end", e->mem_clock_mhz_end);
    add_str(b, o, "ropegrad_version", e->ropegrad_version);
    add_str(b, o, "build_flags", e->build_flags);
    if (e->load_known) {
        add_num(b, o, "load_average_1m", e->load_avg_1m);
        add_num(b, o, "online_cpus", e->load_cpus);
    }
    if (e->cpu_share.known) {
        add_num(b, o, "other_cpus", e->cpu_share.other_cpus);
        add_num(b, o, "steal_cpus", e->cpu_share.steal_cpus);
        add_num(b, o, "share_seconds", e->cpu_share.span_s);
    }
    return o;
}

static cJSON *workload_json(jb *b, const rg_run_result *r, const rg_workload_result *w)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        b->oom = 1;
        return NULL;
    }
    add_num(b, o, "index", w->index);
    add_str(b, o, "uuid", w->uuid);
    add_num(b, o, "batch_size", (double)w->batch_size);
    add_num(b, o, "seq_len", (double)w->seq_len);
    add_num(b, o, "head_dim", (double)w->head_dim);
    for (int a = 0; a < RG_OP_MAX_AXES && r->axis_names[a]; a++) add_num(b, o, r->axis_names[a], (double)w->axes[a]);
    add_num(b, o, "bytes", w->bytes);
    add(b, o, "pass", cJSON_CreateBool(w->check.pass));
    add_str(b, o, "reason", w->check.reason);
    add_num(b, o, "max_abs_err", w->check.max_abs_err);
    add_num(b, o, "max_rel_err", w->check.max_rel_err);
    add_num(b, o, "matched_ratio", w->check.matched_ratio);
    add_num(b, o, "n_abs_only", (double)w->check.n_abs_only);
    add_num(b, o, "rounds_run", w->rounds_run);
    add(b, o, "reward_hack", cJSON_CreateBool(w->reward_hack));
    if (w->have_yardstick) {
        cJSON *y = cJSON_CreateObject();
        if (y) {
            add(b, y, "pass", cJSON_CreateBool(w->yardstick.pass));
            add_num(b, y, "max_abs_err", w->yardstick.max_abs_err);
            add_num(b, y, "max_rel_err", w->yardstick.max_rel_err);
            add_num(b, y, "matched_ratio", w->yardstick.matched_ratio);
        }
        add(b, o, "float64_yardstick", y);
    }
    add_str(b, o, "timer", w->timer);
    if (w->span_kernels >= 0) {   /* CUPTI: what the first timed iteration's span held */
        cJSON *sp = cJSON_CreateObject();
        if (sp) {
            add_num(b, sp, "kernels", w->span_kernels);
            add_num(b, sp, "memcpy", w->span_memcpy);
            add_num(b, sp, "memset", w->span_memset);
        }
        add(b, o, "span_activities", sp);
        add_num(b, o, "flush_gap_us", w->flush_gap_us);   /* null: no activity ended before any call */
    }
    cJSON *t = cJSON_CreateObject();
    if (t) {
        add_num(b, t, "mean", w->timed ? w->time_ns.mean : NAN);
        add_num(b, t, "median", w->timed ? w->time_ns.median : NAN);
        add_num(b, t, "min", w->timed ? w->time_ns.min : NAN);
        add_num(b, t, "max", w->timed ? w->time_ns.max : NAN);
        add_num(b, t, "stddev", w->timed ? w->time_ns.stddev : NAN);
    }
    add(b, o, "time_ns", t);
    add_num(b, o, "gbps", w->timed ? w->gbps : NAN);
    cJSON *s = cJSON_CreateArray();
    for (int i = 0; s && i < w->n_samples && w->samples_ns; i++) {
        cJSON *x = num(w->samples_ns[i]);
        if (!x || !cJSON_AddItemToArray(s, x)) {
            cJSON_Delete(x);
            b->oom = 1;
        }
    }
    add(b, o, "samples_ns", s);
    add_num(b, o, "sol_ms", w->sol_ms);
    add_num(b, o, "baseline_ms", w->baseline_ms);
    return o;
}

static cJSON *result_json(const rg_run_result *r, int *oom)
{
    jb b = {0};
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        *oom = 1;
        return NULL;
    }
    add_str(&b, root, "suite", r->suite);
    add_str(&b, root, "backend", r->backend);
    add_num(&b, root, "kernel", r->kernel);
    add_str(&b, root, "kernel_name", r->kernel_name);
    add_str(&b, root, "device", r->device);
    add_str(&b, root, "timer", r->timer);
    add_str(&b, root, "cold_l2", r->cold_l2);
    add_str(&b, root, "inputs", r->inputs);
    add_num(&b, root, "warmup", r->warmup);
    add_num(&b, root, "iterations", r->iterations);
    add_num(&b, root, "seed", (double)r->seed);
    add_num(&b, root, "rounds", r->rounds);
    add_str(&b, root, "ground_truth", rg_ground_truth_name(r->ground_truth));
    if (!strcmp(r->backend, "cuda") && is_timed(r)) {   /* the CUDA timing switches (harness.h); the CPU has none */
        add_str(&b, root, "restage", rg_restage_name(r->restage));
        add_str(&b, root, "span", rg_span_name(r->span));
        add_str(&b, root, "sync", rg_sync_name(r->sync));
        add_str(&b, root, "settle", rg_settle_name(r->settle));
        add_str(&b, root, "same_kernels_check", r->same_kernels);
    }
    add_str(&b, root, "started_at", r->started_at);
    add(&b, root, "environment", env_json(&b, &r->env));
    cJSON *ws = cJSON_CreateArray();
    for (size_t i = 0; ws && i < r->n_workloads; i++) {
        cJSON *w = workload_json(&b, r, &r->workloads[i]);
        if (!w || !cJSON_AddItemToArray(ws, w)) {
            cJSON_Delete(w);
            b.oom = 1;
        }
    }
    add(&b, root, "workloads", ws);
    cJSON *sum = cJSON_CreateObject();
    if (sum) {
        add_num(&b, sum, "passed", r->passed);
        add_num(&b, sum, "total", r->total);
        add_num(&b, sum, "mean_ns", r->mean_ns);
        add_num(&b, sum, "geomean_ns", r->geomean_ns);
    }
    add(&b, root, "summary", sum);
    *oom = b.oom;
    return root;
}

int rg_run_print_format(const rg_run_result *r, const char *format, void *file, char *err, size_t errlen)
{
    FILE *f = file ? (FILE *)file : stdout;
    if (!r || !format) {
        snprintf(err, errlen, "rg_run_print_format: no result or format");
        return 1;
    }
    if (!strcmp(format, "table")) {
        rg_run_print_table(r, f);
    } else if (!strcmp(format, "md") || !strcmp(format, "csv")) {
        print_rows(r, f, format[0] == 'c');
    } else if (!strcmp(format, "json")) {
        int oom = 0;
        cJSON *root = result_json(r, &oom);
        char *text = (root && !oom) ? cJSON_Print(root) : NULL;
        cJSON_Delete(root);
        if (!text) {
            snprintf(err, errlen, "out of memory building the JSON document");
            return 1;
        }
        fprintf(f, "%s\n", text);
        free(text);
    } else {
        snprintf(err, errlen, "unknown format '%s' (expected table, md, csv or json)", format);
        return 1;
    }
    return ferror(f) ? (snprintf(err, errlen, "cannot write the results"), 1) : 0;
}

int rg_run_write_json(const rg_run_result *r, const char *path, char *err, size_t errlen)
{
    if (!r || !path || !*path) {
        snprintf(err, errlen, "rg_run_write_json: no result or empty path");
        return 1;
    }
    int oom = 0;
    cJSON *root = result_json(r, &oom);
    char *text = (root && !oom) ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory building the JSON document", path);
        return 1;
    }

    size_t n = strlen(text);
    char *line = realloc(text, n + 2);   /* the document and a final newline */
    if (!line) {
        free(text);
        snprintf(err, errlen, "%s: out of memory", path);
        return 1;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    int rc = rg_write_file_atomic(path, line, n + 1, err, errlen);
    free(line);
    return rc;
}
