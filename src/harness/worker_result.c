/* SPDX-License-Identifier: Apache-2.0 */
/* worker_result.c -- the parent's side of a worker's run (worker.h): the
 * result it received, checked against the workloads it asked for and
 * given the suite's own description; or, when the worker failed, a failed
 * run that says what happened. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "op.h"
#include "run_internal.h"
#include "worker.h"

/* The suite's part of a result: names, axes, the protocol asked for. */
static void suite_header(const rg_suite *s, rg_run_result *r)
{
    snprintf(r->suite, sizeof r->suite, "%s", s->name);
    snprintf(r->suite_dir, sizeof r->suite_dir, "%s", s->dir);
    snprintf(r->op, sizeof r->op, "%s", s->op->id);
    snprintf(r->reference, sizeof r->reference, "%s", s->op->reference);
    memset(r->axis_names, 0, sizeof r->axis_names);
    for (int a = 0; s->op->axes && s->op->axes[a] && a < RG_OP_MAX_AXES; a++) r->axis_names[a] = s->op->axes[a];
    r->impl = NULL;
}

/* A workload's description, from the suite (what the parent asked for);
 * what it measured (check, times, samples) stays. */
static void describe(const rg_suite *s, const rg_workload *w, rg_workload_result *wr)
{
    rg_workload_result measured = *wr;
    rg_workload_header(s, w, wr);
    rg_axes_text(s->op, w, wr->sizes, sizeof wr->sizes);
    wr->time_ns = measured.time_ns;
    wr->gbps = measured.gbps;
    wr->span_kernels = measured.span_kernels;
    wr->span_memcpy = measured.span_memcpy;
    wr->span_memset = measured.span_memset;
    wr->flush_gap_us = measured.flush_gap_us;
}

static int check_args(const rg_suite *s, const int *indices, size_t n, const rg_run_result *r, char *err,
                      size_t errlen)
{
    if (!s || !s->op || !r || (n && !indices)) {
        snprintf(err, errlen, "the worker's result: missing argument");
        return 1;
    }
    for (size_t k = 0; indices && k < n; k++)
        if (indices[k] < 0 || (size_t)indices[k] >= s->n_workloads) {
            snprintf(err, errlen, "the worker's result: workload %d is not in the suite", indices[k]);
            return 1;
        }
    return 0;
}

int rg_worker_adopt_result(const rg_suite *s, const int *indices, size_t n, rg_run_result *r, char *err,
                           size_t errlen)
{
    if (check_args(s, indices, n, r, err, errlen)) return 1;
    const size_t want = n ? n : s->n_workloads;
    if (r->n_workloads != want) {
        snprintf(err, errlen, "the worker's result holds %zu workloads, %zu were asked for", r->n_workloads, want);
        return 1;
    }
    r->passed = 0;
    for (size_t k = 0; k < want; k++) {
        const rg_workload *w = &s->workloads[n ? (size_t)indices[k] : k];
        rg_workload_result *wr = &r->workloads[k];
        if (wr->index != w->index || strcmp(wr->uuid, w->uuid)) {
            snprintf(err, errlen, "the worker's result: its workload %zu is %d (%.40s), workload %d was asked for", k,
                     wr->index, wr->uuid, w->index);
            return 1;
        }
        describe(s, w, wr);
        r->passed += wr->check.pass ? 1 : 0;
    }
    r->total = (int)want;
    suite_header(s, r);
    return 0;
}

int rg_worker_failed_result(const rg_suite *s, const int *indices, size_t n, const rg_run_options *o,
                            const char *backend, const char *why, rg_run_result *r, char *err, size_t errlen)
{
    if (check_args(s, indices, n, r, err, errlen) || !o || !backend || !why) {
        if (!err[0]) snprintf(err, errlen, "rg_worker_failed_result: missing argument");
        return 1;
    }
    memset(r, 0, sizeof *r);
    const int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    rg_result_header(s, o, !strcmp(backend, "cuda"), threads, r);
    if (strcmp(backend, "cuda"))   /* as the CPU backend names its device (run.c) */
        snprintf(r->device, sizeof r->device, "%.200s (%d threads)", r->env.cpu_model, threads);
    else
        snprintf(r->device, sizeof r->device, "unknown GPU (the worker failed)");
    snprintf(r->timer, sizeof r->timer, "none");
    snprintf(r->cold_l2, sizeof r->cold_l2, "none (the worker failed)");
    r->n_workloads = n ? n : s->n_workloads;
    r->workloads = calloc(r->n_workloads, sizeof *r->workloads);
    if (!r->workloads) {
        r->n_workloads = 0;
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    for (size_t k = 0; k < r->n_workloads; k++) {
        rg_workload_result *wr = &r->workloads[k];
        const rg_workload *w = &s->workloads[n ? (size_t)indices[k] : k];
        rg_workload_header(s, w, wr);
        rg_axes_text(s->op, w, wr->sizes, sizeof wr->sizes);
        snprintf(wr->check.reason, sizeof wr->check.reason, "WORKER_FAILED: %.100s", why);
    }
    r->total = (int)r->n_workloads;
    r->mean_ns = r->geomean_ns = NAN;
    return 0;
}
