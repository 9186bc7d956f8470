#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares a `ropegrad bench --json` result with the H200 anchors (the public
Triton peer, torch eager/compile, the read-only floor) and with the CUDA
issue's figures to reach. Prints a markdown table; exits 0 regardless (it
reports, it does not judge).

    python3 bench/compare_anchors.py bench/results/h200-cuda.json [bench/anchors/h200-2026-11-29.md]
"""
import json
import math
import sys

res = json.load(open(sys.argv[1]))
anchors = sys.argv[2] if len(sys.argv) > 2 else "bench/anchors/h200-2026-11-29.md"
cols = {}
for line in open(anchors):
    parts = [p.strip() for p in line.strip().strip("|").split("|")]
    if len(parts) == 8 and parts[0].isdigit():
        i = int(parts[0])
        cols[i] = dict(eager=float(parts[3]), compile=float(parts[4]), peer=float(parts[5]),
                       floor=float(parts[6]), roofline=float(parts[7]))
ours = {w["index"]: w["time_ns"]["median"] / 1000.0 for w in res["workloads"]}
print(f"ropegrad: {res.get('device')} kernel {res.get('kernel_name')} timer {res.get('timer')}")
print("| # | ropegrad us | peer us | faster than peer | floor us | roofline us | pass |")
print("|---|---|---|---|---|---|---|")
g = {k: 0.0 for k in ("ours", "peer", "floor")}
n10 = 0
for w in res["workloads"]:
    i, t = w["index"], ours[w["index"]]
    a = cols[i]
    gain = 1 - t / a["peer"]
    n10 += gain >= 0.10
    g["ours"] += math.log(t)
    g["peer"] += math.log(a["peer"])
    g["floor"] += math.log(a["floor"])
    print(f"| {i} | {t:.2f} | {a['peer']:.2f} | {100 * gain:.1f}% | {a['floor']:.2f} | {a['roofline']:.2f} | "
          f"{'yes' if w['pass'] else 'NO'} |")
n = len(res["workloads"])
print(f"| geomean | {math.exp(g['ours'] / n):.2f} | {math.exp(g['peer'] / n):.2f} | "
      f"{100 * (1 - math.exp((g['ours'] - g['peer']) / n)):.1f}% | {math.exp(g['floor'] / n):.2f} | | |")
print()
print("figures to reach (issue #3):")
print(f"  geomean <= 4.3 us: {math.exp(g['ours'] / n):.2f}")
print(f"  every workload >= 10% faster than the peer: {n10}/{n}")
for i, lim in ((14, 95.0), (8, 37.0), (2, 1.4), (4, 1.4)):
    if i in ours:
        print(f"  workload {i} <= {lim} us: {ours[i]:.2f}")
