/* SPDX-License-Identifier: Apache-2.0 */
/* rg_term.c -- see rg_term.h. */
#include "rg_term.h"

#include <stdarg.h>
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

char *rg_term_escape(const char *s)
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
        if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)) {
            out[k++] = (char)c;
            p++;
            continue;
        }
        size_t len = c >= 0x80 ? utf8_len(p) : 0;
        if (len == 2 && c == 0xC2 && p[1] < 0xA0) {   /* C1 control as UTF-8: U+0080..U+009F */
            memcpy(out + k, "\\u00", 4);
            out[k + 4] = hex[p[1] >> 4];
            out[k + 5] = hex[p[1] & 15];
            k += 6;
            p += 2;
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

int rg_term_printf(FILE *f, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = n < 0 ? NULL : malloc((size_t)n + 1);
    if (text) vsnprintf(text, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    if (!text) return EOF;
    char *safe = rg_term_escape(text);
    free(text);
    if (!safe) return EOF;
    int rc = fputs(safe, f);
    free(safe);
    return rc;
}
