/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.h -- what a run is given and what it produces, as plain data: the
 * suite as loaded (its workloads and tolerances), the run's options and the
 * words of the protocol's switches, the checks, the times, the environment.
 *
 * The layer below the harness, the record and the index (src/result/): the
 * harness fills these structs (harness.h), the record turns them into
 * manifests and the index shows the switches' words, so neither needs the
 * harness. Nothing here runs anything: the words, their texts and freeing.
 */
#ifndef ROPEGRAD_RESULT_H
#define ROPEGRAD_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "ropegrad.h"
#include "ropegrad_impl.h"

#define RG_ERRLEN 512
/* ropegrad's version as ropegrad_version() returns it, from the library's
 * header: for the layers that do not link the library (the record, the index). */
#define RG_VERSION_STR2_(x) #x
#define RG_VERSION_STR_(x) RG_VERSION_STR2_(x)
#define RG_ROPEGRAD_VERSION                                                                                   \
    RG_VERSION_STR_(ROPEGRAD_VERSION_MAJOR) "." RG_VERSION_STR_(ROPEGRAD_VERSION_MINOR) "." RG_VERSION_STR_( \
        ROPEGRAD_VERSION_PATCH)
/* Named workload axes an op may declare beyond batch_size and seq_len. */
#define RG_OP_MAX_AXES 4

struct rg_op;

/* ---- the suite, as loaded (the harness's rg_suite_load) ---------------------- */

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
    double bytes;                  /* bytes any kernel must move (the op's rg_op.bytes at the suite's grad dtype) */
} rg_workload;

typedef struct rg_suite {
    char name[256];                /* definition.json "name" */
    char dir[4096];                /* the folder it was loaded from */
    const struct rg_op *op;        /* the op named by definition.json "name" (the harness's op.h) */
    const char *const *axis_names; /* the op's named axes (rg_op.axes; static strings), NULL-ended, or NULL */
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

void rg_suite_free(rg_suite *s);

/* ---- the run's options -------------------------------------------------------- */

typedef enum {
    RG_INPUTS_NORMAL = 0,    /* every tensor standard normal, like the dataset */
    RG_INPUTS_POSITIONS = 1  /* real training inputs, attention_scaling 1. 014: emb =
                                position * inv_freq, inv_freq = theta^(-2d/D) with
                                theta 1e6, positions up to 262144; 011 and 012: see
                                their rows (src/harness/ops/rope_forward.c, cos_sin.c) */
} rg_inputs_kind;

/* What outputs are checked against: ropegrad's float64 reference, or the
 * definition's reference computed in float32 as the official evaluator does
 * on the GPU (`--ground-truth float32-reference|float64`). */
typedef enum { RG_TRUTH_FLOAT64 = 0, RG_TRUTH_FLOAT32_REFERENCE = 1 } rg_ground_truth;

const char *rg_ground_truth_name(rg_ground_truth g);
/* "float64" or "float32-reference" into *g: 0, or 1 for anything else. */
int rg_ground_truth_parse(const char *s, rg_ground_truth *g);

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

/* What a run is asked to do (the harness's rg_run_options_default fills the defaults). */
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

/* ---- results -------------------------------------------------------------------- */

typedef struct rg_check {
    int pass;
    double max_abs_err, max_rel_err, matched_ratio;
    int64_t n, n_matched, n_nonfinite;
    int64_t n_abs_only;            /* matched only through atol: |out-ref| > rtol*|ref| (a reference near 0) */
    char reason[128];              /* why it failed; "" when it passed */
} rg_check;

typedef struct rg_time_stats {
    double mean, median, min, max, stddev;   /* nanoseconds */
} rg_time_stats;

/* CPU runs: what other processes took over the run (the harness's cpu_share.h measures it). */
typedef struct rg_cpu_share {
    int known;                  /* 1 when measured */
    double other_cpus;          /* CPUs other processes (steal included) used on average over the span */
    double steal_cpus;          /* CPUs the hypervisor took (steal) on average over the span */
    double span_s;              /* the span's wall time, seconds */
} rg_cpu_share;

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

/* A plugin measured (--impl), as the record names it: the CLI fills it from
 * the harness's rg_impl and the record hashes its files (rg_impl_hash_files). */
#define RG_IMPL_MAX_SOURCES 64
typedef struct rg_run_impl {
    char path[4096];                         /* the library as given to --impl */
    char name[ROPEGRAD_IMPL_MAX_NAME + 1];   /* the descriptor's, checked */
    char version[ROPEGRAD_IMPL_MAX_NAME + 1];
    char label[2 * ROPEGRAD_IMPL_MAX_NAME + 2]; /* "name version": the run's kernel name */
    char backend[8];                         /* "cpu" or "cuda" */
    const char *sources[RG_IMPL_MAX_SOURCES];/* --impl-source files, as given (not owned) */
    size_t n_sources;
    const char *meta_json;                   /* an in-process implementation's JSON object, NULL for a library */
    int embedded;                            /* 1 for an in-process implementation */
    /* Lower-case hex SHA-256 of the library's bytes and of each source's. */
    char file_sha256[65];
    char source_sha256[RG_IMPL_MAX_SOURCES][65];
} rg_run_impl;

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
    const rg_run_impl *impl;       /* the plugin measured (--impl), as the record names it; NULL for ropegrad's
                                      own kernels; not owned */
} rg_run_result;

void rg_run_result_free(rg_run_result *r);

/* ---- times (stats.c) ---------------------------------------------------------------- */

void rg_time_stats_compute(const double *samples, int n, rg_time_stats *st);
/* rg_time_stats_compute over the finite values of values[n] (NAN marks "none"); returns how many
 * there were (0: *st all zero). */
int rg_time_stats_finite(const double *values, int n, rg_time_stats *st);
/* Fills the time statistics, samples and GB/s of a timed workload from
 * samples_ns (ownership passes to wr). */
void rg_result_set_samples(rg_workload_result *wr, double *samples_ns, int n);

#endif
