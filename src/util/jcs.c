/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jcs.c -- RFC 8785, the JSON Canonicalization Scheme, over cJSON trees, and
 * the SHA-256 digests built on it.
 *
 * A digest must not depend on how a document happens to be laid out, so the
 * spec of every manifest item is hashed in its canonical form:
 *   - no whitespace;
 *   - object members sorted by their names as arrays of UTF-16 code units
 *     (not by UTF-8 bytes: U+1F600 sorts before U+FB33 because its first
 *     surrogate, D83D, is smaller);
 *   - strings escaped minimally: \" \\ \b \f \n \r \t, other controls as
 *     \u00xx, everything else as raw UTF-8;
 *   - numbers as ECMAScript's Number.prototype.toString writes doubles:
 *     the shortest decimal that reads back to the same double, in plain
 *     notation for 1e-7 < |x| < 1e21 and in "1e+21" form outside.
 * Duplicate member names, invalid UTF-8 and NaN/Infinity are errors: RFC 8785
 * gives them no canonical form.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "jcs.h"
#include "rg_util.h"

/* ---- numbers ---------------------------------------------------------------- */

/* Does the decimal s * 10^e read back as v? (Written by hand, not with
 * snprintf: this runs up to nine times per number of every digest.) */
static int reads_back(uint64_t s, int e, double v)
{
    char buf[48], tmp[24];
    int k = 0, n = 0;
    do tmp[k++] = (char)('0' + s % 10);
    while ((s /= 10) != 0);
    while (k) buf[n++] = tmp[--k];
    buf[n++] = 'e';
    if (e < 0) buf[n++] = '-';
    unsigned ue = (unsigned)abs(e);
    do tmp[k++] = (char)('0' + ue % 10);
    while ((ue /= 10) != 0);
    while (k) buf[n++] = tmp[--k];
    buf[n] = 0;
    return strtod(buf, NULL) == v;
}

static int count_digits(uint64_t s)
{
    int k = 1;
    while (s >= 10) {
        s /= 10;
        k++;
    }
    return k;
}

/* The shortest digit string s (no trailing zeros) with v == s * 10^(n-k),
 * k = strlen(digits); among several of that length, the one closest to v
 * (ECMAScript 6.1.6.1.20 step 5). v is finite and > 0. */
static void shortest_digits(double v, char digits[24], int *n_out)
{
    /* For a normal v, precisions below 15 need no try of their own: a
     * p-digit decimal (p <= 15) that reads back as v lies within half an ulp
     * of v (at most v * 2^-53), closer than half a unit of the 15th digit
     * (over v * 5e-16), so it is v rounded to 15 digits with trailing zeros,
     * which the stripping below removes; and no two 15-digit decimals are
     * both that close. So the shortest form is the first of precisions 15,
     * 16, 17 that reads back. A subnormal's ulp is wider: all are tried. */
    for (int p = v < DBL_MIN ? 1 : 15; p <= 17; p++) {
        char buf[48];
        /* %.{p-1}e is the correctly rounded p-digit decimal: the closest one.
         * It reads back unless v's rounding interval is lopsided (v a power
         * of two), where a neighbour on the wide side may read back instead. */
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        char *e = strchr(buf, 'e');
        int exp10 = atoi(e + 1);
        uint64_t s = 0;
        for (char *c = buf; c < e; c++)
            if (*c >= '0' && *c <= '9') s = s * 10 + (uint64_t)(*c - '0');
        int scale = exp10 - (p - 1);   /* v ~ s * 10^scale */
        uint64_t found = 0;
        if (reads_back(s, scale, v)) {
            found = s;
        } else {
            uint64_t lo = s - 1, hi = s + 1;
            int okl = count_digits(lo) == p && reads_back(lo, scale, v);
            int okh = count_digits(hi) == p && reads_back(hi, scale, v);
            if (okl && okh) {
                /* both read back: take the closer one (in long double, which
                 * is exact enough to separate two 17-digit neighbours). */
                long double dl = fabsl((long double)lo * powl(10.0L, scale) - v);
                long double dh = fabsl((long double)hi * powl(10.0L, scale) - v);
                found = dl <= dh ? lo : hi;
            } else if (okl) {
                found = lo;
            } else if (okh) {
                found = hi;
            }
        }
        if (found) {
            while (found % 10 == 0) {   /* strip trailing zeros: k minimal */
                found /= 10;
                scale++;
            }
            snprintf(digits, 24, "%" PRIu64, found);
            int k = (int)strlen(digits);
            *n_out = scale + k;         /* v = 0.d1d2..dk * 10^n */
            return;
        }
    }
    /* 17 significant digits always read back; not reached. */
    snprintf(digits, 24, "0");
    *n_out = 1;
}

int rg_jcs_number(double x, char *buf, size_t len)
{
    if (!buf || len < 32 || !isfinite(x)) return -1;
    if (x == 0) {                   /* also -0: ECMAScript writes "0" */
        snprintf(buf, len, "0");
        return 0;
    }
    char digits[24];
    int n;
    shortest_digits(fabs(x), digits, &n);
    int k = (int)strlen(digits);
    char *o = buf;
    if (x < 0) *o++ = '-';
    if (k <= n && n <= 21) {                 /* integer: digits and n-k zeros */
        memcpy(o, digits, (size_t)k);
        o += k;
        for (int i = 0; i < n - k; i++) *o++ = '0';
    } else if (0 < n && n <= 21) {           /* point inside the digits */
        memcpy(o, digits, (size_t)n);
        o += n;
        *o++ = '.';
        memcpy(o, digits + n, (size_t)(k - n));
        o += k - n;
    } else if (-6 < n && n <= 0) {           /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -n; i++) *o++ = '0';
        memcpy(o, digits, (size_t)k);
        o += k;
    } else {                                 /* d.ddde+N / d.ddde-N */
        *o++ = digits[0];
        if (k > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(k - 1));
            o += k - 1;
        }
        o += sprintf(o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
    }
    *o = 0;
    return 0;
}

/* ---- strings ---------------------------------------------------------------- */

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length and the
 * code point, or 0 when invalid (overlong, surrogate, beyond U+10FFFF). */
static int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0) return 0;
    unsigned c = s[0];
    int len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

static int utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n) {
        uint32_t cp;
        int l = utf8_decode(p, n, &cp);
        if (!l) return 0;
        p += l;
        n -= (size_t)l;
    }
    return 1;
}

static void put_string(rg_buf *b, const char *s)
{
    rg_buf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': rg_buf_put(b, "\\\"", 2); break;
        case '\\': rg_buf_put(b, "\\\\", 2); break;
        case '\b': rg_buf_put(b, "\\b", 2); break;
        case '\f': rg_buf_put(b, "\\f", 2); break;
        case '\n': rg_buf_put(b, "\\n", 2); break;
        case '\r': rg_buf_put(b, "\\r", 2); break;
        case '\t': rg_buf_put(b, "\\t", 2); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                rg_buf_put(b, esc, 6);
            } else {
                rg_buf_put(b, (const char *)p, 1);
            }
        }
    }
    rg_buf_put(b, "\"", 1);
}

/* Compares two valid UTF-8 strings as sequences of UTF-16 code units. */
static int utf16_cmp(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    size_t na = strlen(a), nb = strlen(b);
    uint16_t ua[2], ub[2];
    int ia = 0, la = 0, ib = 0, lb = 0;   /* pending units of the current code point */
    for (;;) {
        if (ia == la) {
            uint32_t cp;
            int l = na ? utf8_decode(p, na, &cp) : 0;
            if (!l) {
                la = 0;
            } else {
                p += l, na -= (size_t)l;
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    ua[0] = (uint16_t)(0xD800 + (cp >> 10)), ua[1] = (uint16_t)(0xDC00 + (cp & 0x3FF)), la = 2;
                } else {
                    ua[0] = (uint16_t)cp, la = 1;
                }
            }
            ia = 0;
        }
        if (ib == lb) {
            uint32_t cp;
            int l = nb ? utf8_decode(q, nb, &cp) : 0;
            if (!l) {
                lb = 0;
            } else {
                q += l, nb -= (size_t)l;
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    ub[0] = (uint16_t)(0xD800 + (cp >> 10)), ub[1] = (uint16_t)(0xDC00 + (cp & 0x3FF)), lb = 2;
                } else {
                    ub[0] = (uint16_t)cp, lb = 1;
                }
            }
            ib = 0;
        }
        if (la == 0 || lb == 0) return (la != 0) - (lb != 0);   /* the shorter sorts first */
        if (ua[ia] != ub[ib]) return ua[ia] < ub[ib] ? -1 : 1;
        ia++, ib++;
    }
}

static int member_cmp(const void *x, const void *y)
{
    const cJSON *a = *(const cJSON *const *)x, *b = *(const cJSON *const *)y;
    return utf16_cmp(a->string, b->string);
}

/* ---- values ------------------------------------------------------------------ */

static int put_value(rg_buf *b, const cJSON *v, int depth, char *err, size_t errlen)
{
    if (depth > 200) {
        snprintf(err, errlen, "JSON nested deeper than 200 levels");
        return -1;
    }
    if (cJSON_IsNull(v)) {
        rg_buf_puts(b, "null");
    } else if (cJSON_IsTrue(v)) {
        rg_buf_puts(b, "true");
    } else if (cJSON_IsFalse(v)) {
        rg_buf_puts(b, "false");
    } else if (cJSON_IsNumber(v)) {
        char num[32];
        if (rg_jcs_number(v->valuedouble, num, sizeof num)) {
            snprintf(err, errlen, "a number is NaN or infinite (JSON has no canonical form for it)");
            return -1;
        }
        rg_buf_puts(b, num);
    } else if (cJSON_IsString(v)) {
        if (!v->valuestring || !utf8_valid(v->valuestring)) {
            snprintf(err, errlen, "a string is not valid UTF-8");
            return -1;
        }
        put_string(b, v->valuestring);
    } else if (cJSON_IsArray(v)) {
        rg_buf_put(b, "[", 1);
        int first = 1;
        for (const cJSON *c = v->child; c; c = c->next) {
            if (!first) rg_buf_put(b, ",", 1);
            first = 0;
            if (put_value(b, c, depth + 1, err, errlen)) return -1;
        }
        rg_buf_put(b, "]", 1);
    } else if (cJSON_IsObject(v)) {
        size_t n = 0;
        for (const cJSON *c = v->child; c; c = c->next) n++;
        const cJSON **m = malloc((n ? n : 1) * sizeof *m);
        if (!m) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        n = 0;
        for (const cJSON *c = v->child; c; c = c->next) {
            if (!c->string || !utf8_valid(c->string)) {
                free(m);
                snprintf(err, errlen, "a member name is not valid UTF-8");
                return -1;
            }
            m[n++] = c;
        }
        qsort(m, n, sizeof *m, member_cmp);
        rg_buf_put(b, "{", 1);
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && !strcmp(m[i]->string, m[i - 1]->string)) {
                snprintf(err, errlen, "duplicate member name \"%.64s\"", m[i]->string);
                free(m);
                return -1;
            }
            if (i) rg_buf_put(b, ",", 1);
            put_string(b, m[i]->string);
            rg_buf_put(b, ":", 1);
            if (put_value(b, m[i], depth + 1, err, errlen)) {
                free(m);
                return -1;
            }
        }
        rg_buf_put(b, "}", 1);
        free(m);
    } else {
        snprintf(err, errlen, "not a JSON value (raw or invalid cJSON node)");
        return -1;
    }
    return 0;
}

char *rg_jcs_serialize(const cJSON *v, char *err, size_t errlen)
{
    if (!v) {
        snprintf(err, errlen, "no JSON value to serialize");
        return NULL;
    }
    rg_buf b = {0};
    if (put_value(&b, v, 0, err, errlen)) {
        free(b.p);
        return NULL;
    }
    return rg_buf_finish(&b, err, errlen);
}

/* ---- printing for people ----------------------------------------------------- */

/* Like put_value, but members keep their order and, when pretty, nest with
 * two-space indents. Numbers use the same shortest round-trip form, which is
 * why manifests are not printed with cJSON_Print: its "%.15g unless that is
 * off by more than an epsilon" loses the last bits of some doubles, and a
 * re-read figure that differs in its last bit changes the digest. */
static void indent(rg_buf *b, int pretty, int depth)
{
    if (!pretty) return;
    rg_buf_put(b, "\n", 1);
    for (int i = 0; i < depth; i++) rg_buf_put(b, "  ", 2);
}

static int print_value(rg_buf *b, const cJSON *v, int pretty, int depth, char *err, size_t errlen)
{
    if (depth > 200) {
        snprintf(err, errlen, "JSON nested deeper than 200 levels");
        return -1;
    }
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        int obj = cJSON_IsObject(v);
        rg_buf_put(b, obj ? "{" : "[", 1);
        int first = 1;
        for (const cJSON *c = v->child; c; c = c->next) {
            if (!first) rg_buf_put(b, ",", 1);
            first = 0;
            indent(b, pretty, depth + 1);
            if (obj) {
                if (!c->string || !utf8_valid(c->string)) {
                    snprintf(err, errlen, "a member name is not valid UTF-8");
                    return -1;
                }
                put_string(b, c->string);
                rg_buf_put(b, pretty ? ": " : ":", pretty ? 2 : 1);
            }
            if (print_value(b, c, pretty, depth + 1, err, errlen)) return -1;
        }
        if (!first) indent(b, pretty, depth);
        rg_buf_put(b, obj ? "}" : "]", 1);
        return 0;
    }
    return put_value(b, v, depth, err, errlen);
}

char *rg_json_print(const cJSON *v, int pretty, char *err, size_t errlen)
{
    if (!v) {
        snprintf(err, errlen, "no JSON value to print");
        return NULL;
    }
    rg_buf b = {0};
    if (print_value(&b, v, pretty, 0, err, errlen)) {
        free(b.p);
        return NULL;
    }
    if (pretty) rg_buf_put(&b, "\n", 1);
    return rg_buf_finish(&b, err, errlen);
}

/* ---- digests ------------------------------------------------------------------ */

int rg_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!out || (!data && n)) return -1;
    if (!EVP_Digest(data ? data : "", n, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) return -1;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}

int rg_digest_json(const cJSON *v, char out[RG_DIGEST_LEN], char *err, size_t errlen)
{
    char *s = rg_jcs_serialize(v, err, errlen);
    if (!s) return -1;
    char hex[65];
    int rc = rg_sha256_hex(s, strlen(s), hex);
    free(s);
    if (rc) {
        snprintf(err, errlen, "SHA-256 failed (OpenSSL)");
        return -1;
    }
    snprintf(out, RG_DIGEST_LEN, "sha256:%s", hex);
    return 0;
}

int rg_digest_valid(const char *s)
{
    if (!s || strncmp(s, "sha256:", 7) || strlen(s) != 71) return 0;
    for (const char *p = s + 7; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
}
