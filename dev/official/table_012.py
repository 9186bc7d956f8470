# SPDX-License-Identifier: Apache-2.0
"""012 against its public CUDA peer, from one `scripts/gpu-012.sh` call.

    python3 dev/official/table_012.py --official RESULTS_DIR --runs RUNS_DIR

RESULTS_DIR: scripts/gpu-official.sh's results (agreement.json; 012-WHO.json,
ropegrad's harness on each solution file; 012-ropegrad.json, `ropegrad bench`;
official/012-SOL[@rK].traces.jsonl, the official evaluator's rounds: their geomeans, and their
passed counts where agreement.json has none).
RUNS_DIR: gpu-012.sh's step 2 (native-k1-normal, native-k0-positions,
native-k1-positions, WHO-positions .json). Prints a markdown table: each
solution's geomean under the official evaluator and under ropegrad's harness
(the dataset's inputs, then real long-context positions), each with its ratio
to the peer's figure in the same column (below 1: faster than the peer), and
the C path's figures for ropegrad's two kernels. A missing file is a "-".
"""

import argparse
import json
import math
import os
import sys

ROWS = (  # label, agreement.json's solution, the harness's result file stem
    ("public CUDA peer (peers/012-peer.json)", "peer", "peer"),
    ("ropegrad, kernel 0 (default: every value the nearest bf16)", "ropegrad", "ropegrad-solution"),
    ("ropegrad, kernel 1 (fast: within 0.5 + 2^-12 bf16 ulp)", "ropegrad-fast", "ropegrad-fast"),
)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def summary(path):
    """(geomean us, 'passed/total') of a ropegrad bench --json file, or (None, None)."""
    d = load(path)
    if not d or "summary" not in d:
        return None, None
    s = d["summary"]
    g = s.get("geomean_ns")
    return (g / 1000.0 if g else None), "%s/%s" % (s.get("passed"), s.get("total"))


def trace_rounds(folder, sol):
    """Each round's traces of solution sol, a list of dicts a round: official/012-SOL.traces.jsonl
    (round 1), official/012-SOL@rK.traces.jsonl (OFFICIAL_REPEAT)."""
    out, k = [], 1
    while True:
        name = "012-%s%s.traces.jsonl" % (sol, "" if k == 1 else "@r%d" % k)
        path = os.path.join(folder, "official", name)
        if not os.path.exists(path):
            return out
        with open(path) as f:
            out.append([json.loads(line) for line in f])
        k += 1


def official_traces(rounds):
    """trace_rounds as a list of (workload label, latency us or None) in the file's order, one list a round."""
    out = []
    for rnd in rounds:
        row = []
        for t in rnd:
            axes = (t.get("workload") or {}).get("axes") or {}
            lat = ((t.get("evaluation") or {}).get("performance") or {}).get("latency_ms")
            row.append(("B=%s S=%s" % (axes.get("batch_size"), axes.get("seq_len")), 1000.0 * lat if lat else None))
        out.append(row)
    return out


def official_passed(rounds):
    """'passed/total' of the round with the fewest traces PASSED (trace_rounds), or None without traces:
    the official column's passed when agreement.json has no row for the solution."""
    counts = [(sum((t.get("evaluation") or {}).get("status") == "PASSED" for t in rnd), len(rnd)) for rnd in rounds]
    return "%d/%d" % min(counts) if counts else None


def official_rounds(traces):
    """The official evaluator's geomean (us) of each round (official_traces); a round with a workload
    untimed is left out."""
    out = []
    for rnd in traces:
        lat = [x for _, x in rnd]
        if lat and all(lat):
            out.append(math.exp(sum(math.log(x) for x in lat) / len(lat)))
    return out


def per_workload(sol, a, b):
    """Lines of a markdown table: for each workload (the traces' order), the median over the rounds
    of sol's latency (traces a) and the peer's (traces b), their ratio and in how many rounds sol was
    slower; [] unless both have two rounds or more with the same workloads."""
    n = min(len(a), len(b))
    if n < 2 or any([w for w, _ in a[k]] != [w for w, _ in b[0]] for k in range(n)) or \
            any([w for w, _ in b[k]] != [w for w, _ in b[0]] for k in range(n)):
        return []
    lines = ["| # | workload | peer us | %s us | ratio | rounds %s slower |" % (sol, sol), "|---|---|---|---|---|---|"]
    for i, (label, _) in enumerate(b[0]):
        xs, ps = [a[k][i][1] for k in range(n)], [b[k][i][1] for k in range(n)]
        if not all(xs) or not all(ps):
            lines.append("| %d | %s | - | - | - | - |" % (i, label))
            continue
        mx, mp = median(xs), median(ps)
        lines.append("| %d | %s | %.3f | %.3f | %.3f | %d of %d |" % (
            i, label, mp, mx, mx / mp, sum(x > p for x, p in zip(xs, ps)), n))
    return lines


def saved_rows(folder):
    """Rows for the saved-NAME solution files of the call (gpu-official.sh's A/B files), from their
    first round's traces."""
    d = os.path.join(folder, "official")
    names = sorted(f[len("012-"):-len(".traces.jsonl")] for f in (os.listdir(d) if os.path.isdir(d) else [])
                   if f.startswith("012-saved-") and f.endswith(".traces.jsonl") and "@r" not in f)
    return tuple(("saved solution file %s (dev/official-work/012-%s.json)" % (n, n), n, n) for n in names)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if not n else xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def fmt(v, digits=3):
    return "-" if v is None else "%.*f" % (digits, v)


def ratio(v, peer):
    return "-" if v is None or not peer else "%.4f" % (v / peer)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--official", required=True)
    ap.add_argument("--runs", required=True)
    a = ap.parse_args(argv)
    agree = load(os.path.join(a.official, "agreement.json")) or {}
    by_solution = {r["solution"]: r for r in agree.get("rows", []) if r.get("problem") == "012"}

    rows_all = ROWS + saved_rows(a.official)
    raw = {sol: trace_rounds(a.official, sol) for _, sol, _ in rows_all}
    traces = {sol: official_traces(r) for sol, r in raw.items()}
    rounds = {sol: official_rounds(t) for sol, t in traces.items()}
    cols = []   # per row: official, official passed, harness normal, passed, harness positions, passed
    for _, sol, stem in rows_all:
        r = by_solution.get(sol, {})
        off = median(rounds[sol]) if len(rounds[sol]) > 1 else r.get("geomean_official_us")
        off_passed = ("%s/%s" % (r["official_passed"], r["official_total"]) if "official_passed" in r
                      else official_passed(raw[sol]))
        hn, hn_p = summary(os.path.join(a.official, "012-%s.json" % stem))
        hp, hp_p = summary(os.path.join(a.runs, "%s-positions.json" % stem))
        cols.append((off, off_passed, hn, hn_p, hp, hp_p))
    peer = cols[0]

    out = ["# 012 against its public CUDA peer (scripts/gpu-012.sh, one call)", "",
           "Geomean over the 16 workloads, us; each ratio is to the peer's figure in the same column (below 1: "
           "faster than the peer). Dataset inputs: the suite's. Positions: `--inputs positions` (positions to "
           "262143, theta 1e6, different per batch: arguments to ~2.6e5 rad).", "",
           "| solution | official evaluator | / peer | passed | ropegrad harness | / peer | passed "
           "| ropegrad harness, positions | / peer | passed |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for (label, _, _), c in zip(rows_all, cols):
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, fmt(c[0]), ratio(c[0], peer[0]), c[1] or "-", fmt(c[2]), ratio(c[2], peer[2]), c[3] or "-",
            fmt(c[4]), ratio(c[4], peer[4]), c[5] or "-"))
    timed = [(label, sol) for label, sol, _ in rows_all if rounds[sol]]   # ROUNDS_ONLY: not every file
    n_rounds = min((len(rounds[sol]) for _, sol in timed), default=0)
    if n_rounds > 1 and rounds["peer"]:
        out += ["", "The official column is the median of %d rounds, the files evaluated alternately "
                "(OFFICIAL_REPEAT); each round's geomeans and ratios to the peer's of the same round:" % n_rounds, "",
                "| solution | " + " | ".join("round %d" % (k + 1) for k in range(n_rounds)) + " | median ratio "
                "| rounds below the peer |", "|---|" + "---|" * (n_rounds + 2)]
        peer_r = rounds["peer"]
        for label, sol in timed:
            rs = rounds[sol][:n_rounds]
            ratios = [x / p for x, p in zip(rs, peer_r)]
            out.append("| %s | %s | %s | %d of %d |" % (
                label, " | ".join("%.3f (%.4f)" % (x, q) for x, q in zip(rs, ratios)), "%.4f" % median(ratios),
                sum(q < 1.0 for q in ratios), len(ratios)))
        for label, sol in timed:
            rows = per_workload(sol, traces[sol], traces["peer"]) if sol not in ("peer", "ropegrad") else []
            if rows:
                out += ["", "Per workload, %s against the peer under the official evaluator (medians over "
                        "the rounds; a round's figure is the evaluator's for that workload):" % label, ""] + rows
    out += ["", "ropegrad's C path (`ropegrad bench`, the library's kernels, no Python):", "",
            "| kernel | dataset inputs | passed | positions | passed |", "|---|---|---|---|---|"]
    for k, normal, pos in ((0, os.path.join(a.official, "012-ropegrad.json"),
                            os.path.join(a.runs, "native-k0-positions.json")),
                           (1, os.path.join(a.runs, "native-k1-normal.json"),
                            os.path.join(a.runs, "native-k1-positions.json"))):
        n, n_p = summary(normal)
        p, p_p = summary(pos)
        out.append("| %d | %s | %s | %s | %s |" % (k, fmt(n), n_p or "-", fmt(p), p_p or "-"))
    meta = agree.get("meta", {})
    if meta:
        out += ["", "official run: " + "; ".join("%s: %s" % kv for kv in sorted(meta.items()))]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
