# SPDX-License-Identifier: Apache-2.0
"""The forward ops (L1/011, L1/012) beside PyTorch eager and torch.compile: same
process, same inputs, same timer (ropegrad.timing: torch.profiler CUPTI spans,
2x-L2 flush before every iteration, median). Eager and compile run the
definitions' PyTorch formula (written out below, as the dataset's reference computes it); ropegrad runs
through python/ropegrad on the same tensors and is checked against float64
under the workload's tolerance.

    python3 bench/vs_torch_ops.py --out results/h200-vs-torch-ops.json

011's inputs are get_inputs' (sequential positions, llama3 inv_freq); 012's
freqs are standard normal, as the suite's "random" inputs."""

import argparse
import glob
import json
import math
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "scripts", "figures"))
from peer_table import add_speedups, geomeans, median_cell, print_op_table, record_failure  # noqa: E402


class _Reference011:
    """L1/011 as its definition computes it: llama3-scaled inv_freq and sequential
    positions (get_inputs), then cos/sin of position * inv_freq in float32,
    scaled, stacked, cast to bf16."""

    @staticmethod
    def get_inputs(axes, device):
        import torch
        B, S, D = axes["batch_size"], axes["seq_len"], axes["head_dim"]
        theta, factor, low, high, orig = 500000.0, 8.0, 1.0, 4.0, 8192
        inv = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.float32, device=device) / D))
        wavelen = 2 * math.pi / inv
        smooth = ((orig / wavelen - low) / (high - low)).clamp(0.0, 1.0)
        inv = (1 - smooth) * inv + smooth * (inv / factor)
        pos = torch.arange(S, dtype=torch.int64, device=device).unsqueeze(0).expand(B, -1).contiguous()
        return {"position_ids": pos, "inv_freq": inv, "attention_scaling": 1.0}

    @staticmethod
    def run(position_ids, inv_freq, attention_scaling):
        import torch
        B = position_ids.shape[0]
        freqs = (inv_freq[None, :, None].float().expand(B, -1, 1) @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return torch.stack([emb.cos() * attention_scaling, emb.sin() * attention_scaling], dim=-1).to(torch.bfloat16)


class _Reference012:
    """L1/012 as its definition computes it: cos/sin of cat(freqs, freqs), scaled, bf16."""

    @staticmethod
    def run(freqs, attention_scaling):
        import torch
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * attention_scaling).to(torch.bfloat16), (emb.sin() * attention_scaling).to(torch.bfloat16)


def load_reference(op):
    return {"011": _Reference011, "012": _Reference012}[op]


NAMES = ("ropegrad", "eager", "compile")


def print_table(op, rows, gm):
    """The op's Markdown table: a line per workload, the geomeans and their ratios last."""
    def cells(r):
        return (["%d" % r[a] for a in ("index", "batch_size", "seq_len")] + [median_cell(r, n) for n in NAMES] +
                ["%.1fx" % r.get("speedup_vs_" + n, float("nan")) for n in NAMES[1:]] +
                ["yes" if r["ropegrad"].get("passed") else "NO"])
    footer = (["geomean", "", ""] + ["%.2f" % gm[n] for n in NAMES] +
              ["%.1fx" % (gm[n] / gm["ropegrad"]) for n in NAMES[1:]] + [""])
    print_op_table(op, ["#", "B", "S", "ropegrad", "eager", "compile", "vs eager", "vs compile", "pass"],
                   [cells(r) for r in rows], footer)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "results", "h200-vs-torch-ops.json"))
    ap.add_argument("--ops", default="011,012")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--baseline-dir", default=None,
                    help="also write each op's eager times as DIR/h200-torch-eager-OP.baseline.json, the baseline "
                         "file `ropegrad bench --baseline FILE` takes ({name, per_workload: [{index, time_ns}]})")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0
    from ropegrad.torch import rope_forward, cos_sin_from_freqs
    from ropegrad.timing import time_cold_l2, tolerance_check

    dev = torch.device("cuda", torch.cuda.current_device())
    torch.manual_seed(2026)
    result = dict(device=torch.cuda.get_device_name(dev), torch=torch.__version__, ops={})
    all_pass = True
    for op in args.ops.split(","):
        ref_mod = load_reference(op)
        compiled = None if args.no_compile else torch.compile(ref_mod.run)
        with open(os.path.join(glob.glob(os.path.join(REPO, "suites", op + "-*"))[0], "workload.jsonl")) as f:
            workloads = [json.loads(line) for line in f if line.strip()]
        rows = []
        for i, w in enumerate(workloads):
            B, S = w["axes"]["batch_size"], w["axes"]["seq_len"]
            atol, rtol = w["tolerance"]["max_atol"], w["tolerance"]["max_rtol"]
            if op == "011":
                inp = ref_mod.get_inputs(dict(batch_size=B, seq_len=S, head_dim=128), dev)
                pos, inv, scale = inp["position_ids"], inp["inv_freq"].contiguous(), float(inp["attention_scaling"])
                x = (pos.float()[:, :, None] * inv[None, None, :]).double()
                x = torch.cat((x, x), dim=-1)
                ref = torch.stack([x.cos() * scale, x.sin() * scale], dim=-1)
                eager = lambda: ref_mod.run(pos, inv, scale)  # noqa: E731
                ours = lambda: rope_forward(pos, inv, scale)  # noqa: E731
                comp = (lambda: compiled(pos, inv, scale)) if compiled else None  # noqa: E731
            else:
                freqs = torch.randn(B, S, 64, device=dev)
                scale = float(w["inputs"]["attention_scaling"]["value"])
                x = torch.cat((freqs, freqs), dim=-1).double()
                ref = torch.stack([x.cos() * scale, x.sin() * scale])
                eager = lambda: ref_mod.run(freqs, scale)  # noqa: E731
                ours = lambda: cos_sin_from_freqs(freqs, scale)  # noqa: E731
                comp = (lambda: compiled(freqs, scale)) if compiled else None  # noqa: E731
            row = dict(index=i, batch_size=B, seq_len=S)
            impls = [("ropegrad", ours), ("eager", eager)] + ([("compile", comp)] if comp else [])
            for name, fn in impls:
                try:
                    out = fn()
                    torch.cuda.synchronize()
                    if op == "012":   # (cos, sin): stacked for the check only, outside the timing
                        out = torch.stack(out)
                    chk = tolerance_check(out.double(), ref, atol, rtol)
                    t = time_cold_l2(fn, warmup=args.warmup, iters=args.iters, device=dev)
                    row[name] = dict(median_us=t["median_us"], passed=chk["passed"], max_abs_err=chk["max_abs_err"],
                                     gpu_activities=len(t["kernels"]))
                except Exception as e:
                    record_failure(row, op, i, name, e)
            rg = row["ropegrad"]
            all_pass &= "error" not in rg and rg["passed"]
            add_speedups(row, NAMES[1:])
            rows.append(row)
        gm = geomeans(rows, NAMES)
        result["ops"][op] = dict(workloads=rows, geomean_us=gm)
        if args.baseline_dir:
            # T_b for the SOL score and speedups of `ropegrad bench --suite ... --baseline`:
            # the definition's PyTorch formula (eager), measured here, in this run.
            base = dict(name="torch eager on %s (bench/vs_torch_ops.py)" % torch.cuda.get_device_name(dev),
                        per_workload=[dict(index=r["index"], time_ns=r["eager"]["median_us"] * 1e3)
                                      for r in rows if "eager" in r and "error" not in r["eager"]])
            path = os.path.join(args.baseline_dir, "h200-torch-eager-%s.baseline.json" % op)
            with open(path + ".tmp", "w") as f:
                json.dump(base, f, indent=2)
                f.write("\n")
            os.replace(path + ".tmp", path)
        print_table(op, rows, gm)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, args.out)
    return 0 if all_pass else 1


if __name__ == "__main__":
    sys.exit(main())
