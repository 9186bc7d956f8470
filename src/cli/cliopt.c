/* SPDX-License-Identifier: Apache-2.0 */
/* cliopt.c -- see cliopt.h. */
#define _GNU_SOURCE   /* getloadavg, getopt_long */
#include "cliopt.h"
#include "record.h"
#include "rg_term.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int rg_cli_parse_run_id(const char *cmd, const char *s, int64_t *id)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s[0] == '#' ? s + 1 : s, &end, 10) : 0;
    if (!s || errno || *end || v <= 0) {
        rg_term_printf(stderr, "ropegrad %s: '%s' is not a run id (a positive number)\n", cmd, s ? s : "");
        return 2;
    }
    *id = v;
    return 0;
}

int rg_cli_db_option(const char *cmd, const char *value, const char **db)
{
    if (!value || !*value) {
        rg_term_printf(stderr, "ropegrad %s: --db: empty path (give a registry file, or leave --db out)\n", cmd);
        return 2;
    }
    *db = value;
    return 0;
}

/* getopt_long's table for opts: --NAME gives 1000 + its index, --help 'h'. */
static void value_option_table(const rg_cli_value_option *opts, size_t n, struct option *table)
{
    for (size_t i = 0; i < n; i++)
        table[i] = (struct option){opts[i].name, required_argument, NULL, 1000 + (int)i};
    table[n] = (struct option){"help", no_argument, NULL, 'h'};
    table[n + 1] = (struct option){NULL, 0, NULL, 0};
}

int rg_cli_value_options(int argc, char **argv, const char *cmd, const rg_cli_value_option *opts, size_t n,
                         const char *help)
{
    if (!argv || !cmd || !help || (n && !opts) || n > RG_CLI_MAX_VALUE_OPTIONS) {
        rg_term_printf(stderr, "ropegrad %s: bad option parser call (argv, cmd, help and a table of at most %d "
                       "options needed)\n", cmd ? cmd : "?", RG_CLI_MAX_VALUE_OPTIONS);
        return 2;
    }
    for (size_t i = 0; i < n; i++)
        if (!opts[i].name || !opts[i].value) {
            rg_term_printf(stderr, "ropegrad %s: bad option table (option %zu has no name or no value)\n", cmd, i);
            return 2;
        }
    struct option table[RG_CLI_MAX_VALUE_OPTIONS + 2];
    value_option_table(opts, n, table);
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", table, NULL)) != -1) {
        if (c >= 1000 && c < 1000 + (int)n) {
            const rg_cli_value_option *o = &opts[c - 1000];
            if (!strcmp(o->name, "db")) {
                if (rg_cli_db_option(cmd, optarg, o->value)) return 2;
            } else {
                *o->value = optarg;
            }
        } else if (c == 'h') {
            fputs(help, stdout);
            return 0;
        } else if (c == ':') {
            rg_term_printf(stderr, "ropegrad %s: %s needs a value\n", cmd, argv[optind - 1]);
            return 2;
        } else {
            rg_term_printf(stderr, "ropegrad %s: unknown option '%s' (try --help)\n", cmd, argv[optind - 1]);
            return 2;
        }
    }
    return -1;
}

int rg_cli_help_only(int argc, char **argv, const char *cmd, const char *help)
{
    return rg_cli_value_options(argc, argv, cmd, NULL, 0, help);
}
