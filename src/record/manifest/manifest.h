/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest.h -- a manifest parsed once into a C struct (the typed reader).
 *
 * The envelope is the public KernelIndex record's (../shared/kernelindex):
 * one JSON object whose members are KernelIndex objects keyed by role --
 * run (BenchmarkRun), protocol (BenchmarkProtocol), environment
 * (ExecutionEnvironment) and, in ropegrad's own manifests, workload
 * (Workload) and implementation (Implementation) -- each
 * {apiVersion: "kernelindex.dev/v1alpha1", kind, metadata, spec}; plus an
 * optional top-level `signatures` array (see sign.c), which no digest covers.
 * Every digest is "sha256:" + hex SHA-256 of the RFC 8785 form of the object
 * without its metadata member, i.e. of {apiVersion, kind, spec}.
 *
 * Registry, replicate, CLI and report read manifests only through this
 * struct. metadata (name, title, labels) is kept for display only: no figure
 * shown or ranked comes from it. Absent numbers are NAN, absent text "".
 */
#ifndef ROPEGRAD_MANIFEST_H
#define ROPEGRAD_MANIFEST_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "jcs.h"   /* RG_DIGEST_LEN */

enum rg_role { RG_ROLE_RUN, RG_ROLE_PROTOCOL, RG_ROLE_ENVIRONMENT, RG_ROLE_WORKLOAD, RG_ROLE_IMPLEMENTATION, RG_N_ROLES };

/* The member name of a role ("run", ...) and the kind its object has. */
const char *rg_role_name(int role);
const char *rg_role_kind(int role);

#define RG_MF_MAX_KV 16
typedef struct rg_kv {
    char key[64];
    char value[256];
} rg_kv;

typedef struct rg_named_value {
    char name[32];
    double value;
} rg_named_value;

typedef struct rg_mf_object {
    int present;
    char name[128], title[256];         /* metadata: display only */
    rg_kv labels[RG_MF_MAX_KV];
    size_t n_labels;
    char digest[RG_DIGEST_LEN];         /* computed from this file */
} rg_mf_object;

/* One workload row (ropegrad's manifests; none in an imported record). */
typedef struct rg_mf_workload {
    int index;
    char uuid[64];
    rg_named_value axes[8];
    size_t n_axes;
    double attention_scaling, max_atol, max_rtol, required_matched_ratio, max_error_cap;
    double median, min, max, mean, stddev, bytes, gbps;
    double *samples;                    /* malloc'd, n_samples */
    size_t n_samples;
    double t_sol_ns, t_b_ns, sol_score, speedup;
    int pass;
    double max_abs_err, max_rel_err, matched_ratio, n, n_matched, n_nonfinite;
    char reason[256];
} rg_mf_workload;

typedef struct rg_mf_signature {
    char key_id[80], algorithm[16], public_key[64], value[200];
} rg_mf_signature;

typedef struct rg_manifest {
    rg_mf_object obj[RG_N_ROLES];

    /* run.spec */
    char status[16];
    rg_named_value latency_ns[8];       /* timing.latencyNs by statistic */
    size_t n_latency;
    char primary_statistic[32];
    double primary_ns;                  /* latencyNs[primaryStatistic] */
    char observed_at[40];
    char source[64], benchmark[256], external_id[128];   /* sourceNative */
    double sol_score, latency_ms, avg_speedup, fast_1_count, fast_1_total;  /* sourceNative.metrics */
    char protocol_digest[RG_DIGEST_LEN], workload_digest[RG_DIGEST_LEN], environment_digest[RG_DIGEST_LEN],
        implementation_digest[RG_DIGEST_LEN];   /* as recorded in run.spec */
    char comparison_key[RG_DIGEST_LEN];         /* recorded, else by the written rule */
    int comparison_key_recorded;
    int have_detail;                    /* run.spec.ropegrad present (ropegrad's own run) */
    int passed, total;                  /* -1 when unknown */
    char t_sol_mode[32], t_sol_detail[512], baseline_mode[32];
    char baseline_name[256], baseline_file[256], baseline_format[32], baseline_digest[RG_DIGEST_LEN];
    char figures_file[256], figures_gpu[64];
    double suite_geomean_ns, suite_mean_ns;

    /* protocol.spec */
    char harness_name[128], harness_version[64];
    char correctness_reference[256], correctness_comparator[128], correctness_element[512];
    char timer[64], measurement_statistic[32];
    char family[256], family_notes[1024];
    char definition[256];
    int warmup, iterations;             /* -1 when unknown */
    int rounds;                         /* correctness.rounds, -1 when unknown (older records: one round) */
    char ground_truth[32];              /* correctness.groundTruth, "" when unknown (older records: float64) */
    char seed[32], inputs[32], cold_l2[256];
    /* measurement.restage, span, sync, settle, sameKernelsCheck (CUDA runs);
     * "" when absent: a CPU run, or a CUDA run recorded before them (then:
     * the same buffers, kernels only, one sync at the end, no settling, no
     * check; rg_*_text). */
    char restage[16], span[16], sync[16], settle[16], same_kernels[128];

    /* environment.spec */
    char vendor[64], product[256], architecture[64];
    rg_kv libraries[RG_MF_MAX_KV];
    size_t n_libraries;
    char hostname[256], os[256], cpu_model[256], cpu_isa[32];
    int cpu_threads, gpu_sm_count;
    double load_avg_1m;                 /* CPU runs: the 1-minute load average when recorded; NAN unknown */
    int online_cpus;                    /* the CPUs it was measured against; -1 unknown */
    double other_cpus;                  /* CPU runs: CPUs other processes used over the run; NAN not measured */
    double steal_cpus;                  /* CPU runs: CPUs steal took over the run; NAN not measured */
    double share_seconds;               /* the span those two were measured over; NAN not measured */
    double sm_clock_start, sm_clock_end, mem_clock_start, mem_clock_end;

    /* implementation.spec */
    char impl_name[64], impl_version[64], backend[16], kernel_name[64], sources_digest[RG_DIGEST_LEN];
    char build_flags[1024];
    int kernel;                         /* -1 when unknown */
    char git_commit[48];                /* implementation.spec.revision: the git commit built, "" when unknown */
    int git_dirty;                      /* 1 the checkout had local changes, 0 clean, -1 unknown */

    rg_mf_workload *workloads;          /* malloc'd */
    size_t n_workloads;

    rg_mf_signature signatures[8];
    size_t n_signatures;
} rg_manifest;

/* Parses a manifest document into *m (strictly shaped: the envelope, each
 * object's apiVersion/kind/spec, known roles only) and computes the digest of
 * every object present. It checks nothing else: rg_manifest_verify does.
 * Returns 0, or 2 with a one-line message (m is then freed). */
int rg_manifest_read(const cJSON *doc, rg_manifest *m, char *err, size_t errlen);
/* The same; with RG_MF_NO_DIGESTS the objects' digests are not computed (left
 * ""): for showing a stored run, which was verified when it was stored and
 * whose run digest the registry row carries. Never for verifying. */
#define RG_MF_NO_DIGESTS 1
int rg_manifest_read_opts(const cJSON *doc, rg_manifest *m, int flags, char *err, size_t errlen);
void rg_manifest_free(rg_manifest *m);

/* The comparison key by the written rule (README): "sha256:" + SHA-256 of the
 * RFC 8785 form of {definition, workloadDigest, family, timer, statistic,
 * product}, from sourceNative.benchmark, run.spec.workloadDigest, the
 * protocol's comparability.family, measurement.timer and primaryStatistic and
 * the environment's hardware.product. */
int rg_comparison_key(const rg_manifest *m, char out[RG_DIGEST_LEN], char *err, size_t errlen);

/* What verify found for one role's digest. */
enum { RG_DIGEST_MATCH, RG_DIGEST_MISMATCH, RG_DIGEST_NOT_RECOMPUTABLE };
typedef struct rg_verify_report {
    int state[RG_N_ROLES];
    char recorded[RG_N_ROLES][RG_DIGEST_LEN], computed[RG_N_ROLES][RG_DIGEST_LEN];
} rg_verify_report;

#endif
