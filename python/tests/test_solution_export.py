# SPDX-License-Identifier: Apache-2.0
"""The SOL-ExecBench solutions `ropegrad export-solution --suite ...` writes
(011, 012, 014), built and run the way the harness would
(torch.utils.cpp_extension.load on their sources), on all 16 workloads of
each suite, checked and timed:

    python3 python/tests/test_solution_export.py [--ropegrad build/ropegrad]
        [--ops 011,012,014] [--out-dir results] [--out FILE] [--arch 90]

One result file per op in --out-dir: h200-solution-export-011.json,
h200-solution-export-012.json, and h200-solution-export.json for 014 (--out
overrides that one's path; the README's figure reads it).

Inputs (seed fixed):
  011  the dataset's get_inputs: position_ids = arange(S) per batch, the llama3
       inv_freq (theta 500000, factor 8, low/high 1/4, context 8192), scale 1;
  012  freqs = torch.randn (the dataset's "random"), the workload's scale;
  014  torch.randn, grads bfloat16, emb float32, inv_freq [B,64,1].
Reference: 011/012 the definition's formula in float64 (cos/sin of the float32
product position * inv_freq for 011), 014 the formula in PyTorch float32 (grads
upcast), as the dataset's reference evaluates it; the protocol's tolerance
rule per workload (atol/rtol from workload.jsonl, matched ratio >= 0.99, no
NaN/Inf, not all zeros), the output shapes and dtypes. 011/012 also: the
outputs equal libropegrad's own CUDA output bit for bit (ropegrad.torch,
through $ROPEGRAD_LIB; "not compared" with the reason when the library does
not load), and one case of real training positions (up to 131071, scale
0.75; 012: position * inv_freq up to 262143, theta 1e6) against float64.
Timing: cold L2 (a 2x-L2 buffer zeroed before every call), 10 warmup + 50
timed calls, per-call span of the solution's GPU activities from CUPTI
(torch.profiler).

Exit 0 when every workload of every op passes, 1 otherwise; 0 with
"SKIP: ..." when torch or CUDA is missing.
"""

import argparse
import datetime
import hashlib
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

RESULT_NAME = {"011": "h200-solution-export-011.json", "012": "h200-solution-export-012.json",
               "014": "h200-solution-export.json"}
D, H = 128, 64


SUITE = {"011": "011-rope_forward", "012": "012-cos_sin", "014": "014-rope_backward"}


def suite_dir(op):
    return os.path.join(REPO, "suites", SUITE[op])


def load_workloads(op):
    with open(os.path.join(suite_dir(op), "workload.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def llama3_inv_freq(device):
    """The dataset's get_inputs for 011, step by step in float32."""
    import torch
    inv = 1.0 / (500000.0 ** (torch.arange(0, D, 2, dtype=torch.float32, device=device) / D))
    wavelen = 2 * math.pi / inv
    smooth = ((8192 / wavelen - 1.0) / (4.0 - 1.0)).clamp(0.0, 1.0)
    return (1 - smooth) * inv + smooth * (inv / 8.0)


def ref_011(pos, inv, scale):
    """cos_sin [B,S,D,2] in float64: cos/sin of the float32 product, times scale."""
    import torch
    x = (pos.float()[:, :, None] * inv[None, None, :]).double()
    x = torch.cat((x, x), dim=-1)
    return [torch.stack((x.cos() * scale, x.sin() * scale), dim=-1)]


def ref_012(freqs, scale):
    import torch
    x = torch.cat((freqs, freqs), dim=-1).double()
    return [x.cos() * scale, x.sin() * scale]


def ref_014(gc, gs, emb, inv, scale):
    """The dataset's reference formula in float32 (grads upcast)."""
    import torch
    gc, gs = gc.float(), gs.float()
    e = emb[..., :H]
    t = (gs[..., :H] + gs[..., H:]) * torch.cos(e) - (gc[..., :H] + gc[..., H:]) * torch.sin(e)
    return [(t * inv[:, None, :, 0]).sum(-1) * scale]


def inputs_011(w, dev, gen):
    import torch
    B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
    pos = torch.arange(S, dtype=torch.int64, device=dev).unsqueeze(0).expand(B, -1).contiguous()
    return (pos, llama3_inv_freq(dev), 1.0)


def inputs_012(w, dev, gen):
    import torch
    B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
    scale = float(w["inputs"]["attention_scaling"]["value"])
    return (torch.randn(B, S, H, generator=gen).to(dev), scale)


def inputs_014(w, dev, gen):
    import torch
    B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
    scale = float(w["inputs"]["attention_scaling"]["value"])
    gc = torch.randn(B, S, D, generator=gen).to(dev).to(torch.bfloat16)
    gs = torch.randn(B, S, D, generator=gen).to(dev).to(torch.bfloat16)
    emb = torch.randn(B, S, D, generator=gen).to(dev)
    inv = torch.randn(B, H, 1, generator=gen).to(dev)
    return (gc, gs, emb, inv, scale)


def positions_011(dev, gen):
    """Real training positions: packed sequences up to 131071, per batch, scale 0.75."""
    import torch
    B, S = 4, 777
    pos = (torch.randint(0, 131072 - S, (B, 1), generator=gen) + torch.arange(S)[None, :]).to(dev)
    pos[1, 100:] -= pos[1, 100].item()   # a new document starts at row 100 of batch 1
    return (pos.contiguous(), llama3_inv_freq(dev), 0.75)


def positions_012(dev, gen):
    """freqs = position * inv_freq (theta 1e6) for positions up to 262143, scale 0.75."""
    import torch
    B, S = 2, 1000
    pos = (torch.randint(0, 262144 - S, (B, 1), generator=gen) + torch.arange(S)[None, :]).float()
    inv = (1.0 / (1e6 ** (torch.arange(0, D, 2, dtype=torch.float64) / D))).float()
    return ((pos[:, :, None] * inv[None, None, :]).contiguous().to(dev), 0.75)


def library_011(args):
    from ropegrad.rope_forward import rope_forward
    return [rope_forward(*args)]


def library_012(args):
    from ropegrad.cos_sin import cos_sin_from_freqs
    return list(cos_sin_from_freqs(*args))


# What each op's outputs must be: (shape from B and S, dtype name).
OPS = {
    "011": dict(inputs=inputs_011, reference=ref_011, library=library_011, positions=positions_011,
                outputs=lambda B, S: [((B, S, D, 2), "bfloat16")],
                about="the dataset's get_inputs (positions arange(S), llama3 inv_freq, scale 1)",
                reference_about="float64: cos/sin of the float32 product position * inv_freq, times scale"),
    "012": dict(inputs=inputs_012, reference=ref_012, library=library_012, positions=positions_012,
                outputs=lambda B, S: [((B, S, D), "bfloat16"), ((B, S, D), "bfloat16")],
                about="torch.randn freqs [B,S,64] (the dataset's random), the workload's attention_scaling",
                reference_about="float64: cos/sin of freqs (concatenated with itself), times scale"),
    "014": dict(inputs=inputs_014, reference=ref_014, library=None, positions=None,
                outputs=lambda B, S: [((B, S), "float32")],
                about="torch.randn; grads bfloat16, emb float32, inv_freq_expanded [B,64,1]",
                reference_about="PyTorch float32 evaluation of the formula (grads upcast), as the dataset's reference"),
}


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def shapes_ok(outs, want):
    import torch
    return len(outs) == len(want) and all(
        isinstance(o, torch.Tensor) and tuple(o.shape) == s and o.dtype == getattr(torch, dt)
        for o, (s, dt) in zip(outs, want))


def check_all(outs, refs, atol, rtol):
    """The protocol's rule on every output; the worst figures."""
    from ropegrad.timing import tolerance_check
    chks = [tolerance_check(o, r, atol, rtol) for o, r in zip(outs, refs)]
    return dict(passed=all(c["passed"] for c in chks), matched_ratio=min(c["matched_ratio"] for c in chks),
                max_abs_err=max(c["max_abs_err"] for c in chks))


def same_as_library(spec, args, outs):
    """None when the library's CUDA output equals outs bit for bit, else why not (a string);
    ("not compared", reason) when the library cannot be used here."""
    import torch
    try:
        lib = spec["library"](args)
        torch.cuda.synchronize()
    except Exception as e:   # no library here, or one without CUDA: say why, compare nothing
        return ("not compared", "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0]))
    diff = [int((a.view(torch.int16) != b.view(torch.int16)).sum()) for a, b in zip(outs, lib)]
    return None if not any(diff) else "%d elements differ from libropegrad's output" % sum(diff)


def export_and_build(op, args, arch, tmp):
    """Exports op's solution, writes its sources, builds it with torch's cpp_extension.
    Returns (solution dict, the entry function) or raises RuntimeError."""
    from torch.utils.cpp_extension import load
    work = os.path.join(tmp, op)
    os.makedirs(work)
    sol_path = os.path.join(work, "solution.json")
    r = subprocess.run([args.ropegrad, "export-solution", "--suite", suite_dir(op), "--out", sol_path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s export-solution --suite %s exited %d: %s" % (
            args.ropegrad, suite_dir(op), r.returncode, r.stderr.strip()))
    with open(sol_path) as f:
        sol = json.load(f)
    src_dir = os.path.join(work, "src")
    os.makedirs(src_dir)
    for s in sol["sources"]:
        if os.path.basename(s["path"]) != s["path"]:
            raise RuntimeError("source path %r is not a plain file name" % s["path"])
        with open(os.path.join(src_dir, s["path"]), "w") as f:
            f.write(s["content"])
    entry_file, entry_fn = sol["spec"]["entry_point"].split("::")
    co = sol["spec"].get("compile_options") or {}
    cuda_flags = list(co.get("cuda_cflags", [])) + ["-gencode=arch=compute_%s,code=sm_%s" % (arch, arch)]
    print("building %s (%s, %s) with nvcc %s ..." % (entry_file, sol["name"], sol["definition"],
                                                     " ".join(cuda_flags)), flush=True)
    build_dir = os.path.join(work, "build")
    os.makedirs(build_dir)
    ext = load(name="ropegrad_solution_%s_%d" % (op, os.getpid()), sources=[os.path.join(src_dir, entry_file)],
               extra_include_paths=[src_dir], extra_cflags=list(co.get("cflags", [])),
               extra_cuda_cflags=cuda_flags, extra_ldflags=list(co.get("ld_flags", [])),
               build_directory=build_dir, verbose=False)
    return sol, getattr(ext, entry_fn)


def run_op(op, args, arch, dev, tmp, argv):
    """Builds, checks and times op's solution; writes its result file; True when all pass."""
    import torch
    from ropegrad.timing import time_cold_l2
    spec = OPS[op]
    sol, run = export_and_build(op, args, arch, tmp)
    gen = torch.Generator().manual_seed(args.seed)
    rows, all_pass, lib_note = [], True, None
    for i, w in enumerate(load_workloads(op)):
        B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
        atol, rtol = w["tolerance"]["max_atol"], w["tolerance"]["max_rtol"]
        inp = spec["inputs"](w, dev, gen)
        outs = as_list(run(*inp))
        torch.cuda.synchronize()
        shape_ok = shapes_ok(outs, spec["outputs"](B, S))
        chk = check_all(outs, spec["reference"](*inp), atol, rtol) if shape_ok else \
            dict(passed=False, matched_ratio=0.0, max_abs_err=float("nan"))
        passed = chk["passed"] and shape_ok
        row = dict(index=i, uuid=w["uuid"], batch_size=B, seq_len=S, attention_scaling=float(inp[-1]))
        if spec["library"] and shape_ok:
            same = same_as_library(spec, inp, outs)
            if isinstance(same, tuple):
                lib_note = same[1]
            else:
                row["same_as_library"] = same is None
                if same:
                    print("  workload %d: %s" % (i, same))
                passed = passed and same is None
        t = time_cold_l2(lambda: run(*inp), warmup=args.warmup, iters=args.iters, device=dev)
        row.update(passed=passed, shape_ok=shape_ok, matched_ratio=chk["matched_ratio"],
                   max_abs_err=chk["max_abs_err"], atol=atol, rtol=rtol, median_us=t["median_us"],
                   mean_us=t["mean_us"], kernels=t["kernels"])
        rows.append(row)
        all_pass &= passed
        print("  %s workload %2d B=%-3d S=%-5d %s  median %8.2f us  mean %8.2f us  max|err| %.3g" % (
            op, i, B, S, "pass" if passed else "FAIL", t["median_us"], t["mean_us"], chk["max_abs_err"]), flush=True)

    positions = None
    if spec["positions"]:
        inp = spec["positions"](dev, gen)
        outs = as_list(run(*inp))
        torch.cuda.synchronize()
        B, S = inp[0].shape[0], inp[0].shape[1]
        ok = shapes_ok(outs, spec["outputs"](B, S))
        chk = check_all(outs, spec["reference"](*inp), 1e-5, 0.05) if ok else dict(passed=False, max_abs_err=None)
        same = same_as_library(spec, inp, outs) if ok else "wrong shapes"
        positions = dict(batch_size=B, seq_len=S, attention_scaling=inp[-1], passed=chk["passed"],
                         max_abs_err=chk["max_abs_err"],
                         same_as_library=None if isinstance(same, tuple) else same is None)
        all_pass &= chk["passed"] and not isinstance(same, str)
        print("  %s real positions B=%d S=%d: %s, max|err| %s, %s" % (
            op, B, S, "pass" if chk["passed"] else "FAIL", chk["max_abs_err"],
            "library not compared" if isinstance(same, tuple) else
            "same as libropegrad" if same is None else same), flush=True)
    if lib_note:
        print("  %s: libropegrad's output not compared: %s" % (op, lib_note))

    med = [r["median_us"] for r in rows]
    geomean = math.exp(sum(math.log(m) for m in med) / len(med))
    major, minor = torch.cuda.get_device_capability(dev)
    props = torch.cuda.get_device_properties(dev)
    result = dict(
        what="SOL-ExecBench solution exported by `ropegrad export-solution --suite suites/%s`, "
             "built with torch.utils.cpp_extension" % SUITE[op],
        command="python3 python/tests/test_solution_export.py " + " ".join(argv),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        device=dict(name=props.name, capability="%d.%d" % (major, minor), sms=props.multi_processor_count,
                    l2_bytes=props.L2_cache_size),
        torch=torch.__version__, cuda=torch.version.cuda, python=platform.python_version(),
        solution=dict(name=sol["name"], definition=sol["definition"], spec=sol["spec"], build_arch="sm_" + arch,
                      sources={s["path"]: hashlib.sha256(s["content"].encode()).hexdigest() for s in sol["sources"]}),
        inputs=spec["about"] + ", seed %d" % args.seed,
        reference=spec["reference_about"],
        library_comparison=("outputs equal libropegrad's CUDA output bit for bit" if spec["library"] and not lib_note
                            else "not compared: " + lib_note if lib_note else "not made for this op"),
        timing=("cold L2 (2x L2 buffer zeroed before each call), %d warmup + %d timed calls, per-call span of "
                "the solution's GPU activities from CUPTI via torch.profiler" % (args.warmup, args.iters)),
        workloads=rows,
        positions=positions,
        summary=dict(passed=sum(r["passed"] for r in rows), total=len(rows), geomean_median_us=geomean,
                     mean_of_medians_us=sum(med) / len(med)),
    )
    out = args.out if (op == "014" and args.out) else os.path.join(args.out_dir, RESULT_NAME[op])
    write_json_atomic(out, result)

    print("\n| %s # | B | S | pass | median us | mean us |" % op)
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %d | %s | %.2f | %.2f |" % (r["index"], r["batch_size"], r["seq_len"],
                                                      "yes" if r["passed"] else "NO", r["median_us"], r["mean_us"]))
    print("| geomean | | | %d/%d | %.2f | |" % (result["summary"]["passed"], len(rows), geomean))
    print("wrote %s\n" % out)
    return all_pass


def write_json_atomic(path, obj):
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise SystemExit("error: %s: directory does not exist" % d)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def parse_ops(s):
    ops = [o.strip() for o in s.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if not ops or bad:
        raise argparse.ArgumentTypeError("want a comma-separated list of %s, got %r" % (", ".join(OPS), s))
    return ops


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ropegrad", default=os.path.join(REPO, "build", "ropegrad"), help="the ropegrad CLI")
    ap.add_argument("--ops", type=parse_ops, default=list(OPS), help="ops to export and run (default 011,012,014)")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "results"),
                    help="where the result files go (%s)" % ", ".join(RESULT_NAME.values()))
    ap.add_argument("--out", default=None, help="014's result file (default OUT_DIR/%s)" % RESULT_NAME["014"])
    ap.add_argument("--arch", default=None,
                    help="compute capability to build for, e.g. 90 (default: the current GPU's)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args(argv)
    for d in [args.out_dir] + ([os.path.dirname(os.path.abspath(args.out))] if args.out else []):
        if not os.path.isdir(d):
            ap.error("%s: directory does not exist" % d)

    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0

    dev = torch.device("cuda", torch.cuda.current_device())
    major, minor = torch.cuda.get_device_capability(dev)
    arch = args.arch or "%d%d" % (major, minor)
    failed = []
    with tempfile.TemporaryDirectory(prefix="rg_solution_") as tmp:
        for op in args.ops:
            try:
                ok = run_op(op, args, arch, dev, tmp, argv)
            except RuntimeError as e:
                print("FAIL: %s: %s" % (op, e))
                ok = False
            if not ok:
                failed.append(op)
    print("solutions %s: %s" % (",".join(args.ops), "all pass" if not failed else "FAILED: " + ",".join(failed)))
    return 1 if failed else 0


def test_solution_export():
    """pytest entry: skips without torch/CUDA; writes to a temp folder, not results."""
    import pytest
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    with tempfile.TemporaryDirectory() as d:
        assert main(["--out-dir", d]) == 0


if __name__ == "__main__":
    sys.exit(main())
