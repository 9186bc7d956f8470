/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traces.h -- the official SOL-ExecBench evaluator's trace file, read strictly.
 *
 * `sol-execbench PROBLEM --solution S.json -o traces.jsonl` writes one Trace
 * per line (NVIDIA/SOL-ExecBench src/sol_execbench/cli/main.py:
 * json.dumps(trace.model_dump(mode="json"))); the fields are the pydantic
 * models of core/data/trace.py and workload.py:
 *
 *   {definition, solution, workload: {axes, inputs, uuid, tolerance},
 *    evaluation: {status, environment: {hardware, libs}, timestamp, log,
 *                 correctness: {max_relative_error, max_absolute_error,
 *                               has_nan, has_inf, extra} | null,
 *                 performance: {latency_ms, reference_latency_ms,
 *                               speedup_factor} | null}}
 *
 * Read here with the models' own rules: a known status; correctness present
 * exactly for PASSED and INCORRECT_NUMERICAL, performance exactly for PASSED;
 * errors and times non-negative; and, for ropegrad's use, more: every line
 * of one definition, solution and GPU; each workload uuid once; a PASSED
 * workload timed (latency > 0) with speedup_factor = reference / latency.
 * Members the models do not have are refused (the evaluator writes none).
 */
#ifndef ROPEGRAD_TRACES_H
#define ROPEGRAD_TRACES_H

#include <stddef.h>

#include "manifest.h"

/* At most this many lines (workloads) in one file. */
#define RG_TRACES_MAX 4096
/* A timed latency (ms) the reader accepts: 1 ps to about 11.6 days. */
#define RG_TRACE_MIN_MS 1e-9
#define RG_TRACE_MAX_MS 1e9

typedef struct rg_trace {
    int line;                       /* 1-based line in the file */
    char uuid[64];
    rg_named_value axes[8];
    size_t n_axes;
    char status[24];                /* PASSED, INCORRECT_NUMERICAL, ... */
    int has_correctness, has_performance;
    double max_abs_err, max_rel_err;   /* NAN when no correctness */
    int has_nan, has_inf;
    double latency_ms, reference_latency_ms, speedup_factor;   /* NAN when no performance */
    char timestamp[40];
    char log_line[200];             /* the log's last non-empty line (why it failed), "" when none */
} rg_trace;

typedef struct rg_traces {
    char definition[256], solution[256], hardware[256];
    rg_kv libs[RG_MF_MAX_KV];
    size_t n_libs;
    rg_trace *t;                    /* malloc'd, in file order */
    size_t n;
} rg_traces;

/* 1 when status is a failure that makes the run failed (anything but PASSED). */
int rg_trace_failed(const rg_trace *t);

/* Parses text[0..len) (what names it in messages). 0, or 2 with a one-line
 * message naming the line and field (out is then empty). */
int rg_traces_parse(const char *text, size_t len, const char *what, rg_traces *out, char *err, size_t errlen);
/* The same from a file (a regular file of at most RG_JSON_MAX_MANIFEST bytes). */
int rg_traces_read(const char *path, rg_traces *out, char *err, size_t errlen);
void rg_traces_free(rg_traces *t);

/* 1 when text (a file's bytes) reads as a trace file rather than a manifest:
 * its first line is a JSON object with "definition" and "workload" members. */
int rg_traces_sniff(const char *text, size_t len);

#endif
