/* SPDX-License-Identifier: Apache-2.0 */
/*
 * impl.h -- a plugin (include/ropegrad_impl.h) loaded for one run:
 * `ropegrad bench|check --impl PATH.so`.
 *
 * rg_impl_open dlopen()s the library, reads its descriptor and checks it
 * against the suite's op and the backend asked for; every refusal is one
 * line in err and comes before anything runs. The loaded plugin stands in
 * for the op's own entry points: rg_impl.op is the suite's op table row with
 * cpu and cuda calling the plugin (through the row's impl_cpu / impl_cuda,
 * which fill the op's public problem struct), so run.c and run_cuda.c
 * measure it exactly as they measure ropegrad's kernels.
 *
 * What the record keeps of it (its files' digests, the --impl-source files)
 * is an rg_run_impl (result.h) the CLI fills from this struct.
 *
 * One plugin per process: dlopen()ed code is process-wide and never
 * unloaded safely while a GPU may still run it, so the trampolines read the
 * one open plugin, and a second rg_impl_open before rg_impl_close is refused.
 *
 * The CLI opens a plugin only in a supervised worker (worker.h): there every
 * call, and the loading before it, is marked on the parent's watched page
 * (rg_impl_set_watch) and the parent kills a worker past its timeout. A
 * process that opens one itself (no page set) runs its CPU calls under a
 * watchdog when timeout_s > 0: a call that has not returned after timeout_s
 * seconds cannot be stopped (it owns the thread), so the watchdog writes one
 * line on stderr and ends the process with exit status 1.
 */
#ifndef ROPEGRAD_HARNESS_IMPL_H
#define ROPEGRAD_HARNESS_IMPL_H

#include <stddef.h>

#include "ropegrad_impl.h"
#include "op.h"

#define RG_IMPL_ERRLEN 400

/* An implementation that lives in the calling process instead of a library
 * (the Python driver, python/ropegrad/impl.py, through ropegrad_cli_run in
 * src/cli/embed.h): the same descriptor, checked the same way, plus what only
 * an in-process caller has. */
typedef struct rg_impl_embedded {
    const ropegrad_impl *desc;      /* checked as a plugin's descriptor */
    const char *path;               /* the file whose bytes are the implementation (hashed as the library) */
    const char *meta_json;          /* a JSON object recorded as the spec's "embedded" (NULL: none) */
    /* Called once after the checked call, outside any timed span, before
     * the output is read (NULL: nothing to do): an implementation that
     * returns new tensors copies them into the output here. */
    ropegrad_impl_cuda_fn finish_cuda;
    ropegrad_impl_cpu_fn finish_cpu;
    /* The last failed call's one line (NULL, or NULL returned: the status's name). */
    const char *(*error_text)(void);
    /* NULL, or called before every timed call with its buffers, outside the
     * timed span and before the cache flush (rg_op.stage): the next call on
     * that backend uses what it prepared. */
    ropegrad_impl_cuda_fn stage_cuda;
    ropegrad_impl_cpu_fn stage_cpu;
} rg_impl_embedded;

typedef struct rg_impl {
    char path[4096];                         /* the library as given to --impl */
    char name[ROPEGRAD_IMPL_MAX_NAME + 1];   /* the descriptor's, checked */
    char version[ROPEGRAD_IMPL_MAX_NAME + 1];
    char label[2 * ROPEGRAD_IMPL_MAX_NAME + 2]; /* "name version": the run's kernel name */
    char backend[8];                         /* "cpu" or "cuda": the entry it is measured through */
    double timeout_s;                        /* CPU watchdog, 0 = none */
    const rg_impl_embedded *embedded;        /* an in-process implementation, NULL for a library */
    char error_line[RG_IMPL_ERRLEN];         /* the last failed call's line (embedded) */
    rg_op op;                                /* the suite's op, calling the plugin */
    const rg_op *base;                       /* the suite's op itself */
    void *dl;                                /* dlopen handle */
    const ropegrad_impl *desc;
} rg_impl;

/* Loads path for the op with definition name op->definition on backend
 * ("cpu" or "cuda"; resolve "auto" first). Returns 0, or non-zero with one
 * line (not a shared library, no descriptor, another ABI version, another
 * op, no entry for the backend, a bad name or version, a plugin already
 * open). timeout_s: the CPU watchdog (0 = none, else 0.001..86400). */
int rg_impl_open(const char *path, const rg_op *op, const char *backend, double timeout_s, rg_impl *out, char *err,
                 size_t errlen);

/* rg_impl_open for an in-process implementation: e->desc is checked as a
 * library's descriptor would be (the same refusals), e->path must be a
 * readable regular file, e->meta_json NULL or a JSON object. */
int rg_impl_open_embedded(const rg_impl_embedded *e, const rg_op *op, const char *backend, double timeout_s,
                          rg_impl *out, char *err, size_t errlen);

/* In a supervised worker (worker.h): the parent's watched page, where the
 * calls, the workload and the end of the loading are marked, instead of
 * this process's own watchdog (NULL: back to the watchdog). Before rg_impl_open. */
struct rg_worker_watch;
void rg_impl_set_watch(struct rg_worker_watch *w);

/* Stops the watchdog and forgets the plugin (the library stays mapped: a
 * GPU may still hold its code). */
void rg_impl_close(rg_impl *impl);

#endif
