/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strict_json.c -- see strict_json.h. Two passes around cJSON: a lexical
 * pass over the bytes (UTF-8, strings' raw bytes and escapes, with line
 * numbers), cJSON's parse, then a walk of the tree for repeated member names.
 */
#define _POSIX_C_SOURCE 200809L
#include "strict_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t k;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) k = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) k = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) k = 4, cp = c & 0x07;
    else return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;   /* overlong, range */
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;                                             /* surrogates */
    return k;
}

static int hex4(const unsigned char *p, size_t n, unsigned *out)
{
    if (n < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

static int is_digit(unsigned c) { return c >= '0' && c <= '9'; }

/* Characters that can continue a number token as cJSON reads one, and the
 * letters of hex and NaN/Infinity forms: the whole run is judged at once. */
static int in_number_run(unsigned c)
{
    return is_digit(c) || c == '+' || c == '-' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Length of the number at t that RFC 8259's grammar allows,
 *   -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
 * 0 when none starts there. */
static size_t rfc_number_len(const unsigned char *t, size_t n)
{
    size_t i = 0;
    if (i < n && t[i] == '-') i++;
    if (i < n && t[i] == '0') i++;
    else if (i < n && t[i] >= '1' && t[i] <= '9')
        while (i < n && is_digit(t[i])) i++;
    else return 0;
    if (i < n && t[i] == '.') {
        size_t d = ++i;
        while (i < n && is_digit(t[i])) i++;
        if (i == d) return 0;
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < n && (t[i] == '+' || t[i] == '-')) i++;
        size_t d = i;
        while (i < n && is_digit(t[i])) i++;
        if (i == d) return 0;
    }
    return i;
}

/* The number token at t[0..): its length when the whole run of number-like
 * characters is one RFC 8259 number, else 0 (05407, 5407., .5, +1, 1e, 0x1f). */
static size_t number_token(const unsigned char *t, size_t n)
{
    size_t run = 0;
    while (run < n && in_number_run(t[run])) run++;
    size_t ok = rfc_number_len(t, run);
    return ok == run ? run : 0;
}

/* The lexical pass. 0, or -1 with a message. */
static int lex_check(const unsigned char *t, size_t len, const char *what, char *err, size_t errlen)
{
    int in_str = 0;
    long line = 1;
    for (size_t i = 0; i < len;) {
        unsigned c = t[i];
        if (c == '\n') line++;
        if (c == 0) {
            snprintf(err, errlen, "%s: line %ld: a NUL byte", what, line);
            return -1;
        }
        if (c >= 0x80) {
            size_t k = utf8_len(t + i, len - i);
            if (!k) {
                snprintf(err, errlen, "%s: line %ld: invalid UTF-8", what, line);
                return -1;
            }
            i += k;
            continue;
        }
        if (!in_str) {
            if (c == '-' || c == '+' || c == '.' || is_digit(c)) {
                size_t k = number_token(t + i, len - i);
                if (!k) {
                    snprintf(err, errlen, "%s: line %ld: a number outside JSON's grammar (RFC 8259)", what, line);
                    return -1;
                }
                i += k;
                continue;
            }
            if (c == '"') in_str = 1;
            i++;
            continue;
        }
        if (c < 0x20) {
            snprintf(err, errlen, "%s: line %ld: a raw control byte 0x%02x inside a string", what, line, c);
            return -1;
        }
        if (c == '"') {
            in_str = 0;
            i++;
            continue;
        }
        if (c != '\\') {
            i++;
            continue;
        }
        if (i + 1 >= len) break;   /* cJSON reports the unterminated string */
        if (t[i + 1] != 'u') {
            i += 2;
            continue;
        }
        unsigned u, lo;
        if (hex4(t + i + 2, len - i - 2, &u)) {
            i += 2;   /* malformed escape: cJSON refuses it */
            continue;
        }
        if (u == 0) {
            snprintf(err, errlen, "%s: line %ld: a string holds U+0000 (\\u0000)", what, line);
            return -1;
        }
        if (u >= 0xDC00 && u <= 0xDFFF) {
            snprintf(err, errlen, "%s: line %ld: a lone low surrogate \\u%04x in a string", what, line, u);
            return -1;
        }
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 11 < len + 0 && t[i + 6] == '\\' && t[i + 7] == 'u' && !hex4(t + i + 8, len - i - 8, &lo) &&
                lo >= 0xDC00 && lo <= 0xDFFF) {
                i += 12;
                continue;
            }
            snprintf(err, errlen, "%s: line %ld: a lone high surrogate \\u%04x in a string", what, line, u);
            return -1;
        }
        i += 6;
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return strcmp(x ? x : "", y ? y : "");
}

/* Appends ".name" or "[i]" to path (bounded; "..." when it no longer fits). */
static void path_push(char *path, size_t cap, size_t at, const cJSON *child, int index)
{
    if (at >= cap) return;
    if (child->string) snprintf(path + at, cap - at, ".%.64s", child->string);
    else snprintf(path + at, cap - at, "[%d]", index);
}

/* Repeated member names in v or below. 0, or -1 with a message. */
static int dup_check(const cJSON *v, char *path, size_t cap, const char *what, char *err, size_t errlen)
{
    size_t at = strlen(path);
    if (cJSON_IsObject(v)) {
        size_t n = 0;
        for (const cJSON *c = v->child; c; c = c->next) n++;
        if (n > 1) {
            const char **names = malloc(n * sizeof *names);
            if (!names) {
                snprintf(err, errlen, "%s: out of memory", what);
                return -1;
            }
            size_t k = 0;
            for (const cJSON *c = v->child; c; c = c->next) names[k++] = c->string;
            qsort(names, n, sizeof *names, cmp_name);
            for (k = 1; k < n; k++) {
                if (!cmp_name(&names[k - 1], &names[k])) {
                    snprintf(err, errlen, "%s: %s: the member name \"%.64s\" is repeated", what, path,
                             names[k] ? names[k] : "");
                    free(names);
                    return -1;
                }
            }
            free(names);
        }
    }
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        int i = 0;
        for (const cJSON *c = v->child; c; c = c->next, i++) {
            if (!cJSON_IsObject(c) && !cJSON_IsArray(c)) continue;
            path_push(path, cap, at, c, i);
            int rc = dup_check(c, path, cap, what, err, errlen);
            path[at] = 0;
            if (rc) return rc;
        }
    }
    return 0;
}

cJSON *rg_json_parse_strict(const char *text, size_t len, const char *what, char *err, size_t errlen)
{
    if (!what) what = "JSON";
    if (!text) {
        snprintf(err, errlen, "%s: no text", what);
        return NULL;
    }
    if (lex_check((const unsigned char *)text, len, what, err, errlen)) return NULL;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!j) {
        size_t at = end && end >= text ? (size_t)(end - text) : 0;
        long line = 1;
        for (size_t i = 0; i < at && i < len; i++) line += text[i] == '\n';
        snprintf(err, errlen, "%s: line %ld: invalid JSON (near byte %zu)", what, line, at);
        return NULL;
    }
    size_t at = end ? (size_t)(end - text) : len;
    while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) at++;
    if (at < len) {
        snprintf(err, errlen, "%s: invalid JSON (text after the document at byte %zu)", what, at);
        cJSON_Delete(j);
        return NULL;
    }
    char path[512] = "$";
    if (dup_check(j, path, sizeof path, what, err, errlen)) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

/* A secret (a private key, a token) must not be readable by group or others,
 * as ssh requires of its keys. 0, or -1 with a message. */
static int private_mode_ok(const char *path, const struct stat *st, char *err, size_t errlen)
{
    if (!(st->st_mode & 077)) return 0;
    snprintf(err, errlen, "%s: permissions %04o are too open (group or others can read it); chmod 600 %s", path,
             (unsigned)(st->st_mode & 07777), path);
    return -1;
}

/* The file opened for reading, never waiting (O_NONBLOCK: a FIFO does not
 * block the open) and only when it is a regular file (and, for a secret,
 * private). The descriptor, or -1 with a message. */
static int open_regular(const char *path, int secret, char *err, size_t errlen)
{
    if (!path || !*path) {
        snprintf(err, errlen, "no file given");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (secret && private_mode_ok(path, &st, err, errlen)) {
        close(fd);
        return -1;
    }
    return fd;
}

static char *read_bounded(const char *path, int secret, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
    int fd = open_regular(path, secret, err, errlen);
    if (fd < 0) return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            if (cap > max_bytes + 1) break;
            char *b2 = realloc(buf, cap * 2);
            if (!b2) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b2;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n > max_bytes) break;
    }
    close(fd);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (n > max_bytes) {
        snprintf(err, errlen, "%s: larger than the limit of %zu bytes", path, max_bytes);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

char *rg_read_file_bounded(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
    return read_bounded(path, 0, max_bytes, len, err, errlen);
}

char *rg_read_secret_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
    return read_bounded(path, 1, max_bytes, len, err, errlen);
}

cJSON *rg_json_read_strict(const char *path, size_t max_bytes, char *err, size_t errlen)
{
    size_t n;
    char *buf = rg_read_file_bounded(path, max_bytes, &n, err, errlen);
    if (!buf) return NULL;
    cJSON *j = rg_json_parse_strict(buf, n, path, err, errlen);
    free(buf);
    return j;
}
