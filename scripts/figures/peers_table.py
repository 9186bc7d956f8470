# SPDX-License-Identifier: Apache-2.0
"""The field table of scripts/peers.sh, from the files it wrote into RESULTS:
runs.tsv (op, who, run id, exit status, note, the refusal line) and
runs-list.json (`ropegrad runs list --json` of its registry). Markdown on
stdout: per op, every implementation with its geomean, passed/total, x the
reference run of the same comparison group, and the note; then the plugin
path's check (ropegrad's kernel as a plugin against `ropegrad bench`, same
call: within 2% on the geomean). Every figure comes from the registry.

    python3 scripts/figures/peers_table.py RESULTS > RESULTS/field.md
"""

import json
import os
import sys

PLUGIN_TOLERANCE = 0.02


def load(results):
    with open(os.path.join(results, "runs-list.json")) as f:
        runs = {r["id"]: r for r in json.load(f)}
    rows = []
    with open(os.path.join(results, "runs.tsv")) as f:
        for line in f:
            op, who, rid, rc, note, refusal = (line.rstrip("\n").split("\t") + [""] * 6)[:6]
            rows.append({"op": op, "who": who, "run": runs.get(int(rid)) if rid.isdigit() else None,
                         "rc": rc, "note": note, "refusal": refusal})
    return rows


def fmt_us(ns):
    return "%.3f" % (ns / 1e3) if ns else "-"


def reference_of(rows, op, key):
    for r in rows:
        run = r["run"]
        if r["op"] == op and r["who"] == "reference" and run and run["comparison_key"] == key and run["geomean_ns"]:
            return run["geomean_ns"]
    return None


def table(rows):
    out = ["| op | implementation | run | geomean us | passed | x reference | note |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        run = r["run"]
        if not run:
            why = r["refusal"] or "exit %s, not recorded" % r["rc"]
            out.append("| %s | %s | - | - | - | - | not measured: %s |" % (r["op"], r["who"], why.replace("|", "/")))
            continue
        ref = reference_of(rows, r["op"], run["comparison_key"])
        geo = run["geomean_ns"] if run["status"] == "passed" else None
        x = "%.2f" % (ref / geo) if ref and geo else "-"
        out.append("| %s | %s | #%d | %s | %s/%s | %s | %s |" % (
            r["op"], run["kernel_name"], run["id"], fmt_us(geo), run["passed"], run["total"], x,
            r["note"].replace("|", "/")))
    return out


def plugin_check(rows):
    got = {r["who"]: r["run"] for r in rows if r["op"] == "014" and r["run"]}
    own, plug = got.get("ropegrad"), got.get("ropegrad-as-plugin")
    if not (own and plug and own["geomean_ns"] and plug["geomean_ns"]):
        return ["", "plugin path: not compared (a run is missing)"]
    ratio = plug["geomean_ns"] / own["geomean_ns"]
    ok = abs(ratio - 1) <= PLUGIN_TOLERANCE
    return ["", "plugin path: ropegrad's 014 kernel as a plugin (run #%d) / `ropegrad bench` (run #%d), geomean: "
            "%.4f (%s 2%%)" % (plug["id"], own["id"], ratio, "within" if ok else "NOT within")]


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: peers_table.py RESULTS\n")
        return 2
    rows = load(argv[1])
    print("\n".join(table(rows) + plugin_check(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
