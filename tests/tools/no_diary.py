#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The project speaks of itself only: no tracked text file reads as a working
diary (working sessions) or says how the machines it ran on were obtained or
driven (lent machines, leases, an outside tool's calls and what they carry).
Its history is in git and CHANGELOG.md; a script that runs on a GPU machine is
an ordinary command.

Searched: `git ls-files` text files, less recorded data (results/, tests/data/,
fuzz/corpus/) and this file, whose pattern list names
what it looks for.

Usage: no_diary.py REPO. Prints each hit as FILE:LINE: TEXT (why); exit 1 when
there is one, 0 otherwise."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # run from CTest: leave the source tree as it is
from findings import finish, repo_arg  # noqa: E402

# Each pattern is written so that it does not match its own line.
PATTERNS = [
    (re.compile(r"\bsessions?\b", re.I), "a diary's unit of work"),
    (re.compile(r"\bdevice\s+tool\b", re.I), "an outside driver of the work"),
    (re.compile(r"\brun\(command="), "an outside driver's call"),
    (re.compile(r"\bcarry=\s*\["), "an outside driver's call"),
    (re.compile(r"\blent\b", re.I), "how a machine was obtained"),
    (re.compile(r"\bleas(e|es|ed|ing)\b", re.I), "how a machine was obtained"),
]
EXCLUDED = ("results/", "tests/data/", "fuzz/corpus/")
SELF = "tests/tools/no_diary.py"


def tracked(repo):
    """The tracked files, or None outside a git checkout (a source archive)."""
    try:
        r = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True)
    except OSError:
        return None
    if r.returncode != 0:
        return None
    return [f for f in r.stdout.decode("utf-8", "replace").split("\0") if f]


def text_of(path):
    """The file's text, or None for a binary file (a NUL byte) or one that cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def main(repo):
    files = tracked(repo)
    if files is None:
        print(f"skip: no_diary: {repo} is not a git checkout (it reads git ls-files)")
        sys.exit(77)
    hits = []
    for rel in files:
        if rel == SELF or rel.startswith(EXCLUDED):
            continue
        text = text_of(os.path.join(repo, rel))
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for rx, why in PATTERNS:
                if rx.search(line):
                    hits.append(f"{rel}:{n}: {line.strip()[:120]} ({why})")
                    break
    finish("no_diary", hits, "line(s) speak of working sessions or of how machines were obtained")


if __name__ == "__main__":
    main(repo_arg("no_diary.py REPO"))
