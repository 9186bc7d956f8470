/* SPDX-License-Identifier: Apache-2.0 */
/* sol_check.c -- the index's own T_SOL: bundled suite bytes over datasheet
 * bandwidth (see sol_check.h). */
#define _POSIX_C_SOURCE 200809L
#include "sol_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

/* Where the bundled suites come from: set once by the CLI before any thread
 * starts (rg_sol_set_suites), read by every worker thread after. */
static rg_sol_suite_fn bundled_suite;

void rg_sol_set_suites(rg_sol_suite_fn fn) { bundled_suite = fn; }

/* The suite's workload with w's index and uuid, NULL when none. */
static const rg_workload *suite_workload(const rg_suite *s, const rg_mf_workload *w)
{
    for (size_t i = 0; i < s->n_workloads; i++)
        if (s->workloads[i].index == w->index && !strcmp(s->workloads[i].uuid, w->uuid)) return &s->workloads[i];
    return NULL;
}

static int unverifiable(rg_sol_check *out, const char *why)
{
    out->state = RG_SOL_UNVERIFIABLE;
    out->tbps = 0;
    snprintf(out->basis, sizeof out->basis, "%s", why);
    return 0;
}

static int is_cpu_run(const rg_manifest *m) { return !strcmp(m->vendor, "cpu") && !strcmp(m->backend, "cpu"); }

/* Every workload's bytes from the bundled suite over tbps; 0, or 1 with why. */
static int workload_t_sol(const rg_manifest *m, double tbps, double *t_sol, char *why, size_t n)
{
    const rg_suite *s = bundled_suite ? bundled_suite(m->benchmark) : NULL;
    if (!s) {
        snprintf(why, n, "problem \"%.80s\" is not a bundled suite: the index cannot compute its bytes", m->benchmark);
        return 1;
    }
    if (!m->n_workloads) {
        snprintf(why, n, "the record has no per-workload medians to hold against T_SOL");
        return 1;
    }
    for (size_t i = 0; i < m->n_workloads; i++) {
        if (!(m->workloads[i].median > 0) || !isfinite(m->workloads[i].median)) {
            snprintf(why, n, "workload %d has no median to hold against T_SOL", m->workloads[i].index);
            return 1;
        }
        const rg_workload *w = suite_workload(s, &m->workloads[i]);
        double bytes = w ? w->bytes : NAN;
        if (!(bytes > 0) || !isfinite(bytes)) {
            snprintf(why, n, "workload %d (uuid %.40s) is not in the bundled suite: its bytes are unknown",
                     m->workloads[i].index, m->workloads[i].uuid);
            return 1;
        }
        if (t_sol) t_sol[i] = bytes / (tbps * 1e3);   /* bytes / (TB/s) in ns */
    }
    return 0;
}

int rg_manifest_sol_check(const rg_manifest *m, rg_sol_check *out, double *t_sol, char *err, size_t errlen)
{
    if (!m || !out) {
        snprintf(err, errlen, "sol check: no manifest or output");
        return 2;
    }
    memset(out, 0, sizeof *out);
    for (size_t i = 0; t_sol && i < m->n_workloads; i++) t_sol[i] = NAN;
    const char *product, *source;
    double tbps = rg_datasheet_lookup(m->product, &product, &source);
    if (!(tbps > 0) && is_cpu_run(m)) {
        out->state = RG_SOL_CPU;
        snprintf(out->basis, sizeof out->basis, "CPU run: no bandwidth bound, not checked against a speed of light");
        return 0;
    }
    if (!(tbps > 0)) {
        char why[sizeof out->basis];
        snprintf(why, sizeof why, "GPU \"%.80s\" is not in the index's datasheet table", m->product);
        return unverifiable(out, why);
    }
    char why[sizeof out->basis];
    if (workload_t_sol(m, tbps, t_sol, why, sizeof why)) return unverifiable(out, why);
    out->state = RG_SOL_VERIFIED;
    out->tbps = tbps;
    snprintf(out->basis, sizeof out->basis, "bytes of the bundled suite / %s %g TB/s (%.150s)", product, tbps, source);
    return 0;
}

int rg_sol_suite_size(const char *definition)
{
    const rg_suite *s = bundled_suite && definition ? bundled_suite(definition) : NULL;
    return s ? (int)s->n_workloads : -1;
}

int rg_manifest_suite_bytes(const rg_manifest *m, double *bytes)
{
    const rg_suite *s = bundled_suite && m ? bundled_suite(m->benchmark) : NULL;
    for (size_t i = 0; m && bytes && i < m->n_workloads; i++) {
        const rg_workload *w = s ? suite_workload(s, &m->workloads[i]) : NULL;
        bytes[i] = w && w->bytes > 0 && isfinite(w->bytes) ? w->bytes : NAN;
    }
    return s ? 0 : 1;
}

const char *rg_sol_state_name(rg_sol_state s)
{
    return s == RG_SOL_VERIFIED ? "verified" : s == RG_SOL_CPU ? "cpu" : "unverifiable";
}

int rg_baseline_source(const rg_manifest *m, char *out, size_t n)
{
    if (!m || !out || !n) return 2;
    const char *mode = m->baseline_mode;
    if (!strcmp(mode, "suite-figures"))
        snprintf(out, n, "the suite's %.40s figures (%.120s): optimized PyTorch timed on a %.40s, not on this run's GPU "
                         "unless it is one", m->figures_gpu[0] ? m->figures_gpu : "B200", m->figures_file,
                 m->figures_gpu[0] ? m->figures_gpu : "B200");
    else if (!strcmp(mode, "file"))
        snprintf(out, n, "baseline file %.100s (%.100s, %.40s): times given with the run, measured apart from it",
                 m->baseline_name, m->baseline_file, m->baseline_format);
    else if (!strcmp(mode, "reference-same-call"))
        snprintf(out, n, "the definition's reference, timed by the evaluator in the same call on this GPU");
    else if (!strcmp(mode, "none"))
        snprintf(out, n, "none: no baseline was given, so no SOL score and no x reference");
    else {
        out[0] = 0;
        return 1;
    }
    return 0;
}
