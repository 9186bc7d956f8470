/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rg_term.h -- text from a record (a device name, a kernel name, a note, an
 * imported manifest's strings) made safe for a terminal before it is printed.
 *
 * Kept: printable ASCII and valid UTF-8 outside the C1 range. Made visible,
 * as text that reads like a C escape: newline and tab (\n, \t: a field never
 * forges a line of output), the other C0 controls and DEL (ESC becomes \x1b,
 * so no escape sequence reaches the terminal), C1 controls written as UTF-8
 * (U+0080..U+009F become \u009b and the like), bidi controls and invisible
 * characters (rg_text_spoofing: \u202e, \u200b, ...), and bytes that are not
 * valid UTF-8 (\xHH; an 8-bit terminal would read 0x9b as CSI).
 */
#ifndef RG_TERM_H
#define RG_TERM_H

#include <stdio.h>

/* The escaped copy of s (NULL reads as ""): malloc'd, the caller frees it;
 * NULL only when out of memory. */
char *rg_term_escape(const char *s);

/* The same for a block of text: its newlines and tabs kept. */
char *rg_term_escape_block(const char *s);

/* The same for printing in place: the result stays valid for the next 31
 * calls (a ring of buffers, freed as it turns; single-threaded callers such
 * as the CLI). Never NULL: "?" when out of memory. */
const char *rg_term(const char *s);

/* 0 when s is valid UTF-8 (no overlongs, no surrogates) without control
 * characters (C0, DEL, C1); else 1, with the first offending byte's offset in
 * *at and what is wrong with it in *why ("not UTF-8", "a control character"). */
int rg_text_check(const char *s, size_t *at, const char **why);

/* 1 when code point cp is a bidi control (U+202A..202E, U+2066..2069,
 * U+200E/F, U+061C), a zero-width or invisible one (U+200B..200D, U+2060,
 * U+FEFF) or a line/paragraph separator (U+2028/9): text that reads other
 * than it is. */
int rg_text_spoofing(unsigned cp);

/* 1 when s holds such a character, with its byte offset in *at and its code
 * point in *cp; else 0. */
int rg_text_find_spoofing(const char *s, size_t *at, unsigned *cp);

/* printf to f, terminal-safe: every %s argument escaped as rg_term_escape
 * does (its newlines and tabs too), and the format's own text keeping its
 * newlines and tabs. Returns what fputs returns, EOF on an error. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int rg_term_printf(FILE *f, const char *fmt, ...);

/* fputs(rg_term(s), f). */
int rg_term_fputs(const char *s, FILE *f);

#endif
