/* SPDX-License-Identifier: Apache-2.0 */
/*
 * routes.h -- every route `ropegrad serve` answers, in one table: the
 * server dispatches through it (serve.c) and the OpenAPI document served at
 * /api/openapi.json (openapi.c) lists the same routes (tests/index/
 * test_serve_openapi.c checks both ways).
 *
 * A pattern is a path whose segments are literal or a parameter: "{run}"
 * (a run: its local id, or the first 8 hex digits of its run digest),
 * "{run}.json", "{a}", "{b}" (runs), "{definition}" (the rest of the path).
 * GET routes answer HEAD too.
 */
#ifndef RG_INDEX_ROUTES_H
#define RG_INDEX_ROUTES_H

#include <stddef.h>

typedef enum rg_route_id {
    RG_ROUTE_INDEX,
    RG_ROUTE_API_PROBLEMS,
    RG_ROUTE_PROBLEM,
    RG_ROUTE_API_PROBLEM,
    RG_ROUTE_RECORDS,
    RG_ROUTE_RUN,
    RG_ROUTE_MANIFEST,
    RG_ROUTE_API_RUN,
    RG_ROUTE_HISTORY,
    RG_ROUTE_COMPARE,
    RG_ROUTE_SEARCH,
    RG_ROUTE_REGRESSIONS,
    RG_ROUTE_OPENAPI,
    RG_ROUTE_POST_RUNS,
    RG_ROUTE_POST_API_NOTE,
    RG_ROUTE_POST_NOTE,
    RG_ROUTE_POST_FLAG,
    RG_ROUTE_COUNT
} rg_route_id;

typedef struct rg_route {
    rg_route_id id;
    const char *method;    /* "GET" or "POST" */
    const char *pattern;   /* "/runs/{run}" */
} rg_route;

/* The table (RG_ROUTE_COUNT entries, in rg_route_id order). */
const rg_route *rg_routes(size_t *n);

/* The route of method (HEAD as GET) and path, -1 when none; its parameters'
 * text into param[i] / len[i] (at most 2), in the pattern's order. */
int rg_route_match(const char *method, const char *path, const char *param[2], size_t len[2]);

/* The OpenAPI 3.1 document of these routes (openapi.c): static JSON text. */
const char *rg_openapi_json(void);

#endif
