/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strict_json.h -- the one JSON reader of the code base (suites, manifests,
 * baselines): cJSON, with the checks that make every reader see the same
 * data. Refused anywhere in a document:
 *   - a repeated member name in any object (the envelope too);
 *   - a string holding U+0000 (`\u0000`) or a lone surrogate escape;
 *   - invalid UTF-8 (overlong forms, encoded surrogates, > U+10FFFF);
 *   - raw control bytes (< 0x20) inside a string, and NUL bytes anywhere;
 *   - a number outside RFC 8259's grammar (05407, 5407., 5407.e0, +1, .5,
 *     1e, 0x1f, NaN, -Infinity), which cJSON alone would read;
 *   - text after the document (other than whitespace);
 *   - more than max_bytes of input.
 * Messages are one line and name the document (`what` / the file) and,
 * where known, the line or the JSON path ("$.run.spec").
 */
#ifndef ROPEGRAD_STRICT_JSON_H
#define ROPEGRAD_STRICT_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Documented limits: a manifest (40,000 workloads with samples fit), and each
 * suite document (definition.json, one workload.jsonl line, a figures file). */
#define RG_JSON_MAX_MANIFEST ((size_t)256 << 20)   /* 256 MiB */
#define RG_JSON_MAX_SUITE_DOC ((size_t)16 << 20)   /* 16 MiB */

/* Parses text[0..len) strictly. NULL with a message naming `what`. */
cJSON *rg_json_parse_strict(const char *text, size_t len, const char *what, char *err, size_t errlen);

/* Reads a regular file (FIFOs, devices and directories are refused) of at
 * most max_bytes, reading with that bound whatever st_size says, and parses
 * it strictly. NULL with a message naming the file. */
cJSON *rg_json_read_strict(const char *path, size_t max_bytes, char *err, size_t errlen);

/* The bounded file read alone: a malloc'd NUL-terminated buffer of *len
 * bytes, or NULL with a message. Same refusals as rg_json_read_strict. */
char *rg_read_file_bounded(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);

/* The same for a secret (a private key, a write token): also refused when
 * group or others may read it (mode & 077), as ssh does: "FILE: permissions
 * 0644 are too open (...); chmod 600 FILE". */
char *rg_read_secret_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);

#endif
