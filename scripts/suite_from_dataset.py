#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A suite folder (definition.json, workload.jsonl, b200-figures.json) from a
problem of the public SOL-ExecBench dataset copy (problems/N of
bras6379/sol-execbench-solver: definition.json, workload.jsonl, metadata.json).

    python3 scripts/suite_from_dataset.py PROBLEM_DIR suites/0NN-OP

The files are data, copied, never typed: the definition less its "reference"
(the Python the protocol's float64 reference replaces), the workloads byte for
byte, and the B200 figures from metadata.json's "sol" (sol_ms and
baseline_latency_ms per workload) under the protocol block of the existing
suites (suites/012-cos_sin/b200-figures.json). No figures file is written
when the metadata has none (the harness then runs without SOL scores)."""
import json
import os
import shutil
import sys


def main(src, dst):
    here = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "definition.json")) as f:
        definition = json.load(f)
    definition.pop("reference", None)
    with open(os.path.join(dst, "definition.json"), "w") as f:
        f.write(json.dumps(definition, indent=2) + "\n")
    shutil.copyfile(os.path.join(src, "workload.jsonl"), os.path.join(dst, "workload.jsonl"))

    with open(os.path.join(src, "metadata.json")) as f:
        meta = json.load(f)
    sol = meta.get("sol") or {}
    if not sol.get("available") or sol.get("sol_is_dummy") or not sol.get("workload_count_matches"):
        print(f"{src}: no usable B200 figures in metadata.json; none written", file=sys.stderr)
        return 0
    with open(os.path.join(here, "..", "suites", "012-cos_sin", "b200-figures.json")) as f:
        protocol = json.load(f)["protocol"]
    per = []
    for e in sol["per_workload"]:
        row = {"index": e["index"]}
        for axis in ("batch_size", "num_heads", "num_kv_heads", "seq_len"):
            if axis in e["axes"]:
                row[axis] = e["axes"][axis]
        row["sol_ms"] = e["sol_ms"]
        row["baseline_ms"] = e["baseline_latency_ms"]
        per.append(row)
    figures = {
        "source": "SOL-ExecBench dataset metadata (%s, revision resolved %s), B200 figures per workload"
        % (meta["source"]["dataset"], meta["source"]["resolved_sha"]),
        "protocol": protocol,
        "per_workload": per,
    }
    with open(os.path.join(dst, "b200-figures.json"), "w") as f:
        f.write(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: suite_from_dataset.py PROBLEM_DIR SUITE_DIR")
    sys.exit(main(sys.argv[1], sys.argv[2]))
