/* SPDX-License-Identifier: Apache-2.0 */
/*
 * embed.h -- `ropegrad bench|check` as a library call, for a caller whose
 * implementation lives in its own process (the Python driver:
 * python/ropegrad/impl.py, `python3 -m ropegrad bench --impl module.py:fn`).
 *
 * build/libropegrad_cli.so exports the functions below and nothing else. The
 * harness stays the one place where inputs, the cold-cache flush, timing
 * (the CUPTI span of the call's GPU work on a GPU), checks, manifest and registry are made:
 * ropegrad_cli_run runs exactly what `ropegrad bench|check --impl PATH.so`
 * runs, with the implementation's descriptor given in memory instead of
 * read from a library (rg_impl_embedded, src/harness/impl.h: the descriptor
 * is checked the same way, its file's bytes are hashed into the
 * implementation digest, and `finish` copies returned outputs after the
 * checked call, outside every timed span).
 */
#ifndef ROPEGRAD_CLI_EMBED_H
#define ROPEGRAD_CLI_EMBED_H

#include <stddef.h>

#include "impl.h"

#define ROPEGRAD_CLI_EXPORT __attribute__((visibility("default")))

/* Runs argv[0] ("bench" or "check") with argv[1..argc-1] as its options, as
 * the CLI would, measuring impl (NULL: ropegrad's own kernels). Returns the
 * CLI's exit status (0 passed, 1 a workload failed, 2 bad usage or input,
 * with one line on stderr). */
ROPEGRAD_CLI_EXPORT int ropegrad_cli_run(int argc, char **argv, const rg_impl_embedded *impl);

/* ropegrad_cli_run for an implementation this process must not load: the
 * harness runs argv here, and the implementation in a supervised worker
 * (src/harness/worker.h) started as worker_argv[0..worker_argc) with
 * --worker-channel FD --worker-watch FD appended; that worker calls
 * ropegrad_cli_run with the implementation and those options. impl_path:
 * the file that is the implementation (hashed into the record here), or
 * NULL when argv names a plugin (--impl PATH.so). Returns the CLI's exit
 * status (1 also when the worker failed: one line on stderr). */
ROPEGRAD_CLI_EXPORT int ropegrad_cli_supervise(int argc, char **argv, int worker_argc, char **worker_argv,
                                               const char *impl_path);

/* sizeof(rg_impl_embedded) and sizeof(ropegrad_impl): a caller that lays the
 * structs out itself (ctypes) checks both before the first call. */
ROPEGRAD_CLI_EXPORT size_t ropegrad_cli_embedded_size(void);
ROPEGRAD_CLI_EXPORT size_t ropegrad_cli_impl_size(void);

#endif
