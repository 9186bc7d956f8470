/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rg_util.c -- the growable string and the cJSON getters (see rg_util.h).
 */
#include "rg_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a growable string -------------------------------------------------------- */

void rg_buf_put(rg_buf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void rg_buf_puts(rg_buf *b, const char *s) { rg_buf_put(b, s, strlen(s)); }

void rg_buf_printf(rg_buf *b, const char *fmt, ...)
{
    /* Most pieces are short: format on the stack, and only a long one (the
     * CSS, a long note) pays for a second pass into the heap. */
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        rg_buf_put(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    rg_buf_put(b, big, (size_t)n);
    free(big);
}

char *rg_buf_finish(rg_buf *b, char *err, size_t errlen)
{
    if (b->oom || !b->p) {
        free(b->p);
        b->p = NULL;
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    return b->p;
}

/* ---- cJSON getters ---------------------------------------------------------------- */

const cJSON *rg_json_get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

double rg_json_num(const cJSON *o, const char *k)
{
    const cJSON *v = rg_json_get(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int rg_json_int(const cJSON *o, const char *k)
{
    double v = rg_json_num(o, k);
    return isfinite(v) && v >= -1e9 && v <= 1e9 ? (int)v : -1;
}

const char *rg_json_str(const cJSON *o, const char *k)
{
    const cJSON *v = rg_json_get(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

const char *rg_json_str_or_empty(const cJSON *o, const char *k)
{
    const char *s = rg_json_str(o, k);
    return s ? s : "";
}
