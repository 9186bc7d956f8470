/* SPDX-License-Identifier: Apache-2.0 */
/* rfc3339.h -- a strict RFC 3339 date-time reader (rfc3339.c). */
#ifndef ROPEGRAD_RFC3339_H
#define ROPEGRAD_RFC3339_H

/* An RFC 3339 date-time (section 5.6, strictly; see rfc3339.c) as seconds
 * since 1970-01-01T00:00:00Z. 0, or -1 when text is not one. */
int rg_rfc3339_parse(const char *text, double *epoch_s);

#endif
