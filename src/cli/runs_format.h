/* SPDX-License-Identifier: Apache-2.0 */
/* runs_format.h -- the figures and labels the record commands print
 * (runs, verify, report): times, ratios, an implementation's label, a
 * run's headline. Every string that came from a record goes through
 * rg_term (rg_term.h) before it reaches a terminal. */
#ifndef ROPEGRAD_CLI_RUNS_FORMAT_H
#define ROPEGRAD_CLI_RUNS_FORMAT_H

#include <stddef.h>

#include "record.h"
#include "rg_term.h"

/* Everything the record commands print goes through rg_term_printf: text that came from a
 * record (a device or kernel name, a note, an imported manifest's strings) has its
 * control characters and escape sequences made visible before it reaches a
 * terminal. Only the manifest itself (export) is written as its stored bytes. */
#define tprintf(...) rg_term_printf(stdout, __VA_ARGS__)

/* A time for people, from nanoseconds, in the unit that fits: "0.0206 µs",
 * "4.933 µs", "49.33 µs", "493.3 µs", "1.200 ms", "1.204 s"; four significant
 * digits (more for a whole number past 9999), never an exponent; "-" when
 * unknown. JSON keeps its numeric nanosecond fields: this is for text only. */
const char *rg_cli_time(char *buf, size_t n, double ns);
/* An interval for people: "4.933 µs [4.901 µs, 4.970 µs]" (rg_cli_time each),
 * "4.933 µs [unknown]" without samples, "4.933 µs [too few samples]", "-". */
const char *rg_cli_interval(char *buf, size_t n, double est, double lo, double hi, int known);
/* The printf field width that gives s width columns ("µ", "·" and "×" are
 * two bytes, one column): width plus s's bytes that start no character. */
int rg_cli_w(const char *s, int width);
/* "0.9295" (four decimals), "-" when unknown. */
const char *rg_cli_fmt4(char *buf, size_t n, double v);
/* "sha256:" + 12 hex of a digest, "-" when empty (a static buffer: one use per call). */
const char *rg_cli_short_digest(const char *d);
/* "cuda 12 (12-vec-2d)" for a ropegrad run, "sol-execbench #6579" for an imported one. */
const char *rg_cli_impl_label(char *buf, size_t n, const rg_run_row *r);
/* "SOL 0.9295 · 12.86x reference · 16/16 faster", parts left out when unknown. */
void rg_cli_headline(char *buf, size_t n, double sol, double speedup, double fast, double total);
/* s (after rg_term) in at most width columns: cut on a character boundary
 * and ended with "…" when longer. Returns buf. */
const char *rg_cli_fit(char *buf, size_t n, const char *s, int width);
/* Prints s left-aligned in width columns: characters, not bytes (the
 * headline holds "·" and "×"). */
void rg_cli_print_cols(const char *s, int width);

#endif
