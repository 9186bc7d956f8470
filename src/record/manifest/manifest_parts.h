/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest_parts.h -- the pieces of manifest_build.c that another builder of
 * the same envelope reuses (traces_import.c: the official evaluator's traces).
 */
#ifndef ROPEGRAD_MANIFEST_PARTS_H
#define ROPEGRAD_MANIFEST_PARTS_H

#include <cjson/cJSON.h>

#include "manifest.h"
#include "result.h"

/* The workload object's row of one suite workload: index, uuid, axes (the
 * op's named axes too: axis_names, up to RG_OP_MAX_AXES, NULL-ended, or
 * NULL), attention_scaling, tolerance. */
cJSON *rg_manifest_workload_entry(const rg_workload *sw, const char *const *axis_names);

/* 1 when a run on this GPU takes T_SOL and T_b from the suite's figures
 * file: the file's GPU (b200-figures.json: "B200") is in the GPU's name. Any
 * other GPU (an H200 too) uses bytes / its datasheet bandwidth. */
int rg_manifest_sol_from_figures(const char *gpu, const rg_suite *s);

/* sourceNative.metrics from the run's per-workload rows (sol_score,
 * avg_speedup, fast_1_count/total: the sums verify makes again). */
cJSON *rg_manifest_metrics(const cJSON *rows, double latency_ms);

/* Mean and geomean of the rows' positive medians (NAN when none). */
void rg_manifest_row_stats(const cJSON *rows, double *mean, double *geomean);

/* Wraps the five specs (taken: spec[] is left NULL, also on failure) into
 * the envelope, with the digests the run names and the comparison key. */
cJSON *rg_manifest_assemble(cJSON *spec[RG_N_ROLES], const char *const name[RG_N_ROLES],
                            const char *const title[RG_N_ROLES], char *err, size_t errlen);

#endif
