/* SPDX-License-Identifier: Apache-2.0 */
/* embedded.h -- source files compiled into the CLI at build time
 * (cmake/embed.cmake writes build/src/cli/rg_embedded_sources.c), for
 * `ropegrad export-solution`. */
#ifndef ROPEGRAD_CLI_EMBEDDED_H
#define ROPEGRAD_CLI_EMBEDDED_H

#include <stddef.h>

typedef struct rg_embedded_file {
    const char *path;             /* relative to the source tree's root, e.g. "src/op/rope_backward/kernels.cuh" */
    const unsigned char *bytes;   /* len bytes, then a NUL */
    size_t len;
} rg_embedded_file;

/* Every embedded file; ends with {NULL, NULL, 0}. */
extern const rg_embedded_file rg_embedded_files[];

#endif
