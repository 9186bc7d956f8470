/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalog.h -- KernelIndex's catalog export, read strictly.
 *
 * KernelIndex publishes its whole catalog as JSON lines, zstd-compressed
 * (registry/exports/catalog-DATE-HASH.jsonl.zst; ../shared/kernelindex/
 * README.md): each line is {"table": T, "row": {...}}. Every table this
 * reader knows is parsed into its struct below: each member of the row must
 * be one the table has, of its type (a string, a number, true/false, an
 * object, an array of strings; null only where the export writes null), and
 * every member must be there. A table it does not know (the serving tables,
 * a later one) is skipped and counted. A line that breaks any rule stops the
 * read with one line: "FILE:LINE: TABLE.FIELD: what is wrong".
 *
 * The file may be plain JSON lines or zstd-compressed (".zst"; libzstd,
 * streamed: the export is 49 MB as text).
 */
#ifndef ROPEGRAD_CATALOG_H
#define ROPEGRAD_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* At most this many bytes in one line of the file. */
#define RG_CATALOG_MAX_LINE ((size_t)16 << 20)

/* Text members are malloc'd ("" never NULL; a null member is ""). Numbers:
 * NAN when null; counts -1 when null. */
typedef struct rg_ki_source {
    char *id, *slug, *kind, *name, *created_at;
    int has_policy;
} rg_ki_source;

typedef struct rg_ki_project {
    char *id, *slug, *name, *normalized_name, *canonical_url, *license, *created_at;
} rg_ki_project;

typedef struct rg_ki_operation {
    char *id, *slug, *family, *name, *schema_version, *semantic_digest, *created_at, *supersedes_id;
    char *tags;                     /* the tags joined by ", " */
} rg_ki_operation;

typedef struct rg_ki_alias {
    char *operation_id, *alias;
} rg_ki_alias;

typedef struct rg_ki_workload {
    char *id, *operation_id, *workload_digest, *schema_version, *shape_summary, *created_at;
    char *dtypes, *layout_keys;     /* joined by ", " */
} rg_ki_workload;

typedef struct rg_ki_implementation {
    char *id, *project_id, *operation_id, *slug, *implementation_digest, *source_revision, *language, *framework;
    char *license, *title, *install_kind, *install_command, *license_declared, *created_at, *supersedes_id;
    char *target_architectures;     /* joined by ", " */
    char *authors;                  /* manifest.metadata.authors[].name joined by ", " ("" when none) */
    int source_available, installable;
} rg_ki_implementation;

typedef struct rg_ki_run {
    int line;                       /* its line in the file */
    char *id, *run_digest, *implementation_id, *workload_id, *source_id, *status, *observed_at, *published_at;
    char *hardware_vendor, *hardware_model, *hardware_architecture;
    char *protocol_key, *environment_key, *correctness_key, *comparison_key;
    char *primary_metric, *primary_unit, *primary_statistic, *license, *environment_summary;
    char *supersedes_id, *retracted_at, *retraction_reason;
    double primary_value, uncertainty_low, uncertainty_high;
    int64_t driver_major, cuda_major, sample_count, replications;
    int reported, reproduced, source_available, installable, has_raw_evidence, source_native;
    cJSON *manifest;                /* the envelope (run, protocol, environment), as read */
} rg_ki_run;

typedef struct rg_ki_measurement {
    char *id, *run_id, *metric, *statistic, *unit;
    double value;
    int64_t sample_count;
} rg_ki_measurement;

typedef struct rg_ki_record_event {
    char *id, *comparison_key, *run_id, *previous_run_id, *policy_version, *cause, *at, *created_at;
} rg_ki_record_event;

typedef struct rg_ki_artifact {
    char *id, *content_digest, *kind, *media_type, *storage, *uri, *license, *created_at;
    int64_t size_bytes;
} rg_ki_artifact;

/* A table the reader skipped, with its row count. */
typedef struct rg_ki_skipped {
    char table[64];
    size_t rows;
} rg_ki_skipped;

typedef struct rg_catalog {
    rg_ki_source *sources;
    rg_ki_project *projects;
    rg_ki_operation *operations;
    rg_ki_alias *aliases;
    rg_ki_workload *workloads;
    rg_ki_implementation *implementations;
    rg_ki_run *runs;
    rg_ki_measurement *measurements;
    rg_ki_record_event *events;
    rg_ki_artifact *artifacts;
    size_t n_sources, n_projects, n_operations, n_aliases, n_workloads, n_implementations, n_runs,
        n_measurements, n_events, n_artifacts;
    size_t lines;                   /* lines read */
    rg_ki_skipped skipped[32];      /* tables not known, in order of first appearance */
    size_t n_skipped, skipped_rows;
} rg_catalog;

/* Reads path (plain, or zstd when it starts with zstd's magic number).
 * 0, or 2 with one line naming the file, the line and the field (out is
 * then empty). */
int rg_catalog_read(const char *path, rg_catalog *out, char *err, size_t errlen);
void rg_catalog_free(rg_catalog *c);

/* s for a one-line message: at most n - 1 bytes, control bytes as '?'. Returns out. */
const char *rg_catalog_printable(const char *s, char *out, size_t n);

#endif
