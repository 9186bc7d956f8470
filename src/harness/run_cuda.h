/* SPDX-License-Identifier: Apache-2.0 */
/* run_cuda.h -- the CUDA runner (run_cuda.c), called by run.c. It calls back
 * into nothing of run.c: the result and check helpers it shares with the CPU
 * runner are in stats.c and check.c (run_internal.h). */
#ifndef ROPEGRAD_RUN_CUDA_H
#define ROPEGRAD_RUN_CUDA_H

#include "harness.h"

#ifdef ROPEGRAD_HAVE_CUDA
typedef struct rg_cuda_state rg_cuda_state;

/* Picks the current device, fills r->device, r->timer, r->cold_l2 and the GPU
 * half of r->env (clocks sampled now), allocates the cold-L2 buffer and sets
 * up CUPTI (falling back to CUDA events when CUPTI cannot be used). */
int rg_cuda_open(const rg_op *op, int kernel, int timed, rg_run_result *r, rg_cuda_state **out, char *err, size_t errlen);

/* One workload: device copies, the correctness rounds (rounds.c: fresh
 * inputs in the same device buffers, a poisoned output, the reward-hack
 * guards, the check; in's host buffers are rewritten and left holding round
 * 0's inputs), then (when timed and correct) warmup + iterations under the
 * protocol's timer (o->restage, o->span, o->sync) and one more checked call.
 * Returns 0 (whether or not the workload passed), non-zero on a CUDA error. */
int rg_cuda_workload(rg_cuda_state *s, rg_tensors *in, const double *ref, const rg_workload *w,
                     const rg_run_options *o, rg_workload_result *wr, char *err, size_t errlen);

/* Why the GPU is unusable after a workload (a sticky CUDA error, or a kernel
 * still running past rg_run_options.timeout_s), NULL while it is usable. */
const char *rg_cuda_lost(const rg_cuda_state *s);

/* Samples the end clocks into r->env, sets r->timer and r->same_kernels from
 * what was used, frees everything. */
void rg_cuda_close(rg_cuda_state *s, rg_run_result *r);
#endif


#endif
