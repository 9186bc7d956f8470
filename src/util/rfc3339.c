/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rfc3339.c -- a strict reader of RFC 3339 date-times (section 5.6):
 *
 *   date-time = full-date "T" full-time
 *   full-date = date-fullyear "-" date-month "-" date-mday      (4, 2, 2 digits)
 *   full-time = partial-time time-offset
 *   partial-time = time-hour ":" time-minute ":" time-second [time-secfrac]
 *   time-secfrac = "." 1*DIGIT
 *   time-offset = "Z" / time-numoffset,  time-numoffset = ("+" / "-") hh ":" mm
 *
 * with the ranges of section 5.7: month 01-12, the day within its month
 * (leap years by the Gregorian rule), hour 00-23, minute 00-59, second
 * 00-60, where 60 (a leap second) is accepted only at 23:59:60 UTC, offsets
 * up to 23:59. "T" and "Z" may be lower case (the note in 5.6; ABNF strings
 * are case-insensitive). The note's space instead of "T" is not accepted:
 * it lets an application define such a format, and a KernelIndex record's
 * observedAt is the date-time production itself.
 */
#include <stddef.h>
#include <string.h>

#include "rfc3339.h"

/* n decimal digits at s into *v; 0, or -1 if one is not a digit. */
static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

static int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int y, int m)
{
    static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : d[m - 1];
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's algorithm). */
static long days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int read_date(const char *s, int *y, int *mo, int *d)
{
    if (digits(s, 4, y) || s[4] != '-' || digits(s + 5, 2, mo) || s[7] != '-' || digits(s + 8, 2, d)) return -1;
    if (*mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo)) return -1;
    return 0;
}

static int read_clock(const char *s, int *h, int *mi, int *sec)
{
    if (digits(s, 2, h) || s[2] != ':' || digits(s + 3, 2, mi) || s[5] != ':' || digits(s + 6, 2, sec)) return -1;
    return *h > 23 || *mi > 59 || *sec > 60 ? -1 : 0;
}

/* The fraction ".d+" at *s (none is fine), advancing *s. */
static int read_fraction(const char **s, double *frac)
{
    *frac = 0;
    if (**s != '.') return 0;
    double scale = 0.1;
    const char *p = *s + 1;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++, scale /= 10) *frac += (*p - '0') * scale;
    *s = p;
    return 0;
}

/* The offset east of UTC in minutes: "Z", "z" or +hh:mm / -hh:mm, ending the text. */
static int read_offset(const char *s, int *minutes)
{
    *minutes = 0;
    if ((s[0] == 'Z' || s[0] == 'z') && !s[1]) return 0;
    int h, m;
    if ((s[0] != '+' && s[0] != '-') || digits(s + 1, 2, &h) || s[3] != ':' || digits(s + 4, 2, &m) || s[6])
        return -1;
    if (h > 23 || m > 59) return -1;
    *minutes = (s[0] == '-' ? -1 : 1) * (h * 60 + m);
    return 0;
}

int rg_rfc3339_parse(const char *text, double *epoch_s)
{
    if (!text || !epoch_s || strlen(text) < 20) return -1;
    int y, mo, d, h, mi, sec, off;
    double frac;
    const char *p = text + 19;
    if (read_date(text, &y, &mo, &d) || (text[10] != 'T' && text[10] != 't') ||
        read_clock(text + 11, &h, &mi, &sec) || read_fraction(&p, &frac) || read_offset(p, &off))
        return -1;
    long utc_minute_of_day = ((long)h * 60 + mi - off) % 1440;
    if (utc_minute_of_day < 0) utc_minute_of_day += 1440;
    if (sec == 60 && utc_minute_of_day != 23 * 60 + 59) return -1;
    *epoch_s = (double)days_from_civil(y, mo, d) * 86400.0 + (h * 60 + mi - off) * 60.0 + sec + frac;
    return 0;
}
