/* SPDX-License-Identifier: Apache-2.0 */
/* rg_term.c -- see rg_term.h. */
#include "rg_term.h"

#include "rg_util.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (2..4; no overlongs, no
 * surrogates, nothing above U+10FFFF), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;   /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0;  /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;   /* overlong */
        if (c == 0xF4 && s[1] >= 0x90) return 0;  /* above U+10FFFF */
        return 4;
    }
    return 0;
}

/* The code point of the valid UTF-8 sequence at s of len bytes (2..4). */
static unsigned utf8_code_point(const unsigned char *s, size_t len)
{
    unsigned cp = s[0] & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < len; i++) cp = cp << 6 | (s[i] & 0x3F);
    return cp;
}

int rg_text_spoofing(unsigned cp)
{
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
           cp == 0x061C || (cp >= 0x200B && cp <= 0x200D) || cp == 0x2060 || cp == 0xFEFF || cp == 0x2028 ||
           cp == 0x2029;
}

/* "\uHHHH" (lower-case hex) for code point cp < 0x10000 at out; 6 bytes. */
static size_t put_u_escape(char *out, unsigned cp)
{
    static const char hex[] = "0123456789abcdef";
    out[0] = '\\';
    out[1] = 'u';
    for (int i = 0; i < 4; i++) out[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
    return 6;
}

/* The escaped copy of s; layout: keep newlines and tabs (the CLI's own text). */
static char *escape(const char *s, int layout)
{
    if (!s) s = "";
    const size_t n = strlen(s);
    /* Worst case: every byte becomes \xHH (4), or two bytes become \uHHHH (6). */
    char *out = malloc(4 * n + 1);
    if (!out) return NULL;
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t k = 0;
    while (*p) {
        unsigned c = *p;
        if ((layout && (c == '\n' || c == '\t')) || (c >= 0x20 && c < 0x7F)) {
            out[k++] = (char)c;
            p++;
            continue;
        }
        if (c == '\n' || c == '\t') {
            out[k++] = '\\';
            out[k++] = c == '\n' ? 'n' : 't';
            p++;
            continue;
        }
        size_t len = c >= 0x80 ? utf8_len(p) : 0;
        unsigned cp = len ? utf8_code_point(p, len) : 0;
        if ((len == 2 && c == 0xC2 && p[1] < 0xA0) || (len && rg_text_spoofing(cp))) {
            /* C1 control as UTF-8 (U+0080..U+009F), a bidi control or an invisible character */
            k += put_u_escape(out + k, cp);
            p += len;
        } else if (len) {
            memcpy(out + k, p, len);
            k += len;
            p += len;
        } else {   /* C0, DEL, or a byte that is not valid UTF-8 */
            out[k++] = '\\';
            out[k++] = 'x';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
            p++;
        }
    }
    out[k] = '\0';
    return out;
}

char *rg_term_escape(const char *s) { return escape(s, 0); }

char *rg_term_escape_block(const char *s) { return escape(s, 1); }

int rg_text_check(const char *s, size_t *at, const char **why)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (size_t i = 0; p[i];) {
        unsigned c = p[i];
        size_t len = c >= 0x80 ? utf8_len(p + i) : 1;
        const char *bad = NULL;
        if (len == 0) bad = "not UTF-8";
        else if (c < 0x20 || c == 0x7F || (len == 2 && c == 0xC2 && p[i + 1] < 0xA0)) bad = "a control character";
        if (bad) {
            if (at) *at = i;
            if (why) *why = bad;
            return 1;
        }
        i += len;
    }
    return 0;
}

int rg_text_find_spoofing(const char *s, size_t *at, unsigned *cp)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (size_t i = 0; p[i];) {
        size_t len = p[i] >= 0x80 ? utf8_len(p + i) : 1;
        if (len > 1 && rg_text_spoofing(utf8_code_point(p + i, len))) {
            if (at) *at = i;
            if (cp) *cp = utf8_code_point(p + i, len);
            return 1;
        }
        i += len ? len : 1;
    }
    return 0;
}

const char *rg_term(const char *s)
{
    static char *ring[32];
    static unsigned next;
    char *e = rg_term_escape(s);
    if (!e) return "?";
    free(ring[next % 32]);
    ring[next++ % 32] = e;
    return e;
}

int rg_term_fputs(const char *s, FILE *f) { return fputs(rg_term(s), f); }

/* ---- rg_term_printf: each %s argument escaped as a field -------------------------------- */

/* One conversion spec of a printf format: its text with any '*' width or
 * precision written out, and its conversion and length modifier. */
typedef struct term_spec {
    char text[48];
    char conv;
    char len[3];
} term_spec;

static const char *skip_digits(const char *f)
{
    while (*f >= '0' && *f <= '9') f++;
    return f;
}

/* Reads the spec at f ('%' ...) into sp, taking '*' values from ap; the
 * byte after it, or NULL when it is not one this writer formats. */
static const char *read_spec(const char *f, term_spec *sp, va_list *ap)
{
    const char *p = f + 1;
    while (*p && strchr("-+ #0", *p)) p++;
    int w = 0, pr = 0;
    if (*p == '*') w = va_arg(*ap, int), p++;
    else p = skip_digits(p);
    if (*p == '.') {
        p++;
        if (*p == '*') pr = va_arg(*ap, int), p++;
        else p = skip_digits(p);
    }
    const char *len_at = p;
    while (*p && strchr("hljztL", *p)) p++;
    if (!*p || p - len_at > 2 || p - f > 16) return NULL;
    memcpy(sp->len, len_at, (size_t)(p - len_at));
    sp->len[p - len_at] = 0;
    sp->conv = *p;
    size_t k = 0;
    int after_dot = 0;
    for (const char *q = f; q <= p; q++) {   /* the spec's text, '*' written out */
        after_dot |= *q == '.';
        if (*q == '*') k += (size_t)snprintf(sp->text + k, sizeof sp->text - k, "%d", after_dot ? pr : w);
        else sp->text[k++] = *q;
    }
    sp->text[k] = 0;
    return p + 1;
}

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
/* Formats one argument of sp's type from ap into b. 0, or -1 for a
 * conversion this writer does not take (%n). */
static int put_conversion(rg_buf *b, const term_spec *sp, va_list *ap)
{
    const char *l = sp->len, *t = sp->text;
    switch (sp->conv) {
    case 's': {
        char *e = escape(va_arg(*ap, const char *), 0);
        if (!e) return -1;
        rg_buf_printf(b, t, e);
        free(e);
        return 0;
    }
    case 'd': case 'i': case 'c':
        if (!strcmp(l, "ll")) rg_buf_printf(b, t, va_arg(*ap, long long));
        else if (!strcmp(l, "l")) rg_buf_printf(b, t, va_arg(*ap, long));
        else if (!strcmp(l, "z") || !strcmp(l, "t")) rg_buf_printf(b, t, va_arg(*ap, ptrdiff_t));
        else if (!strcmp(l, "j")) rg_buf_printf(b, t, va_arg(*ap, intmax_t));
        else rg_buf_printf(b, t, va_arg(*ap, int));
        return 0;
    case 'u': case 'x': case 'X': case 'o':
        if (!strcmp(l, "ll")) rg_buf_printf(b, t, va_arg(*ap, unsigned long long));
        else if (!strcmp(l, "l")) rg_buf_printf(b, t, va_arg(*ap, unsigned long));
        else if (!strcmp(l, "z") || !strcmp(l, "t")) rg_buf_printf(b, t, va_arg(*ap, size_t));
        else if (!strcmp(l, "j")) rg_buf_printf(b, t, va_arg(*ap, uintmax_t));
        else rg_buf_printf(b, t, va_arg(*ap, unsigned));
        return 0;
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        if (!strcmp(l, "L")) rg_buf_printf(b, t, va_arg(*ap, long double));
        else rg_buf_printf(b, t, va_arg(*ap, double));
        return 0;
    case 'p': rg_buf_printf(b, t, va_arg(*ap, void *)); return 0;
    case '%': rg_buf_put(b, "%", 1); return 0;
    default: return -1;
    }
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* fmt with its arguments, each string argument escaped as a field (its
 * newlines and tabs made visible), the format's own text as it is. */
static char *format_fields(const char *fmt, va_list *ap)
{
    rg_buf b = {0};
    rg_buf_put(&b, "", 0);
    for (const char *f = fmt; *f;) {
        const char *pct = strchr(f, '%');
        size_t lit = pct ? (size_t)(pct - f) : strlen(f);
        rg_buf_put(&b, f, lit);
        if (!pct) break;
        term_spec sp;
        const char *next = read_spec(pct, &sp, ap);
        if (!next || put_conversion(&b, &sp, ap)) {
            free(b.p);
            return NULL;
        }
        f = next;
    }
    char err[32];
    return rg_buf_finish(&b, err, sizeof err);
}

int rg_term_printf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = format_fields(fmt, &ap);
    va_end(ap);
    if (!text) return EOF;
    char *safe = rg_term_escape_block(text);
    free(text);
    if (!safe) return EOF;
    int rc = fputs(safe, f);
    free(safe);
    return rc;
}
