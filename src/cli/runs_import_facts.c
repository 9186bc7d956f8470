/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runs_import_facts.c -- `runs import FILE --published-at DATE --source-rank
 * N[/M]`: what a record's source says of it that its manifest does not carry
 * (the public KernelIndex record was published 2026-08-24 and ranks 5th in
 * its group there), kept with the run in the same transaction as the store
 * (rg_registry_set_source_facts). A run imported again keeps the facts it
 * had; the ones given replace theirs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rfc3339.h"
#include "rg_term.h"
#include "runs.h"

int rg_runs_import_has_facts(const runs_ctx *x) { return x->published_at || x->source_rank; }

/* "N" or "N/M" (1 <= N <= M when M is given) into *rank, *of (0 without M). */
static int parse_rank(const char *s, int *rank, int *of)
{
    char *end;
    long n = strtol(s, &end, 10), m = 0;
    if (end == s || n < 1 || n > 1000000000 || s[0] == '+' || s[0] == ' ') return -1;
    if (*end == '/') {
        const char *t = end + 1;
        m = strtol(t, &end, 10);
        if (end == t || t[0] == '+' || t[0] == ' ' || m < n || m > 1000000000) return -1;
    }
    if (*end) return -1;
    *rank = (int)n;
    *of = (int)m;
    return 0;
}

int rg_runs_import_facts_check(const runs_ctx *x)
{
    if (x->published_at) {
        char full[64];
        double t;
        /* a date alone is the day's start (UTC) */
        snprintf(full, sizeof full, strlen(x->published_at) == 10 ? "%sT00:00:00Z" : "%s", x->published_at);
        if (strlen(x->published_at) > 40 || rg_rfc3339_parse(full, &t)) {
            rg_term_printf(stderr, "ropegrad runs import: --published-at '%.60s': expected a date (2026-08-24) or an "
                                   "RFC 3339 date-time\n", x->published_at);
            return 2;
        }
    }
    int r, of;
    if (x->source_rank && parse_rank(x->source_rank, &r, &of)) {
        rg_term_printf(stderr, "ropegrad runs import: --source-rank '%.60s': expected N or N/M (1 <= N <= M)\n",
                       x->source_rank);
        return 2;
    }
    return 0;
}

int rg_runs_import_facts_begin(runs_ctx *x)
{
    if (!rg_runs_import_has_facts(x) || !rg_registry_begin(x->g, x->err, sizeof x->err)) return 0;
    rg_term_printf(stderr, "ropegrad runs import: %s\n", x->err);
    return 2;
}

int rg_runs_import_facts_end(runs_ctx *x, int64_t id, int rc)
{
    if (!rg_runs_import_has_facts(x)) return rc;
    rg_run_source_facts f;
    int found;
    if (!rc && rg_registry_source_facts(x->g, id, &f, &found, x->err, sizeof x->err)) rc = 2;
    if (!rc) {
        if (x->published_at) snprintf(f.published_at, sizeof f.published_at, "%s", x->published_at);
        if (x->source_rank) parse_rank(x->source_rank, &f.source_rank, &f.source_group_size);
        if (rg_registry_set_source_facts(x->g, id, &f, NULL, x->err, sizeof x->err) ||
            rg_registry_commit(x->g, x->err, sizeof x->err))
            rc = 2;
        if (rc) rg_term_printf(stderr, "ropegrad runs import: %s\n", x->err);
    }
    if (rc) rg_registry_rollback(x->g);
    return rc;
}
