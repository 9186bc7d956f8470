/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_serve_request.c -- one HTTP request through the index's router
 * (rg_serve_route: routing, auth, CSRF, forms, the API, the page cache) over
 * a writable one-run registry (fuzz_serve.h).
 *
 * The input is a request as text:
 *     METHOD PATH\n
 *     Name: value\n        (Authorization, Origin, Referer, Host, Content-Type,
 *     ...                   X-Too-Big: the body was over the limit)
 *     \n
 *     BODY
 * "@TOKEN@" and "@CSRF@" anywhere are replaced by the server's write token
 * and its forms' CSRF value, so the seeds reach the writes behind them.
 * Every answer is checked (fz_check_response); a GET is asked twice and the
 * second (cached) answer must be the first; after a write the run page still
 * renders. */
#include <strings.h>

#include "fuzz_serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* text with every "@TOKEN@" and "@CSRF@" replaced (malloc'd). */
static char *substitute(const char *text, const char *csrf)
{
    size_t cap = strlen(text) * 11 + 1, k = 0;   /* "@CSRF@": 6 bytes become 64 */
    char *out = malloc(cap);
    if (!out) abort();
    for (const char *p = text; *p;) {
        const char *with = !strncmp(p, "@TOKEN@", 7) ? FZ_TOKEN : !strncmp(p, "@CSRF@", 6) ? csrf : NULL;
        if (with) {
            memcpy(out + k, with, strlen(with));
            k += strlen(with);
            p += with == csrf ? 6 : 7;
        } else out[k++] = *p++;
    }
    out[k] = 0;
    return out;
}

/* The value of header name in the header block (malloc'd copy), or NULL. */
static char *header(char *const *lines, size_t n, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (!strncasecmp(lines[i], name, nl) && lines[i][nl] == ':')
            return lines[i] + nl + 1 + (lines[i][nl + 1] == ' ');
    return NULL;
}

/* Splits text (modified) at newlines into at most cap lines; the count. */
static size_t split_lines(char *text, char **lines, size_t cap)
{
    size_t n = 0;
    for (char *p = text; p && *p && n < cap; n++) {
        lines[n] = p;
        p = strchr(p, '\n');
        if (p) *p++ = 0;
    }
    return n;
}

static void same_answer(const rg_response *a, const rg_response *b)
{
    FZ_CHECK(a->status == b->status && a->len == b->len);
    FZ_CHECK(a->len == 0 || !memcmp(a->body, b->body, a->len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The head is text up to the blank line; the body is the bytes after. */
    const char *blank = NULL;
    for (size_t i = 0; i + 1 < size && !blank; i++)
        if (data[i] == '\n' && data[i + 1] == '\n') blank = (const char *)data + i;
    size_t head_len = blank ? (size_t)(blank - (const char *)data) : size;
    if (memchr(data, 0, head_len)) return 0;   /* a C string head, as MHD hands it over */
    char *head0 = malloc(head_len + 1);
    if (!head0) abort();
    memcpy(head0, data, head_len);
    head0[head_len] = 0;
    rg_server *s = fz_server();
    char csrf[65];
    FZ_CHECK(rg_serve_form_csrf(s, csrf) == 0);
    char *head = substitute(head0, csrf);
    free(head0);
    char *lines[32];
    size_t n = split_lines(head, lines, 32);
    char *sp = n ? strchr(lines[0], ' ') : NULL;
    if (sp) *sp = 0;
    char *body = NULL;
    size_t body_len = 0;
    if (blank) {
        body_len = size - head_len - 2;
        body = malloc(body_len + 1);
        if (!body) abort();
        memcpy(body, blank + 2, body_len);
        body[body_len] = 0;
        if (!memchr(body, 0, body_len)) {   /* text: substituted; binary bodies stay as they are */
            char *text = substitute(body, csrf);
            free(body);
            body = text;
            body_len = strlen(text);
        }
    }
    rg_request q = {
        .method = n ? lines[0] : NULL,
        .path = sp ? sp + 1 : NULL,
        .authorization = header(lines + 1, n ? n - 1 : 0, "Authorization"),
        .origin = header(lines + 1, n ? n - 1 : 0, "Origin"),
        .referer = header(lines + 1, n ? n - 1 : 0, "Referer"),
        .host = header(lines + 1, n ? n - 1 : 0, "Host"),
        .content_type = header(lines + 1, n ? n - 1 : 0, "Content-Type"),
        .body = body,
        .body_len = body_len,
        .body_too_big = header(lines + 1, n ? n - 1 : 0, "X-Too-Big") != NULL,
    };
    rg_response r, again;
    rg_serve_route(s, &q, &r);
    fz_check_response(&r);
    int get = q.method && (!strcmp(q.method, "GET") || !strcmp(q.method, "HEAD"));
    if (get) {
        rg_serve_route(s, &q, &again);
        same_answer(&r, &again);
        free(again.body);
    }
    if (r.status < 400 && !get) fz_check_run_page(s);
    free(r.body);
    rg_serve_destroy(s);
    free(head);
    free(body);
    return 0;
}
