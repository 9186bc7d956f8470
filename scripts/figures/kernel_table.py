#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-workload medians (us) of several `ropegrad bench --json` files side by
side, with the geometric mean: the kernel versions' comparison in dev/rope_backward/NOTES.md.

    python3 scripts/figures/kernel_table.py results/h200-cuda-k{1,2,3,4,5,6}.json results/h200-cuda.json
"""
import json
import math
import sys

runs = [json.load(open(p)) for p in sys.argv[1:]]
names = [r.get("kernel_name") or str(r.get("kernel")) for r in runs]
print("| # | B | S | " + " | ".join(names) + " |")
print("|---|---|---|" + "---|" * len(runs))
logs = [0.0] * len(runs)
for k, w in enumerate(runs[0]["workloads"]):
    row = []
    for j, r in enumerate(runs):
        t = r["workloads"][k]["time_ns"]["median"] / 1000.0
        logs[j] += math.log(t)
        row.append(f"{t:.2f}" + ("" if r["workloads"][k]["pass"] else " FAIL"))
    print(f"| {w['index']} | {w['batch_size']} | {w['seq_len']} | " + " | ".join(row) + " |")
n = len(runs[0]["workloads"])
print("| geomean | | | " + " | ".join(f"{math.exp(l / n):.2f}" for l in logs) + " |")
