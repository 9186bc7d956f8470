#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 26's agreement table: the official SOL-ExecBench evaluator against
ropegrad's harness on the same solution file, per problem and solution.

    python3 dev/official/agreement_table.py \\
        --pair 014 ropegrad OFFICIAL.traces.jsonl ROPEGRAD.json [--pair ...] \\
        [--native 014 NATIVE.json] [--skipped 011 peer "why"] [--status two_phase/status.json] \\
        [--meta KEY=VALUE ...] [--out-md agreement.md] [--out-json agreement.json]

OFFICIAL.traces.jsonl is the evaluator's trace file (`sol-execbench ... -o`,
dev/official/two_phase.py), ROPEGRAD.json ropegrad's result (`--json`) of
`python3 -m ropegrad bench --solution` on the same solution file; --native
adds `ropegrad bench` (ropegrad's own kernel through the C path) beside the
row of label "ropegrad". Workloads are matched by uuid.

Per row: each side's passed/total; the geomean of each side's per-workload
medians over the workloads both timed (official: performance.latency_ms;
ropegrad: time_ns.median); their ratio official / ropegrad; the worst
per-workload ratio (farthest from 1); and the verdict by issue 26's rule:
"agrees" when both pass the same workloads, the geomean ratio is within 3%
and every workload's within 10%; else "differs", with the protocol points
(PROTOCOL.md's rows) whose known effect has the shape of the difference; or
"not compared" (a side missing, nothing timed by both). A skipped row says why
(--skipped on a row without results turns it into "skipped: WHY").
Every figure comes from the files; nothing is typed in.
Exit 0 when the table was written, 2 on bad input (one line on stderr).
"""

import argparse
import json
import math
import os
import statistics
import sys
import tempfile

GEOMEAN_TOL = 0.03
WORKLOAD_TOL = 0.10

# PROTOCOL.md's points, as they are named in the verdicts.
P_SPAN = ("what one sample is: the official span covers every GPU activity the call issues (allocation "
          "memsets, .contiguous() copies, several kernels and the host's launch gaps between them); "
          "ropegrad times kernel spans between its cold-L2 markers")
P_SYNC = "host sync: the official synchronizes the host after every timed iteration, ropegrad enqueues all 60"
P_RESTAGE = ("input buffers: the official re-copies the inputs to a shifted address before every "
             "iteration, ropegrad reuses one set (a solution that caches by pointer or identity sees the "
             "difference)")
P_SETTLE = ("flush settle: the official issues the timed call right after its cold-L2 flush (the call can "
            "start the instant the flush ends, its dirty lines still being written back); ropegrad with "
            "--settle on waits for the flush first, so the call starts on an idle GPU (flush_gap_us in its "
            "result: the GPU idle time between the flush and the call)")
P_CLOCKS = "clocks: neither locks them; each run's SM clock is in ropegrad's result (environment)"
P_FLUSH = ("cold L2: the official zero-fills 2x L2 with a torch kernel on the call's stream, ropegrad "
           "cudaMemsetAsync's 2x L2 on its own stream")
P_VALUES = ("input values: torch.randn-style inputs from torch's RNG (official) against ropegrad's "
            "splitmix64 normals; sin/cos cost can follow the argument range")
P_TRUTH = ("ground truth: the official compares with the definition's float32 reference on the GPU, "
           "ropegrad with float64 unless --ground-truth float32-reference")
P_ROUNDS = ("correctness rounds: the official checks 10 rounds of fresh inputs, ropegrad's CUDA backend "
            "one round")
P_HACK = "reward-hack checks: the official's (monkey-patching, threads, lazy outputs, views of inputs)"
P_PATH = ("measurement path: the same kernel through `ropegrad bench` (the C path) is within 3%% of the "
          "official (official / that %.4f); the difference is in how ropegrad's harness runs the solution file "
          "(python3 -m ropegrad --solution: torch binding, Python callable)")
P_CPU = ("CPU load: ropegrad's runs shared the CPU with the official compiles (phase 1), which can stretch "
         "the host's launch gaps inside a multi-kernel call")
SWITCHES = ("measure with the point switched: ropegrad's --ground-truth, and its --sync/--span/--restage/--settle "
            "where this build has them (RG_BENCH_ARGS of scripts/gpu-official.sh)")


class InputError(Exception):
    pass


def read_traces(path):
    """{uuid: (index, status, latency_ms or None)} and the hardware named, from a trace file."""
    out, hw = {}, set()
    try:
        with open(path) as f:
            lines = [x for x in f if x.strip()]
    except OSError as e:
        raise InputError("%s: %s" % (path, e))
    for n, line in enumerate(lines):
        try:
            t = json.loads(line)
            uuid = t["workload"]["uuid"]
            ev = t.get("evaluation") or {}
        except (ValueError, KeyError, TypeError) as e:
            raise InputError("%s line %d: not a trace (%s)" % (path, n + 1, e))
        perf = ev.get("performance") or {}
        lat = perf.get("latency_ms")
        hw.add(((ev.get("environment") or {}).get("hardware")) or "")
        out[uuid] = (n, ev.get("status", "NO_EVALUATION"), float(lat) if isinstance(lat, (int, float)) else None)
    return out, sorted(h for h in hw if h)


def read_protocol(path):
    """The protocol points ropegrad's --json result recorded ({} for a result from before they were)."""
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return {}
    return {k: d[k] for k in ("restage", "span", "sync", "settle", "rounds") if k in d}


# A point both sides follow is no explanation: PROTOCOL.md's text of each point, the value of
# ropegrad's recorded protocol that makes it the official behaviour, and the value a result without
# the field had (None: unknown; settle: off, the harness never settled before the switch).
SAME_AS_OFFICIAL = ((P_SPAN, "span", "all", None), (P_SYNC, "sync", "iteration", None),
                    (P_RESTAGE, "restage", "on", None), (P_SETTLE, "settle", "off", "off"))


def drop_shared_points(pts, proto):
    """pts without the points ropegrad's run followed as the official evaluator does (its recorded protocol)."""
    same = [text for text, key, value, before in SAME_AS_OFFICIAL if proto.get(key, before) == value]
    if isinstance(proto.get("rounds"), int) and proto["rounds"] >= 10:
        same.append(P_ROUNDS)
    return [p for p in pts if not any(p.endswith(t) for t in same)]


def read_result(path):
    """{uuid: (index, passed, median_ns or None)} and the device, from ropegrad's --json result."""
    try:
        with open(path) as f:
            d = json.load(f)
        ws = d["workloads"]
        out = {}
        for w in ws:
            med = (w.get("time_ns") or {}).get("median")
            ok = isinstance(med, (int, float)) and math.isfinite(med) and med > 0
            out[w["uuid"]] = (w["index"], bool(w["pass"]), float(med) if ok else None)
        return out, d.get("device", ""), d.get("kernel_name", "")
    except OSError as e:
        raise InputError("%s: %s" % (path, e))
    except (ValueError, KeyError, TypeError) as e:
        raise InputError("%s: not a ropegrad result (%s)" % (path, e))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def explain(rows, passed_same, hack, overlap):
    """The protocol points whose effect has the shape of the difference."""
    pts = []
    if hack:
        pts.append(P_HACK)
    if not passed_same:
        pts += [P_TRUTH, P_ROUNDS, P_VALUES]
    if not rows:
        return pts
    diffs = [r["official_us"] - r["ropegrad_us"] for r in rows]
    logs = [math.log(r["ratio"]) for r in rows]
    mean_d = statistics.fmean(diffs)
    spread_d = statistics.pstdev(diffs)
    spread_log = statistics.pstdev(logs)
    small = [r for r in rows if r["official_us"] <= statistics.median(x["official_us"] for x in rows)]
    big = [r for r in rows if r not in small]
    if mean_d > 0 and spread_d <= 0.5 * abs(mean_d) and spread_log > 0.01:
        pts += ["a fixed cost per call on the official side (official - ropegrad = %.2f us on average, spread "
                "%.2f): " % (mean_d, spread_d) + P_SPAN, P_SYNC, P_SETTLE]
    elif mean_d < 0 and spread_d <= 0.5 * abs(mean_d) and spread_log > 0.01:
        pts += ["a fixed cost per call on ropegrad's side (ropegrad - official = %.2f us on average, spread "
                "%.2f): " % (-mean_d, spread_d) + P_SPAN, P_FLUSH, P_SETTLE]
    elif spread_log <= 0.03:
        pts += ["a proportional difference (ratios %.3f-%.3f): " % (min(r["ratio"] for r in rows),
                                                                    max(r["ratio"] for r in rows)) + P_CLOCKS,
                P_FLUSH, P_VALUES]
    else:
        far = sorted(rows, key=lambda r: -abs(math.log(r["ratio"])))[:3]
        pts.append("workload-specific (farthest: %s)" % ", ".join("W%d %.3f" % (r["index"], r["ratio"]) for r in far))
        if small and big and statistics.fmean(math.log(r["ratio"]) for r in small) > \
                statistics.fmean(math.log(r["ratio"]) for r in big):
            pts += [P_SPAN, P_SYNC]
        pts += [P_RESTAGE, P_FLUSH, P_SETTLE]
    if overlap and mean_d < 0:
        pts.append(P_CPU)
    return pts


def compare(problem, label, traces_path, result_path, overlap):
    """One row of the table (a dict)."""
    row = {"problem": problem, "solution": label, "traces": traces_path, "ropegrad_result": result_path}
    missing = [what for what, p in (("official traces", traces_path), ("ropegrad result", result_path))
               if not p or not os.path.exists(p)]
    if missing:
        row.update(verdict="not compared", why="no %s" % " and no ".join(missing))
        return row
    off, hw = read_traces(traces_path)
    rg, device, kernel = read_result(result_path)
    row.update(hardware=hw, device=device, kernel_name=kernel,
               official_passed=sum(1 for v in off.values() if v[1] == "PASSED"), official_total=len(off),
               ropegrad_passed=sum(1 for v in rg.values() if v[1]), ropegrad_total=len(rg))
    statuses = {}
    for _, st, _ in off.values():
        statuses[st] = statuses.get(st, 0) + 1
    row["official_statuses"] = dict(sorted(statuses.items()))
    common = sorted(set(off) & set(rg), key=lambda u: rg[u][0])
    only = sorted(set(off) ^ set(rg))
    off_pass = {u for u in off if off[u][1] == "PASSED"}
    rg_pass = {u for u in rg if rg[u][1]}
    passed_same = off_pass == rg_pass and not only
    per = []
    for u in common:
        lat, med = off[u][2], rg[u][2]
        if off[u][1] == "PASSED" and rg[u][1] and lat and med:
            o_us, r_us = lat * 1e3, med / 1e3
            per.append({"index": rg[u][0], "uuid": u, "official_us": o_us, "ropegrad_us": r_us, "ratio": o_us / r_us})
    row["workloads"] = per
    if only:
        row["unmatched_uuids"] = only
    if not per:
        row.update(verdict="not compared", why="no workload timed by both",
                   points=drop_shared_points(explain([], passed_same, "REWARD_HACK" in statuses, overlap),
                                             read_protocol(result_path)))
        return row
    g_off, g_rg = geomean([r["official_us"] for r in per]), geomean([r["ropegrad_us"] for r in per])
    worst = max(per, key=lambda r: abs(math.log(r["ratio"])))
    ratio = g_off / g_rg
    within_geo = abs(ratio - 1) <= GEOMEAN_TOL
    outside = [r["index"] for r in per if abs(r["ratio"] - 1) > WORKLOAD_TOL]
    row.update(geomean_official_us=g_off, geomean_ropegrad_us=g_rg, ratio=ratio, compared=len(per),
               worst={"index": worst["index"], "ratio": worst["ratio"]}, workloads_outside_10pct=outside,
               passed_same=passed_same)
    if within_geo and not outside and passed_same:
        row["verdict"] = "agrees"
    else:
        row["verdict"] = "differs"
        row["why"] = "; ".join(x for x in (
            "" if passed_same else "the passed workloads differ",
            "" if within_geo else "geomean ratio %.3f is outside 3%%" % ratio,
            "" if not outside else "%d workload(s) outside 10%% (%s)" % (
                len(outside), ", ".join("W%d" % i for i in outside))) if x)
        row["points"] = drop_shared_points(explain(per if (not within_geo or outside) else [], passed_same,
                                                   "REWARD_HACK" in statuses, overlap), read_protocol(result_path))
    return row


def add_native(row, native_path):
    rg, device, kernel = read_result(native_path)
    meds = {u: v[2] for u, v in rg.items() if v[1] and v[2]}
    per = [r for r in row.get("workloads", []) if r["uuid"] in meds]
    if per:
        g_off = geomean([r["official_us"] for r in per])
        g_nat = geomean([meds[r["uuid"]] / 1e3 for r in per])
        row["native"] = {"result": native_path, "kernel_name": kernel, "geomean_us": g_nat,
                         "official_over_native": g_off / g_nat, "compared": len(per)}
        if row.get("verdict") == "differs" and abs(g_off / g_nat - 1) <= GEOMEAN_TOL:
            row.setdefault("points", []).insert(0, P_PATH % (g_off / g_nat))


def add_also(row, side, path, what):
    """Another measurement of the row's solution (SIDE official: traces of another official run;
    ropegrad: a ropegrad result with a protocol point switched), over the row's compared workloads:
    its geomean, and official / ropegrad with it standing in for its side."""
    if side == "official":
        off, _ = read_traces(path)
        times = {u: v[2] * 1e3 for u, v in off.items() if v[1] == "PASSED" and v[2]}
    else:
        rg, _, _ = read_result(path)
        times = {u: v[2] / 1e3 for u, v in rg.items() if v[1] and v[2]}
    per = [r for r in row.get("workloads", []) if r["uuid"] in times]
    if not per:
        raise InputError("--also %s %s %s: no workload in common with the row" % (row["problem"], row["solution"], path))
    g = geomean([times[r["uuid"]] for r in per])
    if side == "official":
        ratios = [times[r["uuid"]] / r["ropegrad_us"] for r in per]
        ratio = g / geomean([r["ropegrad_us"] for r in per])
        itself = g / geomean([r["official_us"] for r in per])
    else:
        ratios = [r["official_us"] / times[r["uuid"]] for r in per]
        ratio = geomean([r["official_us"] for r in per]) / g
        itself = g / geomean([r["ropegrad_us"] for r in per])
    outside = [r["index"] for r, q in zip(per, ratios) if abs(q - 1) > WORKLOAD_TOL]
    agrees = abs(ratio - 1) <= GEOMEAN_TOL and not outside
    row.setdefault("also", []).append({
        "side": side, "path": path, "what": what, "compared": len(per), "geomean_us": g,
        "official_over_ropegrad": ratio, "over_the_row_s_own_side": itself, "workloads_outside_10pct": outside,
        "verdict": "agrees" if agrees else "differs"})


def status_note(status, problem, label):
    """The official run's compile/evaluation status for this row (two_phase's status.json)."""
    for s in (status or {}).get("solutions", []):
        if s["label"] in ("%s-%s" % (problem, label), label):
            c, e = s.get("compile", {}), s.get("evaluation", {})
            parts = ["compile %s%s" % (c.get("status"), " %.0f s" % c["seconds"] if "seconds" in c else "")]
            if c.get("gpu_needed"):
                parts.append("the compile needed the GPU visible")
            parts.append("evaluation %s%s" % (e.get("status"), " %.0f s" % e["seconds"] if "seconds" in e else ""))
            if e.get("note"):
                parts.append(e["note"])
            return ", ".join(parts)
    return ""


def read_runs_tsv(path):
    """scripts/peers.sh's runs.tsv: {(op, who): (exit, line)} (the last row of each wins)."""
    out = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                op, who, _rid, rc, _note, text = (line.rstrip("\n").split("\t") + [""] * 6)[:6]
                out[(op, who)] = (rc, text)
    return out


def missing_reasons(row, runs):
    """Why a row has nothing to compare, from the official run's status and ropegrad's runs.tsv."""
    why = []
    if row.get("status_note") and "evaluation ok" not in row["status_note"]:
        why.append("official run: " + row["status_note"])
    res = row.get("ropegrad_result") or ""
    prefix = row["problem"] + "-"
    base = os.path.basename(res)
    who = base[len(prefix):-len(".json")] if base.startswith(prefix) and base.endswith(".json") else ""
    rc, text = runs.get((row["problem"], who), ("", ""))
    if rc and rc != "0" and not os.path.exists(res):
        why.append("ropegrad run: " + (text if rc == "skipped" and text else "exit %s%s" % (rc, ": " + text if text else "")))
    return why


def fmt(x, spec="%.3f"):
    return spec % x if isinstance(x, (int, float)) else "-"


def markdown(rows, meta):
    out = ["Official SOL-ExecBench evaluator against ropegrad's harness on the same solution file "
           "(issue 26: agrees = the same workloads pass, geomean within 3%, every workload within 10%).", ""]
    if meta:
        out += ["; ".join("%s: %s" % kv for kv in sorted(meta.items())), ""]
    out += ["| problem | solution | official passed | ropegrad passed | official geomean us | ropegrad geomean us "
            "| official / ropegrad | worst workload | verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        worst = r.get("worst")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["problem"], r["solution"],
            "%d/%d" % (r["official_passed"], r["official_total"]) if "official_total" in r else "-",
            "%d/%d" % (r["ropegrad_passed"], r["ropegrad_total"]) if "ropegrad_total" in r else "-",
            fmt(r.get("geomean_official_us")), fmt(r.get("geomean_ropegrad_us")), fmt(r.get("ratio"), "%.4f"),
            "W%d %.3f" % (worst["index"], worst["ratio"]) if worst else "-",
            r["verdict"] + (": " + r["why"] if r.get("why") else "")))
    notes = []
    for r in rows:
        head = "%s %s" % (r["problem"], r["solution"])
        if r.get("native"):
            n = r["native"]
            notes.append("- %s: `ropegrad bench` (its own kernel, the C path, %s) geomean %.3f us over the same %d "
                         "workloads; official / that: %.4f." % (head, n["kernel_name"], n["geomean_us"],
                                                               n["compared"], n["official_over_native"]))
        if r.get("points"):
            notes.append("- %s differs; protocol points that could explain it: %s. (%s.)" % (
                head, "; ".join(r["points"]), SWITCHES))
        for x in r.get("also", []):
            notes.append("- %s, %s (%s `%s`): geomean %.3f us over %d workloads, %.4f x the row's %s figure; "
                         "official / ropegrad with it: %.4f, %s%s." % (
                             head, x["what"], "official traces" if x["side"] == "official" else "ropegrad result",
                             x["path"], x["geomean_us"], x["compared"], x["over_the_row_s_own_side"], x["side"],
                             x["official_over_ropegrad"], x["verdict"],
                             "" if not x["workloads_outside_10pct"] else " (outside 10%%: %s)" % ", ".join(
                                 "W%d" % i for i in x["workloads_outside_10pct"])))
        if r.get("official_statuses") and set(r["official_statuses"]) != {"PASSED"}:
            notes.append("- %s: official statuses %s." % (head, ", ".join("%s %d" % kv for kv in
                                                                          r["official_statuses"].items())))
        if r.get("status_note"):
            notes.append("- %s: official run: %s." % (head, r["status_note"]))
    if notes:
        out += [""] + notes
    return "\n".join(out) + "\n"


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".agreement.", dir=d)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", nargs=4, action="append", default=[], metavar=("PROBLEM", "LABEL", "TRACES", "RESULT"))
    ap.add_argument("--skipped", nargs=3, action="append", default=[], metavar=("PROBLEM", "LABEL", "WHY"))
    ap.add_argument("--also", nargs=5, action="append", default=[], metavar=("PROBLEM", "LABEL", "SIDE", "PATH", "WHAT"),
                    help="another measurement of a pair's solution: SIDE official (traces of another official run) or "
                         "ropegrad (a result with a protocol point switched); WHAT says what differs")
    ap.add_argument("--native", nargs=2, action="append", default=[], metavar=("PROBLEM", "RESULT"))
    ap.add_argument("--status", action="append", default=[],
                    help="dev/official/two_phase.py's status.json (repeatable: the latest given last)")
    ap.add_argument("--runs-tsv", help="scripts/peers.sh's runs.tsv (why a ropegrad run is missing)")
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--overlap", action="store_true", help="ropegrad measured while the official compiles ran")
    ap.add_argument("--out-md")
    ap.add_argument("--out-json")
    return ap.parse_args(argv)


def main(argv):
    a = parse(argv)
    try:
        meta = {}
        for kv in a.meta:
            k, eq, v = kv.partition("=")
            if not eq or not k:
                raise InputError("--meta %r: expected KEY=VALUE" % kv)
            meta[k] = v
        status = {"solutions": []}
        for path in a.status:   # later files first: a label's latest official run wins
            if os.path.exists(path):
                with open(path) as f:
                    status["solutions"] = json.load(f).get("solutions", []) + status["solutions"]
        natives = dict((p, r) for p, r in a.native)
        runs = read_runs_tsv(a.runs_tsv)
        rows = []
        for problem, label, traces, result in a.pair:
            row = compare(problem, label, traces, result, a.overlap)
            if problem in natives and label == "ropegrad" and row.get("workloads") and os.path.exists(natives[problem]):
                add_native(row, natives[problem])
            row["status_note"] = status_note(status, problem, label)
            if row["verdict"] == "not compared":
                why = missing_reasons(row, runs)
                if why:
                    row["why"] = "; ".join([row["why"]] + why)
                    if any("skipped" in w or "deadline" in w for w in why):
                        row["verdict"] = "skipped"
            rows.append(row)
        for problem, label, side, path, what in a.also:
            if side not in ("official", "ropegrad"):
                raise InputError("--also %s %s %s: SIDE is official or ropegrad" % (problem, label, side))
            row = next((r for r in rows if r["problem"] == problem and r["solution"] == label), None)
            if row is None or not row.get("workloads") or not os.path.exists(path):
                sys.stderr.write("agreement_table: --also %s %s %s: left out (no compared pair, or no such file)\n"
                                 % (problem, label, path))
                continue
            add_also(row, side, path, what)
        for problem, label, why in a.skipped:
            row = next((r for r in rows if r["problem"] == problem and r["solution"] == label), None)
            if row is None:
                rows.append({"problem": problem, "solution": label, "verdict": "skipped", "why": why})
            elif row["verdict"] == "not compared":
                row.update(verdict="skipped", why="%s (%s)" % (why, row.get("why", "")))
        rows.sort(key=lambda r: (r["problem"], r["solution"]))
        if not rows:
            raise InputError("nothing to compare: give --pair or --skipped")
        md = markdown(rows, meta)
        doc = {"rule": {"geomean_within": GEOMEAN_TOL, "workload_within": WORKLOAD_TOL,
                        "ratio": "official / ropegrad"}, "meta": meta, "rows": rows}
        if a.out_md:
            write_atomic(a.out_md, md)
        if a.out_json:
            write_atomic(a.out_json, json.dumps(doc, indent=1) + "\n")
        sys.stdout.write(md)
        return 0
    except (InputError, OSError, ValueError) as e:
        sys.stderr.write("agreement_table: %s\n" % str(e).replace("\n", " "))
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
