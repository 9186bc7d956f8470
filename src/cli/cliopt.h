/* SPDX-License-Identifier: Apache-2.0 */
/* cliopt.h -- conventions shared by the CLI's commands: workload ranges, run
 * ids, --help, output targets ('-' is stdout), and the one place signals are handled. */
#ifndef ROPEGRAD_CLI_CLIOPT_H
#define ROPEGRAD_CLI_CLIOPT_H

#include <stddef.h>
#include <stdint.h>

/* SIGINT, SIGTERM and SIGHUP held while a command commits its results
 * (registry, manifest, JSON): a signal that arrives then is remembered and
 * raised again by rg_cli_signals_release(), after everything is in place, so
 * an interrupted run leaves either all of its outputs or none (and no
 * temporary file). Before the commit the default action applies: the run
 * stops and nothing has been written. Not nested. */
void rg_cli_signals_hold(void);
void rg_cli_signals_release(void);

/* Workload indices as nvbench and pytest users write them: "0-3,14" is
 * 0,1,2,3,14. Each item is N or N-M (N <= M), items separated by commas, no
 * blanks; at most 100000 indices. *out is malloc'd (the caller frees it).
 * Returns 0, or 1 with a one-line message naming the option and the item. */
int rg_cli_parse_ranges(const char *opt, const char *s, int **out, size_t *n, char *err, size_t errlen);

/* Strict integer parsing: the whole of s is a decimal integer in [lo, hi].
 * Returns 0 with *v set, or 1. */
int rg_cli_parse_ll(const char *s, long long lo, long long hi, long long *v);

/* An output file can be written at path (its directory exists and is
 * writable, path is not a directory), so a long run does not end in an
 * error it could have reported at once. Returns 0, or 1 with a one-line
 * message naming the option. */
int rg_cli_check_output_path(const char *opt, const char *path, char *err, size_t errlen);

/* 1 when an output option's value means standard output ("-"). */
int rg_cli_is_stdout(const char *path);

/* n bytes of text to path: standard output for "-", else the atomic writer
 * (rg_write_file_atomic: a temporary file renamed into place). Returns 0, or
 * 2 with a one-line message. */
int rg_cli_write_output(const char *path, const char *text, size_t n, char *err, size_t errlen);

/* The machine's 1-minute load average and online CPUs; *busy when the load
 * already occupies half the CPUs or more (CPU timings will be noisy).
 * Returns 0, or 1 when the load average is unknown. */
int rg_cli_load(double *load1, int *cpus, int *busy);

/* A run id ("3" or "#3") into *id; 2 with one line on stderr ("ropegrad CMD: ...") when it is not one. */
int rg_cli_parse_run_id(const char *cmd, const char *s, int64_t *id);

/* An option that takes a value: --NAME VALUE (or --NAME=VALUE) sets *value. */
typedef struct rg_cli_value_option {
    const char *name;
    const char **value;
} rg_cli_value_option;

/* Most options rg_cli_value_options() takes. */
#define RG_CLI_MAX_VALUE_OPTIONS 8

/* The options of command cmd ("report", "runs push") when each takes a value,
 * besides --help (-h): every --NAME VALUE of opts[0..n) sets its *value (the
 * last one given wins), --help prints help to stdout. Returns -1 to go on
 * (optind is the first operand; getopt puts operands after options), 0 after
 * printing help, 2 with one line on stderr ("ropegrad CMD: ...") for an
 * unknown option, an option without its value, or bad arguments (n over
 * RG_CLI_MAX_VALUE_OPTIONS, a NULL pointer). */
int rg_cli_value_options(int argc, char **argv, const char *cmd, const rg_cli_value_option *opts, size_t n,
                         const char *help);

/* A command whose only option is --help: -1 to go on, else the exit code
 * (0 after printing help, 2 for an unknown option). */
int rg_cli_help_only(int argc, char **argv, const char *cmd, const char *help);

#endif
