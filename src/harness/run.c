/* SPDX-License-Identifier: Apache-2.0 */
/* run.c -- one run of the protocol over a suite.
 *
 * For each selected workload: generate inputs (inputs.c), compute the
 * ground truth (in parallel, over row blocks), check the backend over the
 * correctness rounds (rounds.c: fresh inputs, an output poisoned with NaN,
 * the reward-hack guards; check.c), then -- when timing and the output was
 * correct -- warm up and time it, and check one more call after it:
 *
 *   CPU   before each call, write through a buffer of 2x the last-level
 *         cache (so inputs start in DRAM, as the GPU protocol's cold L2);
 *         each call timed with clock_gettime(CLOCK_MONOTONIC).
 *   CUDA  run_cuda.c: the inputs re-staged at a shifted address, a 2x-L2
 *         memset, the call timed by the CUPTI span of all the GPU work it
 *         issued, a host synchronization (each switchable: harness.h).
 *
 * As in SOL-ExecBench, an incorrect workload is not timed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "harness.h"
#include "run_cuda.h"
#include "run_internal.h"

#ifndef RG_BUILD_COMPILER
#define RG_BUILD_COMPILER "unknown"
#endif
#ifndef RG_BUILD_C_FLAGS
#define RG_BUILD_C_FLAGS ""
#endif
#ifndef RG_BUILD_TYPE
#define RG_BUILD_TYPE ""
#endif
#ifndef RG_BUILD_CUDA_ARCHS
#define RG_BUILD_CUDA_ARCHS ""
#endif

#define RG_COLD_DEFAULT ((size_t)64 << 20)
#define RG_COLD_MAX ((size_t)1 << 30)

void rg_run_options_default(rg_run_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = "auto";
    o->kernel = 0;
    o->threads = 0;
    o->warmup = 10;
    o->iterations = 50;
    o->seed = 200;
    o->inputs = RG_INPUTS_NORMAL;
    o->timed = 1;
    o->verbose = 0;
    o->rounds = 10;
    o->ground_truth = RG_TRUTH_FLOAT64;
    /* The call after the flush has finished, as it reaches the GPU under the official evaluator's
     * Python call path (docs/protocol.md, "Flush to call"). */
    o->settle = RG_SETTLE_ON;
}

/* ---- environment --------------------------------------------------------------- */

static void cpu_model(char *dst, size_t n)
{
    snprintf(dst, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(dst, n, "%s", colon);
        break;
    }
    fclose(f);
}

void rg_env_host(rg_env *e, int cpu_threads)
{
    memset(e, 0, sizeof *e);
    if (gethostname(e->hostname, sizeof e->hostname - 1)) snprintf(e->hostname, sizeof e->hostname, "unknown");
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(e->os, sizeof e->os, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(e->os, sizeof e->os, "unknown");
    cpu_model(e->cpu_model, sizeof e->cpu_model);
    e->cpu_threads = cpu_threads;
    snprintf(e->cpu_isa, sizeof e->cpu_isa, "%s", ropegrad_cpu_isa());
    e->sm_clock_mhz_start = e->sm_clock_mhz_end = -1;
    e->mem_clock_mhz_start = e->mem_clock_mhz_end = -1;
    snprintf(e->ropegrad_version, sizeof e->ropegrad_version, "%s", ropegrad_version());
    snprintf(e->build_flags, sizeof e->build_flags, "%s %s; build type %s; C flags: %s; CUDA archs: %s",
             RG_BUILD_COMPILER,
#ifdef ROPEGRAD_HAVE_CUDA
             "+ CUDA",
#else
             "(no CUDA)",
#endif
             RG_BUILD_TYPE, RG_BUILD_C_FLAGS, *RG_BUILD_CUDA_ARCHS ? RG_BUILD_CUDA_ARCHS : "none");
}

/* ---- CPU backend ---------------------------------------------------------------------- */

/* Size of the largest CPU cache, or 0 when unknown. */
static size_t llc_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v <= 0) v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    if (v > 0) return (size_t)v;
    /* sysfs: the highest-level cache of cpu0 ("32768K" style sizes). */
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end;
            unsigned long long x = strtoull(buf, &end, 10);
            if (*end == 'K') x <<= 10;
            else if (*end == 'M') x <<= 20;
            if (x > best) best = (size_t)x;
        }
        fclose(f);
    }
    return best;
}

static volatile unsigned rg_cold_sink;

int rg_cpu_timer_open(rg_cpu_timer *t, char *err, size_t errlen)
{
    if (!t) {
        snprintf(err, errlen, "rg_cpu_timer_open: no timer");
        return 1;
    }
    memset(t, 0, sizeof *t);
    const size_t llc = llc_bytes();
    t->bytes = llc ? 2 * llc : RG_COLD_DEFAULT;
    if (t->bytes > RG_COLD_MAX) t->bytes = RG_COLD_MAX;
    t->buf = malloc(t->bytes);
    if (!t->buf) {
        snprintf(err, errlen, "out of memory allocating the %zu MiB cold-cache buffer", t->bytes >> 20);
        return 1;
    }
    memset(t->buf, 0, t->bytes);   /* fault the pages in once, outside any iteration */
    if (llc)
        snprintf(t->cold, sizeof t->cold, "%zu MiB written before every call (2x the %zu MiB LLC%s)", t->bytes >> 20,
                 llc >> 20, 2 * llc > RG_COLD_MAX ? ", capped at 1 GiB" : "");
    else
        snprintf(t->cold, sizeof t->cold, "%zu MiB written before every call (LLC size unknown)", t->bytes >> 20);
    return 0;
}

void rg_cpu_timer_close(rg_cpu_timer *t)
{
    if (!t) return;
    free(t->buf);
    t->buf = NULL;
    t->bytes = 0;
}

/* Writes every byte and reads one per line, so nothing of the previous call's
 * working set survives in any cache level (and the compiler cannot drop it). */
static void cold_flush(rg_cpu_timer *t, int it)
{
    memset(t->buf, it & 0xff, t->bytes);
    unsigned acc = 0;
    for (size_t i = 0; i < t->bytes; i += 64) acc += t->buf[i];
    rg_cold_sink += acc;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The timed loop of the entry points below; t NULL: no flush; stage NULL: nothing before the flush. */
static int timed_loop(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn stage, rg_cpu_timed_fn fn,
                      void *ctx, double *samples_ns)
{
    if (!fn || !samples_ns || warmup < 0 || iterations < 1) return -1;
    int rc = 0;
    for (int it = 0; it < warmup + iterations && !rc; it++) {
        if (stage && (rc = stage(ctx)) != 0) break;
        if (t) cold_flush(t, it);
        double t0 = now_ns();
        rc = fn(ctx);
        double t1 = now_ns();
        if (it >= warmup) samples_ns[it - warmup] = t1 - t0;
    }
    return rc;
}

int rg_cpu_timer_run_staged(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn stage, rg_cpu_timed_fn fn,
                            void *ctx, double *samples_ns)
{
    if (!t || !t->buf) return -1;
    return timed_loop(t, warmup, iterations, stage, fn, ctx, samples_ns);
}

int rg_cpu_timer_run(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns)
{
    return rg_cpu_timer_run_staged(t, warmup, iterations, NULL, fn, ctx, samples_ns);
}

int rg_cpu_timer_run_warm(int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns)
{
    return timed_loop(NULL, warmup, iterations, NULL, fn, ctx, samples_ns);
}

int rg_cpu_call_run(void *ctx)
{
    const rg_cpu_call *c = ctx;
    return c->op->cpu(c->in, c->out, c->threads);
}

int rg_cpu_call_stage(void *ctx)
{
    const rg_cpu_call *c = ctx;
    return c->op->stage ? c->op->stage(c->in, c->out, NULL) : 0;
}

static int cpu_workload(const rg_op *op, rg_tensors *in, const double *ref, const rg_workload *w,
                        const rg_run_options *o, rg_cpu_timer *cold, rg_workload_result *wr, char *err, size_t errlen)
{
    void *out = rg_alloc64(in->out_bytes);
    if (!out) {
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        return 1;
    }
    /* Rounds of fresh inputs, the output poisoned each time, the reward-hack guards (rounds.c). */
    if (rg_cpu_correctness(op, w, o, in, out, ref, wr, err, errlen)) {
        free(out);
        return 1;
    }
    if (!o->timed || !wr->check.pass) {
        free(out);
        return 0;
    }
    double *samples = malloc((size_t)o->iterations * sizeof *samples);
    if (!samples) {
        free(out);
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        return 1;
    }
    rg_cpu_call call = {op, in, out, o->threads};
    int rc = rg_cpu_timer_run_staged(cold, o->warmup, o->iterations, op->stage ? rg_cpu_call_stage : NULL,
                                     rg_cpu_call_run, &call, samples);
    if (rc) {
        free(out);
        free(samples);
        wr->check.pass = 0;
        snprintf(wr->check.reason, sizeof wr->check.reason, "op %s cpu (timed): %s", op->id,
                 rg_op_error_text(op, rc));
        return 0;
    }
    rg_result_set_samples(wr, samples, o->iterations);
    snprintf(wr->timer, sizeof wr->timer, "wall-clock");
    rc = rg_cpu_after_timing(op, w, in, out, ref, o->threads, wr);   /* every call computes (rounds.c) */
    free(out);
    if (rc) snprintf(err, errlen, "workload %d: out of memory", w->index);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------- */

/* 0 when op ships CUDA kernel version `kernel` in this build (0, the
 * default, always), else 1 with err set. */
static int check_kernel(const rg_op *op, int kernel, char *err, size_t errlen)
{
    if (kernel == 0 || op->kernel_name(kernel)) return 0;
    char list[256];
    rg_op_kernels_text(op, list, sizeof list);
    snprintf(err, errlen, "unknown CUDA kernel %d: op %s ships %s; the development versions are in dev/",
             kernel, op->id, list[0] ? list : "no CUDA kernel in this build");
    return 1;
}

static int validate_options(const rg_suite *s, const int *indices, size_t n_indices, const rg_run_options *o,
                            char *err, size_t errlen)
{
    if (!s || !o || !s->workloads || !s->n_workloads || !s->op) {
        snprintf(err, errlen, "rg_run_suite: no suite or options");
        return 1;
    }
    if (!o->backend || (strcmp(o->backend, "auto") && strcmp(o->backend, "cpu") && strcmp(o->backend, "cuda"))) {
        snprintf(err, errlen, "unknown backend '%s' (expected auto, cpu or cuda)", o->backend ? o->backend : "");
        return 1;
    }
    if (o->threads < 0) {
        snprintf(err, errlen, "threads must be >= 0 (0 = all cores), got %d", o->threads);
        return 1;
    }
    if (o->kernel < 0) {
        snprintf(err, errlen, "kernel must be >= 0, got %d", o->kernel);
        return 1;
    }
    if (check_kernel(s->op, o->kernel, err, errlen)) return 1;
    if (o->inputs != RG_INPUTS_NORMAL && o->inputs != RG_INPUTS_POSITIONS) {
        snprintf(err, errlen, "unknown inputs kind %d", (int)o->inputs);
        return 1;
    }
    if (o->timed && (o->warmup < 0 || o->iterations < 1 || o->warmup > 1000000 || o->iterations > 1000000)) {
        snprintf(err, errlen, "need warmup in 0..1000000 and iterations in 1..1000000 (got %d and %d)", o->warmup,
                 o->iterations);
        return 1;
    }
    if (o->rounds < 1 || o->rounds > 1000) {
        snprintf(err, errlen, "rounds must be 1..1000, got %d", o->rounds);
        return 1;
    }
    if ((o->restage != RG_RESTAGE_ON && o->restage != RG_RESTAGE_OFF) ||
        (o->span != RG_SPAN_ALL && o->span != RG_SPAN_KERNELS) || (o->sync != RG_SYNC_ITERATION && o->sync != RG_SYNC_END) ||
        (o->settle != RG_SETTLE_OFF && o->settle != RG_SETTLE_ON)) {
        snprintf(err, errlen, "unknown restage, span, sync or settle value (%d, %d, %d, %d)", (int)o->restage,
                 (int)o->span, (int)o->sync, (int)o->settle);
        return 1;
    }
    if (!rg_ground_truth_available(s->op, o->ground_truth)) {
        snprintf(err, errlen, "--ground-truth %s is not available for op %s (it has float64%s)",
                 rg_ground_truth_name(o->ground_truth), s->op->id, "; float32-reference: 014 and 012");
        return 1;
    }
    if (n_indices && !indices) {
        snprintf(err, errlen, "rg_run_suite: indices is NULL");
        return 1;
    }
    for (size_t i = 0; i < n_indices; i++) {
        if (indices[i] < 0 || (size_t)indices[i] >= s->n_workloads) {
            snprintf(err, errlen, "unknown workload index %d: the suite has %zu workloads (0..%zu)", indices[i],
                     s->n_workloads, s->n_workloads - 1);
            return 1;
        }
        for (size_t j = 0; j < i; j++)
            if (indices[j] == indices[i]) {
                snprintf(err, errlen, "workload index %d is listed twice", indices[i]);
                return 1;
            }
    }
    return 0;
}

/* The backend o asks for, resolved: 1 = CUDA, 0 = CPU, -1 (err set) when
 * CUDA was asked for and is not there. */
static int resolve_backend(const rg_run_options *o, char *err, size_t errlen)
{
    if (!strcmp(o->backend, "cpu")) return 0;
    if (!strcmp(o->backend, "cuda")) {
        if (ropegrad_cuda_available()) return 1;
        snprintf(err, errlen, "backend cuda requested but unavailable (%s)", ropegrad_strerror(ROPEGRAD_ERR_NO_CUDA));
        return -1;
    }
    const int use_cuda = ropegrad_cuda_available();
    if (o->verbose >= 0)
        fprintf(stderr, "ropegrad: backend auto -> %s\n", use_cuda ? "cuda" : "cpu (no usable CUDA device)");
    return use_cuda;
}

/* The header of the result: suite, op, backend, protocol, host (run_internal.h). */
void rg_result_header(const rg_suite *s, const rg_run_options *o, int use_cuda, int cpu_threads,
                          rg_run_result *out)
{
    snprintf(out->suite, sizeof out->suite, "%s", s->name);
    snprintf(out->suite_dir, sizeof out->suite_dir, "%s", s->dir);
    snprintf(out->op, sizeof out->op, "%s", s->op->id);
    snprintf(out->reference, sizeof out->reference, "%s", s->op->reference);
    for (int a = 0; s->op->axes && s->op->axes[a] && a < RG_OP_MAX_AXES; a++) out->axis_names[a] = s->op->axes[a];
    snprintf(out->backend, sizeof out->backend, "%s", use_cuda ? "cuda" : "cpu");
    out->kernel = o->kernel;
    snprintf(out->inputs, sizeof out->inputs, "%s", o->inputs == RG_INPUTS_POSITIONS ? "positions" : "normal");
    out->warmup = o->timed ? o->warmup : 0;
    out->iterations = o->timed ? o->iterations : 0;
    out->seed = o->seed;
    out->rounds = o->rounds;
    out->ground_truth = o->ground_truth;
    out->restage = o->restage;
    out->span = o->span;
    out->sync = o->sync;
    out->settle = o->settle;
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(out->started_at, sizeof out->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    rg_env_host(&out->env, cpu_threads);
}

/* The CPU backend's part of the header, and its cold-cache buffer when timed. */
static int open_cpu(const rg_run_options *o, int cpu_threads, rg_run_result *out, rg_cpu_timer *cold, char *err,
                    size_t errlen)
{
    snprintf(out->kernel_name, sizeof out->kernel_name, "cpu-%s", ropegrad_cpu_isa());
    snprintf(out->device, sizeof out->device, "%.200s (%d threads)", out->env.cpu_model, cpu_threads);
    snprintf(out->timer, sizeof out->timer, "%s", o->timed ? "wall-clock" : "none");
    if (!o->timed) {
        snprintf(out->cold_l2, sizeof out->cold_l2, "none (not timed)");
        return 0;
    }
    if (rg_cpu_timer_open(cold, err, errlen)) return 1;
    snprintf(out->cold_l2, sizeof out->cold_l2, "%s", cold->cold);
    return 0;
}

/* A workload's result before it runs: its sizes, bytes and figures (run_internal.h). */
void rg_workload_header(const rg_suite *s, const rg_workload *w, rg_workload_result *wr)
{
    wr->index = w->index;
    snprintf(wr->uuid, sizeof wr->uuid, "%s", w->uuid);
    wr->batch_size = w->batch_size;
    wr->seq_len = w->seq_len;
    wr->head_dim = w->head_dim;
    memcpy(wr->axes, w->axes, sizeof wr->axes);
    wr->bytes = s->op->bytes(w, s->grad_dtype);
    wr->sol_ms = w->sol_ms;
    wr->baseline_ms = w->baseline_ms;
    wr->time_ns.mean = wr->time_ns.median = wr->time_ns.min = wr->time_ns.max = wr->time_ns.stddev = NAN;
    wr->gbps = NAN;
    wr->span_kernels = wr->span_memcpy = wr->span_memset = -1;
    wr->flush_gap_us = NAN;
}

/* The backends a run holds open. */
typedef struct run_backends {
    rg_cpu_timer cold;
    void *cuda;   /* rg_cuda_state *, NULL on the CPU */
} run_backends;

/* Inputs, reference, the backend's checked (and timed) run of one workload. */
static int run_workload(const rg_suite *s, const rg_workload *w, const rg_run_options *o, run_backends *be,
                        rg_workload_result *wr, char *err, size_t errlen)
{
    const rg_op *op = s->op;
    rg_tensors in;
    if (op->make(w, s->grad_dtype, (int)o->inputs, o->seed, &in, err, errlen)) return 1;
    double *ref = malloc((size_t)in.n_out * sizeof *ref);
    if (!ref) {
        rg_tensors_free(&in);
        snprintf(err, errlen, "workload %d: out of memory for the reference", w->index);
        return 1;
    }
    int rc = rg_ground_truth_reference(op, &in, o->ground_truth, ref);
    if (rc) {
        free(ref);
        rg_tensors_free(&in);
        snprintf(err, errlen, "workload %d: reference: %s", w->index, ropegrad_strerror(rc));
        return 1;
    }
#ifdef ROPEGRAD_HAVE_CUDA
    if (be->cuda)
        rc = rg_cuda_workload(be->cuda, &in, ref, w, o, wr, err, errlen);
    else
#endif
        rc = cpu_workload(op, &in, ref, w, o, &be->cold, wr, err, errlen);
    free(ref);
    rg_tensors_free(&in);
    return rc;
}

static void report_workload(size_t k, size_t n, const rg_workload *w, const rg_workload_result *wr)
{
    if (wr->timed)
        fprintf(stderr, "[%zu/%zu] workload %d (%s): pass, median %.2f us\n", k + 1, n, w->index, wr->sizes,
                wr->time_ns.median / 1e3);
    else
        fprintf(stderr, "[%zu/%zu] workload %d (%s): %s%s\n", k + 1, n, w->index, wr->sizes,
                wr->check.pass ? "pass" : "FAIL: ", wr->check.reason);
}

/* Suite summary over the per-workload medians of the timed workloads. */
static void summarize(rg_run_result *out)
{
    double sum = 0, logsum = 0;
    int timed = 0;
    for (size_t k = 0; k < out->n_workloads; k++) {
        const rg_workload_result *wr = &out->workloads[k];
        if (!wr->timed || !(wr->time_ns.median > 0)) continue;
        sum += wr->time_ns.median;
        logsum += log(wr->time_ns.median);
        timed++;
    }
    out->mean_ns = timed ? sum / timed : NAN;
    out->geomean_ns = timed ? exp(logsum / timed) : NAN;
}

/* Every selected workload in turn; after a lost GPU the rest fail unrun. */
static int run_workloads(const rg_suite *s, const int *indices, const rg_run_options *o, run_backends *be,
                         rg_run_result *out, char *err, size_t errlen)
{
    const size_t n = out->n_workloads;
    for (size_t k = 0; k < n; k++) {
        const rg_workload *w = &s->workloads[indices ? (size_t)indices[k] : k];
        rg_workload_result *wr = &out->workloads[k];
        rg_workload_header(s, w, wr);
        rg_axes_text(s->op, w, wr->sizes, sizeof wr->sizes);
        if (out->stopped[0]) {
            snprintf(wr->check.reason, sizeof wr->check.reason, "not run: the GPU was lost (%.80s)", out->stopped);
            continue;
        }
        if (run_workload(s, w, o, be, wr, err, errlen)) return 1;
#ifdef ROPEGRAD_HAVE_CUDA
        if (be->cuda && rg_cuda_lost(be->cuda))
            snprintf(out->stopped, sizeof out->stopped, "workload %d: %.100s", w->index, rg_cuda_lost(be->cuda));
#endif
        if (wr->check.pass) out->passed++;
        if (o->verbose > 0) report_workload(k, n, w, wr);
    }
    out->total = (int)n;
    return 0;
}

int rg_run_suite(const rg_suite *s, const int *indices, size_t n_indices, const rg_run_options *o,
                 rg_run_result *out, char *err, size_t errlen)
{
    if (!out) {
        snprintf(err, errlen, "rg_run_suite: out is NULL");
        return 1;
    }
    memset(out, 0, sizeof *out);
    if (validate_options(s, indices, n_indices, o, err, errlen)) return 1;
    const int use_cuda = resolve_backend(o, err, errlen);
    if (use_cuda < 0) return 1;
    if (!use_cuda && o->kernel != 0) {
        snprintf(err, errlen, "--kernel %d selects a CUDA kernel version; the cpu backend has only kernel 0",
                 o->kernel);
        return 1;
    }
    const int cpu_threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    rg_result_header(s, o, use_cuda, cpu_threads, out);
    out->n_workloads = n_indices ? n_indices : s->n_workloads;
    out->workloads = calloc(out->n_workloads, sizeof *out->workloads);
    if (!out->workloads) {
        out->n_workloads = 0;
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    run_backends be = {{NULL, 0, ""}, NULL};
    int rc = 0;
#ifdef ROPEGRAD_HAVE_CUDA
    rg_cuda_state *cs = NULL;
    if (use_cuda) {
        rc = rg_cuda_open(s->op, o->kernel, o->timed, out, &cs, err, errlen);
        be.cuda = cs;
    }
#endif
    if (!use_cuda) rc = open_cpu(o, cpu_threads, out, &be.cold, err, errlen);
    if (!rc) rc = run_workloads(s, n_indices ? indices : NULL, o, &be, out, err, errlen);
    if (!rc) summarize(out);
#ifdef ROPEGRAD_HAVE_CUDA
    if (cs) rg_cuda_close(cs, out);
#endif
    rg_cpu_timer_close(&be.cold);
    if (rc) rg_run_result_free(out);
    return rc;
}

