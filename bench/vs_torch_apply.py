# SPDX-License-Identifier: Apache-2.0
"""The apply ops (L1/088 forward, L1/068 backward) beside PyTorch eager,
torch.compile and Liger-Kernel's Triton RoPE, on every workload of their
suites: same process, same inputs, same timer (ropegrad.timing: CUPTI spans,
2x-L2 flush before every iteration, median), every output checked against
float64 under the workload's tolerance. The sibling of bench/vs_torch_ops.py
(011, 012).

    python3 bench/vs_torch_apply.py --out results/h200-vs-torch-apply.json
    python3 bench/vs_torch_apply.py --smoke --out /tmp/apply.json     # tiny shapes, CPU is fine

Eager and compile run the definitions' formulas, written out below: 088
x*cos + rotate_half(x)*sin with one [S,D] table; 068 grad_x =
g*cos - rotate_half(g)*sin, grad_cos / grad_sin = the heads' sums of g*x and
g*rotate_half(x), tables [B,S,D]. q/k (and gradients) are standard normal;
the tables are the suites' standard normal ones (`--tables random`, the
default) or real RoPE tables (`--tables rope`: cos/sin of position x
inv_freq, base 10000, the frequency half repeated as Hugging Face builds it,
positions to ~3e5 with a different start per batch for 068's [B,S,D] tables).
Liger (liger_kernel.ops.rope: rope_forward, rope_backward) is a peer where it
imports (a wheel carried to the device: scripts/gpu-ops.sh). It reads only
the first half of each cos/sin row (it assumes the repeated halves of real
tables), so on random tables it is wrong by construction and is measured
honestly only with `--tables rope`; its backward computes grad_q and grad_k
only (no grad_cos, grad_sin), so its 068 row is marked partial. Without CUDA (--smoke) the times are perf_counter
wall-clock medians: a check that the script runs, not a measurement."""

import argparse
import glob
import json
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "scripts", "figures"))
from peer_table import add_speedups, geomeans, median_cell, print_op_table, record_failure  # noqa: E402


def rotate_half(x):
    import torch
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def formula_088(query, key, cos, sin):
    """088: cos, sin [S,D] broadcast over batch and heads."""
    c, s = cos[None, None], sin[None, None]
    return query * c + rotate_half(query) * s, key * c + rotate_half(key) * s


def formula_068(grad_q_embed, grad_k_embed, q, k, cos, sin):
    """068: cos, sin [B,S,D] broadcast over heads; the four gradients."""
    c, s = cos[:, None], sin[:, None]
    grad_q = grad_q_embed * c - rotate_half(grad_q_embed) * s
    grad_k = grad_k_embed * c - rotate_half(grad_k_embed) * s
    grad_cos = (grad_q_embed * q).sum(1) + (grad_k_embed * k).sum(1)
    grad_sin = (grad_q_embed * rotate_half(q)).sum(1) + (grad_k_embed * rotate_half(k)).sum(1)
    return grad_q, grad_k, grad_cos, grad_sin


def load_liger():
    try:
        from liger_kernel.ops import rope as liger_rope
        return liger_rope, None
    except Exception as e:  # not installed, or no Triton / GPU
        return None, "%s: %s" % (type(e).__name__, e)


ROPE_POS_MAX = 300000   # positions of long contexts reach ~3e5


def rope_tables(starts, S, D):
    """Real RoPE tables [len(starts), S, D] in float32: cos/sin of (start + s)
    x inv_freq (base 10000), each row's frequency half repeated."""
    import torch
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    pos = torch.tensor(starts, dtype=torch.float64)[:, None] + torch.arange(S, dtype=torch.float64)[None]
    ang = pos[..., None] * inv_freq
    ang = torch.cat((ang, ang), dim=-1)
    return ang.cos().float(), ang.sin().float()


def inputs(op, axes, device, gen, tables="random"):
    import torch
    B, H, Hkv, S, D = axes["batch_size"], axes["num_heads"], axes["num_kv_heads"], axes["seq_len"], 128

    def r(*shape):
        return torch.randn(*shape, generator=gen).to(device)

    def starts(n):   # packed sequences: each table row set starts elsewhere, up to ~3e5
        return torch.randint(0, ROPE_POS_MAX - S, (n,), generator=gen).tolist()

    n_tables = 1 if op == "088" else B
    if tables == "rope":
        cos, sin = (t.to(device) for t in rope_tables(starts(n_tables), S, D))
    else:
        cos, sin = r(n_tables, S, D), r(n_tables, S, D)
    if op == "088":
        return dict(query=r(B, H, S, D), key=r(B, Hkv, S, D), cos=cos[0], sin=sin[0])
    return dict(grad_q_embed=r(B, H, S, D), grad_k_embed=r(B, Hkv, S, D), q=r(B, H, S, D), k=r(B, Hkv, S, D),
                cos=cos, sin=sin)


def implementations(op, x, compiled, liger):
    """name -> (a call returning the op's outputs, note)."""
    import torch
    from ropegrad.torch import apply_rotary_pos_emb, rope_apply_backward
    impls = {}
    if op == "088":
        cos1, sin1 = x["cos"][None], x["sin"][None]   # [1,S,D]: one table shared by the batch
        impls["ropegrad"] = (lambda: apply_rotary_pos_emb(x["query"], x["key"], cos1, sin1), "")
        impls["eager"] = (lambda: formula_088(**x), "")
        if compiled:
            impls["compile"] = (lambda: compiled(**x), "")
        if liger:
            # Liger rotates q and k in place (after its own contiguous copies of these BHSD inputs).
            impls["liger"] = (lambda: liger.rope_forward(x["query"], x["key"], cos1, sin1)[:2], "")
    else:
        impls["ropegrad"] = (lambda: rope_apply_backward(**x), "")
        impls["eager"] = (lambda: formula_068(**x), "")
        if compiled:
            impls["compile"] = (lambda: compiled(**x), "")
        if liger:
            impls["liger"] = (lambda: liger.rope_backward(x["grad_q_embed"].clone(), x["grad_k_embed"].clone(),
                                                          x["cos"], x["sin"]), "partial: grad_q, grad_k only")
    del torch
    return impls


def time_cpu(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e6)
    return dict(median_us=statistics.median(ts), kernels=[])


def check(op, out, ref64, atol, rtol):
    from ropegrad.timing import tolerance_check
    import torch
    out = [t.reshape(r.shape) for t, r in zip(out, ref64)]   # [1,S,D] grads vs the reference's
    verdicts = [tolerance_check(o.double(), r, atol, rtol) for o, r in zip(out, ref64)]
    del torch
    return dict(passed=all(v["passed"] for v in verdicts), max_abs_err=max(v["max_abs_err"] for v in verdicts),
                outputs_checked=len(verdicts))


NAMES = ("ropegrad", "eager", "compile", "liger")
AXES = ("batch_size", "num_heads", "num_kv_heads", "seq_len")
HEADER = ["#", "B", "H", "Hkv", "S", "ropegrad us", "eager", "compile", "liger", "vs eager", "vs compile",
          "vs liger", "pass"]


def print_table(op, rows, gm):
    """The op's Markdown table: a line per workload, the geomeans last."""
    def speedup(r, n):
        return "%.2fx" % r["speedup_vs_" + n] if "speedup_vs_" + n in r else "-"

    def cells(r):
        return (["%d" % r["index"]] + ["%d" % r[a] for a in AXES] + [median_cell(r, n) for n in NAMES] +
                [speedup(r, n) for n in NAMES[1:]] + ["yes" if r["ropegrad"].get("passed") else "NO"])
    footer = ["geomean"] + [""] * len(AXES) + ["%.2f" % gm[n] for n in NAMES]
    print_op_table(op, HEADER, [cells(r) for r in rows], footer)


def run_op(op, args, device, liger):
    import torch
    from ropegrad.timing import time_cold_l2
    formula = formula_088 if op == "088" else formula_068
    compiled = None if args.no_compile else torch.compile(formula)
    with open(os.path.join(glob.glob(os.path.join(REPO, "suites", op + "-*"))[0], "workload.jsonl")) as f:
        workloads = [json.loads(line) for line in f if line.strip()]
    if args.smoke:
        workloads = [dict(w, axes=dict(w["axes"], batch_size=1, seq_len=min(w["axes"]["seq_len"], 32)))
                     for w in workloads[:2]]
    gen = torch.Generator().manual_seed(2026)
    rows = []
    for i, w in enumerate(workloads):
        x = inputs(op, w["axes"], device, gen, args.tables)
        ref64 = formula(**{n: t.double() for n, t in x.items()})
        atol, rtol = w["tolerance"]["max_atol"], w["tolerance"]["max_rtol"]
        row = dict(index=i, **{a: w["axes"][a] for a in AXES})
        for name, (fn, note) in implementations(op, x, compiled, liger).items():
            try:
                out = fn()
                chk = check(op, out, ref64, atol, rtol)
                if device.type == "cuda":
                    t = time_cold_l2(fn, warmup=args.warmup, iters=args.iters, device=device)
                else:
                    t = time_cpu(fn, args.warmup, args.iters)
                row[name] = dict(median_us=t["median_us"], gpu_activities=len(t["kernels"]), note=note, **chk)
            except Exception as e:
                record_failure(row, op, i, name, e)
        add_speedups(row, NAMES[1:])
        rows.append(row)
        del x, ref64
    gm = geomeans(rows, NAMES)
    print_table(op, rows, gm)
    return dict(workloads=rows, geomean_us=gm,
                ropegrad_faster_than_compile_on_every_workload=all(
                    r.get("speedup_vs_compile", 0) > 1 for r in rows) if compiled else None)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--ops", default="088,068")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--tables", choices=("random", "rope"), default="random",
                    help="cos/sin tables: the suites' standard normal ones, or real RoPE tables (positions to ~3e5)")
    ap.add_argument("--smoke", action="store_true", help="two tiny workloads per op, few iterations (CPU is fine)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.warmup, args.iters = 1, 3
    import torch
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    if device.type != "cuda" and not args.smoke:
        print("vs_torch_apply: no CUDA device (use --smoke to check the script on the CPU)")
        return 2
    liger, why = load_liger() if device.type == "cuda" else (None, "no CUDA device")
    if liger is None:
        print("liger: not run (%s)" % why)
    result = dict(device=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                  timer="cupti spans, cold L2" if device.type == "cuda" else "perf_counter",
                  tables=args.tables, torch=torch.__version__, liger=getattr(liger, "__name__", None), liger_not_run=why, ops={})
    for op in args.ops.split(","):
        result["ops"][op] = run_op(op, args, device, liger)
    ok = all(r["ropegrad"].get("passed") for o in result["ops"].values() for r in o["workloads"])
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
