#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates or checks every benchmark figure block in the documentation.

A block sits in a Markdown file between `<!-- figures:NAME -->` and
`<!-- /figures:NAME -->`; its text is made from the committed result files
(results/) by scripts/figures/blocks.py, never typed by hand. The files are
found here: README.md, docs/**/*.md and dev/**/*.md that hold a marker.

    python3 scripts/figures.py              # print every block
    python3 scripts/figures.py --write      # replace the blocks in place (atomic)
    python3 scripts/figures.py --check      # exit 1 when a block differs from the result files
    python3 scripts/figures.py --check FILE...   # only these files

Exit codes: 0 ok, 1 --check found a difference, 2 bad input (one line on stderr).
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "figures"))
sys.dont_write_bytecode = True  # the check runs from CTest: leave the source tree as it is
import blocks  # noqa: E402
from blocks import BLOCKS, InputError, replace_blocks, wrap_prose, write_atomic  # noqa: E402


MARKER = re.compile(r"<!-- figures:[a-z0-9-]+ -->")


def marked_files(root=ROOT):
    """README.md, docs/**/*.md and dev/**/*.md holding a figures marker, in a stable order."""
    cands = [os.path.join(root, "README.md")]
    for top in ("docs", "dev"):
        cands += sorted(glob.glob(os.path.join(root, top, "**", "*.md"), recursive=True))
    out = []
    for f in cands:
        try:
            with open(f) as fh:
                if MARKER.search(fh.read()):   # a block's marker, not the pattern named in prose
                    out.append(f)
        except OSError:
            continue
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", metavar="FILE", nargs="*", help="replace the marked blocks in place (default: every marked file)")
    g.add_argument("--check", metavar="FILE", nargs="*", help="exit 1 when a marked block differs (default: every marked file)")
    a = ap.parse_args(argv)
    made = {}
    try:
        if a.write is None and a.check is None:
            for name, fn in BLOCKS.items():
                print(f"<!-- figures:{name} -->\n{wrap_prose(fn())}\n<!-- /figures:{name} -->\n")
            return 0
        files = a.write if a.write is not None else a.check
        files = files or marked_files()
        if not files:
            raise InputError("no Markdown file with a figures marker")
        bad = 0
        for fname in files:
            rel = os.path.relpath(fname, ROOT) if os.path.isabs(fname) else fname
            try:
                with open(fname) as f:
                    text = f.read()
            except OSError as e:
                raise InputError(f"{fname}: {e}")
            new, names = replace_blocks(text, made, fname)
            if not names:
                raise InputError(f"{fname}: no figures blocks (<!-- figures:NAME --> ... <!-- /figures:NAME -->)")
            if a.write is not None:
                if new != text:
                    write_atomic(fname, new)
                print(f"{rel}: {len(names)} blocks ({', '.join(names)}), {'rewritten' if new != text else 'unchanged'}")
            elif new != text:
                stale = [n for n in names if blocks._block_text(text, n) != made[n]]
                print(f"{rel}: figures blocks differ from the result files: {', '.join(stale)} "
                      f"(python3 scripts/figures.py --write)")
                bad = 1
            else:
                print(f"{rel}: {len(names)} figures blocks match the result files")
        return bad
    except (InputError, KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as e:
        msg = e.args[0] if isinstance(e, InputError) else f"unexpected result-file content: {type(e).__name__} {e}"
        print(f"figures: {msg}".replace("\n", " "), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
