/* SPDX-License-Identifier: Apache-2.0 */
/* run_cuda.c -- the protocol on a GPU, timed as SOL-ExecBench times it.
 *
 * Per workload: copy the inputs to the device, poison the output with 0xFF
 * bytes (NaN), run the kernel once and check it; then, when timing and the
 * output was correct, run warmup + iterations, each iteration being
 *
 *     cudaMemsetAsync(cold, 0, 2 x L2)     evicts the previous iteration's data from L2
 *     op->cuda(...)                        the op row's call into the public API (014:
 *                                          ropegrad_backward_cuda_kernel), one or more launches
 *
 * all on one stream, with no host synchronization in between. An
 * iteration's time is (last kernel end - first kernel start) over the
 * kernels it launched, from CUPTI activity records (CONCURRENT_KERNEL, which
 * does not serialize kernels). The cold-L2 memset is itself recorded as a
 * MEMSET activity: it is how iterations are told apart -- the kernels
 * between one cold memset and the next (in correlation-id order, which is
 * launch order on this thread) are one iteration. If that fails, kernels are
 * grouped by launch order (an equal count per iteration); if CUPTI cannot be
 * used at all, CUDA events around each iteration are the timer and the run
 * says "cuda-events".
 *
 * Setting ROPEGRAD_TIMER=cuda-events in the environment skips CUPTI (to
 * compare the two timers, or where a profiler already holds CUPTI).
 *
 * GPU clocks are read at the start and the end of the run through NVML,
 * loaded with dlopen() so that a machine without the driver's NVML library
 * still runs (clocks then -1). */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "harness.h"
#include "run_cuda.h"
#include "run_internal.h"

/* The newest kernel record this cupti_activity.h describes (CUPTI hands out
 * records of the version it was built with; start/end/correlationId sit at
 * the same offsets in every version). */
#if defined(CUPTI_API_VERSION) && CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 rg_kernel_record;
#else
typedef CUpti_ActivityKernel9 rg_kernel_record;
#endif
typedef CUpti_ActivityMemset4 rg_memset_record;

#define RG_CUPTI_BUFFER (8u << 20)

/* ---- CUPTI activity collection ---------------------------------------------------------- */

typedef struct rg_act {
    uint32_t corr;
    int is_memset;
    uint64_t start, end, bytes;
} rg_act;

/* CUPTI delivers buffers on its own thread (and inside cuptiActivityFlushAll). */
static pthread_mutex_t g_act_mu = PTHREAD_MUTEX_INITIALIZER;
static rg_act *g_act;
static size_t g_act_n, g_act_cap;
static int g_act_oom;
static size_t g_act_dropped;
static int g_cupti_registered;   /* cuptiActivityRegisterCallbacks may be called once per process */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, RG_CUPTI_BUFFER);
    *size = *buffer ? RG_CUPTI_BUFFER : 0;
    *max_records = 0;
}

static void act_push(uint32_t corr, int is_memset, uint64_t start, uint64_t end, uint64_t bytes)
{
    if (g_act_n == g_act_cap) {
        size_t nc = g_act_cap ? g_act_cap * 2 : 1024;
        rg_act *na = realloc(g_act, nc * sizeof *na);
        if (!na) {
            g_act_oom = 1;
            return;
        }
        g_act = na;
        g_act_cap = nc;
    }
    g_act[g_act_n++] = (rg_act){corr, is_memset, start, end, bytes};
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                                     size_t valid)
{
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&g_act_mu);
    if (buffer && valid > 0) {
        while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
            if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
                const rg_kernel_record *k = (const rg_kernel_record *)rec;
                act_push(k->correlationId, 0, k->start, k->end, 0);
            } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
                const rg_memset_record *m = (const rg_memset_record *)rec;
                act_push(m->correlationId, 1, m->start, m->end, m->bytes);
            }
        }
        size_t dropped = 0;
        if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS) g_act_dropped += dropped;
    }
    pthread_mutex_unlock(&g_act_mu);
    free(buffer);
}

static void act_reset(void)
{
    pthread_mutex_lock(&g_act_mu);
    g_act_n = 0;
    g_act_oom = 0;
    g_act_dropped = 0;
    pthread_mutex_unlock(&g_act_mu);
}

static const char *cupti_str(CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "unknown CUPTI error";
    return s;
}

static int cmp_act(const void *a, const void *b)
{
    const rg_act *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

/* ---- NVML through dlopen ------------------------------------------------------------------ */

/* The few NVML declarations used (nvml.h): a device handle is an opaque
 * pointer, results and clock types are ints. */
typedef void *rg_nvml_device;
enum { RG_NVML_SUCCESS = 0, RG_NVML_CLOCK_SM = 1, RG_NVML_CLOCK_MEM = 2 };

typedef struct rg_nvml {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_index)(unsigned, rg_nvml_device *);
    int (*by_pci)(const char *, rg_nvml_device *);
    int (*clock)(rg_nvml_device, int, unsigned *);
    int (*driver)(char *, unsigned);
    rg_nvml_device dev;
    int ok;
} rg_nvml;

/* dlsym returns void *; ISO C has no conversion to a function pointer, a
 * byte copy of the same-size pointer is the portable spelling. */
static int sym(void *lib, const char *name, void *fnptr, size_t fnsize)
{
    void *p = dlsym(lib, name);
    if (!p || fnsize != sizeof p) return 1;
    memcpy(fnptr, &p, fnsize);
    return 0;
}

static void nvml_open(rg_nvml *n, int cuda_device)
{
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) return;
    if (sym(n->lib, "nvmlInit_v2", &n->init, sizeof n->init) ||
        sym(n->lib, "nvmlShutdown", &n->shutdown, sizeof n->shutdown) ||
        sym(n->lib, "nvmlDeviceGetHandleByIndex_v2", &n->by_index, sizeof n->by_index) ||
        sym(n->lib, "nvmlDeviceGetClockInfo", &n->clock, sizeof n->clock) || n->init() != RG_NVML_SUCCESS) {
        dlclose(n->lib);
        n->lib = NULL;
        return;
    }
    if (sym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2", &n->by_pci, sizeof n->by_pci)) n->by_pci = NULL;
    if (sym(n->lib, "nvmlSystemGetDriverVersion", &n->driver, sizeof n->driver)) n->driver = NULL;
    /* NVML numbers devices differently from CUDA when CUDA_VISIBLE_DEVICES is
     * set: match by PCI bus id first. */
    char bus[64];
    if (n->by_pci && cudaDeviceGetPCIBusId(bus, (int)sizeof bus, cuda_device) == cudaSuccess &&
        n->by_pci(bus, &n->dev) == RG_NVML_SUCCESS)
        n->ok = 1;
    else if (n->by_index((unsigned)cuda_device, &n->dev) == RG_NVML_SUCCESS)
        n->ok = 1;
}

static void nvml_clocks(rg_nvml *n, int *sm, int *mem)
{
    unsigned v;
    *sm = *mem = -1;
    if (!n->ok) return;
    if (n->clock(n->dev, RG_NVML_CLOCK_SM, &v) == RG_NVML_SUCCESS) *sm = (int)v;
    if (n->clock(n->dev, RG_NVML_CLOCK_MEM, &v) == RG_NVML_SUCCESS) *mem = (int)v;
}

static void nvml_close(rg_nvml *n)
{
    if (!n->lib) return;
    n->shutdown();
    dlclose(n->lib);
    n->lib = NULL;
}

/* ---- session --------------------------------------------------------------------------------- */

struct rg_cuda_session {
    const rg_op *op;
    int device, kernel, timed;
    cudaStream_t stream;
    void *cold;
    size_t cold_bytes;
    int use_cupti;
    int n_cupti, n_events;   /* workloads timed each way */
    rg_nvml nvml;
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

/* Sets up CUPTI (once per process) and says why not when it cannot. */
static int cupti_setup(void)
{
    if (g_cupti_registered) return 1;
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        fprintf(stderr, "ropegrad: CUPTI unavailable (%s); timing with CUDA events instead\n", cupti_str(r));
        return 0;
    }
    g_cupti_registered = 1;
    return 1;
}

int rg_cuda_open(const rg_op *op, int kernel, int timed, rg_run_result *r, rg_cuda_session **out, char *err, size_t errlen)
{
    *out = NULL;
    rg_cuda_session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    s->op = op;
    s->kernel = kernel;
    s->timed = timed;
    rg_env *e = &r->env;
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

    nvml_open(&s->nvml, s->device);
    if (s->nvml.ok && s->nvml.driver) {
        char dv[80];
        if (s->nvml.driver(dv, sizeof dv) == RG_NVML_SUCCESS)
            snprintf(e->driver_version, sizeof e->driver_version, "%.31s", dv);
    }
    nvml_clocks(&s->nvml, &e->sm_clock_mhz_start, &e->mem_clock_mhz_start);
    e->sm_clock_mhz_end = e->mem_clock_mhz_end = -1;

    CK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    if (timed) {
        s->cold_bytes = e->gpu_l2_bytes > 0 ? 2 * (size_t)e->gpu_l2_bytes : (size_t)128 << 20;
        CK(cudaMalloc(&s->cold, s->cold_bytes));
        const char *force = getenv("ROPEGRAD_TIMER");
        s->use_cupti = force && !strcmp(force, "cuda-events") ? 0 : cupti_setup();
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
    nvml_close(&s->nvml);
    free(s);
    return 1;
}

void rg_cuda_close(rg_cuda_session *s, rg_run_result *r)
{
    if (!s) return;
    if (r) {
        nvml_clocks(&s->nvml, &r->env.sm_clock_mhz_end, &r->env.mem_clock_mhz_end);
        if (s->timed) {
            const char *t = s->n_cupti && s->n_events ? "mixed (cupti, cuda-events)"
                            : s->n_events             ? "cuda-events"
                            : s->n_cupti              ? "cupti"
                                                      : (s->use_cupti ? "cupti" : "cuda-events");
            snprintf(r->timer, sizeof r->timer, "%s", t);
        }
    }
    nvml_close(&s->nvml);
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

/* Waits for everything enqueued on the stream: cudaSuccess, the CUDA error
 * (a fault: sticky, the context is unusable from then on) or, when
 * timeout_s > 0 and the work is still running after it, cudaErrorNotReady (a
 * kernel that hangs cannot be stopped; the process must end). */
static cudaError_t stream_wait(cudaStream_t st, double timeout_s)
{
    if (timeout_s <= 0) return cudaStreamSynchronize(st);
    const double t0 = mono_s();
    const struct timespec nap = {0, 200 * 1000};
    for (;;) {
        cudaError_t e = cudaStreamQuery(st);
        if (e != cudaErrorNotReady) return e;
        if (mono_s() - t0 > timeout_s) return cudaErrorNotReady;
        nanosleep(&nap, NULL);
    }
}

/* The workload fails with what happened to the GPU, and the session is lost:
 * nothing more is launched, nothing freed (cudaFree would wait for a hung
 * kernel), and the run stops after this workload (run.c). */
static void gpu_lost(rg_cuda_session *s, rg_workload_result *wr, cudaError_t ce, double waited_s)
{
    wr->check.pass = 0;
    if (ce == cudaErrorNotReady)
        snprintf(s->lost, sizeof s->lost, "timed out: still running after %g s (--timeout)", waited_s);
    else
        snprintf(s->lost, sizeof s->lost, "CUDA error %s: %s", cudaGetErrorName(ce), cudaGetErrorString(ce));
    snprintf(wr->check.reason, sizeof wr->check.reason, "%s", s->lost);
}

const char *rg_cuda_lost(const rg_cuda_session *s)
{
    return s && s->lost[0] ? s->lost : NULL;
}

/* ---- timing ------------------------------------------------------------------------------------ */

/* What one launch needs: the device tensors and the device output. */
typedef struct rg_launch {
    const rg_tensors *dev;
    void *out;
} rg_launch;

static int launch(rg_cuda_session *s, const rg_launch *p)
{
    return s->op->cuda(p->dev, p->out, s->kernel, s->stream);
}

/* One protocol iteration: cold L2, then the kernel. */
static int iteration(rg_cuda_session *s, const rg_launch *p, char *err, size_t errlen)
{
    cudaError_t ce = cudaMemsetAsync(s->cold, 0, s->cold_bytes, s->stream);
    if (ce != cudaSuccess) {
        snprintf(err, errlen, "cudaMemsetAsync (cold L2): %s", cudaGetErrorString(ce));
        return 1;
    }
    int rc = launch(s, p);
    if (rc) {
        snprintf(err, errlen, "op %s cuda: %s", s->op->id, rg_op_error_text(s->op, rc));
        return 1;
    }
    return 0;
}

/* Splits the collected activities into iterations; 0 and samples filled on
 * success, 1 (with a reason in why) when they cannot be attributed. */
static int cupti_spans(size_t cold_bytes, int total, int warmup, double *samples, char *why, size_t whylen)
{
    pthread_mutex_lock(&g_act_mu);
    int rc = 1;
    if (g_act_oom || g_act_dropped) {
        snprintf(why, whylen, "%s", g_act_oom ? "out of memory collecting records" : "CUPTI dropped records");
        goto out;
    }
    qsort(g_act, g_act_n, sizeof *g_act, cmp_act);   /* correlation ids grow in launch order */
    size_t markers = 0, kernels = 0;
    for (size_t i = 0; i < g_act_n; i++) {
        if (g_act[i].is_memset && g_act[i].bytes == cold_bytes) markers++;
        else if (!g_act[i].is_memset) kernels++;
    }
    for (int it = 0; it < total; it++) {
        uint64_t lo = UINT64_MAX, hi = 0;
        int nk = 0;
        if (markers == (size_t)total) {
            /* By marker: kernels after the it-th cold memset, before the next. */
            size_t seen = 0;
            for (size_t i = 0; i < g_act_n; i++) {
                const rg_act *a = &g_act[i];
                if (a->is_memset && a->bytes == cold_bytes) {
                    seen++;
                    continue;
                }
                if (a->is_memset || seen != (size_t)it + 1) continue;
                if (a->start < lo) lo = a->start;
                if (a->end > hi) hi = a->end;
                nk++;
            }
        } else if (kernels && kernels % (size_t)total == 0) {
            /* By launch order: every iteration launches the same number of kernels. */
            size_t per = kernels / (size_t)total, k = 0;
            for (size_t i = 0; i < g_act_n; i++) {
                const rg_act *a = &g_act[i];
                if (a->is_memset) continue;
                if (k / per == (size_t)it) {
                    if (a->start < lo) lo = a->start;
                    if (a->end > hi) hi = a->end;
                    nk++;
                }
                k++;
            }
        }
        if (!nk || hi <= lo || lo == 0) {
            snprintf(why, whylen, "no kernel records for iteration %d (%zu kernels, %zu markers, %d iterations)", it,
                     kernels, markers, total);
            goto out;
        }
        if (it >= warmup) samples[it - warmup] = (double)(hi - lo);
    }
    rc = 0;
out:
    pthread_mutex_unlock(&g_act_mu);
    return rc;
}

/* CUPTI timing: 0 ok, 1 CUPTI failed (caller falls back), -1 CUDA error. */
static int time_cupti(rg_cuda_session *s, const rg_launch *p, int warmup, int iters, double *samples,
                      char *err, size_t errlen)
{
    const int total = warmup + iters;
    CUptiResult cr;
    char why[160];
    act_reset();
    if ((cr = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
        fprintf(stderr, "ropegrad: cuptiActivityEnable(CONCURRENT_KERNEL): %s; timing with CUDA events\n", cupti_str(cr));
        return 1;
    }
    if ((cr = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET)) != CUPTI_SUCCESS) {
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        fprintf(stderr, "ropegrad: cuptiActivityEnable(MEMSET): %s; timing with CUDA events\n", cupti_str(cr));
        return 1;
    }
    int rc = 0;
    for (int it = 0; it < total && !rc; it++)
        if (iteration(s, p, err, errlen)) rc = -1;
    cudaError_t ce = stream_wait(s->stream, s->timeout_s * total);
    if (ce != cudaSuccess) {
        /* A fault or a hang: no flush (it could wait on the GPU); the caller asks the stream what happened. */
        if (!rc) snprintf(err, errlen, "waiting for the stream: %s", cudaGetErrorString(ce));
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        return -1;
    }
    cr = cuptiActivityFlushAll(0);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (rc) return rc;
    if (cr != CUPTI_SUCCESS) {
        fprintf(stderr, "ropegrad: cuptiActivityFlushAll: %s; timing with CUDA events\n", cupti_str(cr));
        return 1;
    }
    if (cupti_spans(s->cold_bytes, total, warmup, samples, why, sizeof why)) {
        fprintf(stderr, "ropegrad: CUPTI records unusable (%s); timing with CUDA events\n", why);
        return 1;
    }
    return 0;
}

/* CUDA events around each iteration's kernel (the memset stays outside). */
static int time_events(rg_cuda_session *s, const rg_launch *p, int warmup, int iters, double *samples,
                       char *err, size_t errlen)
{
    cudaEvent_t *ev = calloc(2 * (size_t)iters, sizeof *ev);
    int made = 0, rc = 1;
    if (!ev) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    for (; made < 2 * iters; made++) CK(cudaEventCreate(&ev[made]));
    for (int it = 0; it < warmup + iters; it++) {
        const int t = it - warmup;
        CK(cudaMemsetAsync(s->cold, 0, s->cold_bytes, s->stream));
        if (t >= 0) CK(cudaEventRecord(ev[2 * t], s->stream));
        int krc = launch(s, p);
        if (krc) {
            snprintf(err, errlen, "op %s cuda: %s", s->op->id, rg_op_error_text(s->op, krc));
            goto fail;
        }
        if (t >= 0) CK(cudaEventRecord(ev[2 * t + 1], s->stream));
    }
    CK(stream_wait(s->stream, s->timeout_s * (warmup + iters)));
    for (int t = 0; t < iters; t++) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ev[2 * t], ev[2 * t + 1]));
        samples[t] = (double)ms * 1e6;
    }
    rc = 0;
fail:
    for (int i = 0; i < made; i++) cudaEventDestroy(ev[i]);
    free(ev);
    return rc;
}

/* ---- one workload ---------------------------------------------------------------------------------- */

int rg_cuda_workload(rg_cuda_session *s, const rg_tensors *in, const double *ref, const rg_workload *w,
                     const rg_run_options *o, rg_workload_result *wr, char *err, size_t errlen)
{
    rg_tensors dev = *in;
    void *d_out = NULL, *h_out = NULL;
    double *samples = NULL;
    int rc = 1;
    cudaError_t ce;

    s->timeout_s = o->timeout_s;
    for (int i = 0; i < in->n_in; i++) dev.in[i] = NULL;
    for (int i = 0; i < in->n_in; i++) {
        CK(cudaMalloc(&dev.in[i], in->in_bytes[i]));
        CK(cudaMemcpy(dev.in[i], in->in[i], in->in_bytes[i], cudaMemcpyHostToDevice));
    }
    CK(cudaMalloc(&d_out, in->out_bytes));
    const rg_launch p = {&dev, d_out};

    /* The checked run, into an all-NaN output. */
    h_out = malloc(in->out_bytes);
    if (!h_out) {
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        goto fail;
    }
    CK(cudaMemsetAsync(d_out, 0xFF, in->out_bytes, s->stream));
    int krc = launch(s, &p);
    if (!krc && s->op->finish) krc = s->op->finish(p.dev, p.out, s->stream);   /* outside any timing */
    ce = stream_wait(s->stream, s->timeout_s);
    if (ce != cudaSuccess) {
        gpu_lost(s, wr, ce, s->timeout_s);
        rc = 0;
        goto fail;
    }
    if (krc) {
        memset(&wr->check, 0, sizeof wr->check);
        snprintf(wr->check.reason, sizeof wr->check.reason, "op %s cuda: %s", s->op->id,
                 rg_op_error_text(s->op, krc));
        rc = 0;
        goto fail;
    }
    CK(cudaMemcpy(h_out, d_out, in->out_bytes, cudaMemcpyDeviceToHost));
    if (rg_check_op_output(s->op, h_out, in->n_out, ref, w, &wr->check)) {
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        goto fail;
    }

    if (o->timed && wr->check.pass) {
        samples = malloc((size_t)o->iterations * sizeof *samples);
        if (!samples) {
            snprintf(err, errlen, "workload %d: out of memory", w->index);
            goto fail;
        }
        int t = 1;
        if (s->use_cupti) {
            t = time_cupti(s, &p, o->warmup, o->iterations, samples, err, errlen);
            if (t < 0) goto timing_failed;
        }
        if (t == 0) {
            s->n_cupti++;
            snprintf(wr->timer, sizeof wr->timer, "cupti");
        } else {
            if (time_events(s, &p, o->warmup, o->iterations, samples, err, errlen)) goto timing_failed;
            s->n_events++;
            snprintf(wr->timer, sizeof wr->timer, "cuda-events");
        }
        rg_result_set_samples(wr, samples, o->iterations);
        samples = NULL;
    }
    rc = 0;
    goto fail;
timing_failed:
    /* A kernel that faulted or hung while timed fails the workload (never a
     * half-measured pass); any other error is the harness's own. */
    ce = cudaStreamQuery(s->stream);
    if (ce != cudaSuccess) {
        gpu_lost(s, wr, ce, s->timeout_s * (o->warmup + o->iterations));
        rc = 0;
    }
fail:
    free(samples);
    free(h_out);
    if (!s->lost[0]) {
        cudaFree(d_out);
        for (int i = 0; i < in->n_in; i++) cudaFree(dev.in[i]);
    }
    return rc;
}
