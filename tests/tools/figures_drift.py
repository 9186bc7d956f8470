#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/figures.py must notice drift: in a copy of each page that holds
figures blocks (the README and docs/**/*.md), one digit of a generated block
changed (one letter in a block without figures yet) fails --check (exit 1),
--write puts the block back byte for byte, and an unclosed marker is bad input
(exit 2).

    python3 tests/tools/figures_drift.py SOURCE_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

src = sys.argv[1]
tool = os.path.join(src, "scripts", "figures.py")
BLOCK = re.compile(r"<!-- figures:([a-z0-9-]+) -->(.*?)<!-- /figures:\1 -->", re.S)


def run(*args):
    return subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def pages():
    """The README, then every docs page with a figures block, in a stable order."""
    found = [os.path.join(src, "README.md")]
    for p in sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True)):
        with open(p) as f:
            if BLOCK.search(f.read()):
                found.append(p)
    return found


def drift(page):
    """Each block of page: a changed figure is reported and --write repairs it. Returns the block count."""
    name = os.path.relpath(page, src)
    with open(page) as f:
        text = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(page))
        shutil.copy(page, copy)
        r = run("--check", copy)
        if r.returncode != 0:
            fail(f"{name}: its own blocks do not match: {r.stdout}{r.stderr}")
        blocks = list(BLOCK.finditer(text))
        for m in blocks:
            # a digit of the block's figures; a block without figures yet ("not measured yet") gets a letter
            d = re.search(r"\d", m.group(2)) or re.search(r"[a-z]", m.group(2))
            if not d:
                fail(f"{name}: block {m.group(1)} is empty")
            at = m.start(2) + d.start()
            other = ("1" if text[at] != "1" else "2") if text[at].isdigit() else ("x" if text[at] != "x" else "y")
            drifted = text[:at] + other + text[at + 1:]
            with open(copy, "w") as f:
                f.write(drifted)
            r = run("--check", copy)
            if r.returncode != 1 or m.group(1) not in r.stdout:
                fail(f"{name}: a changed digit in {m.group(1)} was not reported (rc {r.returncode}): {r.stdout}{r.stderr}")
            r = run("--write", copy)
            with open(copy) as f:
                if r.returncode != 0 or f.read() != text:
                    fail(f"{name}: --write did not restore {m.group(1)}: {r.stdout}{r.stderr}")
        if blocks:
            with open(copy, "w") as f:
                f.write(text.replace(f"<!-- /figures:{blocks[0].group(1)} -->", "", 1))
            r = run("--check", copy)
            if r.returncode != 2 or not r.stderr.strip() or "\n" in r.stderr.strip():
                fail(f"{name}: an unclosed marker gave rc {r.returncode}, stderr {r.stderr!r}")
    return len(blocks)


total = sum(drift(p) for p in pages())
if total < 5:
    fail(f"expected the figures blocks of the README and docs/, found {total}")
print(f"ok: {total} blocks, each drift reported and repaired")
