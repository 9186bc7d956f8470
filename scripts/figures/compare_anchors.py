#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares a `ropegrad bench --json` result with the H200 anchors (the public
Triton peer, torch eager/compile, the read-only floor) and with the CUDA
issue's figures to reach. Prints a markdown table; exits 0 regardless (it
reports, it does not judge). scripts/figures/blocks.py imports compare().

    python3 scripts/figures/compare_anchors.py results/h200-cuda.json [results/anchors/h200-2026-11-29.md]
"""
import json
import math
import os
import sys

DEFAULT_ANCHORS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "results", "anchors", "h200-2026-11-29.md")
# issue #3's per-workload figures to reach (us)
WORKLOAD_TARGETS = ((14, 95.0), (8, 37.0), (2, 1.4), (4, 1.4))
GEOMEAN_TARGET = 4.3


def load_anchors(path):
    """The anchors table: {index: {eager, compile, peer, floor, roofline}} in us."""
    cols = {}
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.strip().strip("|").split("|")]
            if len(parts) == 8 and parts[0].isdigit():
                cols[int(parts[0])] = dict(eager=float(parts[3]), compile=float(parts[4]), peer=float(parts[5]),
                                           floor=float(parts[6]), roofline=float(parts[7]))
    return cols


def compare(res, cols):
    """Returns (lines, facts): the table and figures-to-reach lines, and the numbers behind them."""
    ours = {w["index"]: w["time_ns"]["median"] / 1000.0 for w in res["workloads"]}
    out = [f"ropegrad: {res.get('device')} kernel {res.get('kernel_name')} timer {res.get('timer')}",
           "| # | ropegrad us | peer us | faster than peer | floor us | roofline us | pass |",
           "|---|---|---|---|---|---|---|"]
    g = {k: 0.0 for k in ("ours", "peer", "floor")}
    gains = {}
    for w in res["workloads"]:
        i, t = w["index"], ours[w["index"]]
        a = cols[i]
        gains[i] = 1 - t / a["peer"]
        g["ours"] += math.log(t)
        g["peer"] += math.log(a["peer"])
        g["floor"] += math.log(a["floor"])
        out.append(f"| {i} | {t:.2f} | {a['peer']:.2f} | {100 * gains[i]:.1f}% | {a['floor']:.2f} | "
                   f"{a['roofline']:.2f} | {'yes' if w['pass'] else 'NO'} |")
    n = len(res["workloads"])
    geo = math.exp(g["ours"] / n)
    geo_gain = 1 - math.exp((g["ours"] - g["peer"]) / n)
    out.append(f"| geomean | {geo:.2f} | {math.exp(g['peer'] / n):.2f} | "
               f"{100 * geo_gain:.1f}% | {math.exp(g['floor'] / n):.2f} | | |")
    out.append("")
    n10 = sum(1 for v in gains.values() if v >= 0.10)
    out.append("figures to reach (issue #3):")
    out.append(f"  geomean <= {GEOMEAN_TARGET} us: {geo:.2f}")
    out.append(f"  every workload >= 10% faster than the peer: {n10}/{n}")
    for i, lim in WORKLOAD_TARGETS:
        if i in ours:
            out.append(f"  workload {i} <= {lim} us: {ours[i]:.2f}")
    facts = dict(ours=ours, gains=gains, n=n, n10=n10, geomean=geo, geomean_gain=geo_gain,
                 passed=sum(1 for w in res["workloads"] if w["pass"]))
    return out, facts


def main(argv):
    with open(argv[1]) as f:
        res = json.load(f)
    lines, _ = compare(res, load_anchors(argv[2] if len(argv) > 2 else DEFAULT_ANCHORS))
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv)
