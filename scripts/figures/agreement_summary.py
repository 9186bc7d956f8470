# SPDX-License-Identifier: Apache-2.0
"""The agreement summary of scripts/gpu-agreement.sh: per op, the official evaluator's geomean on
ropegrad's exported solution against ropegrad's harness on the same file (the Python path) and
against ropegrad's C path (`ropegrad bench`) with --settle off and on, each round, with the worst
workload and the median flush gap (flush_gap_us).

    python3 scripts/figures/agreement_summary.py OUT    # OUT: gpu-agreement.sh's folder

Reads OUT/official/agreement.json (dev/official/agreement_table.py) and OUT/cpath/*.json.
Rule (issue 40): agrees = geomean within 3% and every workload within 10%.
"""

import glob
import json
import math
import os
import re
import statistics
import sys

GEO_TOL, WL_TOL = 0.03, 0.10


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def cpath_medians(path):
    with open(path) as f:
        d = json.load(f)
    meds, gaps = {}, []
    for w in d.get("workloads", []):
        t = (w.get("time_ns") or {}).get("median")
        if w.get("pass") and t:
            meds[w["uuid"]] = (w["index"], t / 1e3)
        if w.get("flush_gap_us") is not None:
            gaps.append(w["flush_gap_us"])
    return meds, d.get("device", "?"), (statistics.median(gaps) if gaps else float("nan"))


def verdict(pairs):
    """pairs: [(index, official_us, other_us)] -> (ratio, worst (index, ratio), outside, verdict)."""
    ratio = geomean([o for _, o, _ in pairs]) / geomean([r for _, _, r in pairs])
    worst = max(((i, o / r) for i, o, r in pairs), key=lambda t: abs(math.log(t[1])))
    outside = [i for i, o, r in pairs if abs(o / r - 1) > WL_TOL]
    ok = abs(ratio - 1) <= GEO_TOL and not outside
    return ratio, worst, outside, "agrees" if ok else "differs"


def line(problem, what, pairs, gap):
    ratio, worst, outside, v = verdict(pairs)
    out = ",".join("W%d" % i for i in outside) or "-"
    g = "%.2f" % gap if gap == gap else "-"
    return "| %s | %s | %.3f | %.3f | %.4f | W%d %.3f | %s | %s | %s |" % (
        problem, what, geomean([o for _, o, _ in pairs]), geomean([r for _, _, r in pairs]), ratio,
        worst[0], worst[1], out, g, v)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: agreement_summary.py OUT\n")
        return 2
    out = argv[1]
    try:
        with open(os.path.join(out, "official", "agreement.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("agreement_summary: %s\n" % e)
        return 2
    rows = [r for r in doc.get("rows", []) if r.get("workloads")]
    device = "?"
    lines, settle_lines = [], []
    for r in rows:
        p = r["problem"]
        official = {w["uuid"]: (w["index"], w["official_us"]) for w in r["workloads"]}
        what = {"ropegrad": "ropegrad's solution", "saved-reference": "the definition's reference"}.get(
            r["solution"], r["solution"])
        lines.append(line(p, "%s: harness on the file (Python path)" % what,
                          [(w["index"], w["official_us"], w["ropegrad_us"]) for w in r["workloads"]], float("nan")))
        if r["solution"] != "ropegrad":
            continue
        for path in sorted(glob.glob(os.path.join(out, "cpath", "%s-settle-*-r*.json" % p))):
            m = re.search(r"settle-(on|off)-r(\d+)\.json$", path)
            meds, device, gap = cpath_medians(path)
            pairs = [(official[u][0], official[u][1], meds[u][1]) for u in official if u in meds]
            if pairs:
                lines.append(line(p, "ropegrad's kernel: C path, --settle %s, round %s" % (m.group(1), m.group(2)),
                                  pairs, gap))
    for p in sorted({os.path.basename(f).split("-")[0] for f in glob.glob(os.path.join(out, "cpath", "*-settle-*.json"))}):
        for r_on in sorted(glob.glob(os.path.join(out, "cpath", "%s-settle-on-r*.json" % p))):
            r_off = r_on.replace("-settle-on-", "-settle-off-")
            if not os.path.exists(r_off):
                continue
            on, device, gap_on = cpath_medians(r_on)
            off, _, gap_off = cpath_medians(r_off)
            both = [u for u in on if u in off]
            if both:
                settle_lines.append("| %s | %s | %.3f | %.3f | %.4f | %.2f | %.2f |" % (
                    p, re.search(r"-r(\d+)\.json$", r_on).group(1), geomean([on[u][1] for u in both]),
                    geomean([off[u][1] for u in both]), geomean([on[u][1] for u in both]) /
                    geomean([off[u][1] for u in both]), gap_on, gap_off))
    print("# Agreement with NVIDIA's official evaluator (scripts/gpu-agreement.sh)\n")
    print("GPU: %s. Ratio = official / ropegrad (geomean over the workloads both timed and passed); "
          "agrees = within 3%% on the geomean and 10%% on every workload. Flush gap: median over the "
          "workloads of the GPU idle time between the cold-L2 flush and the timed call.\n" % device)
    print("| op | ropegrad side | official us | ropegrad us | official / ropegrad | worst | outside 10% "
          "| flush gap us | verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ln in lines:
        print(ln)
    if not lines:
        print("| - | no compared rows | | | | | | | |")
    skipped = os.path.join(out, "skipped.txt")
    if os.path.exists(skipped):
        with open(skipped) as f:
            print("\nNot measured:\n\n" + "".join("- %s\n" % ln.strip() for ln in f if ln.strip()), end="")
    print("\nropegrad's C path alone, --settle on against off (geomean us over the passed workloads; flush gap: "
          "median us):\n")
    print("| op | round | settle on | settle off | on / off | gap on | gap off |")
    print("|---|---|---|---|---|---|---|")
    for ln in settle_lines:
        print(ln)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
