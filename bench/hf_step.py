# SPDX-License-Identifier: Apache-2.0
"""A Hugging Face training step, stock vs ropegrad (ropegrad.hf.use_ropegrad):
Llama-3-like and Qwen3-like models (random weights, 4 layers, bf16, B=4,
S=4096 by default), timing

  step   one training step: forward, loss, backward (model(...).loss.backward())
  rope   the RoPE work alone, on the model's own modules and tensors' shapes:
         cos/sin (the rotary module) plus apply forward and backward over all
         layers (q and k laid out as the attention makes them)

with CUDA events (median over --iters after --warmup), stock then ropegrad on
the same model and inputs; prints a table and writes JSON (--out).

    python3 bench/hf_step.py --out results/h200-hf-step.json     # on a GPU
    python3 bench/hf_step.py --smoke --out /tmp/hf-step.json           # tiny, CPU is fine: checks the script

Needs torch >= 2 and transformers >= 5 (the device machine's python, or
.venv from scripts/deps.sh with ROPEGRAD_WITH_HF=1) and libropegrad
(ROPEGRAD_LIB). Without CUDA the times are wall-clock (time.perf_counter),
which --smoke is for: a check that the script runs, not a measurement."""

import argparse
import json
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

# name: (model class, config arguments). Llama-3-8B's and Qwen3-8B's layer shapes.
MODELS = {
    "llama": ("LlamaForCausalLM", "LlamaConfig",
              dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                   vocab_size=128256, rope_theta=500000.0)),
    "qwen3": ("Qwen3ForCausalLM", "Qwen3Config",
              dict(hidden_size=4096, intermediate_size=12288, num_attention_heads=32, num_key_value_heads=8,
                   head_dim=128, vocab_size=151936, rope_theta=1e6)),
}
SMOKE = dict(hidden_size=256, intermediate_size=512, num_attention_heads=4, num_key_value_heads=2, vocab_size=1024)


def timer(device, warmup, iters):
    """A function timing fn() (median ms over iters after warmup): CUDA events on a GPU, perf_counter else."""
    import torch

    def run(fn):
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(iters):
            if device.type == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
        return dict(median_ms=statistics.median(times), min_ms=min(times), iters=iters)
    return run


def build(name, args, device, dtype):
    import torch
    import transformers
    cls_name, cfg_name, kw = MODELS[name]
    kw = dict(kw, **(SMOKE if args.smoke else {}))
    if name == "qwen3" and args.smoke:
        kw["head_dim"] = 64
    cfg = getattr(transformers, cfg_name)(num_hidden_layers=args.layers, max_position_embeddings=max(args.seq, 8192),
                                          **kw)
    cfg._attn_implementation = args.attn
    torch.manual_seed(0)
    with torch.device(device):
        model = getattr(transformers, cls_name)(cfg).to(dtype)
    return model.train()


def rope_work(model, x, position_ids, layers, grads):
    """The RoPE work of one step: cos/sin once, then every layer's apply forward, then all backward."""
    import torch
    modeling = sys.modules[type(model).__module__]
    cos, sin = model.model.rotary_emb(x, position_ids)
    outs = []
    for q, k in layers:
        outs += modeling.apply_rotary_pos_emb(q, k, cos, sin)
    torch.autograd.backward(outs, grads)


def rope_inputs(model, args, device, dtype):
    """Per layer q [B,H,S,D] and k [B,Hkv,S,D] as the attention makes them (a
    projection's [B,S,H*D] viewed and transposed), needing grad, and the upstream gradients."""
    import torch
    cfg = model.config
    D = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    B, S = args.batch, args.seq
    layers, grads = [], []
    for _ in range(cfg.num_hidden_layers):
        q = torch.randn(B, S, cfg.num_attention_heads, D, device=device, dtype=dtype).transpose(1, 2).requires_grad_()
        k = torch.randn(B, S, cfg.num_key_value_heads, D, device=device, dtype=dtype).transpose(1, 2).requires_grad_()
        layers.append((q, k))
        grads += [torch.randn_like(q), torch.randn_like(k)]
    return layers, grads


def bench_model(name, args, device, dtype):
    import torch
    import ropegrad.hf
    model = build(name, args, device, dtype)
    gen = torch.Generator(device="cpu").manual_seed(1)
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.seq), generator=gen).to(device)
    pos = torch.arange(args.seq, device=device)[None, :].expand(args.batch, -1)
    x = torch.empty(1, dtype=dtype, device=device)
    layers, grads = rope_inputs(model, args, device, dtype)
    time_it = timer(device, args.warmup, args.iters)

    def step():
        model.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss

    def rope():
        for q, k in layers:
            q.grad = k.grad = None
        rope_work(model, x, pos, layers, grads)

    result = {}
    for mode in ("stock", "ropegrad"):
        switch = ropegrad.hf.use_ropegrad(model) if mode == "ropegrad" else None
        try:
            loss = float(step().detach())
            result[mode] = dict(loss=loss, step=time_it(step), rope=time_it(rope))
        finally:
            if switch:
                switch.remove()
    for part in ("step", "rope"):
        result["speedup_" + part] = result["stock"][part]["median_ms"] / result["ropegrad"][part]["median_ms"]
    result["step_change_pct"] = 100.0 * (result["ropegrad"]["step"]["median_ms"] / result["stock"]["step"]["median_ms"] - 1)
    del model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON results file")
    ap.add_argument("--models", default="llama,qwen3")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    ap.add_argument("--attn", default="sdpa", help="transformers attention implementation (sdpa, eager, ...)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--smoke", action="store_true", help="tiny models and sizes (B=2, S=64, 2 iterations): checks the "
                    "script runs, on the CPU too")
    args = ap.parse_args(argv)
    if args.smoke:
        args.batch, args.seq, args.warmup, args.iters = 2, 64, 1, 2
    import torch
    import transformers
    from ropegrad import _lib
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type != "cuda" and not args.smoke:
        print("hf_step: no CUDA device; the figures are for a GPU (use --smoke to check the script on the CPU)")
        return 2
    dtype = getattr(torch, args.dtype)
    res = dict(device=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
               timer="cuda events" if device.type == "cuda" else "perf_counter", torch=torch.__version__,
               transformers=transformers.__version__, library=_lib.library_path(),
               args=dict(vars(args), out=None), models={})
    for name in args.models.split(","):
        res["models"][name] = bench_model(name, args, device, dtype)
    print("| model | part | stock ms | ropegrad ms | speedup |")
    print("|---|---|---|---|---|")
    for name, r in res["models"].items():
        for part in ("rope", "step"):
            print("| %s | %s | %.3f | %.3f | %.2fx |" % (name, part, r["stock"][part]["median_ms"],
                                                       r["ropegrad"][part]["median_ms"], r["speedup_" + part]))
    for name, r in res["models"].items():
        print("%s: step %+.2f%% with ropegrad; loss stock %.5f, ropegrad %.5f" % (
            name, r["step_change_pct"], r["stock"]["loss"], r["ropegrad"]["loss"]))
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
