/* SPDX-License-Identifier: Apache-2.0 */
/*
 * site.h -- the index as static files (`ropegrad site --out DIR`) and one
 * run's page as a file (`ropegrad report ID --html FILE`), from the same
 * renderer as the server.
 */
#ifndef RG_INDEX_SITE_H
#define RG_INDEX_SITE_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* Writes DIR/index.html, DIR/problems/SLUG.html, DIR/runs/ID.html,
 * DIR/runs/ID.json (the stored bytes) and DIR/compare/FIRST/ID.html, each
 * atomically; *files counts them. 0 or 2 with a message. */
int rg_site_write(rg_registry *g, const char *dir, size_t *files, char *err, size_t errlen);

/* The run page of run id as one self-contained page (malloc'd), NULL with a
 * message. base_url NULL: no link to any page the file does not include;
 * else ("http://host:8080") its links name that served index's pages. */
char *rg_report_page(rg_registry *g, int64_t id, const char *base_url, char *err, size_t errlen);

#endif
