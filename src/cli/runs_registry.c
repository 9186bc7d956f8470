/* SPDX-License-Identifier: Apache-2.0 */
/* runs_registry.c -- the registry a `ropegrad runs` subcommand works on (see runs.h). */
#include <stdio.h>

#include "rg_term.h"
#include "runs.h"

int rg_runs_open_db(runs_ctx *x, int create)
{
    if (rg_registry_open(rg_registry_path(x->db), create, &x->g, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs: %s\n", x->err);
        return 2;
    }
    return 0;
}
