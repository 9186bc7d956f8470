/* SPDX-License-Identifier: Apache-2.0 */
/* runs.h -- `ropegrad runs ...`: the options every subcommand shares and
 * one function per subcommand (runs.c parses and dispatches; runs_list.c,
 * runs_show.c, runs_rank.c, runs_compare.c and runs_exchange.c print or store;
 * history.c has history, check and regressions, push.c push). Thin: parse
 * the arguments, call src/record/, print; manifests are read only through the
 * typed reader (manifest.h). Each returns the exit code: 0 ok, 1 a check
 * failed (a digest mismatch, a replication that did not agree), 2 bad usage
 * or input (one line on stderr). */
#ifndef ROPEGRAD_CLI_RUNS_H
#define ROPEGRAD_CLI_RUNS_H

#include <stdint.h>

#include "rank.h"
#include "record.h"

typedef struct runs_ctx {
    const char *db;
    const char *out;
    const char *evidence;
    const char *suite;
    const char *key;
    const char *trusted;
    const char *definition;   /* import of a traces file: --definition FILE */
    const char *published_at, *source_rank;   /* import: what the record's source says (runs_import_facts.c) */
    int verbose;
    int json;   /* list --json */
    rg_registry *g;
    char err[RG_ERRLEN];
} runs_ctx;

/* Opens the registry (--db, else the default) into x->g; create: make it when
 * absent (runs_registry.c). */
int rg_runs_open_db(runs_ctx *x, int create);

int rg_runs_list(runs_ctx *x);                            /* runs_list.c: list */
int rg_runs_list_json(runs_ctx *x);                       /* runs_list.c: list --json */
/* runs_list.c: one run's fields (those of list --json) into o: 0, or 1 out of memory. */
int rg_runs_row_json(runs_ctx *x, const rg_run_row *r, cJSON *o);
/* runs_list.c: doc printed (one document and a newline) and deleted: 0, or 2 with one line on stderr. */
int rg_runs_emit_json(const char *cmd, cJSON *doc, int oom);
/* runs_json.c: --json of show, cite, rank, compare, note, sign, import and replicate. */
int rg_runs_show_json(runs_ctx *x, int64_t id);
int rg_runs_cite_json(runs_ctx *x, int64_t id);
int rg_runs_rank_json(runs_ctx *x);
int rg_runs_compare_json(runs_ctx *x, int64_t ida, int64_t idb);
/* runs_json.c: one implementation line of `runs history --json` added to lines: 0, 1 out of memory, 2 error. */
int rg_history_line_json(rg_registry *g, const rg_ranked *e, size_t n, cJSON *lines);
int rg_runs_show(runs_ctx *x, int64_t id);                /* runs_show.c: show */
int rg_runs_cite(runs_ctx *x, int64_t id);                /* runs_show.c: cite */
/* Run id's row and today's date (YYYY-MM-DD, UTC) for a citation: 0, or 2 after one line on stderr. */
int rg_runs_cite_row(runs_ctx *x, int64_t id, rg_run_row *r, char *today, size_t n);
int rg_runs_rank(runs_ctx *x);                            /* runs_rank.c: rank */
int rg_runs_compare(runs_ctx *x, int64_t ida, int64_t idb); /* runs_compare.c: compare (idb 0: against #1) */
int rg_runs_export(runs_ctx *x, int64_t id);              /* runs_exchange.c: export */
int rg_runs_import(runs_ctx *x, const char *path);        /* runs_exchange.c: import (opens the registry itself) */
int rg_runs_sign(runs_ctx *x, int64_t id);                /* runs_exchange.c: sign */
/* runs_import_facts.c: import --published-at DATE --source-rank N[/M]. has: either given; check: 0 or 2
 * (one line); begin (after the registry is open) and end (after the store, with its rc and the run's id)
 * put the store and the facts in one transaction; both return the exit code. */
int rg_runs_import_has_facts(const runs_ctx *x);
int rg_runs_import_facts_check(const runs_ctx *x);
int rg_runs_import_facts_begin(runs_ctx *x);
int rg_runs_import_facts_end(runs_ctx *x, int64_t id, int rc);

#endif
