/* SPDX-License-Identifier: Apache-2.0 */
/* bench_impl.h -- `bench|check --impl PATH.so [--impl-source FILE]... [--timeout S]`:
 * the options gathered while parsing, and the plugin loaded before the run. */
#ifndef ROPEGRAD_CLI_BENCH_IMPL_H
#define ROPEGRAD_CLI_BENCH_IMPL_H

#include "harness.h"
#include "impl.h"
#include "worker.h"

#define RG_IMPL_TIMEOUT_DEFAULT 60

typedef struct rg_cli_impl {
    const char *path;                          /* --impl, NULL when none */
    const char *sources[RG_IMPL_MAX_SOURCES];  /* --impl-source, in order */
    size_t n_sources;
    long long timeout_s;                       /* --timeout, -1 when not given */
    rg_impl impl;                              /* the loaded plugin */
    rg_run_impl named;                         /* what the record says of it (its files hashed) */
    int open;
    const rg_impl_embedded *embedded;          /* an in-process implementation (embed.c), NULL when none */
    int channel_fd, watch_fd;                  /* --worker-channel / --worker-watch: this process is the
                                                  supervised worker (-1: not; -2: its message is sent) */
    rg_worker_outcome outcome;                 /* the parent's: what its worker sent (bench_worker.c) */
} rg_cli_impl;

/* The in-process implementation ropegrad_cli_run (embed.c) set for the
 * command it runs, NULL otherwise: bench|check measure it as --impl. */
const rg_impl_embedded *rg_cli_impl_embedded(void);
void rg_cli_impl_set_embedded(const rg_impl_embedded *e);

/* One option of the three (OPT_* value opt of bench.c, optarg arg) into x.
 * Returns 0, or 2 with one line on stderr. */
int rg_cli_impl_option(const char *cmd, const char *opt, const char *arg, rg_cli_impl *x);

/* After parsing: --impl-source / --timeout without --impl, --kernel with it.
 * Returns 0, or 2 with one line on stderr. */
int rg_cli_impl_check(const char *cmd, const rg_cli_impl *x, const rg_run_options *o);

/* Loads the plugin for the suite's op (o->backend "auto" resolved to cuda
 * when a GPU is usable, else cpu), hashes its files, and points s->op at
 * the plugin's entries. Nothing when x->path is NULL. Returns 0, or 2 with
 * one line in err (impl.h lists the refusals). */
int rg_cli_impl_load(rg_cli_impl *x, rg_suite *s, rg_run_options *o, char *err, size_t errlen);

/* ---- the supervised worker (bench_worker.c) --------------------------------------------- */

/* A caller that starts the worker itself (the Python driver, embed.h): the
 * worker's argv (NULL-ended) and the file that is the implementation (hashed
 * into the record here). NULL, NULL: the C worker, this executable. */
void rg_cli_worker_set_command(char *const *argv, const char *impl_path);

/* This process is a worker (--worker-channel given). */
int rg_cli_worker_mode(const rg_cli_impl *x);
/* This process must start a worker: an implementation, not in worker mode. */
int rg_cli_worker_supervises(const rg_cli_impl *x);
/* The worker's side: the parent's watched page in use (before the
 * implementation is loaded). 0, or 2 with one line on stderr. */
int rg_cli_worker_attach(const char *cmd, rg_cli_impl *x);
/* The worker's one message: the run, or the refusal's line. 0, or 2 with one line on stderr. */
int rg_cli_worker_send_result(const char *cmd, rg_cli_impl *x, const rg_run_result *r);
int rg_cli_worker_send_refusal(const char *cmd, rg_cli_impl *x, const char *line);

/* The parent's side: starts the worker (argv[0..argc) the command and its
 * options, as given) and waits for it. 0: *r its result, naming the
 * implementation; 1: the worker failed, its one line on stderr, *r a failed
 * run; 2: refused or an error, one line on stderr. */
int rg_cli_worker_run(const char *cmd, rg_cli_impl *x, const rg_suite *s, const int *indices, size_t n,
                      rg_run_options *o, int argc, char **argv, rg_run_result *r);
void rg_cli_worker_close(rg_cli_impl *x);

/* A plugin run's result names the plugin: r->impl, and its kernel name
 * "name version" (the CPU path's would be "cpu-<isa>"). */
void rg_cli_impl_result(rg_cli_impl *x, rg_run_result *r);

void rg_cli_impl_close(rg_cli_impl *x);

/* After a run that lost the GPU (r->stopped: a CUDA fault is sticky, a hung
 * kernel cannot be stopped) and once everything is written: one line on
 * stderr, then the process ends with code at once (no CUDA teardown, which
 * would wait for a hung kernel). Returns when the GPU was not lost. */
void rg_cli_exit_if_gpu_lost(const char *cmd, const rg_run_result *r, int code);

#endif
