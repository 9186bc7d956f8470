/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.h -- the names the index's pages show where the record holds slugs
 * and hashes: a problem's title, a short comparison key, a source's display
 * name and the form of its external ids.
 */
#ifndef RG_INDEX_NAMES_H
#define RG_INDEX_NAMES_H

#include <stddef.h>

/* "014_rotary_embedding_with_attention_scaling_backward" ->
 * "L1/014 · Rotary embedding with attention scaling backward" (SOL-ExecBench's
 * level-1 problems are named NNN_words); any other name is written as it is.
 * 0, or -1 with a message when out is missing or too small. */
int rg_problem_title(const char *definition, char *out, size_t n, char *err, size_t errlen);

/* "L1/014": the short form for breadcrumbs; the definition itself when it has
 * no NNN_ number. 0, or -1 with a message. */
int rg_problem_short(const char *definition, char *out, size_t n, char *err, size_t errlen);

/* A sha256 digest as its first 12 hex digits and "…" ("sha256:e650657a1f26…"
 * is "e650657a1f26…"); text shorter than that as it is. 0, or -1 with a message. */
int rg_short_key(const char *key, char *out, size_t n, char *err, size_t errlen);

/* A known source's display name ("sol-execbench" -> "NVIDIA SOL-ExecBench")
 * and its external id as the source writes it ("6579" -> "submission/6579");
 * a source not known is shown as recorded. The workload description the
 * source publishes for its comparator ("" when none). Never NULL. */
const char *rg_source_display(const char *source);
void rg_source_external_id(const char *source, const char *id, char *out, size_t n);
const char *rg_source_comparator_description(const char *source);

/* What an implementation's display name is made of ("" or NULL when the
 * record has none): a ropegrad or plugin run's implementation spec (name,
 * version, backend, kernel, kernelName); an imported run's project (who made
 * it: the catalog's project, else its run title before the first " · "),
 * source and external id. */
typedef struct rg_impl_name_parts {
    const char *impl_name, *impl_version;   /* "ropegrad" "0.1.0"; a plugin's own; "reference (torch.compile)" "torch 2.11.0" */
    const char *backend;                    /* "cuda", "cpu" */
    int kernel;                             /* -1 unknown */
    const char *kernel_name;                /* "default", a version's name */
    const char *project;                    /* "doubleAI" */
    const char *run_title;                  /* "Recursive · 014_... · B200" (metadata: display only) */
    const char *source, *external_id;       /* "sol-execbench", "19887" */
} rg_impl_name_parts;

/* The implementation's display name, by who and what:
 *   an imported run      "doubleAI · submission 19887" (project · the source's
 *                        external id in words; "NVIDIA SOL-ExecBench · submission
 *                        6579" when no project is known)
 *   ropegrad's own       "ropegrad 0.1.0 · CUDA kernel 0" (a named kernel
 *                        version other than default follows in parentheses)
 *   the torch reference  "torch.compile 2.11 · reference", "torch eager 2.11 · reference"
 *   a plugin             its own name and version ("plain014 1.0")
 * Always a NUL-terminated name in out[n] (cut to fit); returns out. */
const char *rg_impl_display_name(const rg_impl_name_parts *p, char *out, size_t n);

#endif
