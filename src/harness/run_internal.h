/* SPDX-License-Identifier: Apache-2.0 */
/* run_internal.h -- what the harness's own files share: the results and the
 * check (check.c) with both runners (run.c, run_cuda.c), and the protocol's check with the op table (op.c).
 * Internal to src/harness/: nothing outside it (the op rows, the CLI, the record, the index) includes it;
 * harness.h is the interface, op.h what a row is written against. */
#ifndef ROPEGRAD_RUN_INTERNAL_H
#define ROPEGRAD_RUN_INTERNAL_H

#include <stddef.h>

#include "harness.h"

/* The host half of rg_env (hostname, OS, CPU, version, build flags). */
void rg_env_host(rg_env *e, int cpu_threads);

/* The header of a run's result: suite, op, axes, backend (use_cuda), the
 * protocol o asks for, the start time, the host. */
void rg_result_header(const rg_suite *s, const rg_run_options *o, int use_cuda, int cpu_threads, rg_run_result *out);

/* A workload's result before it runs: its sizes, bytes, figures; nothing timed. */
void rg_workload_header(const rg_suite *s, const rg_workload *w, rg_workload_result *wr);

/* Widens an op's output and applies the protocol's check (0, or 1 on out of memory). */
int rg_check_op_output(const rg_op *op, const void *out, int64_t n, const double *ref, const rg_workload *w,
                       rg_check *res);

/* rounds.c: round r's seed (round 0: seed itself). */
uint64_t rg_round_seed(uint64_t seed, int round);

/* How the correctness rounds (rounds.c) reach a backend. The CPU's calls
 * run in place on the host buffers; the CUDA runner's stage the host inputs
 * into the same device buffers and copy the output and the inputs back. */
enum { RG_CALL_OK = 0, RG_CALL_SYSTEM = 1, RG_CALL_FAILED = 2, RG_CALL_LOST = 3 };
typedef struct rg_round_io {
    /* Writes in's values (host; a round's inputs) where the call reads
     * them, at the same addresses every time; NULL when the call reads in
     * itself. 0, or 1 with a message. */
    int (*stage)(void *ctx, const rg_tensors *in, char *err, size_t errlen);
    /* One call into an output poisoned with 0xff bytes (r: the round, -1
     * the call after the timed iterations). RG_CALL_OK: *out holds the
     * output's host bytes and *after the inputs' as the call left them;
     * RG_CALL_FAILED: the op failed (wr->check says why, rg_call_failed);
     * RG_CALL_LOST: the GPU was lost (wr->check says how); RG_CALL_SYSTEM:
     * a harness error in err. */
    int (*call)(void *ctx, int r, const void **out, const rg_tensors **after, rg_workload_result *wr, char *err,
                size_t errlen);
    void *ctx;
} rg_round_io;

/* The correctness of one workload: o->rounds rounds of fresh seeded inputs
 * written into in's buffers and staged (round 0: in as made, checked
 * against ref0), the output poisoned before each call, the reward-hack
 * guards after it, the float64 yardstick of round 0 when the ground truth is
 * float32-reference. Leaves round 0's inputs in in (and staged). wr->check
 * gets the result (pass 0 with a reason on the first failure). 0, or 1 with
 * a message on a system error (out of memory, a generator failure). */
int rg_correctness_rounds(const rg_op *op, const rg_workload *w, const rg_run_options *o, rg_tensors *in,
                          const double *ref0, const rg_round_io *io, rg_workload_result *wr, char *err,
                          size_t errlen);

/* After the timed iterations: one more call (on round 0's inputs, already
 * staged) with a poisoned output must pass the check against ref, else the
 * workload fails (REWARD_HACK) and loses its timing. 0, or 1 with a message. */
int rg_after_timing(const rg_op *op, const rg_workload *w, const rg_tensors *in, const double *ref,
                    const rg_round_io *io, rg_workload_result *wr, char *err, size_t errlen);

/* wr fails as a reward hack: "REWARD_HACK: why". */
void rg_reward_hack(rg_workload_result *wr, const char *why);

/* wr fails with op's failed call (status rc) on backend ("cpu", "cuda") in
 * round r (-1: after the timed iterations); a REWARD_HACK error text of an
 * in-process implementation makes it a reward hack. */
void rg_call_failed(const rg_op *op, const char *backend, int rc, int r, rg_workload_result *wr);

/* The CPU path's rounds and final call: rg_correctness_rounds and
 * rg_after_timing with calls of op->cpu in place on in and out. */
int rg_cpu_correctness(const rg_op *op, const rg_workload *w, const rg_run_options *o, rg_tensors *in, void *out,
                       const double *ref0, rg_workload_result *wr, char *err, size_t errlen);
int rg_cpu_after_timing(const rg_op *op, const rg_workload *w, const rg_tensors *in, void *out, const double *ref,
                        int threads, rg_workload_result *wr);

#endif
