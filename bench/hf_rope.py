# SPDX-License-Identifier: Apache-2.0
"""The RoPE layer as training spends it, every implementation side by side in one process:
cos/sin from position ids (where the implementation needs tables) plus the apply to q and k,
forward and backward, in bf16 at Hugging Face shapes.

Implementations (each skipped, with the reason, where it cannot run here):
  hf            transformers' rotary module + apply_rotary_pos_emb (the stock model's code)
  compile       the same two functions under torch.compile
  liger         transformers' rotary module + Liger-Kernel's liger_rotary_pos_emb
  flashinfer    flashinfer.apply_rope_pos_ids (forward only: FlashInfer has no backward)
  te            TransformerEngine's fused RoPE (its freqs from the same inv_freq)
  ropegrad      ropegrad's rotary module (L1/011) + apply (L1/088, backward L1/068)
  ropegrad-pos  ropegrad's apply from positions: no cos/sin table at all

Cases: Qwen3-4B's and Llama-3-8B's attention heads (32 q heads, 8 kv heads, head_dim 128; rope
theta 1e6 and 5e5, Llama-3.1's llama3 frequency scaling), B x S from 1 x 4096 to 8 x 8192, and
packed batches (B 1, sequences of different lengths back to back, positions restarting at each).
q and k are laid out as the attention makes them ([B,S,H,D] projections viewed as [B,H,S,D]).

Each time is the median over --iters of CUDA events around one forward + backward (or forward
only), after --warmup. The floor is a copy kernel moving the same bytes as an ideal apply
(read q and k, write their outputs; backward the same for the gradients), timed the same way:
"x floor" = time / floor. Every output is checked against float64 (max abs error) and against
the stock model's.

    python3 bench/hf_rope.py --out results/ops/hf-rope.json              # on a GPU
    python3 bench/hf_rope.py --smoke --out /tmp/hf-rope.json             # tiny, CPU: checks the script

Prints a markdown table last."""

import argparse
import json
import math
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

HEADS = dict(q=32, kv=8, d=128)
MODELS = {
    "qwen3-4b": dict(cfg="Qwen3Config", rotary="Qwen3RotaryEmbedding", module="qwen3",
                     kw=dict(rope_theta=1e6)),
    "llama-3.1-8b": dict(cfg="LlamaConfig", rotary="LlamaRotaryEmbedding", module="llama",
                         kw=dict(rope_theta=5e5, rope_scaling=dict(rope_type="llama3", factor=8.0,
                                                                   low_freq_factor=1.0, high_freq_factor=4.0,
                                                                   original_max_position_embeddings=8192))),
}
SHAPES = [(1, 4096), (4, 4096), (2, 8192), (8, 8192)]
PACKED = [[4096, 2048, 1024, 512, 256, 256, 8192], [8192] * 4]   # sequence lengths, back to back
SMOKE_SHAPES, SMOKE_PACKED, SMOKE_HEADS = [(2, 64)], [[40, 24, 64]], dict(q=4, kv=2, d=64)


def timer(torch, device, warmup, iters):
    """fn -> its median ms (bench/hf_step.py's timer: CUDA events on a GPU, perf_counter else)."""
    from hf_step import timer as step_timer
    run = step_timer(device, warmup, iters)
    return lambda fn: run(fn)["median_ms"]


def model_parts(name, heads, max_pos):
    """(config, the stock rotary module class, the modeling module) of transformers."""
    import transformers
    m = MODELS[name]
    cfg = getattr(transformers, m["cfg"])(hidden_size=heads["q"] * heads["d"], num_attention_heads=heads["q"],
                                          num_key_value_heads=heads["kv"], head_dim=heads["d"],
                                          max_position_embeddings=max_pos, **m["kw"])
    modeling = __import__("transformers.models.%s.modeling_%s" % (m["module"], m["module"]), fromlist=["x"])
    return cfg, getattr(modeling, m["rotary"]), modeling


def case_inputs(torch, device, heads, batch, lens, gen):
    """q, k ([B,H,S,D] views of [B,S,H,D]), the upstream gradients, position ids [B,S] (restarting
    at each packed sequence), and cu_seqlens (None unless packed)."""
    S = sum(lens) if lens else None
    B = 1 if lens else batch[0]
    S = S or batch[1]
    dt = torch.bfloat16
    q = torch.randn(B, S, heads["q"], heads["d"], generator=gen, dtype=torch.float32).to(device, dt).transpose(1, 2)
    k = torch.randn(B, S, heads["kv"], heads["d"], generator=gen, dtype=torch.float32).to(device, dt).transpose(1, 2)
    gq, gk = (torch.randn(x.shape, generator=gen, dtype=torch.float32).to(device, dt) for x in (q, k))
    if lens:
        pos = torch.cat([torch.arange(n) for n in lens])[None, :].to(device)
        cu = torch.tensor([0] + list(__import__("itertools").accumulate(lens)), dtype=torch.int32, device=device)
    else:
        pos = torch.arange(S)[None, :].expand(B, -1).contiguous().to(device)
        cu = None
    return q, k, gq, gk, pos, cu


def implementations(torch, cfg, rotary_cls, modeling, device):
    """name -> (fn(q, k, pos, cu) -> (q_out, k_out), has_backward), or name -> reason it cannot run."""
    rot = rotary_cls(cfg).to(device)
    inv_freq, scale = rot.inv_freq.float(), float(rot.attention_scaling)
    impls = {}

    def hf(q, k, pos, cu):
        cos, sin = rot(q, pos)
        return modeling.apply_rotary_pos_emb(q, k, cos, sin)
    impls["hf"] = (hf, True)
    try:
        # dynamic: one graph for every case's shapes (a compile per shape would take minutes)
        impls["compile"] = (torch.compile(hf, fullgraph=True, dynamic=True), True)
    except Exception as e:   # noqa: BLE001 -- any failure is a reason to report
        impls["compile"] = "torch.compile: %s" % e
    try:
        from liger_kernel.transformers.rope import liger_rotary_pos_emb

        def liger(q, k, pos, cu):
            cos, sin = rot(q, pos)
            return liger_rotary_pos_emb(q, k, cos, sin)
        impls["liger"] = (liger, True) if device.type == "cuda" else "Liger-Kernel runs on CUDA only"
    except ImportError as e:
        impls["liger"] = "Liger-Kernel not installed (%s)" % e
    try:
        import flashinfer

        def fi(q, k, pos, cu):
            B, H, S, D = q.shape
            qt = q.transpose(1, 2).reshape(B * S, H, D)
            kt = k.transpose(1, 2).reshape(B * S, k.shape[1], D)
            qo, ko = flashinfer.apply_rope_pos_ids(qt, kt, pos.reshape(-1).to(torch.int32), rotary_dim=D,
                                                  interleave=False, rope_theta=cfg.rope_theta)
            return qo.view(B, S, H, D).transpose(1, 2), ko.view(B, S, -1, D).transpose(1, 2)
        impls["flashinfer"] = (fi, False) if device.type == "cuda" else "FlashInfer runs on CUDA only"
    except ImportError as e:
        impls["flashinfer"] = "flashinfer-python not installed (%s)" % e
    except Exception as e:   # noqa: BLE001
        impls["flashinfer"] = "flashinfer: %s" % e
    try:
        from transformer_engine.pytorch.attention.rope import apply_rotary_pos_emb as te_apply

        def te(q, k, pos, cu):
            freqs = (pos[0].float()[:, None] * inv_freq[None, :])
            emb = torch.cat((freqs, freqs), dim=-1)[:, None, None, :]        # [S,1,1,D], sbhd
            return (te_apply(q.permute(2, 0, 1, 3), emb, tensor_format="sbhd", fused=True).permute(1, 2, 0, 3),
                    te_apply(k.permute(2, 0, 1, 3), emb, tensor_format="sbhd", fused=True).permute(1, 2, 0, 3))
        impls["te"] = (te, True)
    except ImportError as e:
        impls["te"] = "TransformerEngine not installed (%s)" % e
    try:
        import ropegrad.torch as rgt

        def rg_tables(q, k, pos, cu):
            # What ropegrad.hf.use_ropegrad's rotary module does: L1/011's interleaved output made
            # into contiguous cos and sin with one copy, then the apply.
            cos, sin = rgt.rotary_embedding(q, pos, inv_freq, scale)
            if not (cos.is_contiguous() and sin.is_contiguous()):
                both = torch.stack((cos, sin))
                cos, sin = both[0], both[1]
            return rgt.apply_rotary_pos_emb(q, k, cos, sin)
        impls["ropegrad"] = (rg_tables, True)
        pos_fn = getattr(rgt, "rope_apply_pos", None)
        if pos_fn is None:
            impls["ropegrad-pos"] = "this ropegrad has no apply from positions"
        else:
            impls["ropegrad-pos"] = (lambda q, k, pos, cu: pos_fn(q, k, pos, inv_freq, scale), True)
    except (ImportError, OSError) as e:
        impls["ropegrad"] = impls["ropegrad-pos"] = "ropegrad not importable (%s)" % e
    return impls, inv_freq, scale


def reference(torch, q, k, pos, inv_freq, scale):
    """float64 q_out, k_out from the float32 freqs products (as every implementation forms them)."""
    freqs = (pos.float()[:, :, None] * inv_freq[None, None, :]).double()
    emb = torch.cat((freqs, freqs), dim=-1)[:, None]
    cos, sin = emb.cos() * scale, emb.sin() * scale

    def rot(x):
        x = x.double()
        h = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * sin
    return rot(q), rot(k)


def floor_ms(torch, time_it, q, k):
    """A copy moving exactly an ideal apply's bytes (read q and k, write two outputs)."""
    src = torch.cat((q.reshape(-1), k.reshape(-1)))
    dst = torch.empty_like(src)
    return time_it(lambda: dst.copy_(src))


_IMPLS = {}


def model_impls(torch, device, name, heads):
    """implementations() of one model, made once (one compiled function for all its cases)."""
    if name not in _IMPLS:
        cfg, rotary_cls, modeling = model_parts(name, heads, 2 * 8192)
        _IMPLS[name] = implementations(torch, cfg, rotary_cls, modeling, device)
    return _IMPLS[name]


def run_case(torch, device, args, name, heads, batch, lens, gen):
    impls, inv_freq, scale = model_impls(torch, device, name, heads)
    q0, k0, gq, gk, pos, cu = case_inputs(torch, device, heads, batch, lens, gen)
    time_it = timer(torch, device, args.warmup, args.iters)
    rq, rk = reference(torch, q0, k0, pos, inv_freq, scale)
    fl = floor_ms(torch, time_it, q0, k0)
    rows = []
    stock = None
    for impl, v in impls.items():
        row = dict(model=name, case=("packed " + "+".join(map(str, lens))) if lens else "%dx%d" % batch,
                   tokens=q0.shape[0] * q0.shape[2], impl=impl, floor_ms=fl)
        if isinstance(v, str):
            row["skipped"] = v
            rows.append(row)
            continue
        fn, has_bwd = v
        q, k = q0.detach().clone().requires_grad_(), k0.detach().clone().requires_grad_()
        try:
            qo, ko = fn(q, k, pos, cu)
            row["err_fwd"] = max(float((qo.double() - rq).abs().max()), float((ko.double() - rk).abs().max()))
            if stock is None:
                stock = (qo.detach(), ko.detach())
            else:
                row["vs_stock"] = max(float((qo.float() - stock[0].float()).abs().max()),
                                      float((ko.float() - stock[1].float()).abs().max()))

            def fwd():
                with torch.no_grad():
                    fn(q, k, pos, cu)

            def fwd_bwd():
                a, b = fn(q, k, pos, cu)
                torch.autograd.backward([a, b], [gq, gk])
            row["fwd_ms"] = time_it(fwd)
            if has_bwd:
                row["fwd_bwd_ms"] = time_it(fwd_bwd)
                row["x_floor"] = row["fwd_bwd_ms"] / (2 * fl)
            else:
                row["x_floor_fwd"] = row["fwd_ms"] / fl
        except Exception as e:   # noqa: BLE001 -- a failing implementation is a result row
            row["failed"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
        rows.append(row)
    return rows


def profile_case(torch, device, name, heads, batch, impl_names, gen):
    """The GPU kernels of one forward + backward of each implementation named, at one case
    (torch.profiler: name, calls, total us): where the time goes."""
    from torch.profiler import ProfilerActivity, profile
    impls, _, _ = model_impls(torch, device, name, heads)
    q0, k0, gq, gk, pos, cu = case_inputs(torch, device, heads, batch, None, gen)
    lines = []
    for impl in impl_names:
        v = impls.get(impl)
        if not isinstance(v, tuple):
            lines.append("%s: %s" % (impl, v or "unknown"))
            continue
        fn = v[0]
        q, k = q0.detach().clone().requires_grad_(), k0.detach().clone().requires_grad_()
        for _ in range(3):
            a, b = fn(q, k, pos, cu)
            torch.autograd.backward([a, b], [gq, gk])
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            a, b = fn(q, k, pos, cu)
            torch.autograd.backward([a, b], [gq, gk])
            torch.cuda.synchronize()
        lines.append("%s, %s %dx%d, one forward + backward:" % (impl, name, batch[0], batch[1]))
        for e in sorted(prof.key_averages(), key=lambda e: -e.device_time_total)[:8]:
            if e.device_time_total > 0:
                lines.append("  %8.1f us  %3d x  %s" % (e.device_time_total, e.count, e.key[:110]))
    return lines


def table(rows):
    out = ["| model | case | impl | fwd ms | fwd+bwd ms | x floor (fwd+bwd) | max err vs float64 | note |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        note = r.get("skipped") or r.get("failed") or ("forward only" if "fwd_bwd_ms" not in r else "")
        f = lambda k, p="%.3f": (p % r[k]) if k in r else "-"   # noqa: E731
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["case"], r["impl"], f("fwd_ms"), f("fwd_bwd_ms"), f("x_floor", "%.2f"),
            f("err_fwd", "%.3g"), note.replace("|", "/")))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, any device: checks the script")
    ap.add_argument("--quick", action="store_true", help="B x S 1x4096, 4x4096, 8x8192 and one packed batch")
    ap.add_argument("--profile", default="4x4096", help="BxS: the GPU kernels of each implementation at this "
                    "case of the first model, printed after the table ('' for none; CUDA only)")
    args = ap.parse_args(argv)
    import torch
    import torch._dynamo
    torch._dynamo.config.cache_size_limit = 256   # one compiled function per case, never eager behind our back
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type != "cuda" and not args.smoke:
        sys.stderr.write("hf_rope: no GPU (use --smoke to check the script on the CPU)\n")
        return 2
    heads = SMOKE_HEADS if args.smoke else HEADS
    shapes, packed = (SMOKE_SHAPES, SMOKE_PACKED) if args.smoke else (SHAPES, PACKED)
    if args.quick and not args.smoke:
        shapes, packed = [SHAPES[0], SHAPES[1], SHAPES[3]], PACKED[:1]
    if args.smoke:
        args.warmup, args.iters = 1, 2
    gen = torch.Generator().manual_seed(0)
    rows = []
    for name in args.models.split(","):
        if name not in MODELS:
            sys.stderr.write("hf_rope: unknown model %r (%s)\n" % (name, ", ".join(MODELS)))
            return 2
        for b in shapes:
            rows += run_case(torch, device, args, name, heads, b, None, gen)
        for lens in packed:
            rows += run_case(torch, device, args, name, heads, None, lens, gen)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    doc = dict(device=torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
               torch=torch.__version__, transformers=__import__("transformers").__version__, rows=rows)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, args.out)
    if device.type == "cuda" and args.profile:
        b, s_ = (int(x) for x in args.profile.split("x"))
        doc["profile"] = profile_case(torch, device, args.models.split(",")[0], heads, (b, s_),
                                      ["hf", "liger", "ropegrad", "ropegrad-pos"], gen)
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.out)
        print("\n".join(doc["profile"]) + "\n")
    print("device: %s\n" % doc["device"])
    print(table(rows))
    bad = [r for r in rows if "failed" in r or (r.get("err_fwd", 0) > 0.05 * math.sqrt(heads["d"]))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
