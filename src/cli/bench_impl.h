/* SPDX-License-Identifier: Apache-2.0 */
/* bench_impl.h -- `bench|check --impl PATH.so [--impl-source FILE]... [--timeout S]`:
 * the options gathered while parsing, and the plugin loaded before the run. */
#ifndef ROPEGRAD_CLI_BENCH_IMPL_H
#define ROPEGRAD_CLI_BENCH_IMPL_H

#include "harness.h"
#include "impl.h"

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
 * one line on stderr (impl.h lists the refusals). */
int rg_cli_impl_load(const char *cmd, rg_cli_impl *x, rg_suite *s, rg_run_options *o);

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
