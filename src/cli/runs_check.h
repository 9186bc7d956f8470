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
/* The repeated pairwise rule (runs_check_repeat.c): runs[0..n_runs) against
 * bases[0..n_bases), each a timed run; the ids are distinct. */
int rg_check_repeated(rg_registry *g, const int64_t *runs, size_t n_runs, const int64_t *bases, size_t n_bases,
                      double threshold, int json);

/* A verdict's exit status (0 same/faster, 1 slower, 3 unclear) and its closing words. */
int rg_check_exit(rg_verdict v);
const char *rg_check_conclusion(rg_verdict v);

/* The JSON pieces every check document is made of (runs_check.c). */
cJSON *rg_check_doc(int64_t id, const char *rule, int *oom);        /* {"run": id, "rule": rule} */
int rg_check_num(cJSON *o, const char *k, double v);                /* a number, null when not finite */
int rg_check_str(cJSON *o, const char *k, const char *v);           /* a terminal-safe string, or null */
int rg_check_emit(cJSON *doc, int oom);                             /* prints and deletes doc: 0, or 2 */

#endif
