/* SPDX-License-Identifier: Apache-2.0 */
/* options.h -- the command-line conventions every ropegrad program follows,
 * the CLI (src/cli/cliopt.h) and the bench tools alike: workload ranges,
 * strict integers, output targets ('-' is stdout), the machine's load. */
#ifndef ROPEGRAD_UTIL_OPTIONS_H
#define ROPEGRAD_UTIL_OPTIONS_H

#include <stddef.h>

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

#endif
