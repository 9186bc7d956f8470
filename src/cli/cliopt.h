/* SPDX-License-Identifier: Apache-2.0 */
/* cliopt.h -- conventions shared by the CLI's commands: run ids, --help,
 * and the one place signals are handled; those the bench tools share too
 * (workload ranges, output targets: '-' is stdout) are src/util/options.h. */
#ifndef ROPEGRAD_CLI_CLIOPT_H
#define ROPEGRAD_CLI_CLIOPT_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"   /* ranges, strict integers, output targets, the load (src/util/) */

/* SIGINT, SIGTERM and SIGHUP held while a command commits its results
 * (registry, manifest, JSON): a signal that arrives then is remembered and
 * raised again by rg_cli_signals_release(), after everything is in place, so
 * an interrupted run leaves either all of its outputs or none (and no
 * temporary file). Before the commit the default action applies: the run
 * stops and nothing has been written. Not nested. */
void rg_cli_signals_hold(void);
void rg_cli_signals_release(void);

/* A run id ("3" or "#3") into *id; 2 with one line on stderr ("ropegrad CMD: ...") when it is not one. */
int rg_cli_parse_run_id(const char *cmd, const char *s, int64_t *id);

/* The value of --db (every command that takes it): an empty path, which
 * would silently mean the default registry, is 2 with one line on stderr
 * ("ropegrad CMD: --db: empty path ..."); else *db = value and 0. */
int rg_cli_db_option(const char *cmd, const char *value, const char **db);

/* An option that takes a value: --NAME VALUE (or --NAME=VALUE) sets *value. */
typedef struct rg_cli_value_option {
    const char *name;
    const char **value;
} rg_cli_value_option;

/* Most options rg_cli_value_options() takes. */
#define RG_CLI_MAX_VALUE_OPTIONS 8

/* The options of command cmd ("report", "runs push") when each takes a value,
 * besides --help (-h): every --NAME VALUE of opts[0..n) sets its *value (the
 * last one given wins; --db goes through rg_cli_db_option), --help prints
 * help to stdout. Returns -1 to go on
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
