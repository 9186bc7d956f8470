/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runs_import_catalog.c -- `ropegrad runs import-catalog FILE.jsonl[.zst]`:
 * KernelIndex's catalog export read strictly (src/record/import/catalog.h),
 * and the benchmark runs of the operations asked for (default: every
 * bundled suite's definition) verified and stored, all or nothing
 * (catalog_import.h).
 */
#define _GNU_SOURCE   /* getopt_long */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "catalog_import.h"
#include "cliopt.h"
#include "commands.h"
#include "harness.h"
#include "record.h"
#include "rg_term.h"

#define MAX_OPERATIONS 64

static const char help[] =
    "usage: ropegrad runs import-catalog FILE.jsonl[.zst] [--operation NAME]... [--all-operations] [--json] [--db FILE]\n\n"
    "Reads KernelIndex's catalog export (one {\"table\", \"row\"} object a line, plain or zstd-compressed) strictly:\n"
    "every table it knows into typed rows, tables it does not know skipped and counted; a bad line is one line\n"
    "naming the file, the line and the field. Then imports the benchmark runs of the operations asked for: each\n"
    "run's manifest verified by the digest rule (as `runs import` does), stored as 'imported' with what the\n"
    "catalog says of it (project, authors, title, source revision, publishedAt, KernelIndex's trust columns,\n"
    "retraction, supersession, the source's rank in its own comparison group). One transaction: a run that\n"
    "does not verify stores nothing. A second import of the same file changes nothing.\n\n"
    "  --operation NAME   an operation by name, alias or slug (repeatable; default: every bundled suite's\n"
    "                     definition, e.g. 014_rotary_embedding_with_attention_scaling_backward)\n"
    "  --all-operations   every operation of the file\n"
    "  --json             one JSON object with the counts, for scripts\n"
    "  --db FILE          registry (default $ROPEGRAD_DB, else $XDG_DATA_HOME/ropegrad/runs.db)\n\n"
    "exit status: 0 imported, 1 a run does not verify, 2 bad usage, a bad line or a registry error\n";

enum { OPT_DB = 1000, OPT_OPERATION, OPT_ALL, OPT_JSON };

typedef struct opts {
    const char *db, *file;
    const char *ops[MAX_OPERATIONS];
    size_t n_ops;
    int all, json;
} opts;

/* -1 to go on, else the exit code. */
static int parse(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"operation", required_argument, NULL, OPT_OPERATION},
                                             {"all-operations", no_argument, NULL, OPT_ALL},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB:
            if (rg_cli_db_option("runs import-catalog", optarg, &o->db)) return 2;
            break;
        case OPT_OPERATION:
            if (o->n_ops == MAX_OPERATIONS) {
                rg_term_printf(stderr, "ropegrad runs import-catalog: at most %d --operation\n", MAX_OPERATIONS);
                return 2;
            }
            o->ops[o->n_ops++] = optarg;
            break;
        case OPT_ALL: o->all = 1; break;
        case OPT_JSON: o->json = 1; break;
        case 'h': fputs(help, stdout); return 0;
        case ':': rg_term_printf(stderr, "ropegrad runs import-catalog: %s needs a value\n", argv[optind - 1]); return 2;
        default:
            rg_term_printf(stderr, "ropegrad runs import-catalog: unknown option '%s' (try --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (argc - optind != 1) {
        rg_term_printf(stderr, "ropegrad runs import-catalog: expected one FILE (usage: ropegrad runs import-catalog "
                               "FILE.jsonl[.zst] [--operation NAME]...)\n");
        return 2;
    }
    if (o->all && o->n_ops) {
        rg_term_printf(stderr, "ropegrad runs import-catalog: --all-operations and --operation exclude each other\n");
        return 2;
    }
    o->file = argv[optind];
    return -1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void print_text(const opts *o, const rg_catalog *c, const rg_catalog_import_result *r, double secs)
{
    rg_term_printf(stdout, "%s: %zu lines: %zu sources, %zu projects, %zu operations, %zu implementations, "
                           "%zu benchmark runs, %zu measurements, %zu record events, %zu artifacts\n",
                   o->file, c->lines, c->n_sources, c->n_projects, c->n_operations, c->n_implementations, c->n_runs,
                   c->n_measurements, c->n_events, c->n_artifacts);
    if (c->n_skipped) {
        char names[600] = "";
        for (size_t i = 0; i < c->n_skipped; i++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s %zu", i ? ", " : "", c->skipped[i].table,
                     c->skipped[i].rows);
        }
        rg_term_printf(stdout, "skipped %zu rows of %zu tables this reader does not know (%s)\n", c->skipped_rows,
                       c->n_skipped, names);
    }
    rg_term_printf(stdout, "%zu runs of %zu operations verified: %zu imported, %zu already in the registry "
                           "(%zu with changed source facts); %zu retracted, %zu superseded; %zu not passed (not imported); %.2f s\n",
                   r->runs, r->operations, r->stored, r->already, r->updated, r->retracted, r->superseded,
                   r->not_passed, secs);
    if (r->unreadable)
        rg_term_printf(stdout, "%zu runs not imported: their digests verify, but ropegrad's record does not hold "
                               "their shape (first, %s)\n", r->unreadable, r->unreadable_why);
}

static int print_json(const opts *o, const rg_catalog *c, const rg_catalog_import_result *r, double secs)
{
    cJSON *d = cJSON_CreateObject(), *t = cJSON_CreateObject(), *sk = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "file", o->file);
    cJSON_AddNumberToObject(d, "lines", (double)c->lines);
    const struct {
        const char *name;
        size_t n;
    } rows[] = {{"sources", c->n_sources},
                {"projects", c->n_projects},
                {"operations", c->n_operations},
                {"operation_aliases", c->n_aliases},
                {"workloads", c->n_workloads},
                {"implementations", c->n_implementations},
                {"benchmark_runs", c->n_runs},
                {"measurements", c->n_measurements},
                {"record_events", c->n_events},
                {"artifacts", c->n_artifacts}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) cJSON_AddNumberToObject(t, rows[i].name, (double)rows[i].n);
    for (size_t i = 0; i < c->n_skipped; i++) cJSON_AddNumberToObject(sk, c->skipped[i].table, (double)c->skipped[i].rows);
    cJSON_AddItemToObject(d, "tables", t);
    cJSON_AddItemToObject(d, "skipped_tables", sk);
    cJSON_AddNumberToObject(d, "operations", (double)r->operations);
    cJSON_AddNumberToObject(d, "runs", (double)r->runs);
    cJSON_AddNumberToObject(d, "imported", (double)r->stored);
    cJSON_AddNumberToObject(d, "already", (double)r->already);
    cJSON_AddNumberToObject(d, "updated", (double)r->updated);
    cJSON_AddNumberToObject(d, "retracted", (double)r->retracted);
    cJSON_AddNumberToObject(d, "superseded", (double)r->superseded);
    cJSON_AddNumberToObject(d, "not_passed", (double)r->not_passed);
    cJSON_AddNumberToObject(d, "unreadable", (double)r->unreadable);
    cJSON_AddNumberToObject(d, "seconds", secs);
    char err[RG_ERRLEN];
    char *text = rg_json_print(d, 1, err, sizeof err);
    cJSON_Delete(d);
    if (!text || printf("%s\n", text) < 0 || fflush(stdout)) {
        free(text);
        rg_term_printf(stderr, "ropegrad runs import-catalog: cannot write the JSON\n");
        return 2;
    }
    free(text);
    return 0;
}

int rg_cmd_runs_import_catalog(int argc, char **argv)
{
    opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    rg_catalog_import_opts io = {o.ops, o.n_ops, o.all, 1};
    if (!o.all && !o.n_ops) {   /* every bundled suite's definition; a catalog may lack some */
        for (size_t k = 0; rg_ops[k] && o.n_ops < MAX_OPERATIONS; k++) o.ops[o.n_ops++] = rg_ops[k]->definition;
        io = (rg_catalog_import_opts){o.ops, o.n_ops, 0, 0};
    }
    char err[RG_ERRLEN];
    double t0 = now_s();
    rg_catalog c;
    if (rg_catalog_read(o.file, &c, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs import-catalog: %s\n", err);
        return 2;
    }
    rg_registry *g = NULL;
    rg_catalog_import_result r;
    int opened = !rg_registry_open(rg_registry_path(o.db), 1, &g, err, sizeof err);
    rc = opened ? rg_catalog_import(g, &c, o.file, &io, &r, err, sizeof err) : 2;
    rg_registry_close(g);
    if (rc) {
        rg_term_printf(stderr, "ropegrad runs import-catalog: %s%s\n", err, opened ? "; nothing was stored" : "");
        rg_catalog_free(&c);
        return rc;
    }
    double secs = now_s() - t0;
    rc = o.json ? print_json(&o, &c, &r, secs) : (print_text(&o, &c, &r, secs), 0);
    rg_catalog_free(&c);
    return rc;
}
