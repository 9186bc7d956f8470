/* SPDX-License-Identifier: Apache-2.0 */
/* run.c -- one run of the protocol over a suite.
 *
 * For each selected workload: generate inputs (inputs.c), compute the float64
 * reference (in parallel, over row blocks), run the backend once into an
 * output poisoned with NaN and check it (check.c), then -- when timing and
 * the output was correct -- warm up and time it:
 *
 *   CPU   before each call, write through a buffer of 2x the last-level
 *         cache (so inputs start in DRAM, as the GPU protocol's cold L2);
 *         each call timed with clock_gettime(CLOCK_MONOTONIC).
 *   CUDA  run_cuda.c: 2x-L2 memset before every iteration, CUPTI kernel spans.
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

/* The timed loop of both entry points below; t NULL: no flush. */
static int timed_loop(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns)
{
    if (!fn || !samples_ns || warmup < 0 || iterations < 1) return -1;
    int rc = 0;
    for (int it = 0; it < warmup + iterations && !rc; it++) {
        if (t) cold_flush(t, it);
        double t0 = now_ns();
        rc = fn(ctx);
        double t1 = now_ns();
        if (it >= warmup) samples_ns[it - warmup] = t1 - t0;
    }
    return rc;
}

int rg_cpu_timer_run(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns)
{
    if (!t || !t->buf) return -1;
    return timed_loop(t, warmup, iterations, fn, ctx, samples_ns);
}

int rg_cpu_timer_run_warm(int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns)
{
    return timed_loop(NULL, warmup, iterations, fn, ctx, samples_ns);
}

void rg_result_set_samples(rg_workload_result *wr, double *samples_ns, int n)
{
    wr->samples_ns = samples_ns;
    wr->n_samples = n;
    wr->timed = 1;
    rg_time_stats_compute(samples_ns, n, &wr->time_ns);
    wr->gbps = wr->time_ns.median > 0 ? wr->bytes / wr->time_ns.median : 0; /* bytes/ns = GB/s */
}

/* The output's elements as floats, for the check (NULL on out of memory). */
static float *widened(const rg_op *op, const void *out, int64_t n)
{
    float *f = malloc((size_t)n * sizeof *f);
    if (f) op->widen(out, n, f);
    return f;
}

int rg_check_op_output(const rg_op *op, const void *out, int64_t n, const double *ref, const rg_workload *w,
                       rg_check *res)
{
    float *f = widened(op, out, n);
    if (!f) return 1;
    rg_check_output(f, ref, n, w->max_atol, w->max_rtol, w->required_matched_ratio, w->max_error_cap, res);
    free(f);
    return 0;
}

int rg_cpu_call_run(void *ctx)
{
    const rg_cpu_call *c = ctx;
    return c->op->cpu(c->in, c->out, c->threads);
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
    int rc = rg_cpu_timer_run(cold, o->warmup, o->iterations, rg_cpu_call_run, &call, samples);
    if (rc) {
        free(out);
        free(samples);
        wr->check.pass = 0;
        snprintf(wr->check.reason, sizeof wr->check.reason, "op %s cpu (timed): %s", op->id, ropegrad_strerror(rc));
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
    if (s->op->kernel_name == ropegrad_cuda_kernel_name && o->kernel != 0 && o->kernel != ROPEGRAD_CUDA_KERNEL_DEFAULT) {
        snprintf(err, errlen,
                 "unknown CUDA kernel %d: the library ships 0 (default) and %d; the development versions are "
                 "built by bench/dev_kernels.cu", o->kernel, ROPEGRAD_CUDA_KERNEL_DEFAULT);
        return 1;
    }
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

int rg_run_suite(const rg_suite *s, const int *indices, size_t n_indices, const rg_run_options *o,
                 rg_run_result *out, char *err, size_t errlen)
{
    if (!out) {
        snprintf(err, errlen, "rg_run_suite: out is NULL");
        return 1;
    }
    memset(out, 0, sizeof *out);
    if (validate_options(s, indices, n_indices, o, err, errlen)) return 1;

    /* Resolve the backend. */
    int use_cuda;
    if (!strcmp(o->backend, "cpu")) {
        use_cuda = 0;
    } else if (!strcmp(o->backend, "cuda")) {
        if (!ropegrad_cuda_available()) {
            snprintf(err, errlen, "backend cuda requested but unavailable (%s)", ropegrad_strerror(ROPEGRAD_ERR_NO_CUDA));
            return 1;
        }
        use_cuda = 1;
    } else {
        use_cuda = ropegrad_cuda_available();
        if (o->verbose >= 0) fprintf(stderr, "ropegrad: backend auto -> %s\n",
                use_cuda ? "cuda" : "cpu (no usable CUDA device)");
    }
    const rg_op *op = s->op;
    if (use_cuda && !op->kernel_name(o->kernel)) {
        if (op->kernel_name == ropegrad_cuda_kernel_name)
            snprintf(err, errlen, "unknown CUDA kernel %d (this build has %d)", o->kernel, ropegrad_cuda_kernel_count());
        else
            snprintf(err, errlen, "unknown CUDA kernel %d: op %s ships one kernel (0, the default)", o->kernel, op->id);
        return 1;
    }
    if (!use_cuda && o->kernel != 0) {
        snprintf(err, errlen, "--kernel %d selects a CUDA kernel version; the cpu backend has only kernel 0",
                 o->kernel);
        return 1;
    }

    /* The header of the result. */
    const size_t n = n_indices ? n_indices : s->n_workloads;
    snprintf(out->suite, sizeof out->suite, "%s", s->name);
    snprintf(out->suite_dir, sizeof out->suite_dir, "%s", s->dir);
    snprintf(out->op, sizeof out->op, "%s", op->id);
    snprintf(out->reference, sizeof out->reference, "%s", op->reference);
    snprintf(out->backend, sizeof out->backend, "%s", use_cuda ? "cuda" : "cpu");
    out->kernel = o->kernel;
    snprintf(out->inputs, sizeof out->inputs, "%s", o->inputs == RG_INPUTS_POSITIONS ? "positions" : "normal");
    out->warmup = o->timed ? o->warmup : 0;
    out->iterations = o->timed ? o->iterations : 0;
    out->seed = o->seed;
    out->rounds = use_cuda ? 1 : o->rounds;   /* the CUDA runner checks one round (rounds.c is the CPU path's) */
    out->ground_truth = o->ground_truth;
    if (use_cuda && o->rounds > 1 && o->verbose >= 0)
        fprintf(stderr, "ropegrad: the cuda backend checks one correctness round (--rounds applies to cpu)\n");
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(out->started_at, sizeof out->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const int cpu_threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    rg_env_host(&out->env, cpu_threads);

    out->workloads = calloc(n, sizeof *out->workloads);
    if (!out->workloads) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    out->n_workloads = n;

    rg_cpu_timer cold = {NULL, 0, ""};
#ifdef ROPEGRAD_HAVE_CUDA
    rg_cuda_session *cs = NULL;
#endif
    int rc = 0;
    if (use_cuda) {
#ifdef ROPEGRAD_HAVE_CUDA
        if (rg_cuda_open(op, o->kernel, o->timed, out, &cs, err, errlen)) goto fail;
#endif
    } else {
        snprintf(out->kernel_name, sizeof out->kernel_name, "cpu-%s", ropegrad_cpu_isa());
        snprintf(out->device, sizeof out->device, "%.200s (%d threads)", out->env.cpu_model, cpu_threads);
        snprintf(out->timer, sizeof out->timer, "%s", o->timed ? "wall-clock" : "none");
        if (o->timed) {
            if (rg_cpu_timer_open(&cold, err, errlen)) goto fail;
            snprintf(out->cold_l2, sizeof out->cold_l2, "%s", cold.cold);
        } else {
            snprintf(out->cold_l2, sizeof out->cold_l2, "none (not timed)");
        }
    }

    for (size_t k = 0; k < n; k++) {
        const rg_workload *w = &s->workloads[n_indices ? (size_t)indices[k] : k];
        rg_workload_result *wr = &out->workloads[k];
        wr->index = w->index;
        snprintf(wr->uuid, sizeof wr->uuid, "%s", w->uuid);
        wr->batch_size = w->batch_size;
        wr->seq_len = w->seq_len;
        wr->head_dim = w->head_dim;
        wr->bytes = op->bytes(w, s->grad_dtype);
        wr->sol_ms = w->sol_ms;
        wr->baseline_ms = w->baseline_ms;
        wr->time_ns.mean = wr->time_ns.median = wr->time_ns.min = wr->time_ns.max = wr->time_ns.stddev = NAN;
        wr->gbps = NAN;
        if (out->stopped[0]) {   /* the GPU was lost: the rest fail, not run */
            snprintf(wr->check.reason, sizeof wr->check.reason, "not run: the GPU was lost (%.80s)", out->stopped);
            continue;
        }

        rg_tensors in;
        if (op->make(w, s->grad_dtype, (int)o->inputs, o->seed, &in, err, errlen)) goto fail;
        double *ref = malloc((size_t)in.n_out * sizeof *ref);
        if (!ref) {
            rg_tensors_free(&in);
            snprintf(err, errlen, "workload %d: out of memory for the reference", w->index);
            goto fail;
        }
        int rrc = rg_ground_truth_reference(op, &in, o->ground_truth, ref);
        if (rrc) {
            free(ref);
            rg_tensors_free(&in);
            snprintf(err, errlen, "workload %d: reference: %s", w->index, ropegrad_strerror(rrc));
            goto fail;
        }
        int wrc;
#ifdef ROPEGRAD_HAVE_CUDA
        if (use_cuda)
            wrc = rg_cuda_workload(cs, &in, ref, w, o, wr, err, errlen);
        else
#endif
            wrc = cpu_workload(op, &in, ref, w, o, &cold, wr, err, errlen);
        free(ref);
        rg_tensors_free(&in);
        if (wrc) goto fail;
#ifdef ROPEGRAD_HAVE_CUDA
        if (use_cuda && rg_cuda_lost(cs))
            snprintf(out->stopped, sizeof out->stopped, "workload %d: %.100s", w->index, rg_cuda_lost(cs));
#endif
        if (wr->check.pass) out->passed++;
        if (o->verbose > 0) {
            if (wr->timed)
                fprintf(stderr, "[%zu/%zu] workload %d (B=%lld S=%lld): pass, median %.2f us\n", k + 1, n, w->index,
                        (long long)w->batch_size, (long long)w->seq_len, wr->time_ns.median / 1e3);
            else
                fprintf(stderr, "[%zu/%zu] workload %d (B=%lld S=%lld): %s%s\n", k + 1, n, w->index,
                        (long long)w->batch_size, (long long)w->seq_len, wr->check.pass ? "pass" : "FAIL: ",
                        wr->check.reason);
        }
    }
    out->total = (int)n;

    /* Suite summary over the per-workload medians of the timed workloads. */
    double sum = 0, logsum = 0;
    int timed = 0;
    for (size_t k = 0; k < n; k++) {
        const rg_workload_result *wr = &out->workloads[k];
        if (!wr->timed || !(wr->time_ns.median > 0)) continue;
        sum += wr->time_ns.median;
        logsum += log(wr->time_ns.median);
        timed++;
    }
    out->mean_ns = timed ? sum / timed : NAN;
    out->geomean_ns = timed ? exp(logsum / timed) : NAN;
    goto done;

fail:
    rc = 1;
done:
#ifdef ROPEGRAD_HAVE_CUDA
    if (cs) rg_cuda_close(cs, out);
#endif
    rg_cpu_timer_close(&cold);
    if (rc) rg_run_result_free(out);
    return rc;
}

void rg_run_result_free(rg_run_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_workloads && r->workloads; i++) free(r->workloads[i].samples_ns);
    free(r->workloads);
    r->workloads = NULL;
    r->n_workloads = 0;
}
