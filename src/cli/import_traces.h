/* SPDX-License-Identifier: Apache-2.0 */
/* import_traces.h -- `ropegrad runs import` of the official evaluator's traces.jsonl. */
#ifndef ROPEGRAD_CLI_IMPORT_TRACES_H
#define ROPEGRAD_CLI_IMPORT_TRACES_H

#include <stddef.h>

typedef struct rg_import_traces_opts {
    const char *path;         /* the traces file (for messages) */
    const char *db;           /* --db, NULL for the default registry */
    const char *suite_dir;    /* --suite DIR, or NULL */
    const char *definition;   /* --definition FILE, or NULL */
    const char *trusted;      /* --trusted-keys: refused (traces carry no signature) */
} rg_import_traces_opts;

/* Reads bytes[n] (the file's) as traces, makes the run, stores it as
 * imported. Prints one line; returns 0, or 2 with a one-line error on stderr
 * (bad traces, suite, registry: nothing stored). */
int rg_cli_import_traces(const rg_import_traces_opts *o, const char *bytes, size_t n);

#endif
