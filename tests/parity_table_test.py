#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/parity_table.py on synthetic `ropegrad bench --json` results: the ratio
of each switched protocol to the default over the same workloads, the farthest
workload, passes; a folder without a default result is refused."""
import json
import os
import subprocess
import sys
import tempfile

src = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tool = os.path.join(src, "bench", "parity_table.py")
failures = []


def expect(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + str(detail)[:1500]) if not cond else ""))
    if not cond:
        failures.append(name)


def result(path, medians, fail=()):
    ws = [{"index": i, "pass": i not in fail, "time_ns": {"median": m}} for i, m in enumerate(medians)]
    with open(path, "w") as f:
        json.dump({"timer": "cupti", "workloads": ws,
                   "summary": {"passed": len(ws) - len(fail), "total": len(ws)}}, f)


def run(d):
    p = subprocess.run([sys.executable, tool, d], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    rc, out, err = run(d)
    expect("no default result: exit 1, one line", rc == 1 and len(err.strip().splitlines()) == 1, (rc, err))
    result(os.path.join(d, "bench-014-parity.json"), [1000.0, 2000.0, 4000.0])
    result(os.path.join(d, "bench-014-old.json"), [1000.0, 2000.0, 5000.0], fail=(1,))
    rc, out, err = run(d)
    old = [l for l in out.splitlines() if "(the old protocol)" in l]
    expect("the old protocol's row: ratio over the workloads both timed (1 and 1.25: 1.1180), farthest W2 1.250, "
           "2/3 passed", rc == 0 and len(old) == 1 and "| 1.1180 |" in old[0] and "W2 1.250" in old[0]
           and "| 2/3 |" in old[0], out)
    default = [l for l in out.splitlines() if "default (official protocol)" in l]
    expect("the default's row is 1.0000 of itself", len(default) == 1 and "| 1.0000 |" in default[0], out)
sys.exit(1 if failures else 0)
