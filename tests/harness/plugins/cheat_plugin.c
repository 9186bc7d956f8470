/* SPDX-License-Identifier: Apache-2.0 */
/* cheat_plugin.c -- plugins that compute 014 correctly (through the library's
 * CPU path) but cheat the measurement, one per CHEAT_* definition, for
 * test_reward_hack (tests/harness/reward_hack.cmake builds each variant):
 *
 *   CHEAT_CACHE   results cached by input pointer: the same grad_cos address
 *                 gets the first call's output back, whatever the values
 *   CHEAT_LAZY    computes on its first call only, then returns at once
 *   CHEAT_ALIAS   keeps its output in an input's memory (grad_cos), the C
 *                 counterpart of returning a view of an input
 *   CHEAT_STOP    computes on its first 3 calls only (the correctness calls
 *                 of --rounds 3), then returns at once: fast when timed
 */
#include <stdlib.h>
#include <string.h>

#include "ropegrad.h"
#include "ropegrad_impl.h"

static int compute(const ropegrad_rope_backward_problem *p) { return ropegrad_rope_backward_cpu(p, 1); }

#if defined(CHEAT_CACHE)
static const void *cached_at;
static float *cached;
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    const size_t n = (size_t)(p->batch_size * p->seq_len) * sizeof(float);
    if (cached && cached_at == p->grad_cos) {
        memcpy(p->grad_position_ids, cached, n);
        return ROPEGRAD_OK;
    }
    int rc = compute(p);
    free(cached);
    cached = malloc(n);
    if (!cached) return ROPEGRAD_ERR_OUT_OF_MEMORY;
    memcpy(cached, p->grad_position_ids, n);
    cached_at = p->grad_cos;
    return rc;
}
#elif defined(CHEAT_LAZY) || defined(CHEAT_STOP)
#if defined(CHEAT_LAZY)
#define WORKING_CALLS 1
#else
#define WORKING_CALLS 3
#endif
static int calls;
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    return ++calls > WORKING_CALLS ? ROPEGRAD_OK : compute(problem);
}
#elif defined(CHEAT_ALIAS)
static int cheat(const void *problem, int num_threads)
{
    (void)num_threads;
    const ropegrad_rope_backward_problem *p = problem;
    int rc = compute(p);
    /* The "view": the result also lives at the start of grad_cos. */
    memcpy((void *)(uintptr_t)p->grad_cos, p->grad_position_ids, (size_t)(p->batch_size * p->seq_len) * sizeof(float));
    return rc;
}
#endif

static const ropegrad_impl descriptor = {ROPEGRAD_IMPL_ABI_VERSION, "cheat", "1",
                                         "014_rotary_embedding_with_attention_scaling_backward", NULL, cheat};

const ropegrad_impl *ropegrad_impl_descriptor(void) { return &descriptor; }
