#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layers (issue 39): library <- harness <- cli -> record, index; util and
result under all. Three checks, each one line per violation:

  includes  (--root ROOT) no file includes a header of a layer above it or
            beside it: src/op/ (the library; its test_*.c are tests) nothing
            of src/harness/ (nor of the layers above it); src/record/ and
            src/index/ nothing of src/harness/ or src/cli/ (the record nothing
            of the index either); src/result/ nothing of the harness, the
            record, the index or the CLI; src/util/ nothing of those nor of
            src/result/. An include is that layer's header when it
            names the layer's folder ("../harness/op.h") or, not found beside
            the includer, bears the basename of one of its headers.
  links     (--links FILE) the link lines CMake wrote (tests/tools/layers.cmake:
            "target: dep;dep;..." per line): no target of --lib reaches
            rg_harness, libropegrad, cudart or CUPTI through its link libraries.
  symbols   (--check NAME=ARCHIVE, --forbid NAME=LIBRARY) no undefined symbol
            of a checked archive is one that only a forbidden library (the
            harness's archive, cudart, CUPTI) defines: what the record or the
            index would call of the harness or CUDA.

Usage: layers.py [--root ROOT] [--links FILE --lib T...] [--check N=A... --forbid N=L...]
Exit 1 when a check finds a violation, 0 when none, 2 on bad usage."""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
SOURCES = (".c", ".h", ".cu", ".cuh")
# What each layer may not include, by folder under src/.
RULES = {
    "op": ("harness", "cli", "record", "index", "result", "util"),
    "record": ("harness", "cli", "index"),
    "index": ("harness", "cli"),
    "result": ("harness", "cli", "record", "index"),
    "util": ("harness", "cli", "record", "index", "result"),
}
FORBIDDEN_LINKS = re.compile(r"(^|[/:;])(rg_harness|libropegrad|ropegrad_cli)($|[;.])|cudart|cupti|CUDA::", re.I)


def headers_of(root, layer):
    """Basenames of the headers under src/<layer>/."""
    names = set()
    for d, _, files in os.walk(os.path.join(root, "src", layer)):
        names.update(f for f in files if f.endswith((".h", ".cuh")))
    return names


def check_includes(root):
    found = []
    headers = {layer: headers_of(root, layer) for layer in ("harness", "cli", "record", "index", "result", "util")}
    for layer, banned in RULES.items():
        top = os.path.join(root, "src", layer)
        for d, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith(SOURCES) or (layer == "op" and f.startswith("test_")):
                    continue
                path = os.path.join(d, f)
                text = open(path, encoding="utf-8", errors="replace").read()
                for m in INCLUDE.finditer(text):
                    inc = m.group(1)
                    beside = os.path.isfile(os.path.join(d, inc))
                    parts = os.path.normpath(os.path.join(os.path.relpath(d, root), inc)).split(os.sep)
                    for other in banned:
                        by_path = "/" in inc and parts[:2] == ["src", other]
                        by_name = not beside and os.path.basename(inc) in headers[other]
                        if by_path or by_name:
                            line = text.count("\n", 0, m.start()) + 1
                            found.append(f"{os.path.relpath(path, root)}:{line}: src/{layer}/ includes "
                                         f"\"{inc}\", a header of src/{other}/")
    return found


def check_links(links_file, targets):
    deps = {}
    for line in open(links_file, encoding="utf-8"):
        if ":" in line:
            name, _, rest = line.partition(":")
            deps[name.strip()] = [d for d in rest.strip().split(";") if d]
    found = []
    for t in targets:
        if t not in deps:
            found.append(f"{links_file}: no link line for {t}")
            continue
        seen, todo = set(), [(t, [t])]
        while todo:
            cur, via = todo.pop()
            for d in deps.get(cur, []):
                if FORBIDDEN_LINKS.search(d):
                    found.append(f"{t} links {d} (through {' -> '.join(via + [d])})")
                elif d not in seen:
                    seen.add(d)
                    todo.append((d, via + [d]))
    return found


def nm(path, undefined):
    """Symbols of an archive or shared library: undefined ones, or defined ones."""
    args = ["nm", "-g", "--undefined-only" if undefined else "--defined-only"]
    if path.endswith((".so",)) or ".so." in os.path.basename(path):
        args.append("-D")
    out = subprocess.run(args + [path], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"layers.py: nm {path}: {out.stderr.strip()}")
    syms = set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) >= 2 and not line.endswith(":"):
            syms.add(f[-1].split("@")[0])
    return syms


def check_symbols(checks, forbids):
    forbidden = {}
    for name, path in forbids:
        if not os.path.exists(path):   # a build carried to another machine: that library lives elsewhere there
            print(f"layers: not checked against {name}: {path} is not on this machine")
            continue
        for s in nm(path, False):
            forbidden.setdefault(s, name)
    found = []
    for name, path in checks:
        own = nm(path, False)
        for s in sorted(nm(path, True) - own):
            if s in forbidden:
                found.append(f"{name} ({os.path.basename(path)}) uses {s}, which only {forbidden[s]} defines")
    return found


def pair(s):
    if "=" not in s:
        raise argparse.ArgumentTypeError(f"'{s}' is not NAME=PATH")
    return tuple(s.split("=", 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root")
    ap.add_argument("--links")
    ap.add_argument("--lib", action="append", default=[])
    ap.add_argument("--check", action="append", default=[], type=pair)
    ap.add_argument("--forbid", action="append", default=[], type=pair)
    a = ap.parse_args()
    if not (a.root or a.links or a.check) or bool(a.links) != bool(a.lib) or bool(a.check) != bool(a.forbid):
        ap.print_usage(sys.stderr)
        return 2
    found, ran = [], []
    if a.root:
        found += check_includes(a.root)
        ran.append("includes")
    if a.links:
        found += check_links(a.links, a.lib)
        ran.append("links of " + ", ".join(a.lib))
    if a.check:
        found += check_symbols(a.check, a.forbid)
        ran.append("symbols of " + ", ".join(n for n, _ in a.check) + " against " + ", ".join(n for n, _ in a.forbid))
    for f in found:
        print(f)
    print(f"layers: {len(found)} violation(s) ({'; '.join(ran)})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
