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
 * One plugin per process: dlopen()ed code is process-wide and never
 * unloaded safely while a GPU may still run it, so the trampolines read the
 * one open plugin, and a second rg_impl_open before rg_impl_close is refused.
 *
 * CPU calls run under a watchdog when timeout_s > 0: a call that has not
 * returned after timeout_s seconds cannot be stopped (it owns the thread), so
 * the watchdog writes one line on stderr and ends the process with exit
 * status 1 before anything is written: nothing is recorded, no file is left.
 */
#ifndef ROPEGRAD_HARNESS_IMPL_H
#define ROPEGRAD_HARNESS_IMPL_H

#include <stddef.h>

#include "ropegrad_impl.h"
#include "op.h"

#define RG_IMPL_MAX_SOURCES 64
#define RG_IMPL_ERRLEN 400

typedef struct rg_impl {
    char path[4096];                         /* the library as given to --impl */
    char name[ROPEGRAD_IMPL_MAX_NAME + 1];   /* the descriptor's, checked */
    char version[ROPEGRAD_IMPL_MAX_NAME + 1];
    char label[2 * ROPEGRAD_IMPL_MAX_NAME + 2]; /* "name version": the run's kernel name */
    char backend[8];                         /* "cpu" or "cuda": the entry it is measured through */
    double timeout_s;                        /* CPU watchdog, 0 = none */
    const char *sources[RG_IMPL_MAX_SOURCES];/* --impl-source files, as given (not owned) */
    size_t n_sources;
    /* Lower-case hex SHA-256 of the library's bytes and of each source's,
     * filled by the record layer (rg_impl_hash_files, record.h) at load time. */
    char file_sha256[65];
    char source_sha256[RG_IMPL_MAX_SOURCES][65];
    rg_op op;                                /* the suite's op, calling the plugin */
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

/* Stops the watchdog and forgets the plugin (the library stays mapped: a
 * GPU may still hold its code). */
void rg_impl_close(rg_impl *impl);

#endif
