#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Finds include and call cycles between the source files of src/ (issue 28).

Every file is a node. File A depends on file B when A includes B ("b.h",
looked up beside A first, then anywhere under the roots when one file bears
that name), or when a function body in A calls a function that B (a .c or
.cu file) defines without `static` (an identifier followed by '(', outside
comments and literals; a header's prototypes are no calls). A cycle is a
strongly connected component of more than one file: two files that include
each other, or two .c files that call each other (directly or around a
ring); each is printed with, for every edge inside it, why it exists.

Usage: include_cycles.py [--allow FILE] [ROOT...]   (default src). FILE
lists cycles still known, one a line (its files, blank-separated, any order;
'#' starts a comment): they are printed but pass. Exit 1 when there is a
cycle FILE does not list, or FILE lists one that is gone (take it out); 0
otherwise; 2 on bad usage."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from long_functions import EXTS, blank  # noqa: E402  (the same comment and literal stripper)

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "_Alignof", "_Static_assert"}


def source_files(roots):
    paths = []
    for root in roots:
        if os.path.isfile(root):
            paths.append(root)
        elif os.path.isdir(root):
            for d, _, names in os.walk(root):
                paths += [os.path.join(d, f) for f in names if f.endswith(EXTS)]
        else:
            raise SystemExit(f"include_cycles.py: '{root}' is not a file or folder")
    return sorted(os.path.normpath(p) for p in paths)


def unit(path):
    return path


def body_calls(code):
    """Names called inside the function bodies (brace depth > 0) of the blanked code."""
    inside, depth, start = [], 0, 0
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                inside.append(code[start:i])
    return {name for part in inside for name in CALL.findall(part)}


def definitions(code, local=False):
    """Names of the functions the blanked code defines without static (local: with it too)."""
    names = set()
    depth, start = 0, 0
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                header = code[start:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\(", header)
                exported = local or not re.search(r"\bstatic\b|\w*INLINE\w*", header)
                if m and header.rstrip().endswith(")") and "=" not in header and exported:
                    names.add(m.group(1))
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
    return names


def graph(paths):
    raw = {p: open(p, encoding="utf-8", errors="replace").read() for p in paths}
    code = {p: blank(t) for p, t in raw.items()}
    by_name = {}
    for p in paths:
        by_name.setdefault(os.path.basename(p), []).append(p)
    definers = {}
    for p in paths:
        if p.endswith((".c", ".cu")):
            for name in definitions(code[p]):
                definers.setdefault(name, set()).add(unit(p))
    edges = {}   # (a, b) -> reason
    for p in paths:
        a = unit(p)
        for inc in INCLUDE.findall(raw[p]):
            beside = os.path.normpath(os.path.join(os.path.dirname(p), inc))
            target = beside if beside in raw else (by_name.get(os.path.basename(inc)) or [None])
            target = target if isinstance(target, str) else (target[0] if len(target) == 1 else None)
            if target and unit(target) != a:
                edges.setdefault((a, unit(target)), f"{p} includes {inc}")
        own = definitions(code[p], local=True) if p.endswith((".c", ".cu")) else set()
        for name in body_calls(code[p]) - KEYWORDS - own:
            for b in definers.get(name, ()):
                if b != a:
                    edges.setdefault((a, b), f"{p} calls {name}")
    return edges


def cycles(edges):
    """Strongly connected components of more than one unit (Tarjan, iterative)."""
    succ = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(succ[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return sorted(out)


def read_allowed(path):
    allowed = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            files = line.split("#", 1)[0].split()
            if files:
                allowed.add(tuple(sorted(os.path.normpath(x) for x in files)))
    return allowed


def main():
    args = sys.argv[1:]
    allowed = set()
    if args[:1] == ["--allow"] and len(args) >= 2:
        allowed = read_allowed(args[1])
        args = args[2:]
    if any(r.startswith("-") for r in args):
        print(__doc__, file=sys.stderr)
        return 2
    edges = graph(source_files(args or ["src"]))
    found = cycles(edges)
    bad = 0
    for comp in found:
        members = set(comp)
        known = tuple(comp) in allowed
        bad += not known
        print(("known cycle (listed in --allow): " if known else "cycle: ") + " <-> ".join(comp))
        for (a, b), why in sorted(edges.items()):
            if a in members and b in members:
                print(f"  {a} -> {b}: {why}")
    for gone in sorted(allowed - {tuple(c) for c in found}):
        bad += 1
        print("listed in --allow but no longer a cycle (take it out): " + " ".join(gone))
    if not found:
        print(f"no cycles among {len({u for e in edges for u in e})} files")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
