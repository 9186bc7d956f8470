/* SPDX-License-Identifier: Apache-2.0 */
/* slow_plugin.c -- a plugin for 014 that does the library's CPU work and then
 * SLOW_PERCENT percent more: it times its own call and spins (on the
 * monotonic clock, no sleep) for that share of it, so every call takes
 * (1 + SLOW_PERCENT/100) times the work's own time, whatever the machine.
 * Built twice (tests/record/runs_check.cmake): libgate_same.so (0) and
 * libgate_slow20.so (20), the same-code and the 20%-slower copies that
 * bench/gate_pairs.sh and test_runs_calibrate check against each other. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "ropegrad.h"
#include "ropegrad_impl.h"

#ifndef SLOW_PERCENT
#error "define SLOW_PERCENT"
#endif

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int work_and_more(const void *problem, int num_threads)
{
    double t0 = now_ns();
    int rc = ropegrad_rope_backward_cpu(problem, num_threads);
    double until = now_ns() + (now_ns() - t0) * (SLOW_PERCENT / 100.0);
    while (SLOW_PERCENT > 0 && now_ns() < until) {}
    return rc;
}

#define STR2(x) #x
#define STR(x) STR2(x)
static const ropegrad_impl descriptor = {ROPEGRAD_IMPL_ABI_VERSION, "gate-copy", "plus-" STR(SLOW_PERCENT) "pct",
                                         "014_rotary_embedding_with_attention_scaling_backward", NULL, work_and_more};

const ropegrad_impl *ropegrad_impl_descriptor(void) { return &descriptor; }
