#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the official protocol's points move (issue 26): ropegrad's own
kernels measured in one run of scripts/gpu-parity.sh under the
harness's default protocol (the official one: correctness rounds, re-staged
inputs, the span of all GPU work, per-iteration sync, the same-kernels check)
and with points switched back to the old behaviour, one JSON result
(`ropegrad bench --json`) per op and protocol, named bench-OP-PROTO.json.
Prints markdown: per op, each protocol's geomean of the per-workload medians,
its ratio to the default, passes, and the worst workload ratio; then, for
every result that has them, the flush gaps (flush_gap_us: per workload, the
median GPU idle time between the cold-L2 flush and the timed call) as their
median, min and max over workloads. --gaps prints that second table only.
Nothing is typed by hand.

    python3 dev/official/parity_table.py [--gaps] DIR
"""
import json
import math
import os
import re
import statistics
import sys

PROTOCOLS = {   # file tag -> what was switched (scripts/gpu-parity.sh's names)
    "parity": "default (official protocol)",
    "restage-off": "--restage off",
    "span-kernels": "--span kernels",
    "sync-end": "--sync end",
    "old": "--restage off --span kernels --sync end --rounds 1 (the old protocol)",
    # scripts/gpu-parity.sh's probe step (dev/official/output_probe.py): the same kernel
    # through the Python driver, its output from torch's allocator or the harness's buffer.
    "probe-returning": "python3 -m ropegrad --impl output_probe.py:returning (the output from torch's allocator)",
    "probe-into": "python3 -m ropegrad --impl output_probe.py:into --dps (the harness's output buffer)",
    # the probe step again with the host waiting for the flush before every call (--settle on)
    "settle": "C path --settle on",
    "probe-into-settle": "probe into --settle on",
}


def load(path):
    with open(path) as f:
        return json.load(f)


def medians(result):
    return {w["index"]: w["time_ns"]["median"] for w in result["workloads"]
            if w.get("pass") and isinstance(w.get("time_ns"), dict) and w["time_ns"].get("median")}


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def results(d, op):
    """(what was switched, the result) for each of op's results in d, in PROTOCOLS' order."""
    for tag, what in PROTOCOLS.items():
        p = os.path.join(d, "bench-%s-%s.json" % (op, tag))
        if os.path.exists(p):
            yield what, load(p)


def op_rows(d, op):
    base_path = os.path.join(d, "bench-%s-parity.json" % op)
    if not os.path.exists(base_path):
        return ["| %s | default | not measured (no %s) | | | | |" % (op, os.path.basename(base_path))]
    bm = medians(load(base_path))
    rows = []
    for what, r in results(d, op):
        m = medians(r)
        common = sorted(set(m) & set(bm))
        gm = geomean([m[i] for i in common]) / 1e3
        ratio = geomean([m[i] / bm[i] for i in common]) if common else float("nan")
        worst = max(common, key=lambda i: abs(math.log(m[i] / bm[i])), default=None)
        worst_s = "W%d %.3f" % (worst, m[worst] / bm[worst]) if worst is not None else "-"
        s = r.get("summary", {})
        rows.append("| %s | %s | %.3f | %.4f | %s | %d/%d | %s |" % (
            op, what, gm, ratio, worst_s, s.get("passed", 0), s.get("total", 0), r.get("timer", "")))
    return rows


def gap_rows(d, op):
    """One row per result of op with flush gaps: median, min, max over its workloads (us)."""
    rows = []
    for what, r in results(d, op):
        gaps = sorted(w["flush_gap_us"] for w in r.get("workloads", [])
                      if isinstance(w.get("flush_gap_us"), (int, float)))
        if gaps:
            rows.append("| %s | %s | %s | %.3f | %.3f | %.3f | %d |" % (
                op, what, r.get("settle", "-"), statistics.median(gaps), gaps[0], gaps[-1], len(gaps)))
    return rows


def print_gaps(d, ops):
    rows = [row for op in ops for row in gap_rows(d, op)]
    if not rows:
        return
    print("\n| op | run | settle | flush gap us, median over workloads | min | max | workloads |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)


def main(argv):
    gaps_only = len(argv) == 3 and argv[1] == "--gaps"
    if len(argv) != 2 and not gaps_only:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    d = argv[-1]
    ops = sorted({m.group(1) for f in os.listdir(d) for m in [re.match(r"bench-(\d+)-parity\.json$", f)] if m})
    if not ops:
        print("parity_table: no bench-OP-parity.json in %s" % d, file=sys.stderr)
        return 1
    if not gaps_only:
        print("| op | protocol | geomean us | / default (same workloads) | farthest workload | passed | timer |")
        print("|---|---|---|---|---|---|---|")
        for op in ops:
            for row in op_rows(d, op):
                print(row)
    print_gaps(d, ops)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
