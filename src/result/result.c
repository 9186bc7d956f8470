/* SPDX-License-Identifier: Apache-2.0 */
/* result.c -- freeing what a run is given and produces (result.h). */
#include <stdlib.h>

#include "result.h"

void rg_suite_free(rg_suite *s)
{
    if (!s) return;
    free(s->workloads);
    s->workloads = NULL;
    s->n_workloads = 0;
}

void rg_run_result_free(rg_run_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_workloads && r->workloads; i++) free(r->workloads[i].samples_ns);
    free(r->workloads);
    r->workloads = NULL;
    r->n_workloads = 0;
}
