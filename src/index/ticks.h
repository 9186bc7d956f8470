/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ticks.h -- the axes of the index's charts: round ticks and their units.
 *
 * Ticks follow Heckbert's "Nice numbers for graph labels" (Graphics Gems,
 * 1990), loose labelling: the axis is widened to a nice range whose ends
 * and step are 1, 2 or 5 x 10^k, and every tick is labelled with just the
 * digits its step needs. An axis has one unit, chosen from its range
 * (ns, µs, ms, s for times; k, M, G, T... for the rest), so the labels of
 * one axis read alike: "400 µs 600 µs ... 1200 µs" or "0.4 ms ... 1.2 ms".
 */
#ifndef RG_INDEX_TICKS_H
#define RG_INDEX_TICKS_H

#include <stddef.h>

#define RG_TICKS_MAX 16   /* no axis gets more ticks than this */

typedef struct rg_ticks {
    double lo, hi, step;  /* the nice range and step, in the caller's unit */
    int n;                /* ticks lo, lo + step, ..., hi: n of them */
} rg_ticks;

/* Heckbert's loose labelling of [lo, hi] aiming at ntick ticks (2..RG_TICKS_MAX).
 * lo == hi is widened around the value first. Refused (2 with a message):
 * a NaN, infinite or negative bound, hi < lo, a range too small or too
 * large to label in double precision. */
int rg_ticks_loose(double lo, double hi, int ntick, rg_ticks *t, char *err, size_t errlen);
/* The same, with 4 to 6 ticks: Heckbert's at 5, else at 4 or 6 when that
 * gives 4 to 6. Steps of 1, 2, 5 x 10^k cannot always (a range of 8.8 with
 * its ends off the grid takes 7 by 2 or 3 by 5): then Heckbert's at 5 (3..7). */
int rg_axis_ticks(double lo, double hi, rg_ticks *t, char *err, size_t errlen);
/* Tick k (0 <= k < t->n). */
double rg_tick_at(const rg_ticks *t, int k);

typedef struct rg_axis_unit {
    char name[16];        /* e.g. "µs" (UTF-8), "TB/s" */
    double per;           /* how many of the caller's units make one of it */
    int frac;             /* digits after the point every label of the axis gets */
} rg_axis_unit;

/* The one unit of an axis: t's ticks are in units that are `to_base` of
 * `base` (e.g. ns: 1e-9 of "s"; GB/s: 1e9 of "B/s"). The SI prefix keeps the
 * largest tick's magnitude in [1, 1000) where a prefix allows it (for "s":
 * ns, µs, ms or s, never ks). Returns 2 with a message on bad input. */
int rg_axis_unit_pick(const rg_ticks *t, double to_base, const char *base, rg_axis_unit *u, char *err,
                      size_t errlen);
/* v (in the caller's unit) as "1.2 ms": u's digits, no "-0". */
void rg_axis_label(char *out, size_t n, double v, const rg_axis_unit *u);

/* v with three significant digits and an SI prefix, e.g. 1.34e12 "B/s" ->
 * "1.34 TB/s", 5.41e-6 "s" -> "5.41 µs". "" for a non-finite v. */
void rg_fmt_si(char *out, size_t n, double v, const char *unit);
/* The same with `digits` significant digits (1..15; 3 otherwise): the
 * compare page shows as many as make two figures differ as their ratio does. */
void rg_fmt_si_digits(char *out, size_t n, double v, const char *unit, int digits);

#endif
