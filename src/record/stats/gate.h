/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gate.h -- the regression gate's two rules that go beyond one pair of runs.
 *
 *   History. Within-run intervals are narrower than the noise between runs
 *   (the machine, its load, its clocks move between runs, not within one),
 *   so a gate that compares a run with one earlier run alone calls same-code
 *   runs SLOW. When a line (rank.h's rg_registry_line) has at least
 *   RG_GATE_MIN_HISTORY earlier credible runs, the run's primary figure is
 *   judged against the distribution of their primary figures instead: the
 *   lookback z-score of conbench, z = (x - mean) / sd over the last
 *   RG_GATE_LOOKBACK of them, SLOW only when z exceeds the z threshold and x
 *   also exceeds mean * (1 + the minimum effect) -- the same minimum effect
 *   as the pairwise check.
 *
 *   A busy machine. A CPU run during which other processes or steal took a
 *   share of the machine's CPUs (measured over the run itself: cpu_share.h)
 *   measured the other work as much as its own: such a run is UNCLEAR, never
 *   SLOW, and never part of a history. A 1-minute load average sampled at the
 *   run's start misses work that starts seconds before it; it decides only
 *   for records made before the share was measured.
 */
#ifndef ROPEGRAD_GATE_H
#define ROPEGRAD_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "compare_stats.h"
#include "record.h"

#define RG_GATE_MIN_HISTORY 5   /* earlier credible runs before the history rule applies */
#define RG_GATE_LOOKBACK 30     /* at most this many of the latest ones */
#define RG_GATE_Z 5.0           /* z threshold (conbench's default) */

#define RG_GATE_HISTORY_METHOD                                                                                 \
    "lookback z-score: the run's primary figure against the mean and standard deviation of its line's "      \
    "earlier credible runs (passed, not suspect, not busy); SLOW/FAST only when |z| exceeds the z threshold " \
    "and the change exceeds the minimum effect"

/* Busy: other processes (steal included) used this share of the online CPUs
 * over the run. Not half: one busy thread beside a run on all N CPUs gets
 * about N/(N+1) of a CPU from a fair scheduler, 0.67 of 2 (33%), and makes a
 * CPU-bound run up to 1.5x slower; at a quarter it is seen on 2 and 3 CPUs. */
#define RG_GATE_BUSY_OTHER 0.25
/* Busy: steal (the hypervisor running other guests) took this share of the
 * online CPUs: a run on all of them loses that share of its CPU time, so at
 * the gate's minimum effect (5%) steal alone could make a SLOW-sized
 * difference (bench/gate_false_alarms.sh reports each run's steal and the
 * machine's since boot). */
#define RG_GATE_BUSY_STEAL 0.05
/* Records without the share over the run (made before it was measured):
 * busy when the 1-minute load average at the start was this share of the
 * online CPUs or more. */
#define RG_GATE_BUSY_LOAD 0.5

/* 1 when m is a CPU run recorded on a busy machine, over the run's own span
 * (cpu_share.h): other processes used >= RG_GATE_BUSY_OTHER of the online
 * CPUs ("other processes used 0.67 of 2 CPUs over the run"), or steal took
 * >= RG_GATE_BUSY_STEAL of them ("steal took 0.12 of 2 CPUs over the run");
 * a record without those figures (older ones): the 1-minute load average at
 * its start >= RG_GATE_BUSY_LOAD of the CPUs ("load average 1.40 on 2
 * CPUs"). why gets that text. 0 otherwise, also when nothing was recorded
 * (GPU runs, imported records). */
int rg_manifest_busy(const rg_manifest *m, char *why, size_t whylen);

/* The lookback z-score verdict of x against hist[0..n): mean, sd and z are
 * written (z = 0 when sd = 0). threshold: minimum effect (0.05 = 5%).
 * UNCLEAR when n < RG_GATE_MIN_HISTORY or an input is not a positive finite
 * figure. */
rg_verdict rg_gate_judge(const double *hist, size_t n, double x, double z_threshold, double threshold, double *mean,
                         double *sd, double *z);

/* The same judgement with robust figures: the median of hist[0..n) and its
 * median absolute deviation scaled by 1.4826 (a normal's sd) in place of the
 * mean and sd, so one wild run in a history neither widens it nor moves its
 * centre. n at most RG_GATE_LOOKBACK. bench/gate_rate reports both rules'
 * verdicts on the same runs; `runs check` uses rg_gate_judge. */
rg_verdict rg_gate_judge_robust(const double *hist, size_t n, double x, double z_threshold, double threshold,
                                double *median, double *smad, double *z);

typedef struct rg_gate_history {
    size_t n;                 /* earlier credible runs used (the latest RG_GATE_LOOKBACK) */
    size_t skipped;           /* earlier runs of the line left out: failed, suspect or busy */
    int64_t first_id, last_id;
    double hist[RG_GATE_LOOKBACK];   /* their primary figures, ns, newest first */
    double x, mean, sd, z;    /* ns; z of x */
    rg_verdict verdict;       /* UNCLEAR when n < RG_GATE_MIN_HISTORY */
} rg_gate_history;

/* The history rule for run id: its line's runs observed before it. Returns 0
 * (out->n < RG_GATE_MIN_HISTORY: not enough history, the pairwise check
 * applies), or 2 with a message. */
int rg_gate_history_check(rg_registry *g, int64_t id, double z_threshold, double threshold, rg_gate_history *out,
                          char *err, size_t errlen);

/* ---- the machine's run-to-run noise (the pairwise rule) ----------------------------- */
/*
 * Two runs of the same code recorded one after the other differ by more than
 * either run's own samples say: between runs the machine's clocks, caches,
 * placement and load move. The pairwise check therefore judges the ratio of
 * two runs' figures against the machine's run-to-run noise, sigma: the
 * standard deviation of the log of a run's figure between back-to-back runs
 * of the same code on that machine (its primary figure, and one workload's
 * median). A change is SLOW (FAST) only when it is beyond the minimum effect
 * and beyond the noise band exp(k * sqrt(2) * sigma), k the one-sided 99.9%
 * quantile of Student's t with the estimate's degrees of freedom (the normal
 * quantile, 3.09, for the default); a change beyond the minimum effect but
 * inside the band is UNCLEAR: the machine cannot tell it from noise.
 *
 * Where sigma comes from, first found first:
 *   history      consecutive runs of the same code (comparison key,
 *                implementation digest, backend and kernel) on the same
 *                machine (hostname, hardware product, backend), passed, not
 *                suspect, not busy, stored before the run checked: at least
 *                RG_NOISE_MIN_PAIRS such pairs; sigma^2 = mean(d^2) / 2 over
 *                their log-ratios d (same code: d has mean 0), df = pairs.
 *   calibration  `ropegrad runs calibrate`: N back-to-back runs of a suite
 *                measured here; sigma = the sample standard deviation of
 *                their log figures (df = quiet runs - 1), stored per machine
 *                in the registry (the latest calibration of a machine counts).
 *   default      RG_NOISE_DEFAULT (5%, what a CPU shared with other work shows
 *                between runs), k = 3.09: the band is 24.4%, so without history
 *                or a calibration only a change beyond it is SLOW; the check
 *                says which source it used and how to calibrate.
 */
#define RG_NOISE_MIN_PAIRS 10       /* same-code pairs in history before they decide */
#define RG_NOISE_MAX_RUNS 400       /* the latest runs of the machine read for history */
#define RG_NOISE_DEFAULT 0.05       /* sigma with no history and no calibration */
#define RG_NOISE_MIN_CALIBRATION 3  /* quiet runs a calibration needs */

#define RG_NOISE_METHOD                                                                                         \
    "the ratio of the two runs' figures against the machine's run-to-run noise: SLOW/FAST only beyond the "     \
    "minimum effect and beyond exp(k sqrt(2) sigma), k the one-sided 99.9% Student t quantile; UNCLEAR between"

#define RG_NOISE_REPEAT_METHOD                                                                                  \
    "the ratio of the geometric means of the runs' figures (n runs against m baseline runs, recorded "          \
    "interleaved) against the machine's run-to-run noise: SLOW/FAST only beyond the minimum effect and beyond "  \
    "exp(k sqrt(1/n + 1/m) sigma), k the one-sided 99.9% Student t quantile; UNCLEAR between; per workload the "  \
    "same rule on the geometric means of the runs' medians"

typedef struct rg_gate_noise {
    char machine[400];        /* "hostname · product · backend" */
    char source[16];          /* "history", "calibration" or "default" */
    double sigma, sigma_w;    /* log-scale sd of a run's primary figure and of one workload's median */
    int df, df_w;             /* degrees of freedom of each (0: the default, k = the normal quantile) */
    int n;                    /* history: same-code pairs; calibration: quiet runs used */
    char created_at[32];      /* calibration: when it was measured */
    char detail[256];         /* calibration: the suite and protocol it ran */
} rg_gate_noise;

/* The machine key of a run: "hostname · product · backend" (product: the
 * hardware product, else the CPU model). 0, or 2 when m names no host. */
int rg_machine_key(const rg_manifest *m, char *out, size_t n);

/* The one-sided 99.9% quantile of Student's t with df degrees of freedom
 * (df <= 0: the normal's, 3.090). */
double rg_noise_k(int df);

/* The noise band of an estimate: exp(k(df) * sqrt(2) * sigma). */
double rg_noise_band(double sigma, int df);
/* The band of a mean over n_run runs against a mean over n_base runs, each
 * side's runs interleaved with the other's in time:
 * exp(k(df) * sqrt(1/n_run + 1/n_base) * sigma); (1, 1) is rg_noise_band. */
double rg_noise_band_n(double sigma, int df, size_t n_run, size_t n_base);

/* The pairwise verdict of ratio = run / baseline against the minimum effect
 * and a noise band (> 1): SLOW/FAST beyond both, SAME within the minimum
 * effect, UNCLEAR between (or for a ratio that is not positive). */
rg_verdict rg_noise_verdict(double ratio, double threshold, double band);

/* The noise of run's machine for a check of run (stored as id, or 0: before
 * every stored run): history, else the machine's stored calibration, else
 * the default. 0, or 2 with a message. */
int rg_gate_noise_for(rg_registry *g, const rg_manifest *run, int64_t id, rg_gate_noise *out, char *err,
                      size_t errlen);

/* The calibration stored for machine (1 when none), 0 with *out, 2 error. */
int rg_registry_noise_get(rg_registry *g, const char *machine, rg_gate_noise *out, char *err, size_t errlen);
/* Stores (replaces) machine's calibration. 0 or 2 with a message. */
int rg_registry_noise_put(rg_registry *g, const rg_gate_noise *n, char *err, size_t errlen);
/* Every stored calibration, by machine. *out malloc'd. */
int rg_registry_noise_list(rg_registry *g, rg_gate_noise **out, size_t *n, char *err, size_t errlen);

#endif
