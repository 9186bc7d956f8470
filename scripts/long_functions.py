#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the C functions in src/ longer than N lines (default 100), longest first.

A simple brace counter: comments, string and character literals and
preprocessor lines are blanked (newlines kept), then every top-level '{'
whose header ends in ')' (and holds no '=': not an initializer) opens a
function, named by the identifier before the header's first '('. A function's
length is its lines from the name to the closing brace, both included.

Usage: long_functions.py [--min N] [ROOT...]   (ROOT: files or folders; default src)
Prints "LINES FILE:LINE NAME" per function; exit 0 (it reports, it does not judge)."""
import argparse
import os
import re
import sys

EXTS = (".c", ".h", ".cu", ".cuh")


def blank(text):
    """text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and text[i:].lstrip(" \t").startswith("#"):
            # a preprocessor line, with its backslash continuations
            j = i
            while j < n:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                if k > 0 and text[k - 1] == "\\":
                    j = k + 1
                    continue
                break
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
            continue
        if text.startswith("//", i):
            k = text.find("\n", i)
            k = n if k < 0 else k
            out.append(" " * (k - i))
            i = k
            continue
        if text.startswith("/*", i):
            k = text.find("*/", i + 2)
            k = n if k < 0 else k + 2
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " " * (j - i))
            i = j
            at_line_start = False
            continue
        out.append(c)
        if c == "\n":
            at_line_start = True
        elif c not in " \t":
            at_line_start = False
        i += 1
    return "".join(out)


def functions(path):
    """(name, first line, line count) of each function defined in the file at path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = blank(f.read())
    found = []
    depth, header_start, open_at, name, name_line = 0, 0, 0, None, 0
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                header = code[header_start:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\(", header)
                if header.rstrip().endswith(")") and "=" not in header and m:
                    name = m.group(1)
                    name_line = code.count("\n", 0, header_start + m.start(1)) + 1
                else:
                    name = None
                open_at = i
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                if name:
                    end_line = code.count("\n", 0, i) + 1
                    found.append((name, name_line, end_line - name_line + 1))
                name = None
                header_start = i + 1
        elif c == ";" and depth == 0:
            header_start = i + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min", type=int, default=100, help="list functions longer than this many lines")
    ap.add_argument("roots", nargs="*", default=["src"])
    a = ap.parse_args()
    paths = []
    for root in a.roots:
        if os.path.isfile(root):
            paths.append(root)
            continue
        if not os.path.isdir(root):
            print(f"long_functions.py: '{root}' is not a file or folder", file=sys.stderr)
            return 2
        for d, _, names in os.walk(root):
            paths += [os.path.join(d, f) for f in names if f.endswith(EXTS)]
    rows = [(n, p, line, name) for p in sorted(paths) for name, line, n in functions(p) if n > a.min]
    for n, p, line, name in sorted(rows, key=lambda r: (-r[0], r[1], r[2])):
        print(f"{n:5d} {p}:{line} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
