# SPDX-License-Identifier: Apache-2.0
"""The SOL-ExecBench solution `ropegrad export-solution` writes, built and run
the way the harness would (torch.utils.cpp_extension.load on its sources),
on all 16 workloads of suites/sol-execbench-014, checked and timed:

    python3 python/tests/test_solution_export.py [--ropegrad build/ropegrad]
        [--out bench/results/h200-solution-export.json] [--arch 90]

Inputs: torch.randn (seed fixed), grads bfloat16, emb float32, inv_freq
[B,64,1]; reference: the formula in PyTorch float32 (grads upcast), as the
dataset's reference evaluates it; the protocol's tolerance rule per workload
(atol/rtol from workload.jsonl, matched ratio >= 0.99, no NaN/Inf, not all
zeros). Timing: cold L2 (a 2x-L2 buffer zeroed before every call), 10 warmup
+ 50 timed calls, per-call span of the solution's GPU activities from CUPTI
(torch.profiler). Exit 0 when every workload passes, 1 otherwise; 0 with
"SKIP: ..." when torch or CUDA is missing.
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

SUITE = os.path.join(REPO, "suites", "sol-execbench-014")


def reference_f32(gc, gs, emb, inv, scale):
    """The dataset's reference formula in float32 (grads upcast)."""
    import torch
    H = emb.shape[-1] // 2
    gc, gs = gc.float(), gs.float()
    e = emb[..., :H]
    t = (gs[..., :H] + gs[..., H:]) * torch.cos(e) - (gc[..., :H] + gc[..., H:]) * torch.sin(e)
    return (t * inv[:, None, :, 0]).sum(-1) * scale


def load_workloads():
    with open(os.path.join(SUITE, "workload.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_json_atomic(path, obj):
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise SystemExit("error: %s: directory does not exist" % d)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ropegrad", default=os.path.join(REPO, "build", "ropegrad"), help="the ropegrad CLI")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "h200-solution-export.json"))
    ap.add_argument("--arch", default=None,
                    help="compute capability to build for, e.g. 90 (default: the current GPU's)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args(argv)

    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0
    from torch.utils.cpp_extension import load
    from ropegrad.timing import time_cold_l2, tolerance_check

    dev = torch.device("cuda", torch.cuda.current_device())
    major, minor = torch.cuda.get_device_capability(dev)
    arch = args.arch or "%d%d" % (major, minor)

    with tempfile.TemporaryDirectory(prefix="rg_solution_") as tmp:
        sol_path = os.path.join(tmp, "solution.json")
        r = subprocess.run([args.ropegrad, "export-solution", "--out", sol_path], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: %s export-solution exited %d: %s" % (args.ropegrad, r.returncode, r.stderr.strip()))
            return 1
        with open(sol_path) as f:
            sol = json.load(f)
        src_dir = os.path.join(tmp, "src")
        os.makedirs(src_dir)
        for s in sol["sources"]:
            with open(os.path.join(src_dir, s["path"]), "w") as f:
                f.write(s["content"])
        entry_file, entry_fn = sol["spec"]["entry_point"].split("::")
        co = sol["spec"].get("compile_options") or {}
        cuda_flags = list(co.get("cuda_cflags", [])) + ["-gencode=arch=compute_%s,code=sm_%s" % (arch, arch)]
        print("building %s (%s) with nvcc %s ..." % (entry_file, sol["name"], " ".join(cuda_flags)), flush=True)
        build_dir = os.path.join(tmp, "build")
        os.makedirs(build_dir)
        ext = load(name="ropegrad_solution_%s" % os.getpid(), sources=[os.path.join(src_dir, entry_file)],
                   extra_include_paths=[src_dir], extra_cflags=list(co.get("cflags", [])),
                   extra_cuda_cflags=cuda_flags, extra_ldflags=list(co.get("ld_flags", [])),
                   build_directory=build_dir, verbose=False)
        run = getattr(ext, entry_fn)

        workloads = load_workloads()
        rows, all_pass = [], True
        torch.manual_seed(args.seed)
        for i, w in enumerate(workloads):
            B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
            D, H = 128, 64
            scale = float(w["inputs"]["attention_scaling"]["value"])
            atol, rtol = w["tolerance"]["max_atol"], w["tolerance"]["max_rtol"]
            gc = torch.randn(B, S, D, device=dev).to(torch.bfloat16)
            gs = torch.randn(B, S, D, device=dev).to(torch.bfloat16)
            emb = torch.randn(B, S, D, device=dev)
            inv = torch.randn(B, H, 1, device=dev)
            out = run(gc, gs, emb, inv, scale)
            torch.cuda.synchronize()
            ref = reference_f32(gc, gs, emb, inv, scale)
            chk = tolerance_check(out, ref, atol, rtol)
            shape_ok = tuple(out.shape) == (B, S) and out.dtype == torch.float32
            passed = chk["passed"] and shape_ok
            t = time_cold_l2(lambda: run(gc, gs, emb, inv, scale), warmup=args.warmup, iters=args.iters, device=dev)
            rows.append(dict(index=i, uuid=w["uuid"], batch_size=B, seq_len=S, attention_scaling=scale,
                             passed=passed, matched_ratio=chk["matched_ratio"], max_abs_err=chk["max_abs_err"],
                             atol=atol, rtol=rtol, median_us=t["median_us"], mean_us=t["mean_us"],
                             kernels=t["kernels"]))
            all_pass &= passed
            print("  workload %2d B=%-3d S=%-5d %s  median %8.2f us  mean %8.2f us  max|err| %.3g" % (
                i, B, S, "pass" if passed else "FAIL", t["median_us"], t["mean_us"], chk["max_abs_err"]), flush=True)

    med = [r["median_us"] for r in rows]
    geomean = math.exp(sum(math.log(m) for m in med) / len(med))
    props = torch.cuda.get_device_properties(dev)
    result = dict(
        what="SOL-ExecBench solution exported by `ropegrad export-solution`, built with torch.utils.cpp_extension",
        command="python3 python/tests/test_solution_export.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        device=dict(name=props.name, capability="%d.%d" % (major, minor), sms=props.multi_processor_count,
                    l2_bytes=props.L2_cache_size),
        torch=torch.__version__, cuda=torch.version.cuda, python=platform.python_version(),
        solution=dict(name=sol["name"], definition=sol["definition"], spec=sol["spec"], build_arch="sm_" + arch),
        inputs="torch.randn, seed %d; grads bfloat16, emb float32, inv_freq_expanded [B,64,1]" % args.seed,
        reference="PyTorch float32 evaluation of the formula (grads upcast), as the dataset's reference",
        timing=("cold L2 (2x L2 buffer zeroed before each call), %d warmup + %d timed calls, per-call span of "
                "the solution's GPU activities from CUPTI via torch.profiler" % (args.warmup, args.iters)),
        workloads=rows,
        summary=dict(passed=sum(r["passed"] for r in rows), total=len(rows), geomean_median_us=geomean,
                     mean_of_medians_us=sum(med) / len(med)),
    )
    write_json_atomic(args.out, result)

    print("\n| # | B | S | pass | median us | mean us |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %d | %s | %.2f | %.2f |" % (r["index"], r["batch_size"], r["seq_len"],
                                                      "yes" if r["passed"] else "NO", r["median_us"], r["mean_us"]))
    print("| geomean | | | %d/%d | %.2f | |" % (result["summary"]["passed"], len(rows), geomean))
    print("wrote %s" % args.out)
    return 0 if all_pass else 1


def test_solution_export():
    """pytest entry: skips without torch/CUDA; writes to a temp file, not bench/results."""
    import pytest
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    with tempfile.TemporaryDirectory() as d:
        assert main(["--out", os.path.join(d, "solution-export.json")]) == 0


if __name__ == "__main__":
    sys.exit(main())
