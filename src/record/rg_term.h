/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rg_term.h -- text from a record (a device name, a kernel name, a note, an
 * imported manifest's strings) made safe for a terminal before it is printed.
 *
 * Kept: printable ASCII, newline, tab, and valid UTF-8 outside the C1 range.
 * Made visible, as text that reads like a C escape: the other C0 controls and
 * DEL (ESC becomes \x1b, so no escape sequence reaches the terminal), C1
 * controls written as UTF-8 (U+0080..U+009F become \u009b and the like), and
 * bytes that are not valid UTF-8 (\xHH; an 8-bit terminal would read
 * 0x9b as CSI).
 */
#ifndef RG_TERM_H
#define RG_TERM_H

#include <stdio.h>

/* The escaped copy of s (NULL reads as ""): malloc'd, the caller frees it;
 * NULL only when out of memory. */
char *rg_term_escape(const char *s);

/* The same for printing in place: the result stays valid for the next 31
 * calls (a ring of buffers, freed as it turns; single-threaded callers such
 * as the CLI). Never NULL: "?" when out of memory. */
const char *rg_term(const char *s);

/* 0 when s is valid UTF-8 (no overlongs, no surrogates) without control
 * characters (C0, DEL, C1); else 1, with the first offending byte's offset in
 * *at and what is wrong with it in *why ("not UTF-8", "a control character"). */
int rg_text_check(const char *s, size_t *at, const char **why);

/* printf to f with the whole formatted text made terminal-safe (the CLI's
 * own text is printable, so only what came from a record changes). Returns
 * what fputs returns, EOF on an error. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int rg_term_printf(FILE *f, const char *fmt, ...);

/* fputs(rg_term(s), f). */
int rg_term_fputs(const char *s, FILE *f);

#endif
