/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_share.c -- the CPU share other processes used over a span (cpu_share.h). */
#define _POSIX_C_SOURCE 200809L
#include "cpu_share.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void set_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen) snprintf(err, errlen, "%s", msg);
}

int rg_cpu_ticks_parse(const char *text, rg_cpu_ticks *out, char *err, size_t errlen)
{
    if (!text || !out) {
        set_err(err, errlen, "cpu share: no text or output");
        return 1;
    }
    const char *line = text;
    while (line && strncmp(line, "cpu ", 4)) {
        line = strchr(line, '\n');
        if (line) line++;
    }
    if (!line) {
        set_err(err, errlen, "cpu share: no aggregate \"cpu\" line in /proc/stat");
        return 1;
    }
    /* user nice system idle iowait irq softirq steal [guest guest_nice] */
    unsigned long long f[8];
    if (sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6],
               &f[7]) != 8) {
        set_err(err, errlen, "cpu share: the \"cpu\" line of /proc/stat has fewer than 8 fields");
        return 1;
    }
    out->busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
    out->steal = f[7];
    return 0;
}

static double nonnegative(double v) { return v > 0 ? v : 0; }

int rg_cpu_share_between(const rg_cpu_mark *start, const rg_cpu_mark *end, double ticks_per_s, rg_cpu_share *out,
                         char *err, size_t errlen)
{
    if (!start || !end || !out) {
        set_err(err, errlen, "cpu share: no marks or output");
        return 1;
    }
    memset(out, 0, sizeof *out);
    double span = end->wall_s - start->wall_s;
    if (!(ticks_per_s > 0) || !(span > 0) || end->ticks.busy < start->ticks.busy ||
        end->ticks.steal < start->ticks.steal || end->self_s < start->self_s) {
        set_err(err, errlen, "cpu share: marks out of order or no clock tick rate");
        return 1;
    }
    double busy_s = (double)(end->ticks.busy - start->ticks.busy) / ticks_per_s;
    double steal_s = (double)(end->ticks.steal - start->ticks.steal) / ticks_per_s;
    out->other_cpus = nonnegative(busy_s - (end->self_s - start->self_s)) / span;
    out->steal_cpus = steal_s / span;
    out->span_s = span;
    out->known = 1;
    return 0;
}

static int read_proc_stat(rg_cpu_ticks *t, char *err, size_t errlen)
{
    char text[4096];
    FILE *f = fopen("/proc/stat", "r");
    if (!f) {
        set_err(err, errlen, "cpu share: cannot open /proc/stat");
        return 1;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);   /* the aggregate line comes first */
    fclose(f);
    text[n] = 0;
    return rg_cpu_ticks_parse(text, t, err, errlen);
}

int rg_cpu_mark_now(rg_cpu_mark *m, char *err, size_t errlen)
{
    if (!m) {
        set_err(err, errlen, "cpu share: no mark");
        return 1;
    }
    /* Ours: this process and the children it has waited for (the supervised
     * worker that ran a plugin is reaped before the share is taken). */
    struct rusage ru, rc;
    struct timespec ts;
    if (getrusage(RUSAGE_SELF, &ru) || getrusage(RUSAGE_CHILDREN, &rc) || clock_gettime(CLOCK_MONOTONIC, &ts)) {
        set_err(err, errlen, "cpu share: getrusage or clock_gettime failed");
        return 1;
    }
    if (read_proc_stat(&m->ticks, err, errlen)) return 1;
    m->self_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6 +
                (double)rc.ru_utime.tv_sec + (double)rc.ru_stime.tv_sec +
                ((double)rc.ru_utime.tv_usec + (double)rc.ru_stime.tv_usec) / 1e6;
    m->wall_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return 0;
}

int rg_cpu_share_since(const rg_cpu_mark *start, rg_cpu_share *out, char *err, size_t errlen)
{
    rg_cpu_mark end;
    if (out) out->known = 0;
    if (rg_cpu_mark_now(&end, err, errlen)) return 1;
    return rg_cpu_share_between(start, &end, (double)sysconf(_SC_CLK_TCK), out, err, errlen);
}
