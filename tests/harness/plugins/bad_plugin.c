/* SPDX-License-Identifier: Apache-2.0 */
/* bad_plugin.c -- one deliberately broken plugin per BAD_* definition, for
 * test_plugin's refusal matrix (tests/harness/plugin.cmake builds each variant).
 * Every variant would compute nothing: ropegrad must refuse it before any
 * call, so the CPU entry aborts the process if it is ever reached. */
#include <stdlib.h>

#include "ropegrad_impl.h"

#if defined(__GNUC__)
#define RG_MAYBE_UNUSED __attribute__((unused))
#else
#define RG_MAYBE_UNUSED
#endif

RG_MAYBE_UNUSED static int never_called(const void *problem, int num_threads)
{
    (void)problem;
    (void)num_threads;
    abort();
}

RG_MAYBE_UNUSED static int never_launched(const void *problem, void *stream)
{
    (void)problem;
    (void)stream;
    abort();
}

#define OP014 "014_rotary_embedding_with_attention_scaling_backward"

/* BAD_HANG_CPU: a valid descriptor whose CPU entry never returns. */
static volatile int g_spin = 1;
RG_MAYBE_UNUSED static int hangs(const void *problem, int num_threads)
{
    (void)problem;
    (void)num_threads;
    while (g_spin) {
    }
    return 0;
}

#if defined(BAD_WRONG_ABI)
static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION + 1, "bad", "1", OP014, never_launched, never_called};
#elif defined(BAD_WRONG_OP)
static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION, "bad", "1", "011_rotary_position_embedding", never_launched,
                                never_called};
#elif defined(BAD_NULL_CPU)
static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION, "bad", "1", OP014, never_launched, NULL};
#elif defined(BAD_NULL_CUDA)
static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION, "bad", "1", OP014, NULL, never_called};
#elif defined(BAD_NAME)
static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION, "bad\x1b[31m", "1", OP014, never_launched, never_called};
#elif defined(BAD_HANG_CPU)
static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION, "hang", "1", OP014, never_launched, hangs};
#elif defined(BAD_NULL_VERSION)
static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION, "bad", NULL, OP014, never_launched, never_called};
#endif

#if defined(BAD_NO_DESCRIPTOR)
/* Exports something else. */
int not_a_descriptor(void);
int not_a_descriptor(void) { return never_called(NULL, 0); }
#elif defined(BAD_NULL_DESCRIPTOR)
const ropegrad_impl *ropegrad_impl_descriptor(void) { return NULL; }
#else
const ropegrad_impl *ropegrad_impl_descriptor(void) { return &d; }
#endif
