/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.h -- the SOL-ExecBench protocol, in C.
 *
 *   suite (definition.json + workload.jsonl + *-figures.json)
 *     -> inputs (seeded, counter-based generator)   -> backend (cpu | cuda kernel N)
 *     -> check (float64 reference, the protocol's tolerance rules)
 *     -> time (cold L2; CUPTI spans on GPU, wall clock on CPU)
 *     -> rg_run_result  (printed as a table, written as JSON, handed to the record)
 *
 * What it reads and writes (rg_suite, rg_run_options, rg_run_result and their
 * parts) is plain data in result.h, a layer below the harness that the record
 * and the index read without it; an op's row is written against op.h.
 * The harness calls libropegrad only through include/ropegrad.h, like any user.
 * Every function that can fail returns 0 or non-zero and writes a one-line
 * message (naming the file and field where there is one) into err[errlen].
 */
#ifndef ROPEGRAD_HARNESS_H
#define ROPEGRAD_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_share.h"
#include "op.h"
#include "result.h"
#include "ropegrad.h"

/* ---- suite ---------------------------------------------------------------- */

/* Loads DIR/definition.json, DIR/workload.jsonl and, when present,
 * DIR/<gpu>-figures.json. Returns 0, or non-zero with a message. */
int rg_suite_load(const char *dir, rg_suite *out, char *err, size_t errlen);
/* The bundled suite of definition (an installed CLI's share/ropegrad/suites,
 * else the source tree's suites/), loaded once per process and never freed;
 * NULL when there is none (bundled.c). The index's T_SOL reads it
 * (rg_sol_set_suites, sol_check.h). */
const rg_suite *rg_suite_bundled(const char *definition);

/* ---- check ------------------------------------------------------------------ */

/* The protocol's rules, applied to out[n] against the float64 ref[n]:
 * ok when |out-ref| <= atol + rtol*|ref|; pass when matched ratio >= required
 * and, when cap is not NAN, max |out-ref| <= cap; any NaN/Inf in out or ref
 * fails; all-zero out where ref is not fails. */
void rg_check_output(const float *out, const double *ref, int64_t n, double atol, double rtol,
                     double required_matched_ratio, double max_error_cap, rg_check *res);

/* ---- ground truth and correctness rounds (ground_truth.c, rounds.c) ----------- */

/* 1 when op has that ground truth (float32-reference: 014 and 012). */
int rg_ground_truth_available(const rg_op *op, rg_ground_truth g);
/* The reference of t under g into ref (t->n_out doubles); a ropegrad status
 * (ROPEGRAD_ERR_UNSUPPORTED where the op has no such reference). */
int rg_ground_truth_reference(const rg_op *op, const rg_tensors *t, rg_ground_truth g, double *ref);

/* ---- runs -------------------------------------------------------------------- */

/* A workload's sizes as text: B, S and D, then each named axis of op as
 * name=value ("B=2 S=512 D=128 num_heads=32 num_kv_heads=8"). */
void rg_axes_text(const rg_op *op, const rg_workload *w, char *dst, size_t n);

/* The defaults (rg_run_options, result.h): backend auto, warmup 10, iterations 50, seed 200, 10 rounds. */
void rg_run_options_default(rg_run_options *o);

/* ---- the CPU timer (run.c): the protocol's CPU timing, for any code to time --------- */

/* Cold cache on the CPU: a buffer of twice the last-level cache (64 MiB when
 * its size is unknown, at most 1 GiB), written whole and read once per line
 * before every call, so the call's working set starts in DRAM (the CPU's
 * counterpart of the GPU protocol's cold L2). */
typedef struct rg_cpu_timer {
    unsigned char *buf;
    size_t bytes;
    char cold[128];                /* how the cache is flushed, in words (rg_run_result.cold_l2) */
} rg_cpu_timer;

/* Allocates and faults in the flush buffer. Returns 0, or 1 with a message. */
int rg_cpu_timer_open(rg_cpu_timer *t, char *err, size_t errlen);
void rg_cpu_timer_close(rg_cpu_timer *t);

/* The protocol's CPU loop: warmup + iterations calls of fn(ctx), the cache
 * flushed before each and each call timed with CLOCK_MONOTONIC; the last
 * iterations times go to samples_ns[iterations] (rg_time_stats_compute gives
 * the median). Stops at the first non-zero status fn returns and returns it
 * (samples_ns then incomplete); -1 on bad arguments. */
typedef int (*rg_cpu_timed_fn)(void *ctx);
int rg_cpu_timer_run(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns);
/* rg_cpu_timer_run with stage(ctx) (NULL: none) called before each flush,
 * untimed: what the call needs made beforehand (an in-process
 * implementation's arguments, rg_op.stage); a non-zero status stops the loop
 * as fn's does. */
int rg_cpu_timer_run_staged(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn stage, rg_cpu_timed_fn fn,
                            void *ctx, double *samples_ns);
/* The same loop with no flush between calls: not the protocol, a diagnosis of
 * what the flush costs (bench/cpu_floor.c's "no flush" column). */
int rg_cpu_timer_run_warm(int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns);

/* One call of an op's CPU path, as an rg_cpu_timed_fn: rg_cpu_call_run(&call). */
typedef struct rg_cpu_call {
    const rg_op *op;
    const rg_tensors *in;
    void *out;
    int threads;
} rg_cpu_call;
int rg_cpu_call_run(void *ctx);

/* Runs the workloads whose indices are listed (all when n_indices == 0).
 * Returns 0 when the run completed (whether or not workloads passed), non-zero
 * with a message on a usage or system error. */
int rg_run_suite(const rg_suite *s, const int *indices, size_t n_indices, const rg_run_options *o,
                 rg_run_result *out, char *err, size_t errlen);

/* The result as a table on f (the one bench and check print). A run without
 * timing (`check`) has no timing columns or lines. */
void rg_run_print_table(const rg_run_result *r, void *file /* FILE * */);

/* The result on f as format: "table" (the above), "md" (a Markdown table),
 * "csv" (RFC 4180, a header row) or "json" (the bench JSON document).
 * Returns 0, or 1 with a message (an unknown format, a write error). */
int rg_run_print_format(const rg_run_result *r, const char *format, void *file /* FILE * */, char *err,
                        size_t errlen);

/* The result as the bench JSON document. Writes to a temporary file beside
 * path and renames it into place: never a partial file. */
int rg_run_write_json(const rg_run_result *r, const char *path, char *err, size_t errlen);

#endif /* ROPEGRAD_HARNESS_H */
