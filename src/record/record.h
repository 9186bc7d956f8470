/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record.h -- every run becomes a verifiable record.
 *
 * A manifest is the public KernelIndex record's envelope (manifest.h): one
 * JSON object of KernelIndex objects keyed by role (run, protocol,
 * environment, workload, implementation), each {apiVersion:
 * kernelindex.dev/v1alpha1, kind, metadata, spec}, whose digests are
 * "sha256:" + hex SHA-256 of the object without metadata per RFC 8785 (JCS).
 * Runs are kept in a local SQLite registry (default
 * $XDG_DATA_HOME/ropegrad/runs.db, else ~/.local/share/ropegrad/runs.db;
 * --db FILE or $ROPEGRAD_DB override) and ranked, compared, replicated, reported.
 *
 * Files, one folder per job (this header is the interface):
 *   record.c     rg_record_bench (what `bench --record/--manifest` calls)
 *   manifest/    the envelope: manifest_envelope.c (roles and kinds, the
 *                digest rule, old bundles told apart), manifest.c (the typed
 *                reader, manifest.h; verify), manifest_build.c (building
 *                manifests; converting old ManifestBundle files), ident.c
 *                (identifiers), impl_plugin.c (a plugin's files), untimed.c
 *   registry/    the SQLite registry, by job: open (schema, migrations), sql
 *                (errors, retries), store, query, notes, copies
 *                (registry_internal.h is what they share), stmt_cache.c
 *   stats/       rank.c (ranks, rank.h), gate.c, compare_stats.c
 *                (distribution-free comparison of two runs' samples),
 *                replicate.c (re-running a recorded protocol through the
 *                runner the CLI gives: the record knows nothing of the
 *                harness), sol.c (the SOL score, the datasheet bandwidth
 *                table, baseline files), sol_check.c (the index's own T_SOL),
 *                credible.c (what the index checks itself: latencies,
 *                observedAt, run order)
 *   sign/        Ed25519 signatures over the run digest (OpenSSL)
 *   import/      the official evaluator's traces as a run (traces.h, traces_import.h)
 *   (the HTML pages, report included, are src/index/'s: one renderer; JCS,
 *   strict JSON and RFC 3339 are src/util/'s)
 *
 * Every function that can fail returns 0 or non-zero and writes a one-line
 * message into err[errlen].
 */
#ifndef ROPEGRAD_RECORD_H
#define ROPEGRAD_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "atomic_file.h"
#include "compare_stats.h"
#include "jcs.h"
#include "manifest.h"
#include "result.h"
#include "rfc3339.h"
#include "strict_json.h"

#define RG_API_VERSION "kernelindex.dev/v1alpha1"

typedef struct rg_record_options {
    int record;                    /* bench --record: store the run in the registry */
    const char *db_path;           /* NULL: rg_registry_path's default */
    const char *manifest_path;     /* bench --manifest FILE, NULL for none */
    const char *baseline_path;     /* bench --baseline FILE, NULL for none */
    const char *sign_key;          /* bench --sign KEY: Ed25519 private key, NULL for none */
} rg_record_options;

/* Called by `ropegrad bench` after a completed run when --record or
 * --manifest is given. Builds the manifest, writes it (atomically) and/or
 * stores it; *run_id gets the registry id (0 when not stored).
 * Returns 0, or non-zero with a one-line message. */
int rg_record_bench(const rg_run_result *r, const rg_suite *s, const rg_record_options *o,
                    int64_t *run_id, char *err, size_t errlen);

/* Before a run with --record: an existing registry that cannot take it
 * (corrupt, foreign, newer, read-only), or an absent one that cannot be
 * created there (no such folder can be made, not a folder, not writable),
 * is refused now, not after the run. Creates nothing. Returns 0, or 2 with
 * a one-line message. */
int rg_record_precheck(const rg_record_options *o, char *err, size_t errlen);

/* ---- the implementation digest (generated at build time) ------------------ */

/* "sha256:..." over include/ropegrad.h, src/op/{*.c,*.cu,*.cuh,*.h} and the
 * build flags this binary was built with (see src/record/record.cmake). */
const char *rg_implementation_digest(void);
/* The build flags that entered the digest, as one line. */
const char *rg_implementation_flags(void);
/* The git commit this binary was built from ("" when not built from a git
 * checkout) and whether tracked files had local changes (1), not (0) or
 * unknown (-1); see src/record/revision.cmake. */
const char *rg_build_git_commit(void);
int rg_build_git_dirty(void);

/* ---- a plugin's record (impl_plugin.c) -------------------------------------- */

/* Hashes the plugin's library and its --impl-source files into
 * impl->file_sha256 / source_sha256. Returns 0, or 1 with one line (a file
 * that cannot be read, or is not a regular file). */
int rg_impl_hash_files(rg_run_impl *impl, char *err, size_t errlen);
/* The manifest's implementation spec of a plugin run (r->impl): its name,
 * version, backend, kernelName "name version", sources (a digest over the
 * library's and the sources' SHA-256), the files, and the harness that
 * measured it. NULL when r has no hashed plugin or out of memory. */
cJSON *rg_impl_spec(const rg_run_result *r);

/* ---- the SOL score (sol.c) -------------------------------------------------- */

/* SOL-ExecBench's score of one workload from the kernel time t_k, the
 * speed-of-light time t_sol and the baseline time t_b (any one unit):
 *   S = 1 / (1 + (t_k - t_sol) / (t_b - t_sol))
 * S = 1 when t_b <= t_sol and t_k <= t_sol; 0 when t_b <= t_sol otherwise.
 * NAN when any input is NAN or negative. */
double rg_sol_score(double t_k, double t_sol, double t_b);

/* Datasheet peak memory bandwidth (TB/s) of the GPU whose name contains a
 * known product; *product gets the table's name for it. 0 when unknown. */
double rg_datasheet_bandwidth_tbps(const char *gpu_name, const char **product);
/* The same with *source (may be NULL) the datasheet the figure comes from. */
double rg_datasheet_lookup(const char *gpu_name, const char **product, const char **source);

/* A baseline the user supplies (bench --baseline FILE): per workload index,
 * a time in ns. Two formats: the bench JSON (workloads[].index +
 * time_ns.median) and {"name":..,"per_workload":[{"index":i,"time_ns":t}]}
 * (time_ms or baseline_ms accepted instead of time_ns). */
typedef struct rg_baseline {
    char name[256];                /* "name" in the file, else the file's base name */
    char file[4096];
    char format[32];               /* "bench-json" or "per-workload" */
    char digest[RG_DIGEST_LEN];    /* sha256 of the file's bytes */
    size_t n;
    int *index;
    double *time_ns;
} rg_baseline;

int rg_baseline_load(const char *path, rg_baseline *b, char *err, size_t errlen);
void rg_baseline_free(rg_baseline *b);
/* The baseline time of workload index, NAN when the file has none. */
double rg_baseline_lookup(const rg_baseline *b, int index);

/* ---- manifests (manifest.c) ------------------------------------------------- */

/* The manifest of a completed run. s gives the workloads' tolerances (the
 * workload digest covers them); b may be NULL. NULL with a message on error. */
cJSON *rg_manifest_build(const rg_run_result *r, const rg_suite *s, const rg_baseline *b,
                         char *err, size_t errlen);

/* "sha256:" + SHA-256 of the JCS form of obj without its metadata member. */
int rg_object_digest(const cJSON *obj, char out[RG_DIGEST_LEN], char *err, size_t errlen);

/* Recomputes every digest of the manifest whose object it carries (an object
 * absent from the file is reported not recomputable, not a failure), the
 * comparison key whenever the run records one, and ropegrad's figures
 * that follow from others. rep (may be NULL) gets the per-role result.
 * Returns 0 when all match, 1 with the first mismatch in msg, 2 when it is
 * not a manifest (msg says why). */
int rg_manifest_verify_typed(const rg_manifest *m, rg_verify_report *rep, char *msg, size_t msglen);

/* The names that form comparison groups and implementation lines (benchmark,
 * family, timer, statistic, device, implementation, backend, kernel) hold no
 * bidi control or invisible character (rg_text_spoofing). 0, or 2 with a
 * one-line message naming the field, the code point and its byte offset. */
int rg_manifest_check_identifiers(const rg_manifest *m, char *err, size_t errlen);
int rg_manifest_verify(const cJSON *doc, char *msg, size_t msglen);

/* Old ropegrad manifests ({kind: ManifestBundle, items: [...]}): recognised,
 * checked by their own (old) rule, and converted to the current envelope. */
int rg_manifest_is_legacy(const cJSON *doc);
int rg_legacy_verify(const cJSON *old, char *err, size_t errlen);
cJSON *rg_manifest_convert_legacy(const cJSON *old, char *err, size_t errlen);

/* Reads a manifest file strictly (strict_json.h, at most RG_JSON_MAX_MANIFEST
 * bytes). NULL with a message. */
cJSON *rg_json_read_file(const char *path, char *err, size_t errlen);

/* ---- signatures (sign.c) --------------------------------------------------- */

/*
 * An Ed25519 signature (OpenSSL) over the run digest, stored in the manifest's
 * top-level `signatures` list as {keyId, algorithm: "ed25519", publicKey,
 * value} (base64). No digest covers that list, so signing changes no digest.
 * keyId is "sha256:" + hex SHA-256 of the raw 32-byte public key. */

/* Writes a new key pair: path (private PEM, 0600, refused if it exists) and
 * path.pub (public PEM). key_id gets its id. */
int rg_keygen(const char *path, char key_id[RG_DIGEST_LEN], char *err, size_t errlen);
/* 0 when key_path holds an Ed25519 private key (PEM) that can sign. */
int rg_signing_key_check(const char *key_path, char *err, size_t errlen);

/* The trusted public keys (one PEM file, or a folder of *.pub / *.pem) can be
 * read now: for checking --trusted-keys before any digest is computed.
 * 0, or 2 with a one-line message (empty, missing, a FIFO, no keys). */
int rg_trusted_keys_check(const char *trusted, char *err, size_t errlen);
/* Adds (or replaces, same key) a signature of doc's run digest. */
int rg_manifest_sign(cJSON *doc, const char *key_path, char key_id[RG_DIGEST_LEN], char *err, size_t errlen);
/* Checks every signature of m against its run digest. trusted: NULL, or a
 * public-key PEM file or a folder of them (*.pub, *.pem): then at least one
 * valid signature must be by a trusted key. 0 with a summary in msg ("none",
 * "1 valid, key trusted", ...), 1 when a signature is invalid or no trusted
 * key signed, 2 when the trusted keys cannot be read. */
int rg_signatures_check(const rg_manifest *m, const char *trusted, char *msg, size_t msglen);

/* ---- the registry (registry_*.c) ---------------------------------------------- */

typedef struct rg_registry rg_registry;

/* The registry file: opt when given, else $ROPEGRAD_DB, else
 * $XDG_DATA_HOME/ropegrad/runs.db (an absolute XDG_DATA_HOME), else
 * $HOME/.local/share/ropegrad/runs.db, else ./ropegrad-runs.db (no HOME).
 * Opening with create makes the missing folders (0700). */
const char *rg_registry_path(const char *opt);

/* Opens (create != 0: creating and migrating when needed) the registry.
 * A corrupt file (PRAGMA quick_check), a foreign SQLite db or a newer schema
 * is an error, and such a file is never written to. A file that may not be
 * written (its mode, its folder's, a read-only mount) is opened read-only.
 * A handle keeps its prepared statements (stmt_cache.h): use it from one
 * thread at a time (the server opens one per worker thread). */
int rg_registry_open(const char *path, int create, rg_registry **out, char *err, size_t errlen);
void rg_registry_close(rg_registry *g);
/* 1 when the registry was opened read-only (the file, its folder or its mount
 * may not be written), else 0. */
int rg_registry_read_only(const rg_registry *g);
/* 1 when the last write on g failed because another connection held the
 * registry locked beyond the busy timeout (SQLITE_BUSY), else 0. */
int rg_registry_busy(const rg_registry *g);
/* 1 when the last failure was a full disk or the file size limit
 * (RLIMIT_FSIZE): SQLITE_FULL, or ENOSPC, EFBIG or EDQUOT underneath. */
int rg_registry_full(const rg_registry *g);
/* Copies the WAL into the registry file itself and empties it (a TRUNCATE
 * checkpoint): what was committed is then in the file, even if its name is
 * later taken by another file. 0, or 2 with a message. */
int rg_registry_checkpoint(rg_registry *g, char *err, size_t errlen);

#define RG_EVIDENCE_MEASURED "measured"
#define RG_EVIDENCE_IMPORTED "imported"
#define RG_EVIDENCE_REPLICATED "replicated"

/* Stores a (verified) manifest as one run with its per-workload rows, in one
 * transaction. replicates_of: the original's id for a replication, else 0.
 * A manifest already stored (same run digest) gives its id and returns 0
 * with *existed set (a later copy: its signatures are added and differing
 * metadata is kept, see RG_STORED_SIGNED below). */
int rg_registry_store(rg_registry *g, const cJSON *manifest, const char *evidence,
                      int64_t replicates_of, int64_t *id, int *existed, char *err, size_t errlen);

/* One run's registry row. */
typedef struct rg_run_row {
    int64_t id;
    char created_at[32], observed_at[40];
    char evidence[16];
    int64_t replicates_of;         /* 0 when none */
    char definition[256];
    char comparison_key[RG_DIGEST_LEN], implementation_digest[RG_DIGEST_LEN], run_digest[RG_DIGEST_LEN];
    char device[256], backend[16], kernel_name[64], status[16];
    int kernel, passed, total, n_workloads;   /* kernel, passed, total: -1 when unknown (imported) */
    char primary_statistic[32];    /* "geomean" (ropegrad), "mean" (the public record), ... */
    double primary_ns;             /* the run's value of it: what ranks */
    double mean_ns, geomean_ns, sol_score;  /* NAN when unknown */
    double avg_speedup, fast_count, fast_total;   /* NAN when unknown */
    char source[64], external_id[128], family[256], architecture[64];
    /* The names (schema 5): the implementation spec's name and version and
     * the run's metadata title, as stored; what its source says of it
     * (rg_registry_set_source_facts: runs import-catalog), "" / 0 when none. */
    char impl_name[64], impl_version[64], run_title[256];
    char project[128], author[128], source_revision[128], published_at[40];
    int source_rank, source_group_size;   /* the source's rank in its own comparison group, of how many */
    char retracted_at[40];                /* the source retracted it then; "" when not */
} rg_run_row;

/* A run with nothing timed (primary_ns NAN: a failed run, or `check`,
 * untimed.c): what stands where its figure would, into buf[n] --
 * "failed: REASON" (reason "" or NULL: "failed, not timed") or "correctness
 * only (not timed)". Returns 0, 1 when the run was timed (buf ""), 2 on bad
 * input. */
int rg_untimed_label(const char *status, double primary_ns, const char *reason, char *buf, size_t n);
/* The reason of m's first workload that failed its check ("" when none). */
const char *rg_manifest_first_failure(const rg_manifest *m);

/* One transaction around several writes (runs import-catalog: all or
 * nothing): the stores and source facts written between begin and commit
 * join it (each as a savepoint). rollback undoes all of it. 0, or 2 with a
 * message (commit rolls back when it cannot commit). */
int rg_registry_begin(rg_registry *g, char *err, size_t errlen);
int rg_registry_commit(rg_registry *g, char *err, size_t errlen);
void rg_registry_rollback(rg_registry *g);

/* What a run's source says of it beyond its manifest, which no digest covers
 * (KernelIndex's catalog: `runs import-catalog`): who made it and when the
 * source published it, the source's rank in its own comparison group, its
 * trust columns, retraction and supersession. Text "" and numbers -1 when
 * the source says nothing. */
typedef struct rg_run_source_facts {
    char catalog_id[64];                  /* the source's own id of the run ("" when not given) */
    char project[128], author[128], source_revision[128], impl_title[256], source_name[128];
    char published_at[40];
    int source_rank, source_group_size;   /* 1-based rank of how many; 0 unknown */
    int reported, reproduced;             /* KernelIndex: reported by the source; reproduced by KernelIndex (1/0/-1) */
    int replications;                     /* KernelIndex's independent replication count, -1 unknown */
    char retracted_at[40], retraction_reason[256];
    char supersedes[64];                  /* the source's id of the run this one supersedes */
    char superseded_by[64];               /* the source's id of the run that supersedes this one */
    char catalog_key[RG_DIGEST_LEN];      /* the source's comparison key */
} rg_run_source_facts;
/* Writes f for run id (replacing what was there); *changed (may be NULL) is
 * 1 when anything differed from what was stored. 0, or 2 with a message. */
int rg_registry_set_source_facts(rg_registry *g, int64_t id, const rg_run_source_facts *f, int *changed, char *err,
                                 size_t errlen);
/* The facts stored for run id: 0 with *found 1 (f filled) or 0 (none), 2 error. */
int rg_registry_source_facts(rg_registry *g, int64_t id, rg_run_source_facts *f, int *found, char *err,
                             size_t errlen);

/* The local ids (at most max, lowest first, *n of them) of the runs whose run
 * digest begins with "sha256:" + hex (4 to 64 lowercase hex digits): 0, or 2
 * with a message. */
int rg_registry_find_digest(rg_registry *g, const char *hex, int64_t *ids, size_t max, size_t *n, char *err,
                            size_t errlen);
/* Runs ordered by id (newest last). *rows is malloc'd. */
int rg_registry_list(rg_registry *g, rg_run_row **rows, size_t *n, char *err, size_t errlen);
/* One run: its row and (when manifest != NULL) its manifest, parsed strictly
 * into the typed struct (rg_manifest_free it).
 * Returns 0, 1 when there is no such run (message says so), 2 on error. */
int rg_registry_get(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char *err,
                    size_t errlen);
/* The same for showing a run (pages, reports): the objects' digests are not
 * recomputed (the run was verified when stored); the run digest is the
 * row's. row must not be NULL when manifest is not. */
int rg_registry_get_display(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char *err,
                            size_t errlen);
/* What a run's page needs in one query: its row, its manifest for showing
 * (as rg_registry_get_display), its stored text (rg_json_print(doc, 0), see
 * rg_json_reindent) and its served bytes (as rg_registry_manifest_bytes),
 * both malloc'd. 0, 1 no such run, 2 error (nothing to free then). */
int rg_registry_get_page(rg_registry *g, int64_t id, rg_run_row *row, rg_manifest *manifest, char **text,
                         char **bytes, size_t *nbytes, char *err, size_t errlen);
/* Replaces a run's stored manifest by doc, which must have the same run
 * digest (e.g. the same manifest with a signature added). */
int rg_registry_replace_manifest(rg_registry *g, int64_t id, const cJSON *doc, char *err, size_t errlen);
/* The stored manifest text of a run, as stored (malloc'd). */
int rg_registry_get_text(rg_registry *g, int64_t id, char **text, char *err, size_t errlen);

/* Rank of a run within its comparison group by the primary figure alone:
 * passed runs ordered by the primary statistic ascending, ties by id, in
 * O(log n) (index pages of large groups). *rank is 1-based (0 when the run is
 * not ranked: it failed correctness); *group_size counts the ranked runs;
 * *first gets the id of #1 (0 when none). The rank that carries the
 * uncertainty and the suspect rule is rg_registry_rank_group (rank.h). */
int rg_registry_rank_of(rg_registry *g, int64_t id, int *rank, int *group_size, int64_t *first,
                        char *err, size_t errlen);

int rg_registry_add_note(rg_registry *g, int64_t id, const char *text, char *err, size_t errlen);

/* kind: "note", "reproduction" or "flag" (report an issue); none of them
 * changes the evidence level. */
int rg_registry_add_note_kind(rg_registry *g, int64_t id, const char *kind, const char *text, char *err,
                              size_t errlen);

typedef struct rg_note {
    char created_at[32];
    char *text;                    /* malloc'd */
    char kind[16];                 /* note, reproduction, flag */
} rg_note;
int rg_registry_notes(rg_registry *g, int64_t id, rg_note **notes, size_t *n, char *err, size_t errlen);
void rg_notes_free(rg_note *notes, size_t n);

/* A later copy of a stored run (same run digest) is not dropped: *existed
 * is then 1, with RG_STORED_SIGNED set when it brought signatures the stored
 * manifest lacked (they are added, verified, and the stored copy is what is
 * served), and RG_STORED_CONFLICT when its metadata differs (kept as a
 * conflict, rg_registry_conflicts). */
#define RG_STORED_SIGNED 2
#define RG_STORED_CONFLICT 4

/* The signatures a run carries, by key id, with when the index received each. */
typedef struct rg_run_signature {
    char key_id[RG_DIGEST_LEN];
    char received_at[32];
} rg_run_signature;
int rg_registry_signatures(rg_registry *g, int64_t id, rg_run_signature **out, size_t *n, char *err, size_t errlen);

/* Metadata in which a later copy of a run differed from the stored one. */
typedef struct rg_run_conflict {
    char member[48];               /* "run.metadata", ... */
    char received_at[32];          /* when the differing copy arrived */
    char *stored, *offered;        /* JSON text (malloc'd): the stored copy's value and the later copy's */
} rg_run_conflict;
int rg_registry_conflicts(rg_registry *g, int64_t id, rg_run_conflict **out, size_t *n, char *err, size_t errlen);
void rg_run_conflicts_free(rg_run_conflict *c, size_t n);

/* Records that replica replicated original (agreed: within the spread), and
 * when agreed and the implementation digest and comparison key match,
 * upgrades the original's evidence to 'replicated' -- one transaction.
 * *upgraded says whether it did. */
int rg_registry_link_replication(rg_registry *g, int64_t original, int64_t replica, int agreed,
                                 int within, int total, int *upgraded, char *err, size_t errlen);

typedef struct rg_replication {
    int64_t original_id, replica_id;
    int agreed, within, total;
    char created_at[32];
} rg_replication;
/* Replications where id is the original or the replica. */
int rg_registry_replications(rg_registry *g, int64_t id, rg_replication **out, size_t *n,
                             char *err, size_t errlen);

/* What `runs import` and the index's POST /api/runs do with a manifest made
 * elsewhere: reads bytes[n] strictly (strict_json.h), converts an old
 * ManifestBundle (after checking its own digests; *converted = 1), verifies
 * every digest and checks every signature (trusted != NULL: one by a trusted
 * key is required, rg_signatures_check). 0 with *out (the document to store)
 * and err saying what the signature check found; 1 a digest or signature
 * does not verify; 3 not JSON or not a manifest; err says why in one line. */
int rg_manifest_parse_verified(const char *bytes, size_t n, const char *trusted, cJSON **out, int *converted,
                               char *err, size_t errlen);
/* rg_registry_store keeping bytes[n], the manifest's text as it came (bytes
 * NULL: none kept, the stored text is the record, as for an old bundle that
 * was converted). */
int rg_registry_store_bytes(rg_registry *g, const cJSON *manifest, const char *bytes, size_t n,
                            const char *evidence, int64_t *id, int *existed, char *err, size_t errlen);
/* rg_manifest_parse_verified (no trusted keys required), then stores it with
 * its bytes kept as they came (served byte for byte; an old bundle is stored
 * as converted). Returns 0 (stored, or *existed), 1 it does not verify (or,
 * a later copy of a stored run, it cannot be kept: a signature that does not
 * verify, more signatures than a manifest keeps), 3 not JSON or not a
 * manifest, 2 a registry error; err says why in one line. */
int rg_registry_import(rg_registry *g, const char *bytes, size_t n, const char *evidence, int64_t *id,
                       int *existed, char *err, size_t errlen);
/* The stored manifest bytes of run id (those it was imported as, else the
 * stored text), malloc'd and NUL-terminated. 0, 1 no such run, 2 error. */
int rg_registry_manifest_bytes(rg_registry *g, int64_t id, char **out, size_t *n, char *err, size_t errlen);
typedef struct rg_problem_row {
    char definition[256], comparison_key[RG_DIGEST_LEN], device[256];
    int64_t runs, best_id;          /* best_id 0 when no run of the group passed */
} rg_problem_row;
/* One problem's runs, per comparison group (groups[ng], its groups as
 * rg_registry_problem_groups gives them), passed first, ranked by the
 * primary statistic; at most per_group rows of each group (<= 0: all). */
int rg_registry_list_problem(rg_registry *g, const char *definition, const rg_problem_row *groups, size_t ng,
                             int per_group, rg_run_row **rows, size_t *n, char *err, size_t errlen);
/* Every (definition, comparison group) with its run count and #1; only
 * those of one definition when definition is not NULL. */
int rg_registry_problems(rg_registry *g, const char *definition, rg_problem_row **out, size_t *n, char *err,
                         size_t errlen);
/* The same without the #1 (best_id 0): no group is put in rank order, so a
 * page of a 10,000-run group does not sort it to show its first rows. */
int rg_registry_problem_groups(rg_registry *g, const char *definition, rg_problem_row **out, size_t *n, char *err,
                               size_t errlen);
/* The registry's file name, as opened. */
const char *rg_registry_file(const rg_registry *g);
/* The passed runs of a comparison group in rank order (the order of
 * rg_registry_rank_of): ids[] and geomean[] (both malloc'd), n of them. */
int rg_registry_group_order(rg_registry *g, const char *comparison_key, int64_t **ids, double **geomean, size_t *n,
                            char *err, size_t errlen);
/* A number that changes whenever a run, note or replication is added. */
int rg_registry_generation(rg_registry *g, int64_t *gen, char *err, size_t errlen);

/* ---- replication (replicate.c) --------------------------------------------- */

/* The protocol recorded in a manifest as harness options + suite dir + indices. */
typedef struct rg_recorded_protocol {
    char definition[256];          /* the suite is named by its definition and workload digest */
    char workload_digest[RG_DIGEST_LEN];
    rg_run_options opts;
    char backend[16];
    int *indices;
    size_t n_indices;
} rg_recorded_protocol;

int rg_protocol_from_manifest(const rg_manifest *m, rg_recorded_protocol *p, char *err, size_t errlen);
void rg_recorded_protocol_free(rg_recorded_protocol *p);

/* Per workload: do the replica's samples agree with the original's? Only
 * samples are evidence (never a min, max or stddev read from a file): the
 * Hodges-Lehmann ratio replica/original with its 95% distribution-free
 * interval (compare_stats.h), which must lie wholly inside
 * [1/(1 + threshold), 1 + threshold]; a wide spread therefore never agrees.
 * 1 agree, 0 not, -1 cannot be judged (no samples, or not positive); *s
 * (may be NULL) gets the estimate. */
#define RG_REPLICATE_THRESHOLD 0.05
int rg_samples_agree(const double *orig, size_t n_orig, const double *replica, size_t n_replica, double threshold,
                     rg_shift *s);

/* How a recorded protocol is run again: the harness's rg_suite_load and
 * rg_run_suite, given by the caller (the CLI), so the record links no harness. */
typedef struct rg_replicate_runner {
    int (*load)(const char *dir, rg_suite *out, char *err, size_t errlen);
    int (*run)(const rg_suite *s, const int *indices, size_t n_indices, const rg_run_options *o, rg_run_result *out,
               char *err, size_t errlen);
} rg_replicate_runner;

/* Re-runs run id's protocol through runner (load of suite_dir, which must
 * hold the run's definition and workloads, then run), stores the result as a
 * replication of it, prints per workload whether the time is within the
 * original's spread on out, and links the two (upgrading the original's
 * evidence when it agreed). Returns 0 (with *agreed) or 2 with a message. */
int rg_record_replicate(rg_registry *g, int64_t id, const char *suite_dir, const rg_replicate_runner *runner,
                        int verbose, FILE *out, int64_t *replica_id, int *agreed, char *err, size_t errlen);

/* ---- what the index checks itself (credible.c) ------------------ */

/* Every latency m states (latencyNs, each workload's median/min/max/mean,
 * every sample) is finite and positive: 0, or 1 with a one-line reason. */
int rg_manifest_latencies_check(const rg_manifest *m, char *msg, size_t msglen);
/* observedAt is an RFC 3339 date-time and, when now_s is finite (the index's
 * clock, seconds since 1970), not more than a day ahead of it: 0, or 1 with
 * a one-line reason. */
int rg_observed_at_check(const char *observed_at, double now_s, char *msg, size_t msglen);
/* When run r happened, for ordering (seconds since 1970): its observed time
 * where that is credible (RFC 3339, at most a day after the index received
 * the run), else the index's receipt time (created_at); NAN when neither reads. */
double rg_run_time(const rg_run_row *r);
/* Orders two runs by rg_run_time, then by id. */
int rg_run_cmp_time(const rg_run_row *a, const rg_run_row *b);

#endif /* ROPEGRAD_RECORD_H */
