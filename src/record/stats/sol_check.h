/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sol_check.h -- the index's own speed of light.
 *
 * T_SOL of every workload of a run is computed here, never read from the
 * manifest: the bytes the workload must move come from the bundled suite of
 * the run's definition (its definition.json and the workload's axes in
 * workload.jsonl, through the op's rg_op.bytes), the bandwidth from the
 * datasheet table of the GPU the environment names (sol.c). A manifest's own
 * t_sol_ns (null, negative or different) plays no part.
 *
 *   verified      a GPU of the table and a bundled suite holding every
 *                 workload of the run: each workload's T_SOL is known.
 *   cpu           a CPU run (vendor and backend "cpu", no GPU of the table
 *                 named): there is no bandwidth bound; ranked as before.
 *   unverifiable  anything else (a GPU not in the table, a problem or a
 *                 workload not in the bundled suites, no per-workload
 *                 medians): shown as such and ranked after verified runs.
 */
#ifndef ROPEGRAD_SOL_CHECK_H
#define ROPEGRAD_SOL_CHECK_H

#include "manifest.h"
#include "result.h"

typedef enum rg_sol_state { RG_SOL_VERIFIED = 0, RG_SOL_CPU = 1, RG_SOL_UNVERIFIABLE = 2 } rg_sol_state;

typedef struct rg_sol_check {
    rg_sol_state state;
    double tbps;          /* the datasheet bandwidth (verified runs), else 0 */
    char basis[240];      /* verified: the product, bandwidth and datasheet; cpu, unverifiable: why */
} rg_sol_check;

/* The bundled suite of a definition (loaded once, never freed: every worker
 * thread reads it), NULL when there is none. The harness has one,
 * rg_suite_bundled; the CLI registers it at start (rg_sol_set_suites), so the
 * record loads no suite itself. Until one is registered no GPU run's T_SOL is
 * known (unverifiable). */
typedef const rg_suite *(*rg_sol_suite_fn)(const char *definition);
void rg_sol_set_suites(rg_sol_suite_fn fn);

/* Checks what the index can compute for m. t_sol (NULL, or m->n_workloads
 * entries) gets each workload's T_SOL in ns (NAN where none). Returns 0, or
 * 2 with a message when m or out is NULL. */
int rg_manifest_sol_check(const rg_manifest *m, rg_sol_check *out, double *t_sol, char *err, size_t errlen);

/* Where the record's baseline T_b comes from, in words, into out[n]
 * (run.spec.ropegrad.sol.baseline): the suite's B200 figures, a baseline
 * file, the reference timed in the same call (imported official traces), or
 * none. 0, 1 when the record does not say (out ""), 2 on bad arguments. */
int rg_baseline_source(const rg_manifest *m, char *out, size_t n);

/* How many workloads the bundled suite of definition holds, -1 when there
 * is no bundled suite (or none registered). */
int rg_sol_suite_size(const char *definition);

/* Each workload's bytes from the bundled suite (bytes[m->n_workloads], NAN
 * where the suite lacks the workload). 0 when the suite is known, 1 when not. */
int rg_manifest_suite_bytes(const rg_manifest *m, double *bytes);

/* "verified", "cpu" or "unverifiable". */
const char *rg_sol_state_name(rg_sol_state s);

#endif
