/* SPDX-License-Identifier: Apache-2.0 */
/*
 * untimed.c -- a run with nothing timed: its primary latency is null. A run
 * whose every workload failed its check (none is timed) is "failed: REASON";
 * a `check` run (an untimed protocol, measurement.iterations 0) that passed
 * is "correctness only": stored and shown, never ranked (record.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

int rg_untimed_label(const char *status, double primary_ns, const char *reason, char *buf, size_t n)
{
    if (!status || !buf || !n) return 2;
    buf[0] = 0;
    if (!isnan(primary_ns)) return 1;
    if (strcmp(status, "passed") && reason && *reason) snprintf(buf, n, "failed: %s", reason);
    else if (strcmp(status, "passed")) snprintf(buf, n, "failed, not timed");
    else snprintf(buf, n, "correctness only (not timed)");
    return 0;
}

const char *rg_manifest_first_failure(const rg_manifest *m)
{
    for (size_t i = 0; m && i < m->n_workloads; i++)
        if (!m->workloads[i].pass) return m->workloads[i].reason;
    return "";
}
