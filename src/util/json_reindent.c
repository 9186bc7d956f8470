/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_reindent.c -- JSON text indented for reading without parsing it.
 *
 * The registry keeps every manifest as rg_json_print(doc, 0): its numbers
 * and strings are already in the form rg_json_print writes them, so
 * re-indenting its tokens gives rg_json_print(doc, 1) byte for byte, at the
 * cost of a copy instead of a parse and a print (a run page shows its
 * manifest indented: parsing and printing it was a third of the page's CPU
 * time). Whitespace between tokens is dropped; strings, numbers and literals
 * are copied as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcs.h"
#include "rg_util.h"

#define MAX_DEPTH 200

/* A newline and two spaces per level, in one or a few copies. */
static void newline(rg_buf *b, int depth)
{
    static const char spaces[] = "\n                                                                "
                                 "                                                                ";
    size_t want = 1 + 2 * (size_t)depth, have = sizeof spaces - 1;
    rg_buf_put(b, spaces, want < have ? want : have);
    for (want = want < have ? 0 : want - have; want; want -= want < have - 1 ? want : have - 1)
        rg_buf_put(b, spaces + 1, want < have - 1 ? want : have - 1);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The index of the first non-space character at or after i. */
static size_t skip_space(const char *t, size_t n, size_t i)
{
    while (i < n && is_space(t[i])) i++;
    return i;
}

/* The index just past the string that starts at t[i] ('"'), or 0 when it does not end. */
static size_t string_end(const char *t, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (t[i] == '\\') i++;
        else if (t[i] == '"') return i + 1;
    }
    return 0;
}

/* The open brackets around the current token, innermost last. */
typedef struct nesting {
    char open[MAX_DEPTH];
    int depth;
} nesting;

/* One structural character c; next is the following non-space one. *skip_next
 * is set when c opened an empty object or array and next (its close) is written. */
static int put_structural(rg_buf *b, char c, char next, nesting *st, int *skip_next)
{
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        rg_buf_put(b, &c, 1);
        if (next == close) {   /* empty: "{}" and "[]" on one line */
            rg_buf_put(b, &close, 1);
            *skip_next = 1;
            return 0;
        }
        if (st->depth == MAX_DEPTH) return -1;
        st->open[st->depth++] = c;
        newline(b, st->depth);
    } else if (c == '}' || c == ']') {
        if (st->depth == 0 || st->open[st->depth - 1] != (c == '}' ? '{' : '[')) return -1;
        newline(b, --st->depth);
        rg_buf_put(b, &c, 1);
    } else if (c == ',') {
        rg_buf_put(b, ",", 1);
        newline(b, st->depth);
    } else {   /* ':' */
        rg_buf_put(b, ": ", 2);
    }
    return 0;
}

char *rg_json_reindent(const char *text, size_t n, char *err, size_t errlen)
{
    if (!text) {
        snprintf(err, errlen, "no JSON text to indent");
        return NULL;
    }
    rg_buf b = {0};
    nesting st = {.depth = 0};
    size_t i = skip_space(text, n, 0);
    while (i < n) {
        char c = text[i];
        if (c == '"') {
            size_t end = string_end(text, n, i);
            if (!end) break;
            rg_buf_put(&b, text + i, end - i);
            i = end;
        } else if (strchr("{}[],:", c)) {
            size_t after = skip_space(text, n, i + 1);
            int skip = 0;
            if (put_structural(&b, c, after < n ? text[after] : 0, &st, &skip)) break;
            i = skip ? after + 1 : after;
            continue;
        } else if (is_space(c)) {
            i++;
            continue;
        } else {
            size_t start = i;
            while (i < n && !is_space(text[i]) && !strchr("{}[],:\"", text[i])) i++;
            rg_buf_put(&b, text + start, i - start);
        }
        i = skip_space(text, n, i);
    }
    if (i < n || st.depth != 0) {
        free(b.p);
        snprintf(err, errlen, "not JSON text (an unended string, unbalanced brackets or nesting over %d levels)",
                MAX_DEPTH);
        return NULL;
    }
    rg_buf_put(&b, "\n", 1);
    return rg_buf_finish(&b, err, errlen);
}
