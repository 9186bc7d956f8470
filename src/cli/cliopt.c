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

/* A non-negative decimal integer that fills [s, end): 0, or 1. */
static int parse_index(const char *s, const char *end, long *v)
{
    if (s == end || end - s > 9) return 1;
    long x = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return 1;
        x = x * 10 + (*p - '0');
    }
    *v = x;
    return 0;
}

int rg_cli_parse_ranges(const char *opt, const char *s, int **out, size_t *n, char *err, size_t errlen)
{
    enum { MAX_INDICES = 100000 };
    *out = NULL;
    *n = 0;
    if (!s || !*s) {
        snprintf(err, errlen, "%s: empty list", opt);
        return 1;
    }
    int *v = NULL;
    size_t k = 0, cap = 0;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *dash = memchr(p, '-', (size_t)(end - p));
        long lo, hi;
        int bad = dash ? parse_index(p, dash, &lo) || parse_index(dash + 1, end, &hi) : parse_index(p, end, &lo);
        if (!dash) hi = lo;
        if (bad || lo > hi) {
            snprintf(err, errlen, "%s: '%.*s' is not an index or a range N-M with N <= M (in '%.200s')", opt,
                     (int)(end - p > 40 ? 40 : end - p), p, s);
            free(v);
            return 1;
        }
        if ((size_t)(hi - lo) + 1 > MAX_INDICES - k) {
            snprintf(err, errlen, "%s: more than %d workload indices", opt, MAX_INDICES);
            free(v);
            return 1;
        }
        size_t need = k + (size_t)(hi - lo) + 1;
        if (need > cap) {
            cap = need * 2;
            int *nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                free(v);
                snprintf(err, errlen, "out of memory");
                return 1;
            }
            v = nv;
        }
        for (long i = lo; i <= hi; i++) v[k++] = (int)i;
        if (!comma) break;
        p = comma + 1;
    }
    *out = v;
    *n = k;
    return 0;
}

int rg_cli_parse_ll(const char *s, long long lo, long long hi, long long *v)
{
    if (!s || !*s || !v) return 1;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || x < lo || x > hi) return 1;
    *v = x;
    return 0;
}

int rg_cli_check_output_path(const char *opt, const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if (!*path || strlen(path) >= sizeof dir) {
        snprintf(err, errlen, "%s: invalid path '%.200s'", opt, path);
        return 1;
    }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %.200s: directory '%.200s' does not exist", opt, path, dir);
        return 1;
    }
    if (access(dir, W_OK) != 0) {
        snprintf(err, errlen, "%s %.200s: directory '%.200s' is not writable", opt, path, dir);
        return 1;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %.200s: is a directory", opt, path);
        return 1;
    }
    return 0;
}

int rg_cli_is_stdout(const char *path) { return path && !strcmp(path, "-"); }

int rg_cli_write_output(const char *path, const char *text, size_t n, char *err, size_t errlen)
{
    if (rg_cli_is_stdout(path)) {
        if (fwrite(text, 1, n, stdout) != n || fflush(stdout) != 0) {
            snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
            return 2;
        }
        return 0;
    }
    return rg_write_file_atomic(path, text, n, err, errlen) ? 2 : 0;
}

int rg_cli_load(double *load1, int *cpus, int *busy)
{
    double l[1];
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    *cpus = c > 0 ? (int)c : 1;
    *busy = 0;
    if (getloadavg(l, 1) != 1) {
        *load1 = -1;
        return 1;
    }
    *load1 = l[0];
    *busy = l[0] >= 0.5 * *cpus;
    return 0;
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
            *opts[c - 1000].value = optarg;
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
