/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traces_import.h -- the official SOL-ExecBench evaluator's traces (traces.h)
 * as one run in the KernelIndex envelope, beside ropegrad's own runs:
 *
 *   run          source "sol-execbench"; per workload (matched to the suite
 *                by uuid, its axes checked) the evaluator's status, median
 *                latency, reference latency and worst errors; the geomean
 *                of the PASSED workloads' medians is the primary figure;
 *                any other status (INCORRECT_*, REWARD_HACK, RUNTIME_ERROR,
 *                ...) makes the run failed. T_SOL and T_b by ropegrad's rule:
 *                the suite's figures file only on its GPU (B200), else bytes
 *                over the GPU's datasheet bandwidth and the reference timed
 *                by the evaluator in the same call.
 *   protocol     the evaluator's (family sol_execbench_official_evaluator)
 *   environment  the traces' evaluation.environment (hardware, libs)
 *   workload     the suite's rows of the workloads the traces hold
 *   implementation  the traces' solution name
 *
 * The manifest is then verified and stored like any imported manifest
 * (evidence "imported"), so it can be exported and pushed to an index.
 */
#ifndef ROPEGRAD_TRACES_IMPORT_H
#define ROPEGRAD_TRACES_IMPORT_H

#include <cjson/cJSON.h>

#include "result.h"
#include "traces.h"

/* NULL with a one-line message: a definition other than the suite's, a
 * workload not in it or with other axes, a timestamp that is no date-time. */
cJSON *rg_traces_manifest(const rg_traces *t, const rg_suite *s, char *err, size_t errlen);

#endif
