/* SPDX-License-Identifier: Apache-2.0 */
/*
 * push.h -- the client of POST /api/runs (libcurl): `ropegrad runs push URL FILE`.
 */
#ifndef RG_INDEX_PUSH_H
#define RG_INDEX_PUSH_H

#include <stddef.h>

/* POSTs bytes[n] (a manifest) to base_url + "/api/runs" with the bearer
 * token (NULL: none). *status gets the HTTP status (0 when none came back),
 * reply (reply_len bytes, may be NULL) the first line of the answer.
 * Returns 0 when the server stored it (or had it), 1 when it refused it
 * (reply says why), 2 when it could not be sent; err says why. */
int rg_push(const char *base_url, const char *bytes, size_t n, const char *token, long *status, char *reply,
            size_t reply_len, char *err, size_t errlen);

#endif
