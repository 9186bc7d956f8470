/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_common.h -- plumbing shared by the libFuzzer targets.
 *
 * The suite loader reads files from a directory (there is no from-memory
 * entry point, and the path handling is part of what is tested), so each
 * target owns one private directory under $TMPDIR (default /tmp), made once
 * per process with mkdtemp and removed at exit. Each input is written to a
 * file there and the parser is called on it. libFuzzer runs one input at a
 * time per process, so the files need no locking; parallel jobs (-jobs=N)
 * are separate processes with separate directories.
 */
#ifndef ROPEGRAD_FUZZ_COMMON_H
#define ROPEGRAD_FUZZ_COMMON_H


#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A target's own invariant: abort() so libFuzzer records the input as a crash. */
#define FZ_CHECK(cond)                                                                                       \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fuzz invariant violated at %s:%d: %s\n", __FILE__, __LINE__, #cond);            \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

static char fz_dir[256];

static inline void fz_cleanup(void)
{
    static const char *const names[] = {"definition.json", "workload.jsonl", "h200-figures.json", "input.json",
                                        "registry.db",     "registry.db-wal", "registry.db-shm",  "registry.db-journal"};
    char p[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", fz_dir, names[i]);
        unlink(p);
    }
    rmdir(fz_dir);
}

/* The per-process directory, made on first use. Aborts (a fuzzer setup
 * failure, not a finding) when it cannot be made. */
static inline const char *fz_workdir(void)
{
    if (fz_dir[0]) return fz_dir;
    const char *t = getenv("TMPDIR");
    snprintf(fz_dir, sizeof fz_dir, "%s/rg_fuzz_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(fz_dir)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(fz_cleanup);
    return fz_dir;
}

/* DIR/name, filled with data[n]. Returns the path (static buffer). */
static inline const char *fz_write(const char *name, const void *data, size_t n)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fz_workdir(), name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror("fuzz: fopen");
        abort();
    }
    if (n && fwrite(data, 1, n, f) != n) {
        perror("fuzz: fwrite");
        abort();
    }
    if (fclose(f) != 0) {
        perror("fuzz: fclose");
        abort();
    }
    return path;
}

static inline void fz_remove(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fz_workdir(), name);
    unlink(path);
}

/* A known-good definition.json and workload.jsonl (from the shipped suite's
 * shape, three workloads), so a target can vary one file and keep the rest
 * valid -- otherwise the loader would stop at the first file every time. */
static const char fz_definition[] =
    "{\"name\": \"014_rotary_embedding_with_attention_scaling_backward\","
    " \"axes\": {\"batch_size\": {\"type\": \"var\"}, \"seq_len\": {\"type\": \"var\"},"
    "  \"head_dim\": {\"type\": \"const\", \"value\": 128}},"
    " \"inputs\": {\"grad_cos\": {\"dtype\": \"bfloat16\"}, \"grad_sin\": {\"dtype\": \"bfloat16\"},"
    "  \"emb\": {\"dtype\": \"float32\"}, \"inv_freq_expanded\": {\"dtype\": \"float32\"},"
    "  \"attention_scaling\": {\"dtype\": \"float32\", \"shape\": null}},"
    " \"outputs\": {\"grad_position_ids\": {\"dtype\": \"float32\"}}}\n";

static const char fz_workloads[] =
    "{\"uuid\": \"80418e26-ee3d-5ceb-b175-0a7b83f1f47a\", \"axes\": {\"batch_size\": 32, \"seq_len\": 256},"
    " \"inputs\": {\"attention_scaling\": {\"type\": \"scalar\", \"value\": 0.0883883}},"
    " \"tolerance\": {\"max_atol\": 1e-05, \"max_rtol\": 1e-05}}\n"
    "{\"uuid\": \"3349eb65-de68-52c8-a03a-0df3f9b59030\", \"axes\": {\"batch_size\": 2, \"seq_len\": 3637},"
    " \"inputs\": {\"attention_scaling\": {\"type\": \"scalar\", \"value\": 0.0883883}},"
    " \"tolerance\": {\"max_atol\": 1e-05, \"max_rtol\": 1e-05, \"required_matched_ratio\": 0.95}}\n"
    "{\"uuid\": \"2cfdf084-aef8-5abf-9f1d-6a9782b77ea2\", \"axes\": {\"batch_size\": 1, \"seq_len\": 128},"
    " \"inputs\": {\"attention_scaling\": {\"type\": \"scalar\", \"value\": 0.125}},"
    " \"tolerance\": {\"max_atol\": 1e-05, \"max_rtol\": 1e-05, \"max_error_cap\": 0.01}}\n";

#endif
