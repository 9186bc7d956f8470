#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dev/official/agreement_table.py on small synthetic files (standard library only):
the official side is tests/data/official-traces/traces-014-h200-passed.jsonl
(written by the evaluator's own models; SYNTHETIC latencies), ropegrad's side
result files made here from it, scaled or shifted per case:

  x1.01 everywhere: agrees; x1.05 everywhere: differs on the geomean, the
  point named is a proportional one (clocks); +1 us on every workload:
  differs, a fixed cost per call on the official side (its span, host sync);
  one workload 20% off: differs on that workload only (W named);
  one workload failed on the official side: differs, the passed workloads
  differ, ground truth named; a missing file: not compared; a skipped row
  says why; --native adds ropegrad's own kernel; markdown and JSON written;
  a file that is not a trace file: exit 2 with one line.

    python3 tests/tools/agreement_table_test.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

src = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(src, "dev", "official", "agreement_table.py")
official = os.path.join(src, "tests", "data", "official-traces", "traces-014-h200-passed.jsonl")
failures = []
passes = []


def expect(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + str(detail)[:2000]) if not cond and detail else ""))
    (passes if cond else failures).append(name)


def traces():
    with open(official) as f:
        return [json.loads(x) for x in f if x.strip()]


def write_traces(path, rows):
    with open(path, "w") as f:
        for t in rows:
            f.write(json.dumps(t) + "\n")


def result(path, scale=1.0, shift_us=0.0, one=None, fail=None, protocol=None):
    """A ropegrad --json result over the official traces' workloads: median = latency*scale + shift
    (one=(index, factor) scales one workload more; fail=index fails that one)."""
    ws = []
    for i, t in enumerate(traces()):
        ns = t["evaluation"]["performance"]["latency_ms"] * 1e6 * scale + shift_us * 1e3
        if one and one[0] == i:
            ns *= one[1]
        ok = fail != i
        ws.append({"index": i, "uuid": t["workload"]["uuid"], "pass": ok,
                   "time_ns": {"median": ns if ok else None}})
    with open(path, "w") as f:
        json.dump(dict({"device": "NVIDIA H200 (sm_90, 132 SMs)", "kernel_name": "test solution", "workloads": ws,
                        "summary": {"passed": sum(w["pass"] for w in ws), "total": len(ws)}}, **(protocol or {})), f)
    return path


def run(*args):
    p = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def row_of(out_json, label):
    with open(out_json) as f:
        return next(r for r in json.load(f)["rows"] if r["solution"] == label)


def readme_block(tmp):
    """scripts/figures/blocks.py's agreement block: "not measured yet" without the file, the table with it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("readme_figures", os.path.join(src, "scripts", "figures", "blocks.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.dont_write_bytecode = True
    spec.loader.exec_module(mod)
    root = os.path.join(tmp, "clone")
    mod.ROOT = root
    empty = mod.block_agreement()
    md = os.path.join(root, "results", "official", "agreement.md")
    rc, _, err = run("--pair", "014", "ropegrad", official, os.path.join(tmp, "r1.json"), "--out-md", md)
    full = mod.block_agreement() if rc == 0 else ""
    expect("README block without results: not measured yet, no figure",
           empty.startswith("Not measured yet") and not any(c.isdigit() for c in empty), empty)
    expect("README block with results: the committed table, verbatim",
           "| 014 | ropegrad | 16/16 | 16/16 |" in full and "| 1.0100 |" in full and "agrees" in full, full or err)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        j, md = os.path.join(tmp, "a.json"), os.path.join(tmp, "a.md")
        failed_tr = os.path.join(tmp, "failed.jsonl")
        rows = traces()
        rows[3]["evaluation"]["status"] = "INCORRECT_NUMERICAL"
        rows[3]["evaluation"]["performance"] = None
        write_traces(failed_tr, rows)
        cases = [("agree", official, result(os.path.join(tmp, "r1.json"), 1 / 1.01)),
                 ("prop", official, result(os.path.join(tmp, "r2.json"), 1 / 1.05)),
                 ("fixed", official, result(os.path.join(tmp, "r3.json"), 1.0, -1.0)),
                 ("onewl", official, result(os.path.join(tmp, "r4.json"), 1.0, 0.0, one=(5, 1 / 1.2))),
                 ("status", failed_tr, result(os.path.join(tmp, "r5.json"))),
                 ("missing", os.path.join(tmp, "absent.jsonl"), os.path.join(tmp, "r1.json"))]
        status = os.path.join(tmp, "status.json")
        with open(status, "w") as f:
            json.dump({"solutions": [{"label": "014-agree", "compile": {"status": "ok", "seconds": 95.2,
                                                                        "gpu_needed": True},
                                      "evaluation": {"status": "ok", "seconds": 41.0}}]}, f)
        args = ["--status", status]
        for label, tr, res in cases:
            args += ["--pair", "014", label, tr, res]
        args += ["--skipped", "011", "peer", "skipped: 40 s left before the deadline",
                 "--skipped", "014", "missing", "evaluation skipped: 20 s left",
                 "--native", "014", os.path.join(tmp, "r1.json"), "--meta", "methodology=cupti",
                 "--also", "014", "prop", "ropegrad", result(os.path.join(tmp, "r6.json"), 1 / 1.005), "switched x",
                 "--also", "014", "prop", "official", official, "the official again",
                 "--also", "014", "nosuch", "ropegrad", os.path.join(tmp, "r1.json"), "left out",
                 "--out-md", md, "--out-json", j]
        rc, out, err = run(*args)
        expect("the table is written (exit 0)", rc == 0 and os.path.exists(md) and os.path.exists(j), err)
        r = row_of(j, "agree")
        expect("x1.01 everywhere: agrees, ratio 1.01",
               r["verdict"] == "agrees" and abs(r["ratio"] - 1.01) < 1e-9 and r["compared"] == 16, r)
        r = row_of(j, "prop")
        expect("x1.05 everywhere: differs on the geomean, clocks named",
               r["verdict"] == "differs" and "outside 3%" in r["why"] and "16 workload(s) outside" not in r["why"]
               and any("proportional" in p and "clocks" in p for p in r["points"]), r)
        r = row_of(j, "fixed")
        expect("+1 us everywhere: differs, a fixed cost per call on the official side, host sync named",
               r["verdict"] == "differs" and any("fixed cost per call on the official side" in p for p in r["points"])
               and any(p.startswith("host sync") for p in r["points"]), r.get("points"))
        also = {x["what"]: x for x in row_of(j, "prop").get("also", [])}
        x = also.get("switched x", {})
        expect("--also ropegrad: a switched result measured x1.005 of the official: agrees, 1.005/1.05 of the row's",
               x.get("verdict") == "agrees" and abs(x["official_over_ropegrad"] - 1.005) < 1e-9
               and abs(x["over_the_row_s_own_side"] - 1.05 / 1.005) < 1e-9 and x["compared"] == 16, also)
        x = also.get("the official again", {})
        expect("--also official: the same traces again: 1.0 x the row's official, official / ropegrad as the row's",
               abs(x.get("over_the_row_s_own_side", 0) - 1) < 1e-12 and abs(x["official_over_ropegrad"] - 1.05) < 1e-9
               and x["verdict"] == "differs", also)
        expect("--also of a pair not in the table: left out with a line on stderr, the table still written",
               "--also 014 nosuch" in err and "left out" in err, err)
        with open(md) as f:
            text = f.read()
        expect("--also in the markdown notes", "014 prop, switched x (ropegrad result" in text, text[-600:])
        r = row_of(j, "onewl")
        expect("one workload 20% off: differs on W5 only, geomean within 3%",
               r["verdict"] == "differs" and r["workloads_outside_10pct"] == [5] and abs(r["ratio"] - 1) < 0.03
               and r["worst"]["index"] == 5 and "W5" in r["why"], r.get("why"))
        r = row_of(j, "status")
        expect("a workload failed officially: differs, passed 15/16 vs 16/16, ground truth named",
               r["verdict"] == "differs" and r["official_passed"] == 15 and r["ropegrad_passed"] == 16
               and "passed workloads differ" in r["why"] and any(p.startswith("ground truth") for p in r["points"])
               and r["official_statuses"] == {"INCORRECT_NUMERICAL": 1, "PASSED": 15}, r.get("points"))
        r = row_of(j, "missing")
        expect("a missing trace file with a skip reason: skipped, saying why and which file is missing",
               r["verdict"] == "skipped" and r["why"] == "evaluation skipped: 20 s left (no official traces)", r)
        r = row_of(j, "peer")
        expect("a skipped row keeps its reason", r["verdict"] == "skipped" and "40 s left" in r["why"], r)
        r = row_of(j, "agree")
        expect("--native: no native column on a row not labelled ropegrad", "native" not in r, r)
        with open(md) as f:
            text = f.read()
        expect("markdown: one table row per case and the skipped one, the meta line",
               text.count("\n| 014 |") == 6 and "| 011 | peer |" in text and "methodology: cupti" in text, text)
        expect("markdown: the official run's status from status.json",
               "014 agree: official run: compile ok 95 s, the compile needed the GPU visible, evaluation ok 41 s."
               in text, text)
        expect("markdown: the differing rows name their protocol points",
               text.count("protocol points that could explain it") == 4, text)

        rc, out, err = run("--pair", "014", "ropegrad", official, os.path.join(tmp, "r1.json"),
                           "--native", "014", os.path.join(tmp, "r2.json"), "--out-json", j)
        r = row_of(j, "ropegrad")
        expect("--native beside the ropegrad row: official / native = 1.05",
               rc == 0 and abs(r["native"]["official_over_native"] - 1.05) < 1e-9, r.get("native"))

        rc, out, err = run("--pair", "014", "alone", os.path.join(tmp, "absent.jsonl"), os.path.join(tmp, "r1.json"),
                           "--out-json", j)
        r = row_of(j, "alone")
        expect("a missing trace file: not compared, saying which", rc == 0 and r["verdict"] == "not compared"
               and r["why"] == "no official traces", r)

        tsv = os.path.join(tmp, "runs.tsv")
        with open(tsv, "w") as f:
            f.write("014\tpeer\t-\tskipped\t\tskipped: 12s left before the call's deadline (needs about 120s)\n")
        with open(status, "w") as f:
            json.dump({"solutions": [{"label": "014-peer", "compile": {"status": "not-needed"},
                                      "evaluation": {"status": "skipped-budget", "note": "30 s left"}}]}, f)
        rc, out, err = run("--pair", "014", "peer", os.path.join(tmp, "absent.jsonl"), os.path.join(tmp, "014-peer.json"),
                           "--status", status, "--runs-tsv", tsv, "--out-json", j)
        r = row_of(j, "peer")
        expect("both sides skipped: the row says skipped, with the official status and ropegrad's runs.tsv line",
               rc == 0 and r["verdict"] == "skipped" and "evaluation skipped-budget" in r["why"]
               and "ropegrad run: skipped: 12s left" in r["why"], r)

        # A fixed cost per call on the official side: with the old protocol recorded (or none), the span and
        # sync points are named; a run that recorded the official span/sync/restage does not name them, and
        # when the C path agrees with the official the measurement path is named instead.
        for proto, named in ((None, True), ({"span": "all", "sync": "iteration", "restage": "on", "rounds": 10}, False)):
            rf = result(os.path.join(tmp, "fixed.json"), shift_us=-0.2, protocol=proto)
            nat = result(os.path.join(tmp, "native.json"))
            j = os.path.join(tmp, "fixed-out.json")
            rc, out, err = run("--pair", "014", "ropegrad", official, rf, "--native", "014", nat, "--out-json", j)
            pts = " ".join(row_of(j, "ropegrad").get("points", []))
            expect("protocol %s: span/sync named %s" % (proto and "official" or "unrecorded", named),
                   rc == 0 and (("ropegrad times kernel spans" in pts) == named)
                   and (("enqueues all 60" in pts) == named) and "measurement path" in pts, pts)
            expect("protocol %s: settle (unrecorded: off, as the official) not named" % (proto and "official"
                                                                                          or "unrecorded"),
                   "flush settle" not in pts, pts)
        # A run made with --settle on names the settle point; one with --settle off does not.
        for settle, named in (("on", True), ("off", False)):
            rf = result(os.path.join(tmp, "fixed.json"), shift_us=-0.2, protocol={"settle": settle})
            j = os.path.join(tmp, "fixed-out.json")
            rc, out, err = run("--pair", "014", "ropegrad", official, rf, "--native", "014", nat, "--out-json", j)
            pts = " ".join(row_of(j, "ropegrad").get("points", []))
            expect("--settle %s: the settle point named %s" % (settle, named),
                   rc == 0 and ("flush settle" in pts) == named, pts)

        readme_block(tmp)

        bad = os.path.join(tmp, "bad.jsonl")
        with open(bad, "w") as f:
            f.write("not json\n")
        rc, out, err = run("--pair", "014", "x", bad, os.path.join(tmp, "r1.json"))
        expect("a file that is not a trace file: exit 2, one line", rc == 2 and len(err.strip().splitlines()) == 1
               and "not a trace" in err, (rc, err))
        rc, out, err = run()
        expect("nothing to compare: exit 2", rc == 2 and "nothing to compare" in err, (rc, err))
    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
