/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.c -- problem titles, short keys and source names for the pages
 * (see names.h).
 */
#include "names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* A known source: how it is recorded, how its pages name it. */
typedef struct known_source {
    const char *id, *display, *external_prefix, *comparator_description;
} known_source;

static const known_source sources[] = {
    {"sol-execbench", "NVIDIA SOL-ExecBench", "submission/",
     "Correctness must pass on every case in the SOL evaluation stack."},
};

static const known_source *find_source(const char *id)
{
    for (size_t i = 0; id && i < sizeof sources / sizeof sources[0]; i++)
        if (!strcmp(sources[i].id, id)) return &sources[i];
    return NULL;
}

const char *rg_source_display(const char *source)
{
    const known_source *k = find_source(source);
    return k ? k->display : source ? source : "";
}

void rg_source_external_id(const char *source, const char *id, char *out, size_t n)
{
    if (!out || !n) return;
    const known_source *k = find_source(source);
    snprintf(out, n, "%s%s", k && id && *id ? k->external_prefix : "", id ? id : "");
}

const char *rg_source_comparator_description(const char *source)
{
    const known_source *k = find_source(source);
    return k ? k->comparator_description : "";
}

/* Digits of a "NNN_words" name (3 of them), 0 when it has no such number. */
static int numbered(const char *d)
{
    return d && isdigit((unsigned char)d[0]) && isdigit((unsigned char)d[1]) && isdigit((unsigned char)d[2]) &&
           d[3] == '_' && d[4];
}

static int check_out(char *out, size_t n, char *err, size_t errlen)
{
    if (out && n) return 0;
    if (err && errlen) snprintf(err, errlen, "no buffer for the name");
    return -1;
}

static int fits(int w, size_t n, char *err, size_t errlen)
{
    if (w >= 0 && (size_t)w < n) return 0;
    if (err && errlen) snprintf(err, errlen, "the name does not fit in %zu bytes", n);
    return -1;
}

int rg_problem_title(const char *definition, char *out, size_t n, char *err, size_t errlen)
{
    if (check_out(out, n, err, errlen)) return -1;
    const char *d = definition ? definition : "";
    if (!numbered(d)) return fits(snprintf(out, n, "%s", d), n, err, errlen);
    int w = snprintf(out, n, "L1/%.3s · %s", d, d + 4);
    if (fits(w, n, err, errlen)) return -1;
    char *words = out + strlen("L1/000 · ");
    words[0] = (char)toupper((unsigned char)words[0]);
    for (char *p = words; *p; p++)
        if (*p == '_') *p = ' ';
    return 0;
}

int rg_problem_short(const char *definition, char *out, size_t n, char *err, size_t errlen)
{
    if (check_out(out, n, err, errlen)) return -1;
    const char *d = definition ? definition : "";
    return fits(numbered(d) ? snprintf(out, n, "L1/%.3s", d) : snprintf(out, n, "%s", d), n, err, errlen);
}

int rg_short_key(const char *key, char *out, size_t n, char *err, size_t errlen)
{
    if (check_out(out, n, err, errlen)) return -1;
    const char *k = key ? key : "";
    if (!strncmp(k, "sha256:", 7)) k += 7;
    if (strlen(k) <= 12) return fits(snprintf(out, n, "%s", k), n, err, errlen);
    return fits(snprintf(out, n, "%.12s…", k), n, err, errlen);
}
