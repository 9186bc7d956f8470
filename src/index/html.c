/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html.c -- the index's one HTML escaper (html.h): text made visible
 * (rg_term) and then escaped. The renderer and the charts both use it, so it
 * sits apart from both.
 */
#include "html.h"

#include <stdlib.h>
#include <string.h>

#include "rg_term.h"

/* s escaped for HTML, after it was made visible (e, a malloc'd copy from
 * rg_term: controls, bidi and invisible characters as \n, \u202e, ...). */
static void html_esc_visible(rg_buf *b, char *e)
{
    if (!e) {
        b->oom = 1;
        return;
    }
    const char *s = e;
    for (;;) {
        size_t plain = strcspn(s, "&<>\"'");   /* copied in one piece (a manifest is kilobytes) */
        rg_buf_put(b, s, plain);
        s += plain;
        if (!*s) break;
        switch (*s++) {
        case '&': rg_buf_put(b, "&amp;", 5); break;
        case '<': rg_buf_put(b, "&lt;", 4); break;
        case '>': rg_buf_put(b, "&gt;", 4); break;
        case '"': rg_buf_put(b, "&quot;", 6); break;
        default: rg_buf_put(b, "&#39;", 5); break;
        }
    }
    free(e);
}

void rg_html_esc(rg_buf *b, const char *s) { html_esc_visible(b, rg_term_escape(s)); }

void rg_html_esc_block(rg_buf *b, const char *s) { html_esc_visible(b, rg_term_escape_block(s)); }
