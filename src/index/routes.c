/* SPDX-License-Identifier: Apache-2.0 */
/* routes.c -- the table of the server's routes and its matcher (routes.h). */
#include "routes.h"

#include <string.h>

static const rg_route table[RG_ROUTE_COUNT] = {
    {RG_ROUTE_INDEX, "GET", "/"},
    {RG_ROUTE_API_PROBLEMS, "GET", "/api/problems"},
    {RG_ROUTE_PROBLEM, "GET", "/problems/{definition}"},
    {RG_ROUTE_API_PROBLEM, "GET", "/api/problems/{definition}"},
    {RG_ROUTE_RECORDS, "GET", "/records/{definition}"},
    {RG_ROUTE_RUN, "GET", "/runs/{run}"},
    {RG_ROUTE_MANIFEST, "GET", "/runs/{run}.json"},
    {RG_ROUTE_API_RUN, "GET", "/api/runs/{run}"},
    {RG_ROUTE_HISTORY, "GET", "/history/{run}"},
    {RG_ROUTE_COMPARE, "GET", "/compare/{a}/{b}"},
    {RG_ROUTE_SEARCH, "GET", "/search"},
    {RG_ROUTE_REGRESSIONS, "GET", "/api/regressions"},
    {RG_ROUTE_OPENAPI, "GET", "/api/openapi.json"},
    {RG_ROUTE_POST_RUNS, "POST", "/api/runs"},
    {RG_ROUTE_POST_API_NOTE, "POST", "/api/runs/{run}/notes"},
    {RG_ROUTE_POST_NOTE, "POST", "/runs/{run}/notes"},
    {RG_ROUTE_POST_FLAG, "POST", "/runs/{run}/flags"},
};

const rg_route *rg_routes(size_t *n)
{
    if (n) *n = RG_ROUTE_COUNT;
    return table;
}

/* One pattern against path: 1 with the parameters, else 0. */
static int match(const char *pat, const char *path, const char *param[2], size_t len[2])
{
    int np = 0;
    while (*pat) {
        if (*pat != '{') {
            if (*pat++ != *path++) return 0;
            continue;
        }
        const char *close = strchr(pat, '}');
        if (!close || np >= 2) return 0;
        int rest = !strncmp(pat, "{definition}", 12);
        const char *lit = close + 1;                 /* what follows the parameter in its segment */
        size_t litn = strcspn(lit, "/");
        const char *end = rest ? path + strlen(path) : path + strcspn(path, "/");
        if (!rest && litn) {                          /* "{run}.json": the segment ends with the literal */
            if ((size_t)(end - path) <= litn || strncmp(end - litn, lit, litn)) return 0;
            end -= litn;
        }
        if (end == path) return 0;                    /* a parameter is never empty */
        param[np] = path, len[np] = (size_t)(end - path), np++;
        path = end;
        pat = close + 1;
    }
    return *path == 0;
}

int rg_route_match(const char *method, const char *path, const char *param[2], size_t len[2])
{
    if (!method || !path) return -1;
    const char *m = !strcmp(method, "HEAD") ? "GET" : method;
    int found = -1;
    for (int i = 0; i < RG_ROUTE_COUNT && found < 0; i++) {
        const char *pv[2] = {NULL, NULL};
        size_t lv[2] = {0, 0};
        if (strcmp(table[i].method, m) || !match(table[i].pattern, path, pv, lv)) continue;
        /* "/runs/5.json" is the manifest, not a run named "5.json" */
        if (table[i].id == RG_ROUTE_RUN && lv[0] > 5 && !strncmp(pv[0] + lv[0] - 5, ".json", 5)) continue;
        found = i;
        for (int k = 0; k < 2; k++) param[k] = pv[k], len[k] = lv[k];
    }
    return found;
}
