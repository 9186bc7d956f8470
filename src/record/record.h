/*
 * record.h -- every run becomes a verifiable record.
 *
 * A manifest is one JSON document with three KernelIndex-style objects
 * (BenchmarkRun, BenchmarkProtocol, ExecutionEnvironment), each
 * {apiVersion: kernelindex.dev/v1alpha1, kind, metadata, spec}, whose digests
 * are "sha256:" + hex SHA-256 of the spec serialized per RFC 8785 (JCS).
 * Runs are kept in a local SQLite registry (default ./ropegrad-runs.db,
 * --db FILE or $ROPEGRAD_DB) and ranked, compared, replicated, reported.
 */
#ifndef ROPEGRAD_RECORD_H
#define ROPEGRAD_RECORD_H

#include <stdint.h>

#include "harness.h"

typedef struct rg_record_options {
    int record;                    /* bench --record: store the run in the registry */
    const char *db_path;           /* NULL: $ROPEGRAD_DB, else ./ropegrad-runs.db */
    const char *manifest_path;     /* bench --manifest FILE, NULL for none */
    const char *baseline_path;     /* bench --baseline FILE, NULL for none */
} rg_record_options;

/* Called by `ropegrad bench` after a completed run when --record or
 * --manifest is given. Builds the manifest, writes it (atomically) and/or
 * stores it; *run_id gets the registry id (0 when not stored).
 * Returns 0, or non-zero with a one-line message. */
int rg_record_bench(const rg_run_result *r, const rg_suite *s, const rg_record_options *o,
                    int64_t *run_id, char *err, size_t errlen);

#endif /* ROPEGRAD_RECORD_H */
