#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Claims in the sources that the code can contradict (issue 28, "stale claims"):

  - a public rg_* function of a header under src/{cli,harness,index,record,result,util}/ with no caller
    (only its declaration and definition) is dead code;
  - a source file named in a comment of src/ or include/ must exist (names of
    files that `ropegrad export` writes are listed below);
  - kernels.cuh's launcher comment names the kernel the code launches;
  - run_cuda.c's timed iteration names the call the runner makes;
  - run_internal.h is included only by the harness's own files (src/harness/,
    not its op rows src/harness/ops/, which are written against op.h);
  - the README's "N things" above its table counts the table's rows;
  - "N SOL-ExecBench ops" and "the N ops" in the README and docs/ count the
    bundled suites (suites/*/definition.json).

Usage: stale_claims.py REPO. Prints every finding; exit 1 when there is one."""
import os
import re
from collections import Counter
import subprocess
import sys

repo = sys.argv[1]
os.chdir(repo)
files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], capture_output=True,
                       text=True, check=True).stdout.split()
files = [f for f in files if os.path.isfile(f)]
code_ext = (".c", ".h", ".cu", ".cuh", ".cpp", ".py", ".cmake", ".sh", ".txt")
text = {f: open(f, encoding="utf-8", errors="replace").read() for f in files if f.endswith(code_ext)}
findings = []

# Dead public functions.
decl = re.compile(r"^[A-Za-z_][\w \*]*?\b(rg_\w+)\s*\(", re.M)
# Every rg_ identifier counted once per file, in one pass over the text.
ident = re.compile(r"\brg_\w+")
counts = {f: Counter(ident.findall(t)) for f, t in text.items()}
total = Counter()
for c in counts.values():
    total.update(c)
for h in files:
    if not re.match(r"src/(cli|harness|index|record|result|util)/.+\.h$", h):
        continue
    for name in sorted(set(decl.findall(text[h]))):
        refs = total[name] - counts[h][name]
        if refs <= 1:
            findings.append(f"{h}: {name} is declared but nothing calls it")

# Source files named in comments.
generated = {"kernel.cu", "ropegrad_kernels.cuh", "ropegrad_rope_forward_kernels.cuh", "ropegrad_cos_sin_kernels.cuh", "llm.c"}
names = {os.path.basename(f) for f in files}
for f in files:
    if not (f.startswith(("src/", "include/")) and f.endswith((".c", ".h", ".cu", ".cuh"))):
        continue
    for i, line in enumerate(text[f].splitlines(), 1):
        if line.lstrip().startswith("#include"):
            continue
        for m in re.findall(r"(?<![\w./-])([A-Za-z_]\w*\.(?:c|cu|cuh))\b", line):
            if m not in names and m not in generated:
                findings.append(f"{f}:{i}: names {m}, which does not exist")

# The launcher comment of kernels.cuh.
k = text["src/op/rope_backward/kernels.cuh"]
m = re.search(r"((?://[^\n]*\n)+)static cudaError_t rg_cuda_launch\(.*?\n\}", k, re.S)
if not m:
    findings.append("src/op/rope_backward/kernels.cuh: rg_cuda_launch not found")
else:
    launched = re.search(r"\n\s*kernel = (\d+);", m.group(0))
    if launched and not re.search(r"\b" + launched.group(1) + r"\b", m.group(1)):
        findings.append(f"src/op/rope_backward/kernels.cuh: rg_cuda_launch launches {launched.group(1)}; its comment says: "
                        + " ".join(m.group(1).split()))

# run_cuda.c: the iteration drawn in its header comment is the call it makes.
r = text["src/harness/run_cuda.c"]
call = re.search(r"s->op->(\w+)\(call\b", r)   # call_timed: the timed call on the re-staged tensors
head = re.search(r"/\*\n \* run_cuda.c.*?\*/|/\* run_cuda.c.*?\*/", r, re.S)
head = head.group(0) if head else ""
if not call or ("op->" + call.group(1) + "(") not in head:
    findings.append("src/harness/run_cuda.c: the header comment does not name the call the timed iteration makes")

# run_internal.h: who includes it, and what it says about that.
includers = [f for f, t in text.items() if re.search(r'#include "run_internal.h"', t) and f.endswith((".c", ".cu"))]
outside = [f for f in includers if not f.startswith("src/harness/") or f.startswith("src/harness/ops/")]
if outside:
    findings.append(f"run_internal.h is included outside the harness's own files: {outside}")

# The README's count above its table.
words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
md = open("README.md", encoding="utf-8").read()
m = re.search(r"ropegrad is (\w+) things[^\n]*\n\n((?:\|[^\n]*\n)+)", md)
if not m:
    findings.append("README.md: no 'ropegrad is N things' table")
else:
    rows = [l for l in m.group(2).splitlines()[2:] if l.startswith("|")]
    if words.get(m.group(1).lower()) != len(rows):
        findings.append(f"README.md: says {m.group(1)} things above a table of {len(rows)}")

# The number of ops the README and the docs pages claim.
nsuites = len({os.path.dirname(f) for f in files if re.fullmatch(r"suites/[^/]+/definition\.json", f)})
for page in sorted(f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))):
    body = open(page, encoding="utf-8").read()
    for m in re.finditer(r"\b(?:(two|three|four|five|six)\s+SOL-ExecBench\s+ops|the\s+(two|three|four|five|six)\s+ops)\b", body, re.I):
        if words[(m.group(1) or m.group(2)).lower()] != nsuites:
            line = body.count("\n", 0, m.start()) + 1
            findings.append(f"{page}:{line}: says '{m.group(0)}', and {nsuites} suites are bundled")

for f in findings:
    print(f)
print(f"stale_claims: {len(findings)} finding(s)")
sys.exit(1 if findings else 0)
