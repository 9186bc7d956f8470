/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalog_import.h -- the benchmark runs of a KernelIndex catalog (catalog.h)
 * into the registry, all or nothing (`ropegrad runs import-catalog`).
 *
 * The passed runs of the operations asked for (by name, alias or slug) are
 * taken in file order (a run that did not pass -- runtime_error,
 * compile_error -- has no figure and is counted, not taken). The row's
 * runDigest, protocolKey and environmentKey are first recomputed from its
 * manifest by the digest rule (rg_object_digest): a mismatch stops the
 * import. A manifest whose digests hold but which ropegrad's reader then
 * refuses (a KernelBot score in measurements[], no latencyNs) is counted and
 * its first reason given, not taken. Each run's manifest is verified as `runs import` verifies
 * a manifest (rg_manifest_parse_verified: the digest rule, the figures that
 * follow from others, observedAt), and the row's own runDigest, protocolKey
 * and environmentKey must be the digests computed from it. It is stored as
 * an imported run with its bytes as the export holds them, and what the
 * catalog says beside the manifest is stored with it (rg_run_source_facts):
 * the project and authors, the implementation's title and source revision,
 * publishedAt, KernelIndex's trust columns, retraction and supersession, and
 * the source's rank: among the file's passed runs of the same KernelIndex
 * comparison key that are neither retracted nor superseded, by primaryValue
 * (lower is better: a latency or a time score), ties sharing a rank.
 * A run already stored (same run digest) is not stored again and its facts
 * are only written when they changed: a second import changes nothing.
 */
#ifndef ROPEGRAD_CATALOG_IMPORT_H
#define ROPEGRAD_CATALOG_IMPORT_H

#include <stddef.h>

#include "catalog.h"
#include "record.h"

typedef struct rg_catalog_import_opts {
    const char *const *operations;  /* names, aliases or slugs of the operations to import */
    size_t n_operations;
    int all_operations;             /* every operation of the file instead */
    int require_all;                /* a name that matches no operation is an error (else it is skipped) */
} rg_catalog_import_opts;

typedef struct rg_catalog_import_result {
    size_t operations;              /* operations matched */
    size_t runs;                    /* runs of them verified */
    size_t stored, already, updated;   /* new runs; runs already stored; of those, facts that changed */
    size_t retracted, superseded;   /* of the runs taken */
    size_t not_passed;              /* runs of those operations not taken: a status other than passed
                                       (runtime_error, compile_error: no figure to hold) */
    size_t unreadable;              /* runs whose digests verify but whose manifest ropegrad's reader
                                       refuses (e.g. a score in measurements[], no latencyNs): not taken */
    char unreadable_why[256];       /* the first such run's line and reason */
} rg_catalog_import_result;

/* Imports c (read from path, which messages name) into g in one
 * transaction. 0; 1 a run does not verify; 2 bad input or a registry error
 * (nothing stored then); err says which line and field in one line. */
int rg_catalog_import(rg_registry *g, const rg_catalog *c, const char *path, const rg_catalog_import_opts *o,
                      rg_catalog_import_result *res, char *err, size_t errlen);

#endif
