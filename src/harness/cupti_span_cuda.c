/* SPDX-License-Identifier: Apache-2.0 */
/* cupti_span_cuda.c -- the CUDA runner's timer (run_cuda_parts.h): CUPTI
 * activity records, and which of them belong to which timed iteration, as
 * the official evaluator's bench_gpu_time_with_cupti (core/bench/timing.py)
 * attributes them.
 *
 * While timing, CUPTI records every runtime and driver API call (RUNTIME,
 * DRIVER: a start timestamp and a correlation id) and every GPU activity
 * (CONCURRENT_KERNEL, which does not serialize kernels; MEMCPY; MEMSET: a
 * start, an end and the correlation id of the API call that issued it). The
 * runner takes cuptiGetTimestamp() just before and just after each timed
 * call; an activity belongs to the iteration when the API call that issued
 * it started inside that window -- on any thread and any stream, so work
 * the call puts on a stream of its own counts, and the harness's own
 * re-staging copies and cold-L2 memset, issued before the window opens, do
 * not. One sample is max(end) - min(start) over the iteration's activities
 * (--span all) or over its kernels only (--span kernels).
 *
 * The same records give the official kernel-set check: every timed
 * iteration must launch the same multiset of kernels (by name; under
 * --span all also the same memcpy and memset operations, by kind and size)
 * as iteration 0, and something: else the workload fails as a reward hack.
 * Kernel names are copied out of CUPTI's records (interned once each).
 *
 * The records also give each iteration's flush gap: the GPU idle time from
 * the end of the latest activity that ended before the iteration's first
 * attributed activity (in practice the cold-L2 flush memset) to that
 * activity's start (flush_gap.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "flush_gap.h"
#include "run_cuda_parts.h"

/* The newest records this cupti_activity.h describes (CUPTI hands out
 * records of the version it was built with; start, end, correlationId,
 * bytes and name sit at the same offsets in every version used). */
#if defined(CUPTI_API_VERSION) && CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 rg_kernel_record;
typedef CUpti_ActivityMemcpy6 rg_memcpy_record;
#else
typedef CUpti_ActivityKernel9 rg_kernel_record;
typedef CUpti_ActivityMemcpy5 rg_memcpy_record;
#endif
typedef CUpti_ActivityMemset4 rg_memset_record;

#define RG_CUPTI_BUFFER (8u << 20)

enum { ACT_KERNEL, ACT_MEMCPY, ACT_MEMSET };

/* A GPU activity: its kind, its label (an index into labels), when it ran. */
typedef struct rg_act {
    uint32_t corr;
    int kind, label;
    uint64_t start, end;
} rg_act;

/* A runtime or driver API call: when it started. */
typedef struct rg_api {
    uint64_t start;
    uint32_t corr;
} rg_api;

/* CUPTI delivers buffers on its own thread (and inside cuptiActivityFlushAll). */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static rg_act *g_act;
static size_t g_n_act, g_cap_act;
static rg_api *g_api;
static size_t g_n_api, g_cap_api;
static char **g_labels;   /* interned: kernel names, "memcpy KIND BYTES B", "memset BYTES B" */
static size_t g_n_labels, g_cap_labels;
static int g_oom;
static size_t g_dropped;
static int g_registered;   /* cuptiActivityRegisterCallbacks may be called once per process */

static const CUpti_ActivityKind g_kinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                             CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMSET};
#define RG_N_KINDS (sizeof g_kinds / sizeof g_kinds[0])

static const char *cupti_str(CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "unknown CUPTI error";
    return s;
}

/* Room for one more element of size elt in *arr (n used of *cap): 0, or 1 on out of memory. */
static int grow(void **arr, size_t n, size_t *cap, size_t elt)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 1024;
    void *na = realloc(*arr, nc * elt);
    if (!na) return 1;
    *arr = na;
    *cap = nc;
    return 0;
}

/* The index of label text (copied in on first sight), -1 on out of memory. */
static int intern(const char *text)
{
    for (size_t i = 0; i < g_n_labels; i++)
        if (!strcmp(g_labels[i], text)) return (int)i;
    char *copy = strdup(text);
    if (!copy || grow((void **)&g_labels, g_n_labels, &g_cap_labels, sizeof *g_labels)) {
        free(copy);
        return -1;
    }
    g_labels[g_n_labels] = copy;
    return (int)g_n_labels++;
}

static void push_act(uint32_t corr, int kind, const char *label, uint64_t start, uint64_t end)
{
    int id = intern(label);
    if (id < 0 || grow((void **)&g_act, g_n_act, &g_cap_act, sizeof *g_act)) {
        g_oom = 1;
        return;
    }
    g_act[g_n_act++] = (rg_act){corr, kind, id, start, end};
}

static void push_api(uint32_t corr, uint64_t start)
{
    if (grow((void **)&g_api, g_n_api, &g_cap_api, sizeof *g_api)) {
        g_oom = 1;
        return;
    }
    g_api[g_n_api++] = (rg_api){start, corr};
}

static void take_record(const CUpti_Activity *rec)
{
    char label[64];
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const rg_kernel_record *k = (const rg_kernel_record *)rec;
        push_act(k->correlationId, ACT_KERNEL, k->name ? k->name : "(unnamed kernel)", k->start, k->end);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const rg_memcpy_record *m = (const rg_memcpy_record *)rec;
        snprintf(label, sizeof label, "memcpy kind %u %llu B", (unsigned)m->copyKind, (unsigned long long)m->bytes);
        push_act(m->correlationId, ACT_MEMCPY, label, m->start, m->end);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const rg_memset_record *m = (const rg_memset_record *)rec;
        snprintf(label, sizeof label, "memset %llu B value %u", (unsigned long long)m->bytes, (unsigned)m->value);
        push_act(m->correlationId, ACT_MEMSET, label, m->start, m->end);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME || rec->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
        push_api(a->correlationId, a->start);
    }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, RG_CUPTI_BUFFER);
    *size = *buffer ? RG_CUPTI_BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                                     size_t valid)
{
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&g_mu);
    if (buffer && valid > 0) {
        while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) take_record(rec);
        size_t dropped = 0;
        if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
    }
    pthread_mutex_unlock(&g_mu);
    free(buffer);
}

int rg_span_setup(char *why, size_t whylen)
{
    if (g_registered) return 0;
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, whylen, "cuptiActivityRegisterCallbacks: %s", cupti_str(r));
        return 1;
    }
    g_registered = 1;
    return 0;
}

static void disable_kinds(size_t n)
{
    for (size_t i = 0; i < n; i++) cuptiActivityDisable(g_kinds[i]);
}

int rg_span_begin(char *why, size_t whylen)
{
    pthread_mutex_lock(&g_mu);
    g_n_act = g_n_api = 0;
    g_oom = 0;
    g_dropped = 0;
    pthread_mutex_unlock(&g_mu);
    for (size_t i = 0; i < RG_N_KINDS; i++) {
        CUptiResult r = cuptiActivityEnable(g_kinds[i]);
        if (r != CUPTI_SUCCESS) {
            snprintf(why, whylen, "cuptiActivityEnable(kind %d): %s", (int)g_kinds[i], cupti_str(r));
            disable_kinds(i);
            return 1;
        }
    }
    return 0;
}

int rg_span_now(uint64_t *ts) { return cuptiGetTimestamp(ts) != CUPTI_SUCCESS; }

int rg_span_end(int flush, char *why, size_t whylen)
{
    CUptiResult r = flush ? cuptiActivityFlushAll(0) : CUPTI_SUCCESS;
    disable_kinds(RG_N_KINDS);
    if (r != CUPTI_SUCCESS) snprintf(why, whylen, "cuptiActivityFlushAll: %s", cupti_str(r));
    return r != CUPTI_SUCCESS;
}

/* ---- attribution ------------------------------------------------------------------------ */

static int cmp_api_start(const void *a, const void *b)
{
    const rg_api *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static int cmp_act_corr(const void *a, const void *b)
{
    const rg_act *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The first of n elements (sorted by key) whose key is key or above; key_of reads an element's. */
static size_t lower_bound(const void *base, size_t n, size_t size, uint64_t key, uint64_t (*key_of)(const void *))
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_of((const char *)base + mid * size) < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static uint64_t api_start(const void *a) { return ((const rg_api *)a)->start; }
static uint64_t act_corr(const void *a) { return ((const rg_act *)a)->corr; }

/* One iteration's activities: their span, counts and sorted labels. */
typedef struct iter_span {
    uint64_t lo, hi;
    rg_span_counts counts;
    int *labels;
    size_t n_labels;
} iter_span;

/* What [t0, t1] owns, into it (it->labels: room for g_n_act). corr: scratch for g_n_api ids. */
static void collect(uint64_t t0, uint64_t t1, rg_span mode, uint32_t *corr, iter_span *it)
{
    size_t n_corr = 0;
    const size_t first = lower_bound(g_api, g_n_api, sizeof *g_api, t0, api_start);
    for (size_t i = first; i < g_n_api && g_api[i].start <= t1; i++) corr[n_corr++] = g_api[i].corr;
    qsort(corr, n_corr, sizeof *corr, cmp_u32);
    it->lo = UINT64_MAX;
    it->hi = 0;
    memset(&it->counts, 0, sizeof it->counts);
    it->n_labels = 0;
    for (size_t c = 0; c < n_corr; c++) {
        if (c && corr[c] == corr[c - 1]) continue;   /* a runtime call and the driver call under it */
        const size_t at = lower_bound(g_act, g_n_act, sizeof *g_act, corr[c], act_corr);
        for (size_t i = at; i < g_n_act && g_act[i].corr == corr[c]; i++) {
            const rg_act *a = &g_act[i];
            if (mode == RG_SPAN_KERNELS && a->kind != ACT_KERNEL) continue;
            if (a->start < it->lo) it->lo = a->start;
            if (a->end > it->hi) it->hi = a->end;
            it->labels[it->n_labels++] = a->label;
            if (a->kind == ACT_KERNEL) it->counts.kernels++;
            else if (a->kind == ACT_MEMCPY) it->counts.memcpy++;
            else it->counts.memset++;
        }
    }
    qsort(it->labels, it->n_labels, sizeof *it->labels, cmp_int);
}

/* 0 when b holds the same labels as a; else 1 with the first that differs named in why. */
static int other_labels(const iter_span *a, const iter_span *b, int index, char *why, size_t whylen)
{
    size_t i = 0;
    while (i < a->n_labels && i < b->n_labels && a->labels[i] == b->labels[i]) i++;
    if (i == a->n_labels && i == b->n_labels) return 0;
    const int label = i < b->n_labels ? b->labels[i] : a->labels[i];
    snprintf(why, whylen, "iteration %d launched other kernels than iteration 0 (%d vs %d activities; %.40s)", index,
             (int)b->n_labels, (int)a->n_labels, g_labels[label]);
    return 1;
}

/* The attribution's scratch: correlation ids, iteration 0's and the
 * current iteration's activities, every activity's end (ascending; NULL when
 * no gaps are asked for). */
typedef struct attr_bufs {
    uint32_t *corr;
    iter_span it0, cur;
    uint64_t *ends;
} attr_bufs;

static int attr_bufs_open(attr_bufs *b, int want_ends)
{
    const size_t n_act = g_n_act ? g_n_act : 1;
    memset(b, 0, sizeof *b);
    b->corr = malloc((g_n_api ? g_n_api : 1) * sizeof *b->corr);
    b->it0.labels = malloc(n_act * sizeof *b->it0.labels);
    b->cur.labels = malloc(n_act * sizeof *b->cur.labels);
    if (want_ends) b->ends = malloc(n_act * sizeof *b->ends);
    return !b->corr || !b->it0.labels || !b->cur.labels || (want_ends && !b->ends);
}

static void attr_bufs_close(attr_bufs *b)
{
    free(b->corr);
    free(b->it0.labels);
    free(b->cur.labels);
    free(b->ends);
}

/* Every activity's end into ends, ascending. */
static void sorted_ends(uint64_t *ends)
{
    for (size_t i = 0; i < g_n_act; i++) ends[i] = g_act[i].end;
    qsort(ends, g_n_act, sizeof *ends, cmp_u64);
}

/* The attribution itself, under g_mu with every buffer allocated. */
static int attribute_locked(const uint64_t *t0, const uint64_t *t1, int n, rg_span mode, double *samples,
                            double *gaps, rg_span_counts *first, attr_bufs *b, char *why, size_t whylen)
{
    qsort(g_api, g_n_api, sizeof *g_api, cmp_api_start);
    qsort(g_act, g_n_act, sizeof *g_act, cmp_act_corr);
    if (gaps) sorted_ends(b->ends);
    for (int i = 0; i < n; i++) {
        iter_span *it = i ? &b->cur : &b->it0;
        collect(t0[i], t1[i], mode, b->corr, it);
        if (!it->n_labels) {
            snprintf(why, whylen, "iteration %d launched nothing (no %s inside the call)", i,
                     mode == RG_SPAN_KERNELS ? "kernel" : "kernel, memcpy or memset");
            return RG_SPAN_HACK;
        }
        if (i && other_labels(&b->it0, it, i, why, whylen)) return RG_SPAN_HACK;
        samples[i] = (double)(it->hi - it->lo);
        if (gaps && rg_gap_before(b->ends, g_n_act, it->lo, &gaps[i])) gaps[i] = NAN;
    }
    *first = b->it0.counts;
    return RG_SPAN_OK;
}

int rg_span_attribute(const uint64_t *t0, const uint64_t *t1, int n, rg_span mode, double *samples, double *gaps,
                      rg_span_counts *first, char *why, size_t whylen)
{
    if (!t0 || !t1 || n < 1 || !samples || !first) {
        snprintf(why, whylen, "rg_span_attribute: bad arguments");
        return RG_SPAN_UNUSABLE;
    }
    pthread_mutex_lock(&g_mu);
    int rc = RG_SPAN_UNUSABLE;
    attr_bufs b;
    const int no_room = attr_bufs_open(&b, gaps != NULL);
    if (g_oom || no_room)
        snprintf(why, whylen, "out of memory collecting CUPTI records");
    else if (g_dropped)
        snprintf(why, whylen, "CUPTI dropped %zu records", g_dropped);
    else if (!g_n_api || !g_n_act)   /* even the harness's own memsets left none: CUPTI is not recording */
        snprintf(why, whylen, "no %s records", g_n_api ? "GPU activity" : "runtime or driver API");
    else
        rc = attribute_locked(t0, t1, n, mode, samples, gaps, first, &b, why, whylen);
    pthread_mutex_unlock(&g_mu);
    attr_bufs_close(&b);
    return rc;
}
