/* SPDX-License-Identifier: Apache-2.0 */
/* run_internal.h -- what the harness's own files share: the results and the
 * check (stats.c, check.c) with both runners (run.c, run_cuda.c), and inputs.c's generator and the protocol's check with
 * the op rows (op.c, src/op/<op>/row.c). Internal to src/harness/: nothing outside it
 * (the CLI, the record, the index) includes it; harness.h is the interface. */
#ifndef ROPEGRAD_RUN_INTERNAL_H
#define ROPEGRAD_RUN_INTERNAL_H

#include <stddef.h>

#include "harness.h"

/* The host half of rg_env (hostname, OS, CPU, version, build flags). */
void rg_env_host(rg_env *e, int cpu_threads);

/* Fills the time statistics, samples and GB/s of a timed workload from
 * samples_ns (ownership passes to wr). */
void rg_result_set_samples(rg_workload_result *wr, double *samples_ns, int n);

/* The counter-based generator of inputs.c, for the ops' input makers:
 * rg_stream_key(seed, w, t) is key(w, t); the values are normal(w, t, i) and
 * uniform(w, t, i) as documented there. */
uint64_t rg_stream_key(uint64_t seed, int w, int t);
double rg_normal_at(uint64_t key, int64_t i);
double rg_uniform_at(uint64_t key, int64_t i);

/* Real training positions (inputs.c, RG_INPUTS_POSITIONS): position of row
 * s of batch b for positions in [0, pos_max], with the per-batch shift drawn
 * from key. */
int64_t rg_position_at(uint64_t key, int64_t b, int64_t s, int64_t S, int64_t pos_max);

/* Widens an op's output and applies the protocol's check (0, or 1 on out of memory). */
int rg_check_op_output(const rg_op *op, const void *out, int64_t n, const double *ref, const rg_workload *w,
                       rg_check *res);

#endif
