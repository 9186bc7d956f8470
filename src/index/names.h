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

#endif
