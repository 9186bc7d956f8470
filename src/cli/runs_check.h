/* SPDX-License-Identifier: Apache-2.0 */
/* runs_check.h -- the regression gate's output (runs_check.c): text or one
 * JSON document; each returns the exit status (0 same/faster, 1 slower or a
 * failed run, 3 unclear, 2 an error said on stderr). */
#ifndef ROPEGRAD_CLI_RUNS_CHECK_H
#define ROPEGRAD_CLI_RUNS_CHECK_H

#include <stdint.h>

#include "record.h"

/* A run that timed nothing (label: what stands for its figure). */
int rg_check_untimed(int64_t id, const char *label, int failed, int json);
/* No baseline: nothing to check (0). */
int rg_check_no_baseline(int64_t id, int json);
/* The history rule: -1 when the line has too little credible history. */
int rg_check_history_rule(rg_registry *g, int64_t id, double z_threshold, double threshold, int json);
/* The pairwise rule against base (named: from --against). */
int rg_check_pair(rg_registry *g, int64_t id, int64_t base, int named, double threshold, double alpha, int json);

#endif
