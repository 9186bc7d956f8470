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

/* "2.11" of "torch 2.11.0+cu128" (major.minor of the first number), "" when none. */
static void major_minor(const char *v, char *out, size_t n)
{
    const char *d = v ? v : "";
    while (*d && !isdigit((unsigned char)*d)) d++;
    size_t k = 0, dots = 0;
    while (d[k] && (isdigit((unsigned char)d[k]) || (d[k] == '.' && dots < 1 && isdigit((unsigned char)d[k + 1]))))
        dots += d[k++] == '.';
    snprintf(out, n, "%.*s", (int)k, d);
}

static const char *nz(const char *s) { return s ? s : ""; }

/* "submission 19887": a known source's external id in words; the id as it is otherwise. */
static void external_words(const char *source, const char *id, char *out, size_t n)
{
    char ext[160];
    rg_source_external_id(source, id, ext, sizeof ext);
    const char *slash = strchr(ext, '/');
    if (slash && slash[1]) snprintf(out, n, "%.*s %s", (int)(slash - ext), ext, slash + 1);
    else snprintf(out, n, "%s", ext);
}

const char *rg_impl_display_name(const rg_impl_name_parts *p, char *out, size_t n)
{
    if (!out || !n) return out;
    out[0] = '\0';
    if (!p) return out;
    const char *name = nz(p->impl_name), *ver = nz(p->impl_version), *backend = nz(p->backend);
    const char *kname = nz(p->kernel_name);
    if (!strcmp(name, "ropegrad")) {
        char bk[24];
        size_t i = 0;
        for (; backend[i] && i + 1 < sizeof bk; i++) bk[i] = (char)toupper((unsigned char)backend[i]);
        bk[i] = '\0';
        int named = kname[0] && strcmp(kname, "default");
        if (!strcmp(backend, "cpu"))
            snprintf(out, n, "ropegrad %.30s · CPU%s%.40s", ver, named ? " " : "",
                     named && !strncmp(kname, "cpu-", 4) ? kname + 4 : named ? kname : "");
        else if (p->kernel >= 0)
            snprintf(out, n, "ropegrad %.30s · %s kernel %d%s%.40s%s", ver, bk, p->kernel, named ? " (" : "",
                     named ? kname : "", named ? ")" : "");
        else snprintf(out, n, "ropegrad %.30s · %s", ver, bk);
        return out;
    }
    if (!strncmp(name, "reference (", 11) && name[strlen(name) - 1] == ')') {   /* the torch reference (impl_load.py) */
        char mm[32];
        major_minor(ver, mm, sizeof mm);
        snprintf(out, n, "%.*s%s%s · reference", (int)(strlen(name) - 12), name + 11, mm[0] ? " " : "", mm);
        return out;
    }
    if (name[0]) {   /* a plugin: its own name and version */
        snprintf(out, n, "%.80s%s%.60s", name, ver[0] ? " " : "", ver);
        return out;
    }
    /* An imported run: who made it, and the source's id of it. */
    char who[160] = "", ext[160] = "";
    const char *title = nz(p->run_title), *dot = strstr(title, " · ");
    if (p->project && p->project[0]) snprintf(who, sizeof who, "%s", p->project);
    else if (dot && dot > title) snprintf(who, sizeof who, "%.*s", (int)(dot - title < 150 ? dot - title : 150), title);
    else snprintf(who, sizeof who, "%s", rg_source_display(p->source));
    if (p->external_id && p->external_id[0]) external_words(p->source, p->external_id, ext, sizeof ext);
    else if (kname[0]) snprintf(ext, sizeof ext, "%s", kname);   /* an imported official trace: the solution it ran */
    snprintf(out, n, "%s%s%s", who, ext[0] && who[0] ? " · " : "", ext);
    return out;
}
