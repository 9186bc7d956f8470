/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_share.h -- how much of the machine other work took while a run ran.
 *
 * A load average sampled at a run's start misses a process that starts
 * seconds before it (the 1-minute average needs a minute to rise). Measured
 * over the run's own span instead: the CPU time all CPUs spent busy, from
 * /proc/stat's aggregate "cpu" line (user + nice + system + irq + softirq +
 * steal), less this process's own CPU time (getrusage RUSAGE_SELF: all its
 * threads), divided by the span's wall time -- the CPUs other processes used
 * on average (0.97 of 2). Steal (the hypervisor running other guests on this
 * VM's CPUs) is part of that figure and also reported on its own.
 */
#ifndef ROPEGRAD_CPU_SHARE_H
#define ROPEGRAD_CPU_SHARE_H

#include <stddef.h>

#include "result.h"   /* rg_cpu_share */

/* The aggregate "cpu" line of /proc/stat, in clock ticks (USER_HZ). */
typedef struct rg_cpu_ticks {
    unsigned long long busy;    /* user + nice + system + irq + softirq + steal */
    unsigned long long steal;
} rg_cpu_ticks;

/* One end of a span: the machine's ticks, this process's CPU seconds (with
 * its reaped children's: a supervised worker's work is ours), the monotonic
 * clock in seconds. */
typedef struct rg_cpu_mark {
    rg_cpu_ticks ticks;
    double self_s, wall_s;
} rg_cpu_mark;

/* Parses the aggregate "cpu" line of /proc/stat text (the first line that
 * starts with "cpu "). Returns 0, or 1 with a message when there is none or
 * it has fewer than the 8 fields up to steal. */
int rg_cpu_ticks_parse(const char *text, rg_cpu_ticks *out, char *err, size_t errlen);

/* The share between two marks, ticks_per_s the clock tick rate
 * (sysconf(_SC_CLK_TCK)). Negative results (tick rounding on a short span)
 * clamp to 0. Returns 0, or 1 with a message when the marks are out of order
 * or the rate is not positive. */
int rg_cpu_share_between(const rg_cpu_mark *start, const rg_cpu_mark *end, double ticks_per_s, rg_cpu_share *out,
                         char *err, size_t errlen);

/* Reads the marks of now from /proc/stat, getrusage and the monotonic clock.
 * Returns 0, or 1 with a message (no /proc/stat: not Linux). */
int rg_cpu_mark_now(rg_cpu_mark *m, char *err, size_t errlen);

/* rg_cpu_mark_now, then the share since start into out. Returns 0, or 1
 * with a message (out->known stays 0). */
int rg_cpu_share_since(const rg_cpu_mark *start, rg_cpu_share *out, char *err, size_t errlen);

#endif
