#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the two numbers per workload for dev/rope_backward/NOTES.md: the bytes any
kernel must move over the read bandwidth measured on the H200, and the fixed
latency (an empty kernel's span), both taken from the anchors file's
measurements (../shared/anchors/h200-2026-11-29.md: 4.49 TB/s, 0.61 us).

    python3 scripts/figures/floor_table.py [suite_dir] [read_TBps] [empty_us]
"""
import json
import sys

suite = sys.argv[1] if len(sys.argv) > 1 else "suites/014-rope_backward"
bw = float(sys.argv[2]) if len(sys.argv) > 2 else 4.49e12
empty_us = float(sys.argv[3]) if len(sys.argv) > 3 else 0.61
D = json.load(open(f"{suite}/definition.json"))["axes"]["head_dim"]["value"]
H = D // 2
print("| # | B | S | bytes (MB) | bytes / 4.49 TB/s (us) | fixed latency (us) | floor = max (us) |")
print("|---|---|---|---|---|---|---|")
for i, line in enumerate(l for l in open(f"{suite}/workload.jsonl") if l.strip()):
    w = json.loads(line)
    B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
    nbytes = B * S * (2 * D * 2 + H * 4 + 4) + B * H * 4
    t = nbytes / bw * 1e6
    print(f"| {i} | {B} | {S} | {nbytes / 1e6:.2f} | {t:.2f} | {empty_us:.2f} | {max(t, empty_us):.2f} |")
