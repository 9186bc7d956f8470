#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The apply ops' performance table (issue 27) from one run's files in
results/ops/ (scripts/gpu-ops.sh): apply-floor-088.txt and
apply-floor-068.txt (dev/apply_floor), h200-vs-torch-apply.json
(bench/vs_torch_apply.py) and h200-hf-step.json (bench/hf_step.py). Prints
markdown; nothing is typed by hand.

    python3 scripts/figures/apply_table.py [results/ops]
"""
import json
import math
import os
import re
import sys


def floor_geomean(path):
    """ropegrad / floor on the geomean, as dev/apply_floor printed it."""
    with open(path) as f:
        m = re.search(r"^geomean ropegrad / floor: ([0-9.]+)$", f.read(), re.M)
    if not m:
        raise SystemExit("apply_table: no geomean line in %s" % path)
    return float(m.group(1))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def peer_summary(op):
    """(geomean us per implementation, workloads faster than compile, how many, liger passed)."""
    ws = op["workloads"]
    med = {n: geomean([w[n]["median_us"] for w in ws]) for n in ("ropegrad", "eager", "compile", "liger") if n in ws[0]}
    faster = sum(w["ropegrad"]["median_us"] < w["compile"]["median_us"] for w in ws)
    liger_ok = sum(bool(w.get("liger", {}).get("passed")) for w in ws)
    slower = [(w["index"], w["compile"]["median_us"] / w["ropegrad"]["median_us"]) for w in ws
              if w["ropegrad"]["median_us"] >= w["compile"]["median_us"]]
    return med, faster, len(ws), liger_ok, slower


def real_tables_column(op):
    """Liger beside ropegrad on real RoPE tables (bench/vs_torch_apply.py --tables rope), where Liger's
    reading of half of each cos/sin row is valid: geomeans, passes, and Liger / ropegrad."""
    if not op:
        return "not measured"
    ws = op["workloads"]
    if not all("liger" in w and "error" not in w["liger"] for w in ws):
        return "Liger not run"
    rg, lg = geomean([w["ropegrad"]["median_us"] for w in ws]), geomean([w["liger"]["median_us"] for w in ws])
    rg_ok = sum(bool(w["ropegrad"].get("passed")) for w in ws)
    lg_ok = sum(bool(w["liger"].get("passed")) for w in ws)
    faster = sum(w["ropegrad"]["median_us"] < w["liger"]["median_us"] for w in ws)
    return "%.2f us (%d/%d pass) vs %.2f us (%d/%d pass): Liger %.2fx ropegrad's time, ropegrad faster on %d of %d" % (
        rg, rg_ok, len(ws), lg, lg_ok, len(ws), lg / rg, faster, len(ws))


def main(argv):
    d = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "results", "ops")
    peers = json.load(open(os.path.join(d, "h200-vs-torch-apply.json")))
    hf = json.load(open(os.path.join(d, "h200-hf-step.json")))
    rope_path = os.path.join(d, "h200-vs-torch-apply-rope.json")
    rope = json.load(open(rope_path)) if os.path.exists(rope_path) else None
    print("| op | ropegrad / floor (geomean) | ropegrad | torch eager | torch.compile | Liger | faster than torch.compile |"
          " Liger on real tables: ropegrad vs Liger |")
    print("|---|---|---|---|---|---|---|---|")
    for op in ("088", "068"):
        fl = floor_geomean(os.path.join(d, "apply-floor-%s.txt" % op))
        med, faster, n, liger_ok, slower = peer_summary(peers["ops"][op])
        liger = "%.2f us (%d/%d pass)" % (med["liger"], liger_ok, n) if "liger" in med else "not run"
        real = real_tables_column(rope["ops"].get(op)) if rope else "not measured"
        note = "" if not slower else " (%s)" % ", ".join("workload %d: compile %.3fx ropegrad's time" % s for s in slower)
        print("| %s | %.3fx | %.2f us | %.2f us | %.2f us | %s | %d of %d%s | %s |" % (
            op, fl, med["ropegrad"], med["eager"], med["compile"], liger, faster, n, note, real))
    print()
    print("| model | RoPE work: stock | ropegrad | Liger | training step: stock | ropegrad | Liger "
          "| ropegrad / stock | ropegrad / Liger |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in hf["models"].items() if "models" in hf else hf.items():
        if not isinstance(r, dict) or "stock" not in r:
            continue
        lg = r.get("liger")
        print("| %s | %.3f ms | %.3f ms | %s | %.1f ms | %.1f ms | %s | %s | %s |" % (
            name, r["stock"]["rope"]["median_ms"], r["ropegrad"]["rope"]["median_ms"],
            "%.3f ms" % lg["rope"]["median_ms"] if lg and "rope" in lg else "-",
            r["stock"]["step"]["median_ms"], r["ropegrad"]["step"]["median_ms"],
            "%.1f ms" % lg["step"]["median_ms"] if lg and "step" in lg else "-",
            step_ratio(r, "ropegrad/stock"), step_ratio(r, "ropegrad/liger")))
    print()
    print("The training step's rows: %s (`bench/hf_step.py`).%s" % (hf.get("device", "GPU not recorded"),
                                                                  step_resolution(hf)))


def step_resolution(hf):
    """What the step ratio ropegrad/Liger can resolve, per model: the RoPE work's difference between the
    two arms as a share of the step, beside the width of the ratio's interval ("" without a Liger arm)."""
    parts = []
    for name, r in hf.get("models", {}).items():
        lg, rg, q = r.get("liger"), r.get("ropegrad"), r.get("ratios", {}).get("ropegrad/liger")
        if not (lg and rg and q and "rope" in lg and "rope" in rg and "step" in rg):
            continue
        diff = lg["rope"]["median_ms"] - rg["rope"]["median_ms"]
        parts.append("%s: ropegrad's RoPE work %.3f ms %s than Liger's, %.2f%% of the step, against an interval "
                     "%.2f%% wide" % (name, abs(diff), "less" if diff >= 0 else "more",
                                      100 * abs(diff) / rg["step"]["median_ms"], 100 * (q["hi"] - q["lo"])))
    return (" The RoPE work's difference against the step ratio's resolution: " + "; ".join(parts) + ".") if parts else ""


def step_ratio(r, key):
    """A step-time ratio of bench/hf_step.py: the median per-round ratio [its interval], or the ratio of the
    medians for a result without rounds; "not measured" (with Liger's skip reason) where it is missing."""
    q = r.get("ratios", {}).get(key)
    if q:
        return "%.3f [%.3f, %.3f] (%d rounds, %.0f%%)" % (q["median"], q["lo"], q["hi"], q["rounds"],
                                                          100 * q["coverage"])
    a, b = key.split("/")
    if a in r and b in r and "step" in r[a] and "step" in r[b]:
        return "%.3f" % (r[a]["step"]["median_ms"] / r[b]["step"]["median_ms"])
    why = r.get(b, {}).get("skipped")
    return "not measured" + (" (%s)" % why if why else "")

if __name__ == "__main__":
    main(sys.argv)
