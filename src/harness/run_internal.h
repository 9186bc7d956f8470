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
 * workload fails (REWARD_HACK) and loses its timing. On a workload that
 * failed already (in its timed calls) the call is still made and the first
 * reason stands. 0, or 1 with a message. */
int rg_after_timing(const rg_op *op, const rg_workload *w, const rg_tensors *in, const double *ref,
                    const rg_round_io *io, rg_workload_result *wr, char *err, size_t errlen);

/* wr fails as a reward hack: "REWARD_HACK: why". */
void rg_reward_hack(rg_workload_result *wr, const char *why);

/* wr fails with op's failed call (status rc) on backend ("cpu", "cuda") in
 * round r (-1: after the timed iterations); a REWARD_HACK error text of an
 * in-process implementation makes it a reward hack. */
void rg_call_failed(const rg_op *op, const char *backend, int rc, int r, rg_workload_result *wr);

/* wr fails with op's failed timed call (status rc) on backend, `what` naming
 * it ("timed", "staging a timed call"): "op ID BACKEND (what): text", or a
 * reward hack when the error text is one. */
void rg_timed_call_failed(const rg_op *op, const char *backend, const char *what, int rc, rg_workload_result *wr);

/* The CPU path's rounds and final call: rg_correctness_rounds and
 * rg_after_timing with calls of op->cpu in place on in and out. */
int rg_cpu_correctness(const rg_op *op, const rg_workload *w, const rg_run_options *o, rg_tensors *in, void *out,
                       const double *ref0, rg_workload_result *wr, char *err, size_t errlen);
int rg_cpu_after_timing(const rg_op *op, const rg_workload *w, const rg_tensors *in, void *out, const double *ref,
                        int threads, rg_workload_result *wr);

/* inputs.c: the generator's mix64 (the splitmix64 finalizer). */
uint64_t rg_mix64(uint64_t z);

/* rounds.c: a 64-bit digest of n bytes from h (not cryptographic). */
uint64_t rg_hash_bytes(const void *p, size_t n, uint64_t h);

/* ---- timed_sets.c: the input sets the timed iterations rotate over, the
 * fill before every timed call and the checks of sampled timed calls ---- */
#define RG_TIMED_SETS_MAX 8
#define RG_TIMED_SETS_HOST_BUDGET ((size_t)256 << 20)    /* inputs + float64 truth of all sets */
#define RG_TIMED_SETS_DEVICE_BUDGET ((size_t)1 << 30)    /* inputs of all sets on the GPU */
#define RG_TIMED_CHECK_WINDOW 8                          /* one checked timed iteration per window */

typedef struct rg_timed_sets {
    int n;                                   /* sets, even, 2..RG_TIMED_SETS_MAX */
    int warmup, iterations;
    rg_tensors set[RG_TIMED_SETS_MAX];       /* host inputs, each set its own buffers */
    double *ref[RG_TIMED_SETS_MAX];          /* each set's ground truth (the run's --ground-truth), NULL until checked */
    rg_ground_truth truth;
    uint64_t in_hash[RG_TIMED_SETS_MAX][RG_OP_MAX_TENSORS];
    uint64_t key;                            /* drawn per workload: the checked iterations, the fill offsets */
    unsigned char *fill;                     /* fill_bytes of random NaN or huge words */
    size_t fill_bytes, out_bytes;
    void *snap;                              /* out_bytes: a checked call's output, copied right after it */
} rg_timed_sets;

/* Makes the sets of workload w (sizes as in; device: also fit the GPU
 * budget) and the fill. 0, or 1 with a message. */
int rg_timed_sets_open(const rg_op *op, const rg_workload *w, const rg_run_options *o, const rg_tensors *in,
                       int device, rg_timed_sets *ts, char *err, size_t errlen);
void rg_timed_sets_close(rg_timed_sets *ts);
/* The set call it (0 = the first warmup call) reads. */
int rg_timed_set(const rg_timed_sets *ts, int it);
/* 1 when call it is a checked timed iteration (one per window, always the last). */
int rg_timed_checked(const rg_timed_sets *ts, int it);
/* Where call it's fill starts in ts->fill; rg_timed_fill copies it into a host output. */
size_t rg_timed_fill_offset(const rg_timed_sets *ts, int it);
void rg_timed_fill(const rg_timed_sets *ts, int it, void *out);
/* after's inputs (host bytes of set `set` as call it left them; it < 0: after
 * the timed loop) against the set's: RG_CALL_OK, or RG_CALL_FAILED (wr: REWARD_HACK). */
int rg_timed_inputs_intact(const rg_op *op, const rg_timed_sets *ts, int it, int set, const rg_tensors *after,
                           rg_workload_result *wr);
/* Checked call it: its inputs (after; NULL: not compared) and its output's
 * host bytes against its set's ground truth (computed on first use):
 * RG_CALL_OK, RG_CALL_FAILED (wr: REWARD_HACK, "timed iteration i of n
 * ..."), RG_CALL_SYSTEM (out of memory, or the reference failed). */
int rg_timed_check(const rg_op *op, const rg_workload *w, rg_timed_sets *ts, int it, const void *out,
                   const rg_tensors *after, rg_workload_result *wr);

#endif
