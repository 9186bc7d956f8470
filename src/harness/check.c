/* SPDX-License-Identifier: Apache-2.0 */
/* check.c -- the protocol's correctness rules, exactly (b200-figures.json
 * "tolerance"):
 *
 *   element ok        |out - ref| <= max_atol + max_rtol * |ref|
 *   workload correct  matched ratio >= required_matched_ratio (default 0.99)
 *                     and, when max_error_cap is set, max |out - ref| <= cap
 *   always fails      any NaN/Inf in the output or the reference;
 *                     an all-zero output where the reference is not all zero
 *
 * The comparison runs in double against the float64 reference, so the
 * verdict never depends on the rounding of the check itself. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "run_internal.h"

void rg_check_output(const float *out, const double *ref, int64_t n, double atol, double rtol,
                     double required_matched_ratio, double max_error_cap, rg_check *res)
{
    if (!res) return;
    memset(res, 0, sizeof *res);
    res->n = n;
    if (!out || !ref || n <= 0) {
        snprintf(res->reason, sizeof res->reason, "%s", n <= 0 ? "empty output" : "no output or reference");
        return;
    }
    int64_t matched = 0, abs_only = 0, out_bad = 0, ref_bad = 0;
    int out_all_zero = 1, ref_all_zero = 1;
    double max_abs = 0, max_rel = 0;
    for (int64_t i = 0; i < n; i++) {
        const double o = (double)out[i], r = ref[i];
        if (!isfinite(o)) out_bad++;
        if (!isfinite(r)) ref_bad++;
        if (o != 0) out_all_zero = 0;
        if (r != 0) ref_all_zero = 0;
        const double e = fabs(o - r);   /* NaN when either is NaN */
        if (!isfinite(o) || !isfinite(r)) {
            max_abs = INFINITY;
            if (r != 0) max_rel = INFINITY;
            continue;
        }
        if (e > max_abs) max_abs = e;
        if (r != 0 && e / fabs(r) > max_rel) max_rel = e / fabs(r);
        if (e <= atol + rtol * fabs(r)) {
            matched++;
            if (e > rtol * fabs(r)) abs_only++;   /* inside atol + rtol|ref|, beyond rtol|ref| alone */
        }
    }
    res->n_matched = matched;
    res->n_abs_only = abs_only;
    res->n_nonfinite = out_bad;
    res->matched_ratio = (double)matched / (double)n;
    res->max_abs_err = max_abs;
    res->max_rel_err = max_rel;

    /* The first rule broken is the reason (checked in the protocol's order of severity). */
    if (ref_bad)
        snprintf(res->reason, sizeof res->reason, "reference has %lld NaN/Inf values", (long long)ref_bad);
    else if (out_bad)
        snprintf(res->reason, sizeof res->reason, "output has %lld NaN/Inf values", (long long)out_bad);
    else if (out_all_zero && !ref_all_zero)
        snprintf(res->reason, sizeof res->reason, "output is all zero but the reference is not");
    else if (!(res->matched_ratio >= required_matched_ratio))
        snprintf(res->reason, sizeof res->reason, "matched ratio %.6f < required %.6f (%lld of %lld)",
                 res->matched_ratio, required_matched_ratio, (long long)matched, (long long)n);
    else if (!isnan(max_error_cap) && !(max_abs <= max_error_cap))
        snprintf(res->reason, sizeof res->reason, "max abs error %.3g > cap %.3g", max_abs, max_error_cap);
    else
        res->pass = 1;
}

/* The output's elements as floats, for the check (NULL on out of memory). */
static float *widened(const rg_op *op, const void *out, int64_t n)
{
    float *f = malloc((size_t)n * sizeof *f);
    if (f) op->widen(out, n, f);
    return f;
}

int rg_check_op_output(const rg_op *op, const void *out, int64_t n, const double *ref, const rg_workload *w,
                       rg_check *res)
{
    float *f = widened(op, out, n);
    if (!f) return 1;
    rg_check_output(f, ref, n, w->max_atol, w->max_rtol, w->required_matched_ratio, w->max_error_cap, res);
    free(f);
    return 0;
}
