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
  ropegrad      ropegrad's rotary module (ropegrad.hf.rotary_tables: L1/012 on the stock module's
                frequencies) + apply (L1/088, backward L1/068)
  ropegrad-pos  ropegrad's apply from positions: no cos/sin table at all
  ropegrad-thd  packed batches only: ropegrad's thd apply (L1/088's rotation on [T,H,D] rows) from one
                table of the longest sequence's positions, each token's row picked by cu_seqlens

Cases: Qwen3-4B's and Llama-3-8B's attention heads (32 q heads, 8 kv heads, head_dim 128; rope
theta 1e6 and 5e5, Llama-3.1's llama3 frequency scaling), B x S from 1 x 4096 to 8 x 8192, and
packed batches (B 1, sequences of different lengths back to back, positions restarting at each).
q and k are laid out as the attention makes them ([B,S,H,D] projections viewed as [B,H,S,D]).

What is timed is what a training step spends on the layer, nothing more: the gradients are taken
with torch.autograd.grad (nothing accumulates into a leaf's .grad), and each implementation's
upstream gradients are laid out as the attention's backward makes them. SDPA's backward returns
grad_q and grad_k in the memory layout of the q and k it was given (the CPU flash kernel does; the
flash kernels allocate them like their inputs), here the RoPE outputs; so each implementation's
gradients are laid out like its own outputs (torch.empty_like), and an implementation whose outputs
keep the projection's [B,S,H,D] memory gets [B,S,H,D] gradients. The script checks this on the
device it runs on (SDPA with enable_gqa and is_causal, as transformers calls it for a causal step
without a padding mask) and prints what it found ("attention backward ..."); where that backward
returns contiguous gradients instead, every implementation gets contiguous ones.

Each time is the median over --iters of CUDA events around one forward + backward (or forward
only), after --warmup: one call on an idle GPU, its host time (Python, autograd, launches) included
wherever the GPU waits for it. "Back to back" is the time a call when ten are issued without waiting
(the median over --rounds), as inside a training step, where the host queues the layer's kernels while
the GPU still runs earlier work: the GPU's time a call, or the host's where that is the longer. The floor is a copy kernel moving the same bytes as an ideal apply (read q
and k, write their outputs; backward the same for the gradients; no table), timed the same way.
Per row: the bytes an ideal apply moves (forward; forward + backward is twice that), the achieved
GB/s of the forward and of forward + backward, and "% of floor": the copy's time over the
implementation's (forward + backward, or forward for forward-only implementations), i.e. its share
of the bandwidth a copy of those bytes reaches; "% of floor back to back" the same with both the copy
and the implementation timed back to back. The device's copy bandwidth (one copy of 1 GiB) is
printed too. Every output and gradient is checked against float64 (max abs error; the gradients of
the float64 rotation by minus the angle), the outputs also against the stock model's.

--profile BxS[,BxS...]: torch.profiler over a few forward + backward of each implementation at each
such case of the first model: the summed kernel time per step beside the step's CUDA-event time (the rest is
launch and host time between kernels), and the kernels by time.

    python3 bench/hf_rope.py --out results/ops/hf-rope.json              # on a GPU
    python3 bench/hf_rope.py --smoke --out /tmp/hf-rope.json             # tiny, CPU: checks the script

Prints a markdown table last."""

import argparse
import json
import math
import os
import re
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


BACK_TO_BACK = 10   # calls a round of the back-to-back timing


def back_to_back_timer(torch, device, warmup, rounds):
    """fn -> ms a call when BACK_TO_BACK calls are issued without waiting between them (the host
    queues each while the GPU runs the previous ones, as in a training step whose other layers keep
    the GPU busy): the median over `rounds` of one round's CUDA-event time over BACK_TO_BACK."""
    from hf_step import timer as step_timer
    run = step_timer(device, warmup, rounds)

    def time_it(fn):
        def calls():
            for _ in range(BACK_TO_BACK):
                fn()
        return run(calls)["median_ms"] / BACK_TO_BACK
    return time_it


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
    """q, k ([B,H,S,D] views of [B,S,H,D]), the upstream gradients' values (laid out per
    implementation by grad_like), position ids [B,S] (restarting at each packed sequence), and
    cu_seqlens (None unless packed)."""
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


def attention_grad_layout(torch, device):
    """How the attention's backward lays out grad_q and grad_k, measured here: SDPA (is_causal,
    enable_gqa: what transformers calls for a causal step without a padding mask) on bf16 q, k, v
    in the projections' [B,S,H,D] memory viewed as [B,H,S,D]. Returns (mode, text): mode "input"
    when both gradients have their input's strides (each implementation's gradients are then laid
    out like its outputs), "contiguous" when both are contiguous [B,H,S,D], else "input" with the
    strides found in the text."""
    import torch.nn.functional as F
    B, S, H, Hkv, D = 2, 256, 8, 2, 128
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(B, S, h, D, generator=gen).to(device, torch.bfloat16).transpose(1, 2).requires_grad_()
               for h in (H, Hkv, Hkv))
    qa, ka = q * 1, k * 1   # the RoPE outputs (non-leaf, in q's and k's layout)
    o = F.scaled_dot_product_attention(qa, ka, v, is_causal=True, enable_gqa=True)
    # the output's gradient as o_proj's backward gives it: in o's layout ([B,S,H,D] memory)
    gq, gk = torch.autograd.grad(o, (qa, ka), torch.empty_like(o).normal_())
    kernel = type(o.grad_fn).__name__
    same = gq.stride() == qa.stride() and gk.stride() == ka.stride()
    contiguous = gq.is_contiguous() and gk.is_contiguous()
    mode = "contiguous" if contiguous and not same else "input"
    text = "attention backward (%s, %s): grad_q strides %s for q strides %s, grad_k %s for k %s: %s" % (
        kernel, device.type, tuple(gq.stride()), tuple(qa.stride()), tuple(gk.stride()), tuple(ka.stride()),
        "each gradient in its input's layout" if same else
        "contiguous gradients" if contiguous else "neither its input's layout nor contiguous (taken as input's)")
    return mode, text


def grad_like(torch, mode, out, values):
    """The upstream gradient of an output `out` as the attention's backward lays it out (mode of
    attention_grad_layout), holding `values`."""
    g = torch.empty_like(out) if mode == "input" else torch.empty(out.shape, dtype=out.dtype, device=out.device)
    return g.copy_(values)


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
            # bshd: q's and k's [B,S,H,D] memory as it is (no copy); one frequency row per token
            freqs = (pos[0].float()[:, None] * inv_freq[None, :])
            emb = torch.cat((freqs, freqs), dim=-1)[:, None, None, :]        # [S,1,1,D]
            return (te_apply(q.transpose(1, 2), emb, tensor_format="bshd", fused=True).transpose(1, 2),
                    te_apply(k.transpose(1, 2), emb, tensor_format="bshd", fused=True).transpose(1, 2))
        impls["te"] = (te, True)
    except ImportError as e:
        impls["te"] = "TransformerEngine not installed (%s)" % e
    try:
        import ropegrad.torch as rgt
        import ropegrad.hf as rghf

        def tables(q, pos):
            # What ropegrad.hf.use_ropegrad's rotary module does.
            return rghf.rotary_tables(q, pos, inv_freq, scale)

        def rg_tables(q, k, pos, cu):
            cos, sin = tables(q, pos)
            return rgt.apply_rotary_pos_emb(q, k, cos, sin)
        impls["ropegrad"] = (rg_tables, True)
        pos_fn = getattr(rgt, "rope_apply_pos", None)
        if pos_fn is None:
            impls["ropegrad-pos"] = "this ropegrad has no apply from positions"
        else:
            impls["ropegrad-pos"] = (lambda q, k, pos, cu: pos_fn(q, k, pos, inv_freq, scale), True)
        thd_fn = getattr(rgt, "rope_apply_thd", None)
        longest = {}   # cu_seqlens -> its longest sequence (read once, before the timing)

        def rg_thd(q, k, pos, cu):
            # Packed thd: q, k as [T,H,D] (the attention's [1,T,H,D] memory), one table of the longest
            # sequence's positions (ropegrad's rotary module, as rg_tables), rows picked by cu_seqlens.
            if id(cu) not in longest:
                longest[id(cu)] = int((cu[1:] - cu[:-1]).max())
            cos, sin = tables(q, torch.arange(longest[id(cu)], device=q.device)[None])
            # squeeze, not [0]: a select's backward writes a zero tensor and copies the gradient in
            qo, ko = thd_fn(q.transpose(1, 2).squeeze(0), k.transpose(1, 2).squeeze(0), cos[0], sin[0],
                            cu_seqlens=cu)
            return qo[None].transpose(1, 2), ko[None].transpose(1, 2)
        impls["ropegrad-thd"] = (rg_thd, True) if thd_fn else "this ropegrad has no thd apply"
    except (ImportError, OSError) as e:
        impls["ropegrad"] = impls["ropegrad-pos"] = impls["ropegrad-thd"] = "ropegrad not importable (%s)" % e
    return impls, inv_freq, scale


def reference(torch, q, k, gq, gk, pos, inv_freq, scale):
    """float64 q_out, k_out from the float32 freqs products (as every implementation forms them),
    and q's and k's gradients for the upstream gradients gq, gk (the rotation by minus the angle)."""
    freqs = (pos.float()[:, :, None] * inv_freq[None, None, :]).double()
    emb = torch.cat((freqs, freqs), dim=-1)[:, None]
    cos, sin = emb.cos() * scale, emb.sin() * scale

    def rot(x):
        x = x.double()
        h = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * sin

    def rot_t(g):   # the transpose of rot: g * cos + rotate_half^T(g * sin)
        gs = g.double() * sin
        h = g.shape[-1] // 2
        return g.double() * cos + torch.cat((gs[..., h:], -gs[..., :h]), dim=-1)
    return rot(q), rot(k), rot_t(gq), rot_t(gk)


def floor_ms(torch, time_it, q, k):
    """A copy moving exactly an ideal apply's bytes (read q and k, write two outputs)."""
    src = torch.cat((q.reshape(-1), k.reshape(-1)))
    dst = torch.empty_like(src)
    return time_it(lambda: dst.copy_(src))


def copy_gbps(torch, device, time_it, smoke):
    """The device's copy bandwidth: GB/s (1e9 bytes read + written) of one copy of 1 GiB (1 MiB with --smoke)."""
    n = (1 << 20) if smoke else (1 << 30)
    src = torch.empty(n, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    ms = time_it(lambda: dst.copy_(src))
    del src, dst
    return 2 * n / (ms * 1e-3) / 1e9


_IMPLS = {}


def model_impls(torch, device, name, heads):
    """implementations() of one model, made once (one compiled function for all its cases)."""
    if name not in _IMPLS:
        cfg, rotary_cls, modeling = model_parts(name, heads, 2 * 8192)
        _IMPLS[name] = implementations(torch, cfg, rotary_cls, modeling, device)
    return _IMPLS[name]


def fwd_bwd_fn(torch, fn, q, k, pos, cu, gq0, gk0, mode):
    """One forward + backward as a training step runs it: the gradients for q and k by
    torch.autograd.grad (no accumulation into .grad), the upstream gradients laid out as the
    attention's backward makes them for this implementation's outputs."""
    qo, ko = fn(q, k, pos, cu)
    gq, gk = grad_like(torch, mode, qo, gq0), grad_like(torch, mode, ko, gk0)
    del qo, ko

    def run():
        a, b = fn(q, k, pos, cu)
        return torch.autograd.grad((a, b), (q, k), (gq, gk))
    return run


def run_case(torch, device, args, name, heads, batch, lens, gen, mode):
    impls, inv_freq, scale = model_impls(torch, device, name, heads)
    q0, k0, gq0, gk0, pos, cu = case_inputs(torch, device, heads, batch, lens, gen)
    time_it = timer(torch, device, args.warmup, args.iters)
    time_b2b = back_to_back_timer(torch, device, 1, args.rounds)
    rq, rk, rgq, rgk = reference(torch, q0, k0, gq0, gk0, pos, inv_freq, scale)
    fl = floor_ms(torch, time_it, q0, k0)
    fl_b2b = floor_ms(torch, time_b2b, q0, k0)
    moved = 2 * (q0.numel() + k0.numel()) * q0.element_size()   # read q, k; write q_out, k_out
    rows = []
    stock = None
    for impl, v in impls.items():
        row = dict(model=name, case=("packed " + "+".join(map(str, lens))) if lens else "%dx%d" % batch,
                   tokens=q0.shape[0] * q0.shape[2], impl=impl, floor_ms=fl, floor_ms_b2b=fl_b2b, bytes_fwd=moved)
        if isinstance(v, str) or (impl == "ropegrad-thd" and cu is None):
            row["skipped"] = v if isinstance(v, str) else "packed batches only (thd layout)"
            rows.append(row)
            continue
        fn, has_bwd = v
        q, k = q0.detach().clone().requires_grad_(), k0.detach().clone().requires_grad_()
        try:
            qo, ko = fn(q, k, pos, cu)
            qo, ko = qo.detach(), ko.detach()
            row["err_fwd"] = max(float((qo.double() - rq).abs().max()), float((ko.double() - rk).abs().max()))
            if stock is None:
                stock = (qo.detach(), ko.detach())
            else:
                row["vs_stock"] = max(float((qo.float() - stock[0].float()).abs().max()),
                                      float((ko.float() - stock[1].float()).abs().max()))
            del qo, ko

            def fwd():
                with torch.no_grad():
                    fn(q, k, pos, cu)
            row["fwd_ms"] = time_it(fwd)
            row["gbps_fwd"] = moved / (row["fwd_ms"] * 1e-3) / 1e9
            if has_bwd:
                run = fwd_bwd_fn(torch, fn, q, k, pos, cu, gq0, gk0, mode)
                dq, dk = run()
                row["err_bwd"] = max(float((dq.double() - rgq).abs().max()), float((dk.double() - rgk).abs().max()))
                del dq, dk
                row["fwd_bwd_ms"] = time_it(run)
                row["gbps_fwd_bwd"] = 2 * moved / (row["fwd_bwd_ms"] * 1e-3) / 1e9
                row["pct_floor"] = 100.0 * 2 * fl / row["fwd_bwd_ms"]
                row["fwd_bwd_ms_b2b"] = time_b2b(run)
                row["pct_floor_b2b"] = 100.0 * 2 * fl_b2b / row["fwd_bwd_ms_b2b"]
            else:
                row["pct_floor_fwd"] = 100.0 * fl / row["fwd_ms"]
        except Exception as e:   # noqa: BLE001 -- a failing implementation is a result row
            row["failed"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
        rows.append(row)
    return rows


def profile_case(torch, device, args, name, heads, batch, impl_names, gen, mode):
    """Where the time of one forward + backward goes at one case, per implementation named:
    torch.profiler over PROFILE_STEPS steps gives the summed kernel time per step, set beside the
    step's CUDA-event median (the rest: launches and host work between kernels), and the kernels
    by time. Returns (printed lines, a list of dicts for the JSON)."""
    from torch.profiler import ProfilerActivity, profile
    impls, _, _ = model_impls(torch, device, name, heads)
    q0, k0, gq0, gk0, pos, cu = case_inputs(torch, device, heads, batch, None, gen)
    time_it = timer(torch, device, args.warmup, args.iters)
    lines, out = [], []
    for impl in impl_names:
        v = impls.get(impl)
        if not isinstance(v, tuple) or not v[1]:
            lines.append("%s: %s" % (impl, v if isinstance(v, str) else "no backward" if v else "unknown"))
            continue
        q, k = q0.detach().clone().requires_grad_(), k0.detach().clone().requires_grad_()
        run = fwd_bwd_fn(torch, v[0], q, k, pos, cu, gq0, gk0, mode)
        total = time_it(run)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(PROFILE_STEPS):
                run()
            torch.cuda.synchronize()
        kernels = sorted(((e.device_time_total / PROFILE_STEPS, e.count // PROFILE_STEPS, e.key)
                          for e in prof.key_averages() if e.device_time_total > 0), key=lambda t: -t[0])
        kernel_us = sum(t[0] for t in kernels)
        out.append(dict(impl=impl, case="%s %dx%d" % (name, batch[0], batch[1]), total_ms=total,
                        kernel_ms=kernel_us / 1e3, kernels=[dict(us=u, calls=c, name=n) for u, c, n in kernels]))
        lines.append("%s, %s %dx%d, one forward + backward: %.3f ms (CUDA events), kernels %.3f ms (%.0f%%), "
                     "between kernels %.3f ms" % (impl, name, batch[0], batch[1], total, kernel_us / 1e3,
                                                  100.0 * kernel_us / 1e3 / total, total - kernel_us / 1e3))
        for u, c, n in kernels[:8]:
            lines.append("  %8.1f us  %3d x  %s" % (u, c, n[:110]))
    return lines, out


PROFILE_STEPS = 5


def table(rows):
    out = ["| model | case | impl | fwd ms | fwd+bwd ms | MB moved (fwd) | fwd GB/s | fwd+bwd GB/s | % of floor "
           "| fwd+bwd ms back to back | % of floor back to back | max err vs float64: fwd, bwd | note |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        note = r.get("skipped") or r.get("failed") or ("forward only: % of floor is the forward's"
                                                       if "fwd_bwd_ms" not in r and "fwd_ms" in r else "")
        f = lambda k, p="%.3f": (p % r[k]) if k in r else "-"   # noqa: E731
        pct = f("pct_floor", "%.0f%%") if "pct_floor" in r else f("pct_floor_fwd", "%.0f%%")
        out.append("| %s | %s | %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["case"], r["impl"], f("fwd_ms"), f("fwd_bwd_ms"), r["bytes_fwd"] / 1e6,
            f("gbps_fwd", "%.0f"), f("gbps_fwd_bwd", "%.0f"), pct, f("fwd_bwd_ms_b2b"), f("pct_floor_b2b", "%.0f%%"),
            f("err_fwd", "%.3g") + ", " + f("err_bwd", "%.3g"), note.replace("|", "/")))
    return "\n".join(out)


def peer_versions():
    """The installed version of each peer package (None where it is not installed)."""
    from importlib import metadata
    found = {}
    for dist in ("liger_kernel", "flashinfer-python", "transformer_engine", "transformer_engine_torch"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = None
    return found


def write_json(doc, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7, help="rounds of the back-to-back timing (each %d calls)"
                    % BACK_TO_BACK)
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, any device: checks the script")
    ap.add_argument("--quick", action="store_true", help="B x S 1x4096, 4x4096, 8x8192 and one packed batch")
    ap.add_argument("--profile", default="4x4096,8x8192", help="BxS[,BxS...]: kernel time against total of each "
                    "implementation at these cases of the first model, printed before the table ('' for none; "
                    "CUDA only)")
    args = ap.parse_args(argv)
    if args.profile and not all(re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", c) for c in args.profile.split(",")):
        sys.stderr.write("hf_rope: --profile takes BxS cases separated by commas, got %r\n" % args.profile)
        return 2
    if args.rounds < 1 or args.iters < 1:
        sys.stderr.write("hf_rope: --rounds and --iters must be at least 1\n")
        return 2
    given = list(argv if argv is not None else sys.argv[1:])
    command = " ".join(["python3 bench/hf_rope.py"] + [a for i, a in enumerate(given) if not (
        a == "--out" or a.startswith("--out=") or (i and given[i - 1] == "--out"))])   # where it wrote is no part of it
    import torch
    import torch._dynamo
    torch._dynamo.config.cache_size_limit = 256   # one compiled function per case, never eager behind our back
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type != "cuda" and not args.smoke:
        sys.stderr.write("hf_rope: no GPU (use --smoke to check the script on the CPU)\n")
        return 2
    models = args.models.split(",")
    bad_model = [m for m in models if m not in MODELS]
    if bad_model:
        sys.stderr.write("hf_rope: unknown model %r (%s)\n" % (bad_model[0], ", ".join(MODELS)))
        return 2
    heads = SMOKE_HEADS if args.smoke else HEADS
    shapes, packed = (SMOKE_SHAPES, SMOKE_PACKED) if args.smoke else (SHAPES, PACKED)
    if args.quick and not args.smoke:
        shapes, packed = [SHAPES[0], SHAPES[1], SHAPES[3]], PACKED[:1]
    if args.smoke:
        args.warmup, args.iters, args.rounds = 1, 2, 2
    gen = torch.Generator().manual_seed(0)
    mode, layout_text = attention_grad_layout(torch, device)
    gbps = copy_gbps(torch, device, timer(torch, device, args.warmup, args.iters), args.smoke)
    rows = []
    for name in models:
        for b in shapes:
            rows += run_case(torch, device, args, name, heads, b, None, gen, mode)
        for lens in packed:
            rows += run_case(torch, device, args, name, heads, None, lens, gen, mode)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    doc = dict(device=torch.cuda.get_device_name() if device.type == "cuda" else "cpu", command=command,
               torch=torch.__version__, transformers=__import__("transformers").__version__,
               peers=peer_versions(), copy_gbps=gbps, attention_grad_layout=dict(mode=mode, text=layout_text),
               rows=rows)
    write_json(doc, args.out)
    if device.type == "cuda" and args.profile:
        doc["profile"] = []
        for case in args.profile.split(","):
            b, s_ = (int(x) for x in case.split("x"))
            lines, found = profile_case(torch, device, args, models[0], heads, (b, s_),
                                        ["hf", "compile", "liger", "te", "ropegrad", "ropegrad-pos"], gen, mode)
            doc["profile"] += found
            write_json(doc, args.out)
            print("\n".join(lines) + "\n")
            torch.cuda.empty_cache()
    print("command: %s" % command)
    print("peers: %s" % ", ".join("%s %s" % (k, v or "not installed") for k, v in doc["peers"].items()))
    print(layout_text)
    print("copy bandwidth: %.0f GB/s (one copy of %s, bytes read + written)" % (gbps, "1 MiB" if args.smoke else "1 GiB"))
    print("device: %s\n" % doc["device"])
    print(table(rows))
    bad = [r for r in rows if "failed" in r or max(r.get("err_fwd", 0), r.get("err_bwd", 0)) > 0.05 * math.sqrt(heads["d"])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
