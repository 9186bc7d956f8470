/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ticks.c -- round ticks and one unit per axis (see ticks.h).
 *
 * Every count is fixed before a loop starts and every intermediate is
 * checked to be a finite, normal number: NaN, Inf, denormal and absurd
 * ranges are refused with a message, never iterated on.
 */
#include "ticks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const si_prefix[] = {"y", "z", "a", "f", "p", "n", "µ", "m", "",
                                        "k", "M", "G", "T", "P", "E", "Z", "Y"};
#define SI_ZERO 8   /* si_prefix[SI_ZERO] is no prefix */
#define SI_MAX 8    /* exponents of 1000 from -8 to 8 */

static int normal_positive(double v) { return isfinite(v) && v >= DBL_MIN; }

/* Heckbert's nicenum: a 1, 2, 5 or 10 x 10^k near x; rounded to the
 * nearest when round, else the smallest not below x. 0 when x (or 10^k)
 * is not a normal positive number. */
static double nice_number(double x, int round)
{
    if (!normal_positive(x)) return 0;
    double p = pow(10, floor(log10(x)));
    if (!normal_positive(p)) return 0;
    double f = x / p, nf;
    const double slack = 1e-9;   /* x = 2e-300 may divide to 2.0000000000000004 */
    if (round) nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    else nf = f <= 1 + slack ? 1 : f <= 2 + slack ? 2 : f <= 5 + slack ? 5 : 10;
    double v = nf * p;
    return normal_positive(v) ? v : 0;
}

static int refuse(char *err, size_t errlen, const char *why)
{
    if (err && errlen) snprintf(err, errlen, "axis ticks: %s", why);
    return 2;
}

static const char *bounds_problem(double lo, double hi)
{
    if (!isfinite(lo) || !isfinite(hi)) return "a bound is not a finite number";
    if (lo < 0 || hi < 0) return "a negative bound";
    if (hi < lo) return "the upper bound is below the lower";
    return NULL;
}

int rg_ticks_loose(double lo, double hi, int ntick, rg_ticks *t, char *err, size_t errlen)
{
    if (!t) return refuse(err, errlen, "no output");
    memset(t, 0, sizeof *t);
    if (ntick < 2 || ntick > RG_TICKS_MAX / 2) return refuse(err, errlen, "ntick outside 2..8");
    const char *why = bounds_problem(lo, hi);
    if (why) return refuse(err, errlen, why);
    if (hi == lo) {   /* one value: a small range around it */
        double w = lo > 0 ? lo * 0.01 : 1;
        lo = fmax(0, lo - w), hi += w;
    }
    double range = nice_number(hi - lo, 0);
    double d = range ? nice_number(range / (ntick - 1), 1) : 0;
    if (!d) return refuse(err, errlen, "a range too small or too large to label");
    if (d < fmax(fabs(lo), fabs(hi)) * 1e-12) return refuse(err, errlen, "a range too narrow for its magnitude");
    double first = floor(lo / d), last = ceil(hi / d);
    if (!isfinite(last * d)) return refuse(err, errlen, "a range too large to label");
    double count = last - first + 1;
    if (!(count >= 2 && count <= RG_TICKS_MAX)) return refuse(err, errlen, "too many ticks");
    t->lo = first * d;
    t->hi = last * d;
    t->step = d;
    t->n = (int)count;
    return 0;
}

int rg_axis_ticks(double lo, double hi, rg_ticks *t, char *err, size_t errlen)
{
    int rc = rg_ticks_loose(lo, hi, 5, t, err, errlen);
    for (int ntick = 4; !rc && (t->n < 4 || t->n > 6) && ntick <= 6; ntick += 2) {
        rg_ticks other;
        if (!rg_ticks_loose(lo, hi, ntick, &other, NULL, 0) && other.n >= 4 && other.n <= 6) *t = other;
    }
    return rc;
}

double rg_tick_at(const rg_ticks *t, int k)
{
    if (!t || k < 0 || k >= t->n) return NAN;
    return k == t->n - 1 ? t->hi : t->lo + t->step * k;
}

/* The exponent of 1000 that keeps v (> 0, in base units) in [1, 1000), within the prefixes. */
static int thousands(double v, int highest)
{
    int e3 = (int)floor(log10(v) / 3 + 1e-9);
    if (e3 < -SI_MAX) e3 = -SI_MAX;
    if (e3 > highest) e3 = highest;
    return e3;
}

int rg_axis_unit_pick(const rg_ticks *t, double to_base, const char *base, rg_axis_unit *u, char *err,
                      size_t errlen)
{
    if (!u) return refuse(err, errlen, "no output");
    memset(u, 0, sizeof *u);
    if (!t || !base || t->n < 2 || !normal_positive(t->step)) return refuse(err, errlen, "no ticks");
    if (!normal_positive(to_base)) return refuse(err, errlen, "a unit scale that is not a positive number");
    if (strlen(base) > 8) return refuse(err, errlen, "a unit name longer than 8 bytes");
    double top = fmax(fabs(t->lo), fabs(t->hi)) * to_base;
    if (!normal_positive(top)) return refuse(err, errlen, "ticks too small to label");
    int e3 = thousands(top, strcmp(base, "s") ? SI_MAX : 0);   /* times: never ks */
    u->per = pow(10, 3 * e3) / to_base;
    if (!normal_positive(u->per)) return refuse(err, errlen, "ticks outside the SI prefixes");
    int frac = -(int)floor(log10(t->step / u->per) + 1e-9);
    u->frac = frac < 0 ? 0 : frac > 12 ? 12 : frac;
    snprintf(u->name, sizeof u->name, "%s%s", si_prefix[e3 + SI_ZERO], base);
    return 0;
}

void rg_axis_label(char *out, size_t n, double v, const rg_axis_unit *u)
{
    if (!out || !n) return;
    if (!u || !isfinite(v) || !normal_positive(u->per)) {
        out[0] = '\0';
        return;
    }
    double x = v / u->per;
    if (fabs(x) < 0.5 * pow(10, -u->frac)) x = 0;   /* never "-0.0" */
    if (fabs(x) >= 1e15) snprintf(out, n, "%.3g%s%s", x, u->name[0] ? " " : "", u->name);   /* beyond the prefixes */
    else snprintf(out, n, "%.*f%s%s", u->frac, x, u->name[0] ? " " : "", u->name);
}

void rg_fmt_si_digits(char *out, size_t n, double v, const char *unit, int digits)
{
    if (!out || !n) return;
    if (!isfinite(v) || !unit) {
        snprintf(out, n, "%s", "");
        return;
    }
    if (digits < 1 || digits > 15) digits = 3;
    if (v == 0) {
        snprintf(out, n, "0 %s", unit);
        return;
    }
    int e3 = (int)floor(log10(fabs(v)) / 3);
    if (e3 < -SI_MAX || e3 > SI_MAX) {
        snprintf(out, n, "%.*g %s", digits, v, unit);
        return;
    }
    double m = v / pow(10, 3 * e3);
    if (fabs(m) >= 1000 - 0.5 * pow(10, 3 - digits) && e3 < SI_MAX) e3++, m /= 1000;
    snprintf(out, n, "%.*g %s%s", digits, m, si_prefix[e3 + SI_ZERO], unit);
}

void rg_fmt_si(char *out, size_t n, double v, const char *unit) { rg_fmt_si_digits(out, n, v, unit, 3); }
