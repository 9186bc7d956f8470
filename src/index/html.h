/* SPDX-License-Identifier: Apache-2.0 */
/* html.h -- the index's one HTML escaper (html.c). */
#ifndef RG_INDEX_HTML_H
#define RG_INDEX_HTML_H

#include "rg_util.h"

/* s escaped for HTML element text and attribute values (& < > " '), after
 * what would not show or would mislead is made visible as rg_term_escape
 * writes it: newlines and tabs (\n, \t), controls, bidi controls and
 * invisible characters (\u202e, \u200b), bytes that are not UTF-8 (\xff). */
void rg_html_esc(rg_buf *b, const char *s);
/* The same for a block of text (a <pre>): its newlines and tabs kept. */
void rg_html_esc_block(rg_buf *b, const char *s);

#endif
