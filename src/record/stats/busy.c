/* SPDX-License-Identifier: Apache-2.0 */
/* busy.c -- whether a CPU run was recorded on a busy machine (gate.h,
 * rg_manifest_busy): the ranking and the gate both ask, so it sits apart
 * from both. */
#include "gate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int measured(double v) { return isfinite(v) && v >= 0; }

static int busy_over_run(char *why, size_t whylen, const char *figure, double value, int cpus)
{
    if (why && whylen) snprintf(why, whylen, "%s %.2f of %d CPUs over the run", figure, value, cpus);
    return 1;
}

int rg_manifest_busy(const rg_manifest *m, char *why, size_t whylen)
{
    if (why && whylen) why[0] = 0;
    if (!m || strcmp(m->backend, "cpu") || m->online_cpus <= 0) return 0;
    const int cpus = m->online_cpus;
    if (measured(m->other_cpus) && measured(m->steal_cpus)) {   /* over the run itself */
        if (m->other_cpus >= RG_GATE_BUSY_OTHER * cpus)
            return busy_over_run(why, whylen, "other processes used", m->other_cpus, cpus);
        if (m->steal_cpus >= RG_GATE_BUSY_STEAL * cpus)
            return busy_over_run(why, whylen, "steal took", m->steal_cpus, cpus);
        return 0;
    }
    if (!isfinite(m->load_avg_1m) || m->load_avg_1m < RG_GATE_BUSY_LOAD * cpus) return 0;   /* older records */
    if (why && whylen) snprintf(why, whylen, "load average %.2f on %d CPUs", m->load_avg_1m, cpus);
    return 1;
}
