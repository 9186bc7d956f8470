/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_suite.h -- the suite loader's invariants, shared by the three suite
 * targets (fuzz_definition, fuzz_workload, fuzz_figures).
 *
 * Beyond "no crash, no leak, no UB" (the sanitizers' part), a load must
 * either succeed with a suite that every later stage can trust, or fail with
 * one non-empty line and nothing left allocated. A violation calls abort(),
 * which libFuzzer records as a crash with the input that caused it.
 */
#ifndef ROPEGRAD_FUZZ_SUITE_H
#define ROPEGRAD_FUZZ_SUITE_H

#include <math.h>

#include "fuzz_common.h"
#include "harness.h"

/* The error text a failed call left: one line, non-empty, NUL-terminated. */
static inline void fz_check_err(const char *err, size_t errlen)
{
    size_t n = strnlen(err, errlen);
    FZ_CHECK(n > 0 && n < errlen);
    FZ_CHECK(!memchr(err, '\n', n));
}

static inline void fz_load_and_check(void)
{
    rg_suite s;
    char err[RG_ERRLEN];
    memset(err, 0, sizeof err);
    if (rg_suite_load(fz_workdir(), &s, err, sizeof err)) {
        fz_check_err(err, sizeof err);
        FZ_CHECK(s.workloads == NULL && s.n_workloads == 0);
        return;
    }
    FZ_CHECK(s.name[0] && strnlen(s.name, sizeof s.name) < sizeof s.name);
    FZ_CHECK(s.head_dim >= 2 && s.head_dim <= ROPEGRAD_MAX_HEAD_DIM && s.head_dim % 2 == 0);
    FZ_CHECK(ropegrad_dtype_size(s.grad_dtype) != 0);
    FZ_CHECK(s.n_workloads >= 1 && s.n_workloads <= 100000 && s.workloads);
    for (size_t i = 0; i < s.n_workloads; i++) {
        const rg_workload *w = &s.workloads[i];
        FZ_CHECK(w->index == (int)i);
        FZ_CHECK(w->uuid[0] && strnlen(w->uuid, sizeof w->uuid) < sizeof w->uuid);
        FZ_CHECK(w->batch_size >= 1 && w->seq_len >= 1 && w->head_dim == s.head_dim);
        /* What the harness will allocate must be describable: the problem
         * built from this workload passes the library's own size checks. */
        FZ_CHECK(w->batch_size <= INT64_MAX / w->seq_len);
        FZ_CHECK(w->batch_size * w->seq_len <= INT64_MAX / (w->head_dim * 4));
        FZ_CHECK(isfinite(w->attention_scaling));
        FZ_CHECK(isfinite(w->max_atol) && w->max_atol >= 0 && isfinite(w->max_rtol) && w->max_rtol >= 0);
        FZ_CHECK(w->required_matched_ratio >= 0 && w->required_matched_ratio <= 1);
        FZ_CHECK(isnan(w->max_error_cap) || (isfinite(w->max_error_cap) && w->max_error_cap >= 0));
        FZ_CHECK(isnan(w->sol_ms) || (isfinite(w->sol_ms) && w->sol_ms >= 0));
        FZ_CHECK(isnan(w->baseline_ms) || (isfinite(w->baseline_ms) && w->baseline_ms >= 0));
        FZ_CHECK(rg_workload_bytes(w, s.grad_dtype) > 0);
    }
    if (s.have_figures) {
        FZ_CHECK(s.figures_iterations >= 1 && s.figures_warmup >= 0);
        FZ_CHECK(s.figures_gpu[0] && s.figures_file[0]);
    }
    rg_suite_free(&s);
}

#endif
