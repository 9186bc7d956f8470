/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jcs.h -- RFC 8785 (the JSON Canonicalization Scheme) over cJSON trees,
 * JSON text with exact numbers, and the SHA-256 digests built on them
 * (jcs.c, json_reindent.c).
 */
#ifndef ROPEGRAD_JCS_H
#define ROPEGRAD_JCS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* "sha256:" + 64 hex digits + NUL */
#ifndef RG_DIGEST_LEN
#define RG_DIGEST_LEN 72
#endif

/* v serialized per RFC 8785: a malloc'd NUL-terminated string, or NULL with a
 * message (non-finite number, invalid UTF-8, duplicate key, out of memory). */
char *rg_jcs_serialize(const cJSON *v, char *err, size_t errlen);
/* One number as ECMAScript's Number.prototype.toString writes it. Returns 0,
 * or -1 for NaN/Inf or a too-small buffer (32 bytes is always enough). */
int rg_jcs_number(double x, char *buf, size_t len);
/* v as JSON text with members in their order (pretty: indented, with a
 * final newline), numbers in the shortest form that reads back exactly.
 * Use it, not cJSON_Print, for anything that is hashed again after reading. */
char *rg_json_print(const cJSON *v, int pretty, char *err, size_t errlen);
/* text[n], JSON as rg_json_print(doc, 0) wrote it, indented as
 * rg_json_print(doc, 1) would write it, without parsing it (json_reindent.c):
 * tokens are copied as they are. NULL with a message when text is not JSON
 * (an unended string, unbalanced brackets, nested over 200 levels). */
char *rg_json_reindent(const char *text, size_t n, char *err, size_t errlen);
/* Lower-case hex SHA-256 of data[n] into out[65]. Returns 0 or -1. */
int rg_sha256_hex(const void *data, size_t n, char out[65]);
/* "sha256:" + hex SHA-256 of the JCS form of v. */
int rg_digest_json(const cJSON *v, char out[RG_DIGEST_LEN], char *err, size_t errlen);
/* 1 when s looks like "sha256:" + 64 lower-case hex digits. */
int rg_digest_valid(const char *s);

#endif
