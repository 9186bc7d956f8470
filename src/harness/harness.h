/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.h -- the SOL-ExecBench protocol, in C.
 *
 *   suite (definition.json + workload.jsonl + *-figures.json)
 *     -> inputs (seeded, counter-based generator)   -> backend (cpu | cuda kernel N)
 *     -> check (float64 reference, the protocol's tolerance rules)
 *     -> time (cold L2; CUPTI spans on GPU, wall clock on CPU)
 *     -> rg_run_result  (printed as a table, written as JSON, handed to the record)
 *
 * The harness calls libropegrad only through include/ropegrad.h, like any user.
 * Every function that can fail returns 0 or non-zero and writes a one-line
 * message (naming the file and field where there is one) into err[errlen].
 */
#ifndef ROPEGRAD_HARNESS_H
#define ROPEGRAD_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_share.h"
#include "ropegrad.h"
#include "op.h"

#define RG_ERRLEN 512

/* ---- suite ---------------------------------------------------------------- */

typedef struct rg_workload {
    int index;                     /* 0-based line number in workload.jsonl */
    char uuid[64];
    int64_t batch_size, seq_len, head_dim;
    int64_t axes[RG_OP_MAX_AXES];  /* the op's named axes (rg_op.axes), in its order */
    float attention_scaling;       /* inputs.attention_scaling.value (1 when the op's generator sets it) */
    double max_atol, max_rtol;     /* tolerance.max_atol / max_rtol */
    double required_matched_ratio; /* tolerance.required_matched_ratio, default 0.99 */
    double max_error_cap;          /* tolerance.max_error_cap, NAN when absent */
    /* Figures for the GPU named in rg_suite.figures_gpu; NAN when absent. */
    double sol_ms, baseline_ms;
} rg_workload;

typedef struct rg_suite {
    char name[256];                /* definition.json "name" */
    char dir[4096];                /* the folder it was loaded from */
    const rg_op *op;               /* the op named by definition.json "name" (op.h) */
    int64_t head_dim;              /* definition.json axes.head_dim.value */
    ropegrad_dtype grad_dtype;     /* 014: inputs.grad_cos/grad_sin dtype; bf16 for the other ops */
    rg_workload *workloads;
    size_t n_workloads;
    int have_figures;              /* a *-figures.json was found and loaded */
    char figures_gpu[64];          /* e.g. "B200" (from the file name b200-figures.json) */
    char figures_file[4096];
    int figures_warmup, figures_iterations; /* protocol.warmup_runs / iterations, or 0 */
    uint64_t figures_seed;
} rg_suite;

/* Loads DIR/definition.json, DIR/workload.jsonl and, when present,
 * DIR/<gpu>-figures.json. Returns 0, or non-zero with a message. */
int rg_suite_load(const char *dir, rg_suite *out, char *err, size_t errlen);
void rg_suite_free(rg_suite *s);

/* 014's bytes any kernel must move for one workload: B*S*(2*D*elt + D/2*4 + 4) + B*(D/2)*4.
 * (Every op's own: rg_op.bytes.) */
double rg_workload_bytes(const rg_workload *w, ropegrad_dtype dt);

/* ---- inputs ---------------------------------------------------------------- */

typedef enum {
    RG_INPUTS_NORMAL = 0,    /* every tensor standard normal, like the dataset */
    RG_INPUTS_POSITIONS = 1  /* real training inputs, attention_scaling 1. 014: emb =
                                position * inv_freq, inv_freq = theta^(-2d/D) with
                                theta 1e6, positions up to 262144; 011 and 012: see
                                their rows (src/op/rope_forward/row.c, src/op/cos_sin/row.c) */
} rg_inputs_kind;

/* Host-side input tensors of one workload, owned by the harness. */
typedef struct rg_inputs {
    int64_t batch_size, seq_len, head_dim;
    ropegrad_dtype dtype;
    void *grad_cos, *grad_sin;     /* B*S*D elements of dtype */
    float *emb;                    /* B*S*D */
    float *inv_freq;               /* B*(D/2), stride D/2 */
    float attention_scaling;
} rg_inputs;

/* Deterministic and counter-based: element i of tensor t of workload w is a
 * pure function of (seed, w, t, i), so generation runs in parallel and any
 * element can be regenerated alone. Documented in inputs.c. */
int rg_inputs_make(const rg_workload *w, ropegrad_dtype dt, rg_inputs_kind kind, uint64_t seed,
                   rg_inputs *out, char *err, size_t errlen);
void rg_inputs_free(rg_inputs *in);
/* A ropegrad_rope_backward_problem over host inputs (output pointer left to the caller). */
ropegrad_rope_backward_problem rg_inputs_problem(const rg_inputs *in, float *out);

/* ---- check ------------------------------------------------------------------ */

typedef struct rg_check {
    int pass;
    double max_abs_err, max_rel_err, matched_ratio;
    int64_t n, n_matched, n_nonfinite;
    int64_t n_abs_only;            /* matched only through atol: |out-ref| > rtol*|ref| (a reference near 0) */
    char reason[128];              /* why it failed; "" when it passed */
} rg_check;

/* The protocol's rules, applied to out[n] against the float64 ref[n]:
 * ok when |out-ref| <= atol + rtol*|ref|; pass when matched ratio >= required
 * and, when cap is not NAN, max |out-ref| <= cap; any NaN/Inf in out or ref
 * fails; all-zero out where ref is not fails. */
void rg_check_output(const float *out, const double *ref, int64_t n, double atol, double rtol,
                     double required_matched_ratio, double max_error_cap, rg_check *res);

/* ---- ground truth and correctness rounds (ground_truth.c, rounds.c) ----------- */

/* What outputs are checked against: ropegrad's float64 reference, or the
 * definition's reference computed in float32 as the official evaluator does
 * on the GPU (`--ground-truth float32-reference|float64`). */
typedef enum { RG_TRUTH_FLOAT64 = 0, RG_TRUTH_FLOAT32_REFERENCE = 1 } rg_ground_truth;

const char *rg_ground_truth_name(rg_ground_truth g);
/* "float64" or "float32-reference" into *g: 0, or 1 for anything else. */
int rg_ground_truth_parse(const char *s, rg_ground_truth *g);
/* 1 when op has that ground truth (float32-reference: 014 and 012). */
int rg_ground_truth_available(const rg_op *op, rg_ground_truth g);
/* The reference of t under g into ref (t->n_out doubles); a ropegrad status
 * (ROPEGRAD_ERR_UNSUPPORTED where the op has no such reference). */
int rg_ground_truth_reference(const rg_op *op, const rg_tensors *t, rg_ground_truth g, double *ref);

/* ---- the GPU timing protocol's switches (protocol.c) ------------------------------ */

/* How the CUDA backend times a call, point by point against the official
 * evaluator (README, "Correctness and timing, as the official evaluator").
 * 0 is the official behaviour and the default in each; the other value is
 * ropegrad's protocol before issue 26, kept to measure what each point moves
 * (rg_settle's: a diagnosis, the GPU idle before every timed call). */
typedef enum {
    RG_RESTAGE_ON = 0,      /* inputs re-copied before every warmup and timed iteration at a shifted address */
    RG_RESTAGE_OFF = 1      /* the same device buffers every iteration */
} rg_restage;
typedef enum {
    RG_SPAN_ALL = 0,        /* the sample spans every GPU activity the call issued (kernels, memcpy, memset) */
    RG_SPAN_KERNELS = 1     /* kernels only */
} rg_span;
typedef enum {
    RG_SYNC_ITERATION = 0,  /* the host synchronizes after every timed iteration */
    RG_SYNC_END = 1         /* iterations enqueued back to back, one synchronization at the end */
} rg_sync;
typedef enum {
    RG_SETTLE_OFF = 0,      /* the timed call issued right after the cold-L2 flush is enqueued */
    RG_SETTLE_ON = 1        /* the host waits for the flush (the stream) before issuing the timed call */
} rg_settle;

/* The switch's word ("on"/"off", "all"/"kernels", "iteration"/"end"). */
const char *rg_restage_name(rg_restage v);
const char *rg_span_name(rg_span v);
const char *rg_sync_name(rg_sync v);
const char *rg_settle_name(rg_settle v);   /* "off"/"on" */
/* The word into *v: 0, or 1 for anything else (v untouched). */
int rg_restage_parse(const char *s, rg_restage *v);
int rg_span_parse(const char *s, rg_span *v);
int rg_sync_parse(const char *s, rg_sync *v);
int rg_settle_parse(const char *s, rg_settle *v);
/* What a switch's recorded word means, one line (the record, the run page).
 * An empty or NULL word is a record made before the switch existed: the
 * line says so and what the harness did then. */
const char *rg_restage_text(const char *word);
const char *rg_span_text(const char *word);
const char *rg_sync_text(const char *word);
const char *rg_settle_text(const char *word);

/* ---- runs -------------------------------------------------------------------- */

/* A workload's sizes as text: B, S and D, then each named axis of op as
 * name=value ("B=2 S=512 D=128 num_heads=32 num_kv_heads=8"). */
void rg_axes_text(const rg_op *op, const rg_workload *w, char *dst, size_t n);

typedef struct rg_time_stats {
    double mean, median, min, max, stddev;   /* nanoseconds */
} rg_time_stats;

void rg_time_stats_compute(const double *samples, int n, rg_time_stats *st);
/* rg_time_stats_compute over the finite values of values[n] (NAN marks "none"); returns how many
 * there were (0: *st all zero). */
int rg_time_stats_finite(const double *values, int n, rg_time_stats *st);

typedef struct rg_workload_result {
    int index;
    char uuid[64];
    int64_t batch_size, seq_len, head_dim;
    int64_t axes[RG_OP_MAX_AXES];  /* the op's named axes (rg_op.axes), in its order */
    char sizes[160];               /* every axis, e.g. "B=2 S=512 D=128 num_heads=32 num_kv_heads=8" (rg_axes_text) */
    double bytes;                  /* rg_workload_bytes */
    rg_check check;                /* against the run's ground truth, worst of its rounds */
    rg_check yardstick;            /* round 0 against float64 when the ground truth is float32-reference */
    int have_yardstick;
    int rounds_run;                /* correctness rounds made (fewer when one failed) */
    int reward_hack;               /* 1 when check.reason names a reward-hack check that tripped */
    int timed;                     /* 0 for `ropegrad check` */
    rg_time_stats time_ns;
    double *samples_ns;            /* iterations entries, owned */
    int n_samples;
    double gbps;                   /* bytes / median time */
    double sol_ms, baseline_ms;    /* copied from the workload (NAN when absent) */
    char timer[16];                /* how this workload was timed ("cupti", "cuda-events", "wall-clock", "" untimed) */
    /* CUPTI: the GPU activities inside the first timed iteration's span, by
     * kind (with --span kernels, memcpy and memset are not counted); -1 when
     * not timed with CUPTI. */
    int span_kernels, span_memcpy, span_memset;
    /* CUPTI: the median over timed iterations of the GPU idle time between
     * the end of the latest GPU activity that ended before the iteration's
     * first activity (in practice the harness's cold-L2 flush memset) and that
     * first activity's start (under the run's --span), in microseconds
     * (flush_gap.h); NAN when not computed (CUDA events, the CPU, no activity
     * before any iteration's first). */
    double flush_gap_us;
} rg_workload_result;

/* What a run measured on, sampled at its start and its end. */
typedef struct rg_env {
    char hostname[128];
    char os[256];                  /* uname -srm */
    char cpu_model[256];
    int cpu_threads;               /* threads used by the CPU path */
    char cpu_isa[32];              /* ropegrad_cpu_isa() */
    char gpu_name[128];            /* "" on CPU runs */
    char gpu_arch[16];             /* "sm_90" */
    int gpu_sm_count;
    int64_t gpu_l2_bytes;
    double gpu_mem_bandwidth_gbps; /* from the device's bus width and memory clock, 0 if unknown */
    char driver_version[32];
    char cuda_runtime_version[32];
    int sm_clock_mhz_start, sm_clock_mhz_end;   /* -1 when unknown (NVML missing) */
    int mem_clock_mhz_start, mem_clock_mhz_end;
    char ropegrad_version[32];
    char build_flags[512];         /* compiler, flags, CUDA archs (from the build) */
    int load_known;                /* CPU runs: the machine's load before the run was read */
    double load_avg_1m;            /* its 1-minute load average (getloadavg) */
    int load_cpus;                 /* online CPUs it compares with */
    rg_cpu_share cpu_share;        /* CPU runs: what other processes took over the run (cpu_share.h) */
} rg_env;

typedef struct rg_run_options {
    const char *backend;           /* "auto", "cpu" or "cuda" */
    int kernel;                    /* CUDA kernel version, 0 = default */
    int threads;                   /* CPU threads, 0 = all */
    int warmup, iterations;        /* defaults 10 and 50 */
    uint64_t seed;                 /* default 200, the suite's */
    rg_inputs_kind inputs;
    int timed;                     /* 0: correctness only (`ropegrad check`) */
    int verbose;                   /* 1: progress lines on stderr; 0: none; -1 (--quiet): no notes either */
    double timeout_s;              /* CUDA: how long one launch may run before the workload fails "timed out"
                                      and the run stops (0 = no limit) */
    int rounds;                    /* correctness rounds of fresh seeded inputs (default 10; rounds.c) */
    rg_ground_truth ground_truth;  /* default float64 */
    rg_restage restage;            /* CUDA timing (above): default on, all, iteration, off */
    rg_span span;
    rg_sync sync;
    rg_settle settle;
} rg_run_options;

void rg_run_options_default(rg_run_options *o);

typedef struct rg_run_result {
    char suite[256];
    char suite_dir[4096];
    char op[8];                    /* the op's id ("011", "012", "014") */
    char reference[128];           /* what the float64 reference is (rg_op.reference) */
    const char *axis_names[RG_OP_MAX_AXES];   /* the op's named axes (rg_op.axes; static strings), NULL after the last */
    char backend[16];              /* resolved: "cpu" or "cuda" */
    int kernel;
    char kernel_name[64];
    char device[256];              /* GPU name, or CPU model + threads */
    char timer[64];                /* "cupti", "cuda-events" or "wall-clock" */
    char cold_l2[128];             /* how L2 was flushed before each iteration */
    char inputs[16];               /* "normal" or "positions" */
    int warmup, iterations;
    uint64_t seed;
    int rounds;                    /* correctness rounds asked for (rg_run_options.rounds) */
    rg_ground_truth ground_truth;
    rg_restage restage;            /* CUDA: the timing switches as run (rg_run_options); the CPU ignores them */
    rg_span span;
    rg_sync sync;
    rg_settle settle;
    char same_kernels[128];        /* CUDA: the same-kernels check, in words ("checked ...", "did not run ...");
                                      "" on the CPU */
    char started_at[32];           /* ISO 8601 UTC */
    rg_env env;
    rg_workload_result *workloads;
    size_t n_workloads;
    int passed, total;
    double mean_ns, geomean_ns;    /* over the per-workload medians */
    char stopped[128];             /* why the run stopped early (the GPU lost: a CUDA fault, or a kernel past
                                      the timeout; the rest fail "not run"); "" when every workload ran */
    const struct rg_impl *impl;    /* the plugin measured (--impl, impl.h); NULL for ropegrad's own kernels; not owned */
} rg_run_result;

/* ---- the CPU timer (run.c): the protocol's CPU timing, for any code to time --------- */

/* Cold cache on the CPU: a buffer of twice the last-level cache (64 MiB when
 * its size is unknown, at most 1 GiB), written whole and read once per line
 * before every call, so the call's working set starts in DRAM (the CPU's
 * counterpart of the GPU protocol's cold L2). */
typedef struct rg_cpu_timer {
    unsigned char *buf;
    size_t bytes;
    char cold[128];                /* how the cache is flushed, in words (rg_run_result.cold_l2) */
} rg_cpu_timer;

/* Allocates and faults in the flush buffer. Returns 0, or 1 with a message. */
int rg_cpu_timer_open(rg_cpu_timer *t, char *err, size_t errlen);
void rg_cpu_timer_close(rg_cpu_timer *t);

/* The protocol's CPU loop: warmup + iterations calls of fn(ctx), the cache
 * flushed before each and each call timed with CLOCK_MONOTONIC; the last
 * iterations times go to samples_ns[iterations] (rg_time_stats_compute gives
 * the median). Stops at the first non-zero status fn returns and returns it
 * (samples_ns then incomplete); -1 on bad arguments. */
typedef int (*rg_cpu_timed_fn)(void *ctx);
int rg_cpu_timer_run(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns);
/* rg_cpu_timer_run with stage(ctx) (NULL: none) called before each flush,
 * untimed: what the call needs made beforehand (an in-process
 * implementation's arguments, rg_op.stage); a non-zero status stops the loop
 * as fn's does. */
int rg_cpu_timer_run_staged(rg_cpu_timer *t, int warmup, int iterations, rg_cpu_timed_fn stage, rg_cpu_timed_fn fn,
                            void *ctx, double *samples_ns);
/* The same loop with no flush between calls: not the protocol, a diagnosis of
 * what the flush costs (bench/cpu_floor.c's "no flush" column). */
int rg_cpu_timer_run_warm(int warmup, int iterations, rg_cpu_timed_fn fn, void *ctx, double *samples_ns);

/* One call of an op's CPU path, as an rg_cpu_timed_fn: rg_cpu_call_run(&call). */
typedef struct rg_cpu_call {
    const rg_op *op;
    const rg_tensors *in;
    void *out;
    int threads;
} rg_cpu_call;
int rg_cpu_call_run(void *ctx);
/* The op's stage for that call (rg_op.stage with no stream), as an rg_cpu_timed_fn; 0 when it has none. */
int rg_cpu_call_stage(void *ctx);

/* Runs the workloads whose indices are listed (all when n_indices == 0).
 * Returns 0 when the run completed (whether or not workloads passed), non-zero
 * with a message on a usage or system error. */
int rg_run_suite(const rg_suite *s, const int *indices, size_t n_indices, const rg_run_options *o,
                 rg_run_result *out, char *err, size_t errlen);
void rg_run_result_free(rg_run_result *r);

/* The result as a table on f (the one bench and check print). A run without
 * timing (`check`) has no timing columns or lines. */
void rg_run_print_table(const rg_run_result *r, void *file /* FILE * */);

/* The result on f as format: "table" (the above), "md" (a Markdown table),
 * "csv" (RFC 4180, a header row) or "json" (the bench JSON document).
 * Returns 0, or 1 with a message (an unknown format, a write error). */
int rg_run_print_format(const rg_run_result *r, const char *format, void *file /* FILE * */, char *err,
                        size_t errlen);

/* The result as the bench JSON document. Writes to a temporary file beside
 * path and renames it into place: never a partial file. */
int rg_run_write_json(const rg_run_result *r, const char *path, char *err, size_t errlen);

#endif /* ROPEGRAD_HARNESS_H */
