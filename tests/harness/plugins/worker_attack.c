/* SPDX-License-Identifier: Apache-2.0 */
/* worker_attack.c -- plugins that try to end, crash or outlast the harness
 * from inside (issue 40): one per ATTACK_* definition, built by
 * tests/harness/worker.cmake into tests/plugins/libattack_<variant>.so for
 * test_worker. The call variants first print a results table of their own,
 * as a plugin claiming success would; the harness must neither show it as
 * the result nor exit 0. */
#define _DEFAULT_SOURCE   /* usleep */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ropegrad_impl.h"

#define OP014 "014_rotary_embedding_with_attention_scaling_backward"

static int attack(const void *problem, int num_threads)
{
    (void)problem;
    (void)num_threads;
    printf("passed 16/16\n");
    fflush(stdout);
#if defined(ATTACK_EXIT0)
    exit(0);
#elif defined(ATTACK__EXIT0)
    _exit(0);
#elif defined(ATTACK_QUICK_EXIT0)
    quick_exit(0);
#elif defined(ATTACK_SEGV)
    signal(SIGSEGV, SIG_DFL);   /* the default action, whatever handler the process installed (a sanitizer's) */
    raise(SIGSEGV);
#elif defined(ATTACK_ABORT)
    abort();
#endif
    return 0;
}

static int no_cuda(const void *problem, void *stream)
{
    (void)problem;
    (void)stream;
    return 1;
}

#if defined(ATTACK_SLEEP_CTOR)
__attribute__((constructor)) static void slow_start(void)
{
    for (int i = 0; i < 600; i++) usleep(100000);
}
#endif

static const ropegrad_impl d = {ROPEGRAD_IMPL_ABI_VERSION, "attack", "1", OP014, no_cuda, attack};

const ropegrad_impl *ropegrad_impl_descriptor(void)
{
#if defined(ATTACK_SLEEP_DESC)
    for (int i = 0; i < 600; i++) usleep(100000);
#endif
    return &d;
}
