/* SPDX-License-Identifier: Apache-2.0 */
/* commands.h -- the CLI's commands, one file each, thin: parse, call, print.
 * Each returns the process exit code: 0 ok, 1 a check failed, 2 bad usage or input. */
#ifndef ROPEGRAD_CLI_COMMANDS_H
#define ROPEGRAD_CLI_COMMANDS_H

int rg_cmd_bench(int argc, char **argv);           /* bench.c */
int rg_cmd_check(int argc, char **argv);           /* bench.c */
int rg_cmd_verify(int argc, char **argv);          /* verify.c */
int rg_cmd_runs(int argc, char **argv);            /* runs.c (its subcommands: runs.h) */
int rg_cmd_runs_history_check(int argc, char **argv); /* history.c: runs history|check (argv[0]) */
int rg_cmd_report(int argc, char **argv);          /* report.c */
int rg_cmd_export_solution(int argc, char **argv); /* export.c */
int rg_cmd_serve(int argc, char **argv);           /* serve.c */
int rg_cmd_site(int argc, char **argv);            /* site.c */
int rg_cmd_runs_push(int argc, char **argv);       /* push.c (ropegrad runs push) */
int rg_cmd_runs_import_catalog(int argc, char **argv); /* runs_import_catalog.c (ropegrad runs import-catalog) */
int rg_cmd_runs_calibrate(int argc, char **argv);  /* runs_calibrate.c (ropegrad runs calibrate) */
int rg_cmd_migrate(int argc, char **argv);         /* migrate.c */
int rg_cmd_keygen(int argc, char **argv);          /* keygen.c */

#include <stddef.h>
/* The bundled suite folder (bench.c): beside the executable, else ./suites/. */
void rg_cli_default_suite(char *dst, size_t n);

#endif
