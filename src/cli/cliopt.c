/* SPDX-License-Identifier: Apache-2.0 */
/* cliopt.c -- see cliopt.h. */
#define _POSIX_C_SOURCE 200809L
#include "cliopt.h"

#include <signal.h>
#include <string.h>

/* Held with a handler, not a signal mask: the process has OpenMP worker
 * threads, and a mask set here would not cover them (a process-directed
 * signal goes to any thread that does not block it). */
static const int held_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_HELD (sizeof held_signals / sizeof held_signals[0])
static struct sigaction saved_actions[N_HELD];
static volatile sig_atomic_t pending_signal;

static void remember(int sig) { pending_signal = sig; }

void rg_cli_signals_hold(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remember;
    sigfillset(&sa.sa_mask);
    pending_signal = 0;
    for (size_t i = 0; i < N_HELD; i++) {
        sigaction(held_signals[i], NULL, &saved_actions[i]);
        if (saved_actions[i].sa_handler != SIG_IGN) sigaction(held_signals[i], &sa, NULL);   /* ignored stays ignored */
    }
}

void rg_cli_signals_release(void)
{
    for (size_t i = 0; i < N_HELD; i++) sigaction(held_signals[i], &saved_actions[i], NULL);
    if (pending_signal) raise(pending_signal);   /* now with its own action: usually the end of the process */
}
