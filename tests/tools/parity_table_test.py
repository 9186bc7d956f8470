#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dev/official/parity_table.py on synthetic `ropegrad bench --json` results: the ratio
of each switched protocol to the default over the same workloads, the farthest
workload, passes; the flush-gap table (median, min, max of flush_gap_us over
workloads; --gaps: that table only); a folder without a default result is
refused."""
import json
import os
import subprocess
import sys
import tempfile

src = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(src, "dev", "official", "parity_table.py")
failures = []


def expect(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + str(detail)[:1500]) if not cond else ""))
    if not cond:
        failures.append(name)


def result(path, medians, fail=(), gaps=None, settle=None):
    ws = [{"index": i, "pass": i not in fail, "time_ns": {"median": m}} for i, m in enumerate(medians)]
    for w, g in zip(ws, gaps or []):
        w["flush_gap_us"] = g
    doc = {"timer": "cupti", "workloads": ws, "summary": {"passed": len(ws) - len(fail), "total": len(ws)}}
    if settle:
        doc["settle"] = settle
    with open(path, "w") as f:
        json.dump(doc, f)


def run(d, *opts):
    p = subprocess.run([sys.executable, tool] + list(opts) + [d], capture_output=True, text=True)
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
    expect("no flush gaps recorded: no gap table", "flush gap" not in out, out)
    # The probe step's --settle runs, with flush gaps (null: a workload without one).
    result(os.path.join(d, "bench-011-parity.json"), [2000.0, 2000.0], gaps=[0.5, 0.25], settle="off")
    result(os.path.join(d, "bench-011-settle.json"), [2100.0, 2200.0], gaps=[6.0, None], settle="on")
    result(os.path.join(d, "bench-011-probe-into-settle.json"), [2100.0, 2100.0], gaps=[5.0, 7.0],
           settle="on")
    rc, out, err = run(d)
    lines = out.splitlines()
    c_settle = [l for l in lines if l.startswith("| 011 | C path --settle on | 2.149 |")]
    expect("the C path --settle on row: geomean 2.149 us, ratio 1.0747", len(c_settle) == 1
           and "| 1.0747 |" in c_settle[0], out)
    gap_c = [l for l in lines if l.startswith("| 011 | C path --settle on | on |")]
    expect("its gap row: one workload with a gap (6.000 us)", gap_c == ["| 011 | C path --settle on | on | 6.000 | "
                                                                       "6.000 | 6.000 | 1 |"], out)
    gap_p = [l for l in lines if l.startswith("| 011 | probe into --settle on | on |")]
    expect("the probe's gap row: median 6.000 of 5 and 7", gap_p == ["| 011 | probe into --settle on | on | 6.000 | "
                                                                     "5.000 | 7.000 | 2 |"], out)
    gap_d = [l for l in lines if l.startswith("| 011 | default (official protocol) | off |")]
    expect("the default's gap row: median 0.375", len(gap_d) == 1 and "| 0.375 | 0.250 | 0.500 | 2 |" in gap_d[0], out)
    rc, out, err = run(d, "--gaps")
    expect("--gaps: the gap table only", rc == 0 and "geomean us" not in out and "| 011 | probe into --settle on | on |"
           in out and "| 014 |" not in out, (rc, out, err))
sys.exit(1 if failures else 0)
