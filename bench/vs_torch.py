# SPDX-License-Identifier: Apache-2.0
"""Side by side on one GPU, in one process, on the same inputs and with the
same timer: ropegrad (through python/ropegrad, ctypes, on torch tensors)
against the dataset's reference formula in PyTorch eager and under
torch.compile, for all 16 workloads of suites/014-rope_backward.

    python3 bench/vs_torch.py [--out results/h200-vs-torch.json]

Timer (ropegrad.timing): cold L2 -- a 2x-L2 buffer zeroed before every call
-- then per call the span from the first to the last GPU activity of the
implementation, from CUPTI records via torch.profiler; 10 warmup + 50 timed
calls; median and mean. Correctness: ropegrad's output against a float64
torch evaluation under the protocol's rule (atol/rtol of the workload,
matched ratio >= 0.99, no NaN/Inf, not all zeros). Prints a markdown table
last. Exit 1 if ropegrad fails a workload, 0 otherwise.
"""

import argparse
import datetime
import json
import math
import os
import platform
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
SUITE = os.path.join(REPO, "suites", "014-rope_backward")


def eager_formula(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling):
    """The dataset's reference formula, float32 (grads upcast)."""
    import torch
    H = emb.shape[-1] // 2
    gc = grad_cos.to(torch.float32)
    gs = grad_sin.to(torch.float32)
    e = emb[..., :H]
    t = (gs[..., :H] + gs[..., H:]) * torch.cos(e) - (gc[..., :H] + gc[..., H:]) * torch.sin(e)
    return (t * inv_freq_expanded[:, None, :, 0]).sum(-1) * attention_scaling


def float64_formula(gc, gs, emb, inv, scale):
    H = emb.shape[-1] // 2
    gc, gs, e, inv = gc.double(), gs.double(), emb[..., :H].double(), inv.double()
    import torch
    t = (gs[..., :H] + gs[..., H:]) * torch.cos(e) - (gc[..., :H] + gc[..., H:]) * torch.sin(e)
    return (t * inv[:, None, :, 0]).sum(-1) * scale


def geomean(xs):
    xs = [x for x in xs if x is not None]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "results", "h200-vs-torch.json"))
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--workloads", default=None, help="comma-separated indices (default: all 16)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--baseline-out", default=None,
                    help="also write the eager times as a baseline file that `ropegrad bench --baseline FILE` "
                         "takes as it is ({name, per_workload: [{index, time_ns}]})")
    args = ap.parse_args(argv)

    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        print("error: --out: directory %s does not exist" % out_dir, file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0
    import ropegrad
    from ropegrad.torch import rope_position_grad
    from ropegrad.timing import time_cold_l2, tolerance_check

    dev = torch.device("cuda", torch.cuda.current_device())
    with open(os.path.join(SUITE, "workload.jsonl")) as f:
        workloads = [json.loads(line) for line in f if line.strip()]
    picks = range(len(workloads)) if not args.workloads else [int(x) for x in args.workloads.split(",")]

    compiled, compile_error = None, None
    if not args.no_compile:
        try:
            compiled = torch.compile(eager_formula)  # mode default
        except Exception as e:  # recorded, and the rest goes on
            compile_error = "%s: %s" % (type(e).__name__, e)

    rows, rg_all_pass = [], True
    torch.manual_seed(args.seed)
    for i in picks:
        w = workloads[i]
        B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
        D, H = 128, 64
        scale = float(w["inputs"]["attention_scaling"]["value"])
        atol, rtol = w["tolerance"]["max_atol"], w["tolerance"]["max_rtol"]
        gc = torch.randn(B, S, D, device=dev).to(torch.bfloat16)
        gs = torch.randn(B, S, D, device=dev).to(torch.bfloat16)
        emb = torch.randn(B, S, D, device=dev)
        inv = torch.randn(B, H, 1, device=dev)
        ref = float64_formula(gc, gs, emb, inv, scale)
        row = dict(index=i, uuid=w["uuid"], batch_size=B, seq_len=S)

        impls = [("ropegrad", lambda: rope_position_grad(gc, gs, emb, inv, scale)),
                 ("eager", lambda: eager_formula(gc, gs, emb, inv, scale))]
        if compiled is not None:
            impls.append(("compile", lambda: compiled(gc, gs, emb, inv, scale)))
        for name, fn in impls:
            try:
                out = fn()  # also the compile warm-up (first call compiles)
                torch.cuda.synchronize()
                chk = tolerance_check(out, ref, atol, rtol)
                t = time_cold_l2(fn, warmup=args.warmup, iters=args.iters, device=dev)
                row[name] = dict(median_us=t["median_us"], mean_us=t["mean_us"], passed=chk["passed"],
                                 matched_ratio=chk["matched_ratio"], max_abs_err=chk["max_abs_err"],
                                 gpu_activities=len(t["kernels"]), kernels=sorted(set(t["kernels"])))
            except Exception as e:
                row[name] = dict(error="%s: %s" % (type(e).__name__, e))
                if name == "compile" and compile_error is None:
                    compile_error = row[name]["error"]
                traceback.print_exc()
        rg = row["ropegrad"]
        rg_ok = "error" not in rg and rg["passed"]
        rg_all_pass &= rg_ok
        for other in ("eager", "compile"):
            if other in row and "error" not in row[other] and "error" not in rg:
                row["speedup_vs_" + other] = row[other]["median_us"] / rg["median_us"]
        rows.append(row)

        def fmt(name):
            r = row.get(name)
            return "%9.2f" % r["median_us"] if r and "error" not in r else "        -"
        print("workload %2d B=%-3d S=%-5d ropegrad %s %s  eager %s  compile %s" % (
            i, B, S, fmt("ropegrad"), "pass" if rg_ok else "FAIL", fmt("eager"), fmt("compile")), flush=True)

    def col(name):
        return [r[name]["median_us"] if name in r and "error" not in r[name] else None for r in rows]

    summary = dict(
        ropegrad_passed=sum(1 for r in rows if "error" not in r["ropegrad"] and r["ropegrad"]["passed"]),
        workloads=len(rows),
        geomean_median_us={n: geomean(col(n)) for n in ("ropegrad", "eager", "compile")},
        geomean_speedup_vs_eager=geomean([r.get("speedup_vs_eager") for r in rows]),
        geomean_speedup_vs_compile=geomean([r.get("speedup_vs_compile") for r in rows]),
    )
    props = torch.cuda.get_device_properties(dev)
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = None
    result = dict(
        what="ropegrad (ctypes, python/ropegrad) vs PyTorch eager and torch.compile of the reference formula",
        command="python3 bench/vs_torch.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        environment=dict(device=props.name, capability="%d.%d" % torch.cuda.get_device_capability(dev),
                         sms=props.multi_processor_count, l2_bytes=props.L2_cache_size, torch=torch.__version__,
                         cuda=torch.version.cuda, triton=triton_version, python=platform.python_version(),
                         ropegrad=ropegrad.version(), ropegrad_library=ropegrad.library_path()),
        inputs="torch.randn, seed %d; grads bfloat16, emb float32, inv_freq_expanded [B,64,1]" % args.seed,
        correctness="ropegrad vs float64 torch, protocol rule (workload atol/rtol, matched >= 0.99, finite, nonzero)",
        timing=("cold L2 (2x L2 buffer zeroed before each call), %d warmup + %d timed calls, per-call span from "
                "the first to the last GPU activity of the implementation (CUPTI via torch.profiler)"
                % (args.warmup, args.iters)),
        compile_mode="default", compile_error=compile_error,
        workloads=rows, summary=summary,
    )
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    if args.baseline_out:
        # T_b for the SOL score and the speedups: the PyTorch reference
        # (eager) measured on this device, in this run.
        base = dict(name="torch eager on %s (bench/vs_torch.py, %s)" % (props.name, result["date"]),
                    per_workload=[dict(index=r["index"], time_ns=r["eager"]["median_us"] * 1e3)
                                  for r in rows if "eager" in r and "error" not in r["eager"]])
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.baseline_out)), prefix=".tmp-",
                                   suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(base, f, indent=2)
            f.write("\n")
        os.replace(tmp, args.baseline_out)

    def cell(r, name):
        x = r.get(name)
        return "%.2f" % x["median_us"] if x and "error" not in x else "error"

    def sp(x):
        return "%.1fx" % x if x else "-"
    print("\nMedian GPU time per call, microseconds (H200 if run there; cold L2; CUPTI spans)\n")
    print("| workload | B | S | ropegrad | eager | compile | speedup vs eager | vs compile |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %d | %s | %s | %s | %s | %s |" % (
            r["index"], r["batch_size"], r["seq_len"], cell(r, "ropegrad"), cell(r, "eager"), cell(r, "compile"),
            sp(r.get("speedup_vs_eager")), sp(r.get("speedup_vs_compile"))))
    g = summary["geomean_median_us"]
    print("| geomean | | | %s | %s | %s | %s | %s |" % tuple(
        ["%.2f" % g[n] if g[n] else "-" for n in ("ropegrad", "eager", "compile")] +
        [sp(summary["geomean_speedup_vs_eager"]), sp(summary["geomean_speedup_vs_compile"])]))
    print("\nwrote %s" % args.out)
    return 0 if rg_all_pass else 1


if __name__ == "__main__":
    sys.exit(main())
