#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/readme_figures.py must notice drift: a copy of README.md with one digit
of a generated block changed (one letter in a block without figures yet) fails
--check (exit 1), --write puts the block back byte for byte, and an unclosed
marker is bad input (exit 2).

    python3 tests/tools/figures_drift.py SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

src = sys.argv[1]
tool = os.path.join(src, "bench", "readme_figures.py")
readme = os.path.join(src, "README.md")


def run(*args):
    return subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


with open(readme) as f:
    text = f.read()
with tempfile.TemporaryDirectory() as tmp:
    copy = os.path.join(tmp, "README.md")
    shutil.copy(readme, copy)
    r = run("--check", copy)
    if r.returncode != 0:
        fail(f"the README's own blocks do not match: {r.stdout}{r.stderr}")
    blocks = list(re.finditer(r"<!-- figures:([a-z0-9-]+) -->(.*?)<!-- /figures:\1 -->", text, re.S))
    if len(blocks) < 5:
        fail(f"expected the README's figures blocks, found {len(blocks)}")
    for m in blocks:
        # a digit of the block's figures; a block without figures yet ("not measured yet") gets a letter
        d = re.search(r"\d", m.group(2)) or re.search(r"[a-z]", m.group(2))
        if not d:
            fail(f"block {m.group(1)} is empty")
        at = m.start(2) + d.start()
        other = ("1" if text[at] != "1" else "2") if text[at].isdigit() else ("x" if text[at] != "x" else "y")
        drifted = text[:at] + other + text[at + 1:]
        with open(copy, "w") as f:
            f.write(drifted)
        r = run("--check", copy)
        if r.returncode != 1 or m.group(1) not in r.stdout:
            fail(f"a changed digit in {m.group(1)} was not reported (rc {r.returncode}): {r.stdout}{r.stderr}")
        r = run("--write", copy)
        with open(copy) as f:
            if r.returncode != 0 or f.read() != text:
                fail(f"--write did not restore {m.group(1)}: {r.stdout}{r.stderr}")
    with open(copy, "w") as f:
        f.write(text.replace(f"<!-- /figures:{blocks[0].group(1)} -->", "", 1))
    r = run("--check", copy)
    if r.returncode != 2 or not r.stderr.strip() or "\n" in r.stderr.strip():
        fail(f"an unclosed marker gave rc {r.returncode}, stderr {r.stderr!r}")
print(f"ok: {len(blocks)} blocks, each drift reported and repaired")
