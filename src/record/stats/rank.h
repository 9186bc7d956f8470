/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rank.h -- ranks that carry their uncertainty, suspect runs, a run's
 * revision and history, and the regression check (`runs rank`, `runs
 * history`, `runs check`, and the pages, all through these functions).
 *
 *   rg_run_interval       the primary statistic's confidence interval, from
 *                         the stored samples (per-workload median intervals,
 *                         Bonferroni over the workloads, combined by the
 *                         statistic itself: geomean or mean of the medians);
 *                         a record without samples gets [x, x], marked unknown.
 *   rg_manifest_suspect   too fast to be real (a workload's median below
 *                         max(its T_SOL, the GPU's launch floor), or a CPU
 *                         workload beyond the CPU's memory ceiling:
 *                         hardware.h) or an output that broke the all-zero /
 *                         NaN rules.
 *   rg_manifest_rank_class  the run's trust class (measured, reported,
 *                         suspect, partial, busy, damaged, failed) with a
 *                         one-line reason: only measured runs get interval
 *                         ranks; reported runs rank among themselves by their
 *                         figure; the others are listed, never ranked, never
 *                         #1.
 *   rg_registry_rank_group  one comparison group ranked: measured runs,
 *                         verified (sol_check.h) first; rank = 1 + the runs
 *                         whose whole interval lies below
 *                         (rg_rank_intervals), so overlapping runs tie;
 *                         unverifiable measured runs after them; then the
 *                         reported runs, ranked apart from 1 by their figure;
 *                         then every other class, unranked (rank 0).
 *                         Runs of an older version of a harness that has
 *                         runs of a newer one in the group are superseded:
 *                         listed after the current ones, unranked.
 *   rg_registry_first     #1 of a group: its first verified measured run.
 *   rg_registry_line      the runs of one implementation line (same comparison
 *                         key, same implementation name, backend and kernel),
 *                         oldest first: its history over revisions.
 *   rg_check_runs         per workload, the Hodges-Lehmann ratio run/baseline,
 *                         its interval, the U test and a FAST/SLOW/SAME/UNCLEAR
 *                         verdict (compare_stats.h).
 */
#ifndef ROPEGRAD_RANK_H
#define ROPEGRAD_RANK_H

#include "compare_stats.h"
#include "record.h"
#include "sol_check.h"

/* Named wherever a rank is shown. */
#define RG_CHECK_METHOD                                                                                          \
    "Hodges-Lehmann ratio run/baseline of the per-iteration samples with its 95% distribution-free interval, "   \
    "two-sided Mann-Whitney U; SLOW/FAST only when p < alpha and the whole interval lies beyond the threshold; "  \
    "SAME when not significant or inside it"

#define RG_RANK_METHOD                                                                                           \
    "95% interval of the primary statistic from the stored samples (distribution-free median interval per "      \
    "workload, Bonferroni over workloads); runs whose intervals overlap share a rank"

typedef struct rg_interval {
    double est, lo, hi;   /* the primary statistic and its interval, ns */
    int known;            /* 0: no samples in the record: [est, est], interval unknown */
} rg_interval;

/* m's primary statistic with its interval at confidence conf (RG_STATS_CONF).
 * Returns 0, or 2 with a message (no primary figure). */
int rg_run_interval(const rg_manifest *m, double conf, rg_interval *out, char *err, size_t errlen);

/* "12.345 [12.301, 12.402]" in microseconds; "12.345 [unknown]" without
 * samples; "12.345 [too few samples]" when they cannot bound it; "-". */
const char *rg_interval_label(const rg_interval *iv, char *buf, size_t n);

/* 1 when m is suspect (why gets the first reason), 0 when not. */
int rg_manifest_suspect(const rg_manifest *m, char *why, size_t whylen);

/* The workload of b matching a's workload (same index and uuid), NULL when none.
 * hint: the position to try first. */
const rg_mf_workload *rg_manifest_find_workload(const rg_manifest *b, const rg_mf_workload *a, size_t hint);

/* The revision a run measured: "git <12 hex>[+dirty]" when built from a git
 * checkout, else "impl <implementation digest, 12 hex>". */
void rg_revision_label(const rg_manifest *m, char *buf, size_t n);

/* A run's trust class (contract of the pages and the API: "rank_class"). */
typedef enum rg_rank_class {
    RG_CLASS_MEASURED = 0,   /* samples held here: ranked by intervals */
    RG_CLASS_REPORTED,       /* imported without samples: ranked among reported runs by its figure */
    RG_CLASS_SUSPECT,        /* faster than the hardware allows, or a broken output: never ranked */
    RG_CLASS_PARTIAL,        /* fewer workloads than its bundled suite: never ranked */
    RG_CLASS_BUSY,           /* recorded on a busy machine (gate.h rg_manifest_busy): never ranked */
    RG_CLASS_DAMAGED,        /* its stored manifest cannot be read: never ranked */
    RG_CLASS_FAILED          /* failed, or nothing timed: never ranked */
} rg_rank_class;

#define RG_RANK_REASON_LEN 256

/* "measured", "reported", "suspect", "partial", "busy", "damaged", "failed". */
const char *rg_rank_class_name(rg_rank_class c);

/* The class of m, with its one-line reason into reason[n]. evidence: the
 * run's registry evidence (NULL when not in a registry; a suspect run that
 * was replicated here, evidence "replicated", is not suspect). */
rg_rank_class rg_manifest_rank_class(const rg_manifest *m, const char *evidence, char *reason, size_t n);

/* 1 when runs of class c get a rank (measured or reported). */
int rg_rank_class_ranked(rg_rank_class c);

typedef struct rg_ranked {
    rg_run_row row;
    rg_rank_class rank_class;
    char rank_reason[RG_RANK_REASON_LEN];
    rg_interval iv;
    int suspect, confirmed;   /* confirmed: suspect, but replicated here on the same protocol */
    char suspect_why[200];
    rg_sol_check sol;         /* the index's own T_SOL check: unverifiable runs rank after verified ones */
    char revision[48];
    char harness[96];         /* the protocol's harness "name version" ("" unknown: damaged) */
    int superseded;           /* a newer version of its harness has runs in the group: listed after the
                                 current runs, never ranked, never #1 */
    int rank;                 /* 0: not ranked (any class but measured and reported); measured and
                                 reported runs are ranked apart, each from 1 */
    int tied;                 /* another run of the group of the same class has the same rank */
} rg_ranked;

/* Groups up to this many runs are read whole to find #1 (superseded runs
 * known); larger ones by the figure alone. */
#define RG_RANK_READ_ALL_MAX 500

/* The runs of comparison group key (evidence: NULL, or only runs of that
 * evidence level), ranked, in rank order. *out is malloc'd. */
int rg_registry_rank_group(rg_registry *g, const char *key, const char *evidence, rg_ranked **out, size_t *n,
                           char *err, size_t errlen);
/* #1 of comparison group key, the one definition every command, page and the
 * API use: the best (lowest primary figure, then lowest id) measured run
 * (rg_manifest_rank_class) that is verified (or a CPU run: sol_check.h);
 * in a group without any measured run, its best verified reported run.
 * A run whose manifest cannot be read is skipped (damaged), never an error.
 * *id = 0 when the group has none. */
int rg_registry_first(rg_registry *g, const char *key, int64_t *id, char *err, size_t errlen);
/* The same #1 from a group's passed runs already in rank order (ids[n], from
 * rg_registry_group_order): a caller that holds the order saves reading it twice. */
int rg_registry_first_of(rg_registry *g, const int64_t *ids, size_t n, int64_t *id, char *err, size_t errlen);
/* 1 when e may be #1 of a group with measured runs (the conditions above), else 0. */
int rg_ranked_may_be_first(const rg_ranked *e);

/* The ranked entry of run id in its group (and how many runs its table
 * ranks: the measured runs, or the reported runs for a reported one). */
int rg_registry_rank_run(rg_registry *g, int64_t id, rg_ranked *entry, int *group_ranked, char *err, size_t errlen);

/* -1, 0 or 1 as version a is older than, the same as or newer than b
 * (dotted numbers compared as numbers, "0.10.0" after "0.9.1"; other text
 * by its bytes). */
int rg_version_cmp(const char *a, const char *b);

/* "=2" for a tied rank, "2" alone, "-" unranked; "2*" never: suspect is shown apart. */
const char *rg_rank_label(const rg_ranked *r, char *buf, size_t n);

/* The runs of run id's implementation line (same comparison key, and the same
 * implementation name + backend + kernel, or the same source for a record
 * without an implementation object), by rg_run_time (the observed time where
 * it is credible, else the receipt time) then id. */
int rg_registry_line(rg_registry *g, int64_t id, rg_ranked **out, size_t *n, char *err, size_t errlen);
/* The baseline of `runs check`: the latest run of id's line observed before
 * it that measured another revision and timed something (a run with a
 * primary figure). *base = 0 when there is none. */
int rg_registry_previous_revision(rg_registry *g, int64_t id, int64_t *base, char *err, size_t errlen);

typedef struct rg_check_row {
    int index;
    char uuid[64];
    int have;                 /* 0: not comparable (missing in one run, or no samples): why */
    char why[96];
    double base_median, run_median;
    rg_shift shift;           /* run / baseline */
    rg_verdict verdict;
} rg_check_row;

/* Per workload of run against base. alpha and threshold as rg_shift_verdict.
 * *rows is malloc'd (one per workload of run). Returns 0 or 2 with a message. */
int rg_check_runs(const rg_manifest *base, const rg_manifest *run, double alpha, double threshold,
                  rg_check_row **rows, size_t *n, char *err, size_t errlen);

/* ---- alerts: the regressions of the latest revision of each line -------------------- */

typedef struct rg_regression {
    int64_t run_id, base_id;          /* the latest run of the line and its previous revision */
    char line[160];                   /* "cuda kernel 12 (name)" or "source NAME" */
    char definition[256], device[256], comparison_key[RG_DIGEST_LEN];
    char revision[48], base_revision[48], observed_at[40];
    int n_slow, n_fast, n_same, n_unclear;
    rg_check_row *rows;               /* per workload (malloc'd) */
    size_t n_rows;
} rg_regression;

/* For every line whose latest run (by observed date) has a previous revision:
 * the check of that run against it (rg_check_runs). only_slow: keep only the
 * lines with a SLOW workload. *out is malloc'd; free with rg_regressions_free. */
int rg_registry_regressions(rg_registry *g, double alpha, double threshold, int only_slow, rg_regression **out,
                            size_t *n, char *err, size_t errlen);
void rg_regressions_free(rg_regression *r, size_t n);
/* The JSON feed of them: {"method", "alpha", "threshold", "regressions": [{run, baseline, line, ...,
 * "workloads": [{index, uuid, verdict, ratio, lo, hi, p}]}]} (malloc'd text). */
char *rg_regressions_json(const rg_regression *r, size_t n, double alpha, double threshold, char *err,
                          size_t errlen);

#endif
