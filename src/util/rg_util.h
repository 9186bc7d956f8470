/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rg_util.h -- small helpers shared by the harness, the record, the index
 * and the CLI (src/util/). Not public API.
 *
 *   rg_buf      a growable NUL-terminated string. Appends never fail
 *               midway: on an allocation failure the buffer remembers it
 *               (oom) and ignores further appends, so builders can write
 *               straight through and check once, in rg_buf_finish().
 *   rg_json_*   typed reads of one object member. A missing member, a
 *               member of the wrong type and a NULL object all read as
 *               "unknown": NAN, -1, NULL (rg_json_str) or "" (rg_json_str_or_empty,
 *               for callers that print or store the text as it is).
 */
#ifndef RG_UTIL_H
#define RG_UTIL_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct rg_buf {
    char *p;        /* NUL-terminated once anything was written; NULL before */
    size_t n, cap;  /* bytes used (without the NUL), bytes allocated */
    int oom;        /* an allocation failed: p is incomplete */
} rg_buf;

void rg_buf_put(rg_buf *b, const char *s, size_t n);
void rg_buf_puts(rg_buf *b, const char *s);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void rg_buf_printf(rg_buf *b, const char *fmt, ...);
/* The finished string (the caller frees it), or NULL with "out of memory" in
 * err and the buffer freed. An empty buffer (nothing ever written) also
 * counts as a failure: every builder writes at least one byte. */
char *rg_buf_finish(rg_buf *b, char *err, size_t errlen);

const cJSON *rg_json_get(const cJSON *o, const char *k);
/* A number member, NAN when absent or not a number. */
double rg_json_num(const cJSON *o, const char *k);
/* An integer member, -1 when absent, not a number or outside +-1e9: casting
 * a NaN or a huge double to int is undefined behaviour (found by fuzzing). */
int rg_json_int(const cJSON *o, const char *k);
/* A string member, NULL when absent or not a string. */
const char *rg_json_str(const cJSON *o, const char *k);
/* The same, but "" instead of NULL. */
const char *rg_json_str_or_empty(const cJSON *o, const char *k);

#endif
