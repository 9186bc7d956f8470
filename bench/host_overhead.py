# SPDX-License-Identifier: Apache-2.0
"""Host time per call of ropegrad's torch ops: the microseconds one call costs when the kernels
themselves take next to nothing (a tiny shape), i.e. what Python, torch.library dispatch,
autograd, argument checks and ctypes add around the kernels.

Rows (each skipped, with the reason, where it cannot run here):
  hf            transformers' rotary module + apply_rotary_pos_emb (stock Qwen3 code)
  ropegrad      the same module and function switched by ropegrad.hf.use_ropegrad(positions=False):
                cos/sin from ropegrad.hf.rotary_tables (L1/012), the apply L1/088 (backward L1/068)
  ropegrad-pos  the same switched by use_ropegrad(positions=True): the apply from positions
                (rope_apply_pos, backward rope_apply_pos_backward), no table
  ropegrad-thd  ropegrad.torch.rope_apply_thd on packed [T,H,D] q and k, one fixed table, cu_seqlens
  cos_sin       ropegrad.torch.cos_sin_from_freqs (L1/012; forward only: no autograd)

Per row: the median over --rounds of (time of --calls calls) / --calls, in microseconds, of the
forward (q and k requiring grad, as training runs it: the graph is recorded) and of forward +
backward (torch.autograd.grad of both outputs; nothing accumulates into .grad). On a GPU each
round is synchronised before and after, so a round's time includes the kernels' (at this shape,
a few microseconds); on the CPU the CPU path runs inline.

    python3 bench/host_overhead.py --out /tmp/host-overhead.json        # GPU if there is one, else CPU
    python3 bench/host_overhead.py --smoke --out /tmp/host-overhead.json

Prints a markdown table last."""

import argparse
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hf_rope import write_json  # noqa: E402  (the results file written atomically)

# Qwen3-like heads at a tiny shape: the kernels' time is next to nothing.
SHAPE = dict(batch=1, seq=16, heads=4, kv_heads=2, head_dim=64)


def tiny_model(torch, device):
    """A one-layer Qwen3 model (the rotary module and the modeling module use_ropegrad switches)."""
    import transformers
    from transformers.models.qwen3 import modeling_qwen3
    d = SHAPE["head_dim"]
    cfg = transformers.Qwen3Config(hidden_size=SHAPE["heads"] * d, intermediate_size=64, num_hidden_layers=1,
                                   num_attention_heads=SHAPE["heads"], num_key_value_heads=SHAPE["kv_heads"],
                                   head_dim=d, vocab_size=32, max_position_embeddings=256)
    model = transformers.Qwen3Model(cfg).to(device)
    return model, model.rotary_emb, modeling_qwen3


def inputs(torch, device):
    """q, k ([B,H,S,D] views of [B,S,H,D] memory, as the attention makes them; bf16, requiring
    grad), their upstream gradients (laid out like them), position ids [B,S]."""
    B, S, H, Hkv, D = (SHAPE[n] for n in ("batch", "seq", "heads", "kv_heads", "head_dim"))
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(B, S, h, D, generator=gen).to(device, torch.bfloat16).transpose(1, 2).requires_grad_()
            for h in (H, Hkv))
    gq, gk = (torch.randn(B, S, h, D, generator=gen).to(device, torch.bfloat16).transpose(1, 2) for h in (H, Hkv))
    pos = torch.arange(S, device=device)[None].expand(B, -1).contiguous()
    return q, k, gq, gk, pos


def per_call_us(torch, device, fn, rounds, calls):
    """Median over rounds of one round's time / calls (µs), after one warm-up round."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times = []
    for r in range(rounds + 1):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        if r:
            times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def rows_for(torch, device, rounds, calls):
    model, rot, modeling = tiny_model(torch, device)
    q, k, gq, gk, pos = inputs(torch, device)

    def layer():
        cos, sin = rot(q, pos)
        return modeling.apply_rotary_pos_emb(q, k, cos, sin)

    def measure(name, fwd, has_backward=True, wrt=(q, k), grads=(gq, gk)):
        row = dict(impl=name)
        try:
            row["fwd_us"] = per_call_us(torch, device, fwd, rounds, calls)
            if has_backward:
                def fwd_bwd():
                    a, b = fwd()
                    return torch.autograd.grad((a, b), wrt, grads)
                row["fwd_bwd_us"] = per_call_us(torch, device, fwd_bwd, rounds, calls)
        except Exception as e:   # noqa: BLE001 -- a failing row is a result
            row["failed"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
        return row

    rows = [measure("hf", layer)]
    try:
        import ropegrad.hf
        import ropegrad.torch as rgt
    except (ImportError, OSError) as e:
        why = "ropegrad not importable (%s)" % e
        return rows + [dict(impl=n, skipped=why) for n in ("ropegrad", "ropegrad-pos", "ropegrad-thd", "cos_sin")]
    for name, positions in (("ropegrad", False), ("ropegrad-pos", True)):
        with ropegrad.hf.use_ropegrad(model, positions=positions):
            rows.append(measure(name, layer))
    # packed: the same tokens as one [T,H,D] sequence of two, one table of the longest's positions
    T = SHAPE["batch"] * SHAPE["seq"]
    cu = torch.tensor([0, T // 2, T], dtype=torch.int32, device=device)
    with torch.no_grad():
        cos, sin = rgt.rotary_embedding(q, torch.arange(T, device=device)[None], rot.inv_freq, rot.attention_scaling)
        cos, sin = cos[0].contiguous(), sin[0].contiguous()
    qt, kt, gqt, gkt = (x.transpose(1, 2).reshape(T, x.shape[1], x.shape[3]) for x in (q, k, gq, gk))
    rows.append(measure("ropegrad-thd", lambda: rgt.rope_apply_thd(qt, kt, cos, sin, cu_seqlens=cu),
                        wrt=(qt, kt), grads=(gqt, gkt)))
    freqs = (pos[:, :, None].float() * rot.inv_freq[None, None, :].float()).contiguous()
    rows.append(measure("cos_sin", lambda: rgt.cos_sin_from_freqs(freqs, float(rot.attention_scaling)),
                        has_backward=False))
    return rows


def table(rows):
    out = ["| impl | forward µs/call | forward + backward µs/call | note |", "|---|---|---|---|"]
    for r in rows:
        f = lambda key: ("%.1f" % r[key]) if key in r else "-"   # noqa: E731
        note = r.get("skipped") or r.get("failed") or ("forward only" if "fwd_us" in r and "fwd_bwd_us" not in r
                                                        else "")
        out.append("| %s | %s | %s | %s |" % (r["impl"], f("fwd_us"), f("fwd_bwd_us"), note.replace("|", "/")))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="write the results here (JSON)")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="a few calls on the CPU: checks the script")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        sys.stderr.write("host_overhead: --rounds and --calls must be at least 1\n")
        return 2
    given = list(argv if argv is not None else sys.argv[1:])
    command = " ".join(["python3 bench/host_overhead.py"] + [a for i, a in enumerate(given) if not (
        a == "--out" or a.startswith("--out=") or (i and given[i - 1] == "--out"))])
    try:
        import torch
        import transformers
    except ImportError as e:
        sys.stderr.write("host_overhead: needs torch and transformers (%s)\n" % e)
        return 77
    device = torch.device("cpu" if args.smoke or not torch.cuda.is_available() else "cuda")
    if args.smoke:
        args.rounds, args.calls = 3, 5
    rows = rows_for(torch, device, args.rounds, args.calls)
    doc = dict(device=torch.cuda.get_device_name() if device.type == "cuda" else "cpu", command=command,
               torch=torch.__version__, transformers=transformers.__version__, shape=SHAPE, dtype="bfloat16",
               rounds=args.rounds, calls=args.calls, rows=rows)
    if args.out:
        write_json(doc, args.out)
    print("command: %s" % command)
    print("device: %s, torch %s, transformers %s; q [%d,%d,%d,%d], k [%d,%d,%d,%d] bf16\n" % (
        doc["device"], torch.__version__, transformers.__version__, SHAPE["batch"], SHAPE["heads"], SHAPE["seq"],
        SHAPE["head_dim"], SHAPE["batch"], SHAPE["kv_heads"], SHAPE["seq"], SHAPE["head_dim"]))
    print(table(rows))
    return 1 if any("failed" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
