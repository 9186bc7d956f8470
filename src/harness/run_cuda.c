/* SPDX-License-Identifier: Apache-2.0 */
/* run_cuda.c -- the protocol on a GPU, as the official SOL-ExecBench
 * evaluator runs it.
 *
 * Per workload: copy the inputs to the device, then the correctness rounds
 * (rounds.c, shared with the CPU path): o->rounds rounds of fresh seeded
 * inputs copied into the SAME device buffers, the output poisoned with 0xFF
 * bytes (NaN) before every call, the output and the inputs copied back after
 * it for the reward-hack guards and the check. Then, when timing and every
 * round passed, warmup + iterations, each iteration being
 *
 *     re-stage the inputs         --restage on: a device-to-device copy from a pristine copy to a
 *                                 pool at +256 B per iteration (restage_cuda.c): fresh pointers
 *     cudaMemsetAsync(cold, 0, 2 x L2)   evicts the previous iteration's data from L2
 *     settle                      --settle on (the default): the host waits for the flush, so the
 *                                 call starts on an idle GPU as the official evaluator's Python
 *                                 call does (off: issued at once, right behind the flush)
 *     t0 = cuptiGetTimestamp()
 *     op->cuda(...)               the op row's call into the public API (014:
 *                                 ropegrad_rope_backward_cuda), or a plugin's
 *     t1 = cuptiGetTimestamp()
 *     synchronize                 --sync iteration: the host waits for the device
 *
 * all enqueued on the harness's stream. One sample is the span of the GPU
 * work the call issued between t0 and t1 (cupti_span_cuda.c: --span all
 * counts kernels, memcpy and memset on any stream; --span kernels only
 * kernels), and every timed iteration must launch the same kernels as the
 * first (else REWARD_HACK). If CUPTI cannot be used, CUDA events around each
 * call on the harness's stream are the timer and the run says "cuda-events"
 * (the same-kernels check then does not run). CUPTI's records also give the
 * workload's flush gap (flush_gap.h: the GPU idle time before each call's
 * first activity; the median over iterations). After the timed iterations one
 * more call on round 0's inputs must pass the check (rounds.c).
 *
 * Setting ROPEGRAD_TIMER=cuda-events in the environment skips CUPTI (to
 * compare the two timers, or where a profiler already holds CUPTI).
 *
 * GPU clocks are read at the start and the end of the run through NVML
 * (nvml_cuda.c). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "harness.h"
#include "flush_gap.h"
#include "run_cuda.h"
#include "run_cuda_parts.h"
#include "run_internal.h"

/* ---- state ----------------------------------------------------------------------------------- */

struct rg_cuda_state {
    const rg_op *op;
    int device, kernel, timed;
    cudaStream_t stream;
    void *cold;
    size_t cold_bytes;
    int use_cupti;
    int n_cupti, n_events;   /* workloads timed each way */
    rg_nvml *nvml;
    double timeout_s;        /* rg_run_options.timeout_s: how long one launch may run, 0 = no limit */
    char lost[128];          /* why the GPU is unusable (a sticky CUDA error, a kernel still running), "" when it is not */
};

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            snprintf(err, errlen, "%s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

static void version_str(char *dst, size_t n, int v)
{
    snprintf(dst, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Sets up CUPTI (once per process): 1 usable, 0 not (said on stderr). */
static int cupti_usable(void)
{
    char why[160];
    if (!rg_span_setup(why, sizeof why)) return 1;
    fprintf(stderr, "ropegrad: CUPTI unavailable (%s); timing with CUDA events instead\n", why);
    return 0;
}

/* The device's part of r->env. */
static int describe_device(rg_cuda_state *s, rg_env *e, char *err, size_t errlen)
{
    struct cudaDeviceProp prop;
    int v = 0, clock_khz = 0, bus_bits = 0;
    CK(cudaGetDevice(&s->device));
    CK(cudaFree(0));   /* create the context now, not inside the first timed call */
    CK(cudaGetDeviceProperties(&prop, s->device));
    snprintf(e->gpu_name, sizeof e->gpu_name, "%.127s", prop.name);
    snprintf(e->gpu_arch, sizeof e->gpu_arch, "sm_%d%d", prop.major, prop.minor);
    CK(cudaDeviceGetAttribute(&e->gpu_sm_count, cudaDevAttrMultiProcessorCount, s->device));
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, s->device));
    e->gpu_l2_bytes = v;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, s->device) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, s->device) == cudaSuccess)
        e->gpu_mem_bandwidth_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;  /* double data rate */
    CK(cudaRuntimeGetVersion(&v));
    version_str(e->cuda_runtime_version, sizeof e->cuda_runtime_version, v);
    CK(cudaDriverGetVersion(&v));
    version_str(e->driver_version, sizeof e->driver_version, v);   /* CUDA API level; NVML's below is better */
    s->nvml = rg_nvml_open(s->device);
    rg_nvml_driver(s->nvml, e->driver_version, sizeof e->driver_version);
    rg_nvml_clocks(s->nvml, &e->sm_clock_mhz_start, &e->mem_clock_mhz_start);
    e->sm_clock_mhz_end = e->mem_clock_mhz_end = -1;
    return 0;
fail:
    return 1;
}

int rg_cuda_open(const rg_op *op, int kernel, int timed, rg_run_result *r, rg_cuda_state **out, char *err, size_t errlen)
{
    *out = NULL;
    rg_cuda_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    s->op = op;
    s->kernel = kernel;
    s->timed = timed;
    rg_env *e = &r->env;
    if (describe_device(s, e, err, errlen)) goto fail;
    CK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    if (timed) {
        s->cold_bytes = e->gpu_l2_bytes > 0 ? 2 * (size_t)e->gpu_l2_bytes : (size_t)128 << 20;
        CK(cudaMalloc(&s->cold, s->cold_bytes));
        const char *force = getenv("ROPEGRAD_TIMER");
        s->use_cupti = force && !strcmp(force, "cuda-events") ? 0 : cupti_usable();
        snprintf(r->cold_l2, sizeof r->cold_l2, "%zu MiB zeroed (cudaMemsetAsync) before every iteration (2x the %lld KiB L2)",
                 s->cold_bytes >> 20, (long long)(e->gpu_l2_bytes >> 10));
        snprintf(r->timer, sizeof r->timer, "%s", s->use_cupti ? "cupti" : "cuda-events");
    } else {
        snprintf(r->cold_l2, sizeof r->cold_l2, "none (not timed)");
        snprintf(r->timer, sizeof r->timer, "none");
    }
    const char *kn = op->kernel_name(kernel);
    snprintf(r->kernel_name, sizeof r->kernel_name, "%s", kn ? kn : "default");
    snprintf(r->device, sizeof r->device, "%s (%s, %d SMs)", e->gpu_name, e->gpu_arch, e->gpu_sm_count);
    *out = s;
    return 0;
fail:
    if (s->stream) cudaStreamDestroy(s->stream);
    if (s->cold) cudaFree(s->cold);
    rg_nvml_close(s->nvml);
    free(s);
    return 1;
}

/* The run's timer and same-kernels check, from how its workloads were timed. */
static void describe_timing(const rg_cuda_state *s, rg_run_result *r)
{
    const int cupti = s->n_cupti || (!s->n_events && s->use_cupti);
    snprintf(r->timer, sizeof r->timer, "%s",
             s->n_cupti && s->n_events ? "mixed (cupti, cuda-events)" : cupti ? "cupti" : "cuda-events");
    if (s->n_cupti && s->n_events)
        snprintf(r->same_kernels, sizeof r->same_kernels,
                 "checked on the %d workloads timed with CUPTI; did not run on the %d timed with CUDA events",
                 s->n_cupti, s->n_events);
    else if (cupti)
        snprintf(r->same_kernels, sizeof r->same_kernels,
                 "checked: every timed iteration launched the same kernels as the first, and something (CUPTI)");
    else
        snprintf(r->same_kernels, sizeof r->same_kernels, "did not run: timed with CUDA events (it needs CUPTI)");
}

void rg_cuda_close(rg_cuda_state *s, rg_run_result *r)
{
    if (!s) return;
    if (r) {
        rg_nvml_clocks(s->nvml, &r->env.sm_clock_mhz_end, &r->env.mem_clock_mhz_end);
        if (s->timed) describe_timing(s, r);
        else snprintf(r->same_kernels, sizeof r->same_kernels, "did not run: not timed");
    }
    rg_nvml_close(s->nvml);
    if (!s->lost[0]) {   /* a lost GPU: leave it to the process's end (cudaFree would wait on a hung kernel) */
        if (s->cold) cudaFree(s->cold);
        if (s->stream) cudaStreamDestroy(s->stream);
    }
    free(s);
}

/* ---- faults and hangs ----------------------------------------------------------------------------- */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits for everything enqueued on the stream, then for the whole device
 * (work a call put on a stream of its own): cudaSuccess, the CUDA error (a
 * fault: sticky, the context is unusable from then on) or, when timeout_s >
 * 0 and the harness's stream is still busy after it, cudaErrorNotReady (a
 * kernel that hangs cannot be stopped; the process must end). */
static cudaError_t device_wait(cudaStream_t st, double timeout_s)
{
    cudaError_t e = cudaSuccess;
    if (timeout_s <= 0) {
        e = cudaStreamSynchronize(st);
    } else {
        const double t0 = mono_s();
        const struct timespec nap = {0, 200 * 1000};
        while ((e = cudaStreamQuery(st)) == cudaErrorNotReady) {
            if (mono_s() - t0 > timeout_s) return cudaErrorNotReady;
            nanosleep(&nap, NULL);
        }
    }
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

/* The workload fails with what happened to the GPU, and the CUDA state is lost:
 * nothing more is launched, nothing freed (cudaFree would wait for a hung
 * kernel), and the run stops after this workload (run.c). */
static void gpu_lost(rg_cuda_state *s, rg_workload_result *wr, cudaError_t ce, double waited_s)
{
    wr->check.pass = 0;
    if (ce == cudaErrorNotReady)
        snprintf(s->lost, sizeof s->lost, "timed out: still running after %g s (--timeout)", waited_s);
    else
        snprintf(s->lost, sizeof s->lost, "CUDA error %s: %s", cudaGetErrorName(ce), cudaGetErrorString(ce));
    snprintf(wr->check.reason, sizeof wr->check.reason, "%s", s->lost);
}

const char *rg_cuda_lost(const rg_cuda_state *s)
{
    return s && s->lost[0] ? s->lost : NULL;
}

/* ---- one workload's buffers, and its correctness calls (rounds.c) ------------------------------------ */

/* A workload's device tensors (the same buffers every round) and the host
 * copies the rounds read back. */
typedef struct cuda_bufs {
    rg_cuda_state *s;
    rg_tensors dev;      /* in[] on the device */
    void *d_out, *h_out;
    rg_tensors after;    /* in[] on the host: the device inputs as a call left them */
} cuda_bufs;

static void bufs_free(cuda_bufs *b)
{
    for (int k = 0; k < b->after.n_in; k++) free(b->after.in[k]);
    free(b->h_out);
    if (!b->s->lost[0]) {
        cudaFree(b->d_out);
        for (int k = 0; k < b->dev.n_in; k++) cudaFree(b->dev.in[k]);
    }
}

/* Allocates the buffers and copies in (round 0) to the device. 0, or 1 with a message. */
static int bufs_open(rg_cuda_state *s, const rg_tensors *in, cuda_bufs *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->s = s;
    b->dev = b->after = *in;
    for (int k = 0; k < in->n_in; k++) b->dev.in[k] = b->after.in[k] = NULL;
    b->h_out = malloc(in->out_bytes);
    int oom = !b->h_out;
    for (int k = 0; k < in->n_in; k++) {
        CK(cudaMalloc(&b->dev.in[k], in->in_bytes[k]));
        CK(cudaMemcpy(b->dev.in[k], in->in[k], in->in_bytes[k], cudaMemcpyHostToDevice));
        if (!(b->after.in[k] = malloc(in->in_bytes[k]))) oom = 1;
    }
    CK(cudaMalloc(&b->d_out, in->out_bytes));
    if (!oom) return 0;
    snprintf(err, errlen, "out of memory for the host copies of a workload");
fail:
    bufs_free(b);
    return 1;
}

/* rg_round_io.stage: a round's inputs into the same device buffers. */
static int cuda_stage(void *ctx, const rg_tensors *in, char *err, size_t errlen)
{
    cuda_bufs *b = ctx;
    b->dev.attention_scaling = in->attention_scaling;
    for (int k = 0; k < in->n_in; k++) CK(cudaMemcpy(b->dev.in[k], in->in[k], in->in_bytes[k], cudaMemcpyHostToDevice));
    return 0;
fail:
    return 1;
}

/* The output and the inputs back to the host after a call. */
static int copy_back(cuda_bufs *b, char *err, size_t errlen)
{
    CK(cudaMemcpy(b->h_out, b->d_out, b->dev.out_bytes, cudaMemcpyDeviceToHost));
    for (int k = 0; k < b->dev.n_in; k++)
        CK(cudaMemcpy(b->after.in[k], b->dev.in[k], b->dev.in_bytes[k], cudaMemcpyDeviceToHost));
    return 0;
fail:
    return 1;
}

/* rg_round_io.call: one call into a poisoned output, waited for, copied back. */
static int cuda_call(void *ctx, int r, const void **out, const rg_tensors **after, rg_workload_result *wr, char *err,
                     size_t errlen)
{
    cuda_bufs *b = ctx;
    rg_cuda_state *s = b->s;
    cudaError_t ce = cudaMemsetAsync(b->d_out, 0xFF, b->dev.out_bytes, s->stream);
    int krc = ce == cudaSuccess ? s->op->cuda(&b->dev, b->d_out, s->kernel, s->stream) : 0;
    if (!krc && ce == cudaSuccess && s->op->finish) krc = s->op->finish(&b->dev, b->d_out, s->stream);   /* untimed */
    if (ce == cudaSuccess) ce = device_wait(s->stream, s->timeout_s);
    if (ce != cudaSuccess) {
        gpu_lost(s, wr, ce, s->timeout_s);
        return RG_CALL_LOST;
    }
    if (krc) {
        rg_call_failed(s->op, "cuda", krc, r, wr);
        return RG_CALL_FAILED;
    }
    if (copy_back(b, err, errlen)) return RG_CALL_SYSTEM;
    *out = b->h_out;
    *after = &b->after;
    return RG_CALL_OK;
}

/* ---- timing ------------------------------------------------------------------------------------ */

/* What the timed loops need: the CUDA state, the workload's buffers, the re-staging pool (NULL: off). */
typedef struct rg_timing {
    rg_cuda_state *s;
    const cuda_bufs *b;
    const rg_restage_pool *pool;
    const rg_run_options *o;
} rg_timing;

enum { TIME_OK = 0, TIME_FALLBACK = 1, TIME_FAILED = 2, TIME_CUDA_ERROR = -1 };

/* --settle on: the host waits for the flush (and everything before it) to finish, so the timed
 * call starts on an idle GPU. TIME_OK, or TIME_CUDA_ERROR (err). */
static int settle(const rg_timing *t, int it, char *err, size_t errlen)
{
    if (t->o->settle != RG_SETTLE_ON) return TIME_OK;
    cudaError_t ce = device_wait(t->s->stream, t->s->timeout_s);
    if (ce == cudaSuccess) return TIME_OK;
    snprintf(err, errlen, "settling after the flush of iteration %d: %s", it, cudaGetErrorString(ce));
    return TIME_CUDA_ERROR;
}

/* Before iteration it, outside the timed span: re-stage the inputs (when on) into *call, let an
 * in-process implementation stage its call (rg_op.stage: the Python driver makes its tensors here,
 * as the official evaluator makes them before its flush), then flush L2 (and with --settle on wait
 * for it). TIME_OK, TIME_FAILED (the stage failed: wr says why) or TIME_CUDA_ERROR (err). */
static int prepare(const rg_timing *t, int it, rg_tensors *call, rg_workload_result *wr, char *err, size_t errlen)
{
    *call = t->b->dev;
    if (t->pool && rg_restage_next(t->pool, it, call, t->s->stream, err, errlen)) return TIME_CUDA_ERROR;
    const rg_op *op = t->s->op;
    int rc = op->stage ? op->stage(call, t->b->d_out, t->s->stream) : 0;
    if (rc) {
        wr->check.pass = 0;
        snprintf(wr->check.reason, sizeof wr->check.reason, "op %s cuda (staging a timed call): %s", op->id,
                 rg_op_error_text(op, rc));
        return TIME_FAILED;
    }
    cudaError_t ce = cudaMemsetAsync(t->s->cold, 0, t->s->cold_bytes, t->s->stream);
    if (ce != cudaSuccess) {
        snprintf(err, errlen, "cudaMemsetAsync (cold L2): %s", cudaGetErrorString(ce));
        return TIME_CUDA_ERROR;
    }
    return settle(t, it, err, errlen);
}

/* The call itself: TIME_OK, or TIME_FAILED with the workload's reason (the op returned an error). */
static int call_timed(const rg_timing *t, const rg_tensors *call, rg_workload_result *wr)
{
    int rc = t->s->op->cuda(call, t->b->d_out, t->s->kernel, t->s->stream);
    if (!rc) return TIME_OK;
    wr->check.pass = 0;
    snprintf(wr->check.reason, sizeof wr->check.reason, "op %s cuda (timed): %s", t->s->op->id,
             rg_op_error_text(t->s->op, rc));
    return TIME_FAILED;
}

/* --sync iteration: the host waits after the last warmup and after every timed iteration. */
static int sync_after(const rg_timing *t, int it, char *err, size_t errlen)
{
    if (t->o->sync != RG_SYNC_ITERATION || it < t->o->warmup - 1) return 0;
    cudaError_t ce = device_wait(t->s->stream, t->s->timeout_s);
    if (ce == cudaSuccess) return 0;
    snprintf(err, errlen, "synchronizing after iteration %d: %s", it, cudaGetErrorString(ce));
    return 1;
}

/* Every iteration, timestamps around the timed calls into t0/t1 (NULL: none). */
static int timed_loop(const rg_timing *t, uint64_t *t0, uint64_t *t1, rg_workload_result *wr, char *err, size_t errlen)
{
    const int warmup = t->o->warmup, total = warmup + t->o->iterations;
    for (int it = 0; it < total; it++) {
        rg_tensors call;
        int prc = prepare(t, it, &call, wr, err, errlen);
        if (prc) return prc;
        const int i = it - warmup;
        if (i >= 0 && t0 && rg_span_now(&t0[i])) return TIME_FALLBACK;
        int rc = call_timed(t, &call, wr);
        if (i >= 0 && t1 && rg_span_now(&t1[i])) return TIME_FALLBACK;
        if (rc) return rc;
        if (sync_after(t, it, err, errlen)) return TIME_CUDA_ERROR;
    }
    cudaError_t ce = device_wait(t->s->stream, t->s->timeout_s * total);
    if (ce == cudaSuccess) return TIME_OK;
    snprintf(err, errlen, "waiting for the device: %s", cudaGetErrorString(ce));
    return TIME_CUDA_ERROR;
}

/* The records of a timed loop into samples, wr's span counts and its flush
 * gap (gaps: scratch for one per iteration): TIME_OK, TIME_FAILED (a reward
 * hack, wr says why) or TIME_FALLBACK (why). */
static int attribute(const rg_timing *t, const uint64_t *t0, const uint64_t *t1, double *samples, double *gaps,
                     rg_workload_result *wr, char *why, size_t whylen)
{
    const int iters = t->o->iterations;
    rg_span_counts c;
    int a = rg_span_attribute(t0, t1, iters, t->o->span, samples, gaps, &c, why, whylen);
    if (a == RG_SPAN_HACK) rg_reward_hack(wr, why);
    if (a != RG_SPAN_OK) return a == RG_SPAN_HACK ? TIME_FAILED : TIME_FALLBACK;
    wr->span_kernels = c.kernels, wr->span_memcpy = c.memcpy, wr->span_memset = c.memset;
    wr->flush_gap_us = rg_gap_median_us(gaps, iters);
    return TIME_OK;
}

/* CUPTI timing: TIME_OK (samples, wr's span counts and flush gap),
 * TIME_FALLBACK (time with events), TIME_FAILED (wr says why: a reward hack,
 * the op's error), TIME_CUDA_ERROR (err). */
static int time_cupti(const rg_timing *t, double *samples, rg_workload_result *wr, char *err, size_t errlen)
{
    const size_t iters = (size_t)t->o->iterations;
    char why[160];
    uint64_t *t0 = malloc(iters * sizeof *t0), *t1 = malloc(iters * sizeof *t1);
    double *gaps = malloc(iters * sizeof *gaps);
    int rc = TIME_FALLBACK;
    if (!t0 || !t1 || !gaps) snprintf(why, sizeof why, "out of memory");
    else if (!rg_span_begin(why, sizeof why)) {
        rc = timed_loop(t, t0, t1, wr, err, errlen);
        /* A fault or a hang: no flush (it could wait on the GPU); the caller asks the stream what happened. */
        int flushed = rg_span_end(rc == TIME_OK, why, sizeof why);
        if (rc == TIME_OK && flushed) rc = TIME_FALLBACK;
        if (rc == TIME_OK) rc = attribute(t, t0, t1, samples, gaps, wr, why, sizeof why);
        else if (rc == TIME_FALLBACK) snprintf(why, sizeof why, "cuptiGetTimestamp failed");
    }
    if (rc == TIME_FALLBACK) fprintf(stderr, "ropegrad: CUPTI records unusable (%s); timing with CUDA events\n", why);
    free(t0);
    free(t1);
    free(gaps);
    return rc;
}

/* CUDA events around each timed call on the harness's stream (the re-staging and the memset stay outside). */
static int time_events(const rg_timing *t, double *samples, rg_workload_result *wr, char *err, size_t errlen)
{
    const int warmup = t->o->warmup, iters = t->o->iterations;
    cudaEvent_t *ev = calloc(2 * (size_t)iters, sizeof *ev);
    int made = 0, rc = TIME_CUDA_ERROR;
    if (!ev) {
        snprintf(err, errlen, "out of memory");
        return TIME_CUDA_ERROR;
    }
    for (; made < 2 * iters; made++) CK(cudaEventCreate(&ev[made]));
    for (int it = 0; it < warmup + iters; it++) {
        const int i = it - warmup;
        rg_tensors call;
        int prc = prepare(t, it, &call, wr, err, errlen);
        if (prc != TIME_OK) {
            rc = prc;
            goto fail;
        }
        if (i >= 0) CK(cudaEventRecord(ev[2 * i], t->s->stream));
        if ((rc = call_timed(t, &call, wr)) != TIME_OK) goto fail;
        rc = TIME_CUDA_ERROR;
        if (i >= 0) CK(cudaEventRecord(ev[2 * i + 1], t->s->stream));
        if (sync_after(t, it, err, errlen)) goto fail;
    }
    CK(device_wait(t->s->stream, t->s->timeout_s * (warmup + iters)));
    for (int i = 0; i < iters; i++) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        samples[i] = (double)ms * 1e6;
    }
    rc = TIME_OK;
fail:
    for (int i = 0; i < made; i++) cudaEventDestroy(ev[i]);
    free(ev);
    return rc;
}

/* CUPTI, else CUDA events: a TIME_* status; wr->timer says which timed it. */
static int time_workload(rg_cuda_state *s, const rg_timing *t, double *samples, rg_workload_result *wr, char *err,
                         size_t errlen)
{
    int rc = s->use_cupti ? time_cupti(t, samples, wr, err, errlen) : TIME_FALLBACK;
    if (s->use_cupti && rc != TIME_FALLBACK && rc != TIME_CUDA_ERROR) {
        s->n_cupti++;
        snprintf(wr->timer, sizeof wr->timer, "cupti");
    }
    if (rc != TIME_FALLBACK) return rc;
    rc = time_events(t, samples, wr, err, errlen);
    if (rc == TIME_OK || rc == TIME_FAILED) {
        s->n_events++;
        snprintf(wr->timer, sizeof wr->timer, "cuda-events");
    }
    return rc;
}

/* The timed part of a workload whose rounds passed: 0 (timed, or failed
 * with a reason in wr), 1 a harness error (err). */
static int timed_part(rg_cuda_state *s, const cuda_bufs *b, const rg_run_options *o, rg_workload_result *wr,
                      char *err, size_t errlen)
{
    double *samples = malloc((size_t)o->iterations * sizeof *samples);
    rg_restage_pool pool;
    int have_pool = 0, rc = 1;
    if (!samples) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    if (o->restage == RG_RESTAGE_ON) {
        if (rg_restage_open(&pool, &b->dev, o->warmup + o->iterations, s->stream, err, errlen)) goto out;
        have_pool = 1;
    }
    const rg_timing t = {s, b, have_pool ? &pool : NULL, o};
    int tr = time_workload(s, &t, samples, wr, err, errlen);
    if (tr == TIME_OK) {
        rg_result_set_samples(wr, samples, o->iterations);
        samples = NULL;
    }
    rc = 0;
    if (tr == TIME_CUDA_ERROR) {
        /* A kernel that faulted or hung while timed fails the workload (never
         * a half-measured pass); any other error is the harness's own. */
        cudaError_t ce = cudaStreamQuery(s->stream);
        if (ce != cudaSuccess) gpu_lost(s, wr, ce, s->timeout_s * (o->warmup + o->iterations));
        else rc = 1;
    }
out:
    if (have_pool && !s->lost[0]) rg_restage_close(&pool);
    free(samples);
    return rc;
}

/* ---- one workload ---------------------------------------------------------------------------------- */

int rg_cuda_workload(rg_cuda_state *s, rg_tensors *in, const double *ref, const rg_workload *w,
                     const rg_run_options *o, rg_workload_result *wr, char *err, size_t errlen)
{
    cuda_bufs b;
    s->timeout_s = o->timeout_s;
    if (bufs_open(s, in, &b, err, errlen)) return 1;
    const rg_round_io io = {cuda_stage, cuda_call, &b};
    int rc = rg_correctness_rounds(s->op, w, o, in, ref, &io, wr, err, errlen);
    if (!rc && !s->lost[0] && o->timed && wr->check.pass) rc = timed_part(s, &b, o, wr, err, errlen);
    if (!rc && !s->lost[0] && wr->timed) rc = rg_after_timing(s->op, w, in, ref, &io, wr, err, errlen);
    bufs_free(&b);
    return rc;
}
