/* SPDX-License-Identifier: Apache-2.0 */
/* cliopt.h -- conventions shared by the CLI's commands: workload ranges,
 * output targets ('-' is stdout), and the one place signals are handled. */
#ifndef ROPEGRAD_CLI_CLIOPT_H
#define ROPEGRAD_CLI_CLIOPT_H

#include <stddef.h>

/* SIGINT, SIGTERM and SIGHUP held while a command commits its results
 * (registry, manifest, JSON): a signal that arrives then is remembered and
 * raised again by rg_cli_signals_release(), after everything is in place, so
 * an interrupted run leaves either all of its outputs or none (and no
 * temporary file). Before the commit the default action applies: the run
 * stops and nothing has been written. Not nested. */
void rg_cli_signals_hold(void);
void rg_cli_signals_release(void);

#endif
