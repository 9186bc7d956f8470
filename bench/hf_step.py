# SPDX-License-Identifier: Apache-2.0
"""A Hugging Face training step with three RoPE implementations: stock
transformers, ropegrad (ropegrad.hf.use_ropegrad: from positions, the default
path) and Liger-Kernel's rope patch (apply_liger_kernel_to_llama /
apply_liger_kernel_to_qwen3 with rope=True and every other kernel off), on
Llama-3-8B-shaped and Qwen3-8B-shaped models (random weights, 4 layers, bf16,
B=4, S=4096 by default), timing

  step   one training step: forward, loss, backward (model(...).loss.backward())
  rope   the RoPE work alone, on the model's own modules and its tensors'
         shapes: cos/sin (the rotary module) plus apply forward and backward
         over all layers, q and k laid out as the attention makes them, the
         gradients taken by torch.autograd.grad and laid out like the outputs
         (as SDPA's backward returns them; see bench/hf_rope.py)

Step times differ by a few percent between the arms, so they are measured
interleaved on one model and one set of inputs: --rounds rounds, each running
every arm once (the order rotating from round to round: ABC, BCA, CAB, ...),
an arm's turn being one untimed step after switching it on, then --per-round
steps timed with CUDA events, then switching it off. Per round, the ratio of
two arms' median step times; reported: the median of those ratios over the
rounds and a distribution-free interval for it (order statistics of the
ratios; its coverage, from the binomial distribution, is printed), for
ropegrad/Liger, ropegrad/stock and Liger/stock. The loss of each arm's first
step (same weights, same inputs) must equal stock's within 2^-7 relative
(bf16 logits); a larger difference fails the run (exit 1).

The arms never leak into each other: ropegrad's switch is removed after each
turn (Switch.remove()); Liger's patch replaces one module-level name of the
modeling module (apply_rotary_pos_emb), so its turn saves that module's
namespace, checks that the patch changed nothing else (and refuses to run
Liger's arm if it did), and restores it; every turn starts by checking that
the modeling module is stock.

    python3 bench/hf_step.py --out results/ops/h200-hf-step.json     # on a GPU
    python3 bench/hf_step.py --smoke --out /tmp/hf-step.json          # tiny, CPU is fine: checks the script

Needs torch >= 2 and transformers >= 5 (the device machine's python, or
.venv from scripts/deps.sh with ROPEGRAD_WITH_HF=1), libropegrad (ROPEGRAD_LIB)
and, for the Liger arm, liger_kernel importable and a CUDA device (the arm is
skipped, with the reason, otherwise). Without CUDA the times are wall-clock
(time.perf_counter), which --smoke is for: a check that the script runs, not a
measurement."""

import argparse
import json
import math
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

# name: (model class, config class, config arguments, Liger's patch function). Llama-3-8B's and Qwen3-8B's layer shapes.
MODELS = {
    "llama": ("LlamaForCausalLM", "LlamaConfig",
              dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                   vocab_size=128256, rope_theta=500000.0), "apply_liger_kernel_to_llama"),
    "qwen3": ("Qwen3ForCausalLM", "Qwen3Config",
              dict(hidden_size=4096, intermediate_size=12288, num_attention_heads=32, num_key_value_heads=8,
                   head_dim=128, vocab_size=151936, rope_theta=1e6), "apply_liger_kernel_to_qwen3"),
}
SMOKE = dict(hidden_size=256, intermediate_size=512, num_attention_heads=4, num_key_value_heads=2, vocab_size=1024)
ARMS = ("stock", "ropegrad", "liger")
RATIOS = (("ropegrad", "liger"), ("ropegrad", "stock"), ("liger", "stock"))
LOSS_RTOL = 2.0 ** -7


def timer(device, warmup, iters):
    """A function timing fn() (median ms over iters after warmup): CUDA events on a GPU, perf_counter else."""

    def run(fn):
        for _ in range(warmup):
            fn()
        times = [time_once(device, fn) for _ in range(iters)]
        return dict(median_ms=statistics.median(times), min_ms=min(times), iters=iters)
    return run


def time_once(device, fn):
    """ms of one fn(): CUDA events on a GPU (synchronised at the end), perf_counter else."""
    import torch
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def median_interval(xs, level=0.95):
    """(median, lo, hi, coverage): a distribution-free interval for the median of xs from its
    order statistics, the narrowest symmetric pair (x_(j), x_(n+1-j)) whose coverage
    P(x_(j) <= median <= x_(n+1-j)) = 1 - 2 P(Bin(n, 1/2) < j) is at least `level`, or the
    range (j = 1) when no pair reaches it."""
    s = sorted(xs)
    n = len(s)
    cdf = lambda j: sum(math.comb(n, i) for i in range(j)) / 2.0 ** n   # noqa: E731  P(Bin(n,1/2) < j)
    j = 1
    while j + 1 <= (n + 1) // 2 and 1 - 2 * cdf(j + 1) >= level:
        j += 1
    return statistics.median(s), s[j - 1], s[n - j], 1 - 2 * cdf(j)


def build(name, args, device, dtype):
    import torch
    import transformers
    cls_name, cfg_name, kw, _ = MODELS[name]
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


class LigerRope:
    """Liger-Kernel's rope patch of one modeling module, on and off: on() calls Liger's
    apply_liger_kernel_to_<model>(rope=True, everything else False) and checks that it changed
    nothing but the module's apply_rotary_pos_emb; off() restores the module's namespace."""

    def __init__(self, name, modeling):
        self.modeling, self.saved = modeling, None
        from liger_kernel.transformers import monkey_patch
        self.patch = getattr(monkey_patch, MODELS[name][3])

    def on(self):
        before = dict(vars(self.modeling))
        self.patch(rope=True, cross_entropy=False, fused_linear_cross_entropy=False, rms_norm=False, swiglu=False)
        after = vars(self.modeling)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) is not after.get(k))
        self.saved = before
        if changed != ["apply_rotary_pos_emb"]:
            self.off()
            raise RuntimeError("Liger's %s changed %s of %s, not only apply_rotary_pos_emb"
                               % (self.patch.__name__, changed, self.modeling.__name__))

    def off(self):
        if self.saved is None:
            return
        names = vars(self.modeling)
        for k in [k for k in names if k not in self.saved]:
            del names[k]
        for k, v in self.saved.items():
            if names.get(k) is not v:
                names[k] = v
        self.saved = None


def liger_arm(name, modeling, device):
    """A LigerRope for the model, or the reason Liger's arm cannot run here. The patch is tried
    on and off once (also on the CPU, where the arm itself cannot run: Liger's kernels are Triton's)."""
    try:
        lg = LigerRope(name, modeling)
    except Exception as e:   # noqa: BLE001 -- any failure to import it is the arm's skip reason
        return "Liger-Kernel not importable (%s: %s)" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
    try:
        lg.on()
    except Exception as e:   # noqa: BLE001 -- a patch that does more than the rope (or fails) is not run
        return "Liger-Kernel's patch: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
    lg.off()
    if device.type != "cuda":
        return "Liger-Kernel runs on CUDA only (its kernels are Triton's); its patch was checked on and off"
    return lg


def rope_inputs(model, args, device, dtype):
    """Per layer q [B,H,S,D] and k [B,Hkv,S,D] as the attention makes them (a
    projection's [B,S,H*D] viewed and transposed), needing grad, and the upstream gradients' values."""
    import torch
    cfg = model.config
    D = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    B, S = args.batch, args.seq
    layers, grads = [], []
    for _ in range(cfg.num_hidden_layers):
        q = torch.randn(B, S, cfg.num_attention_heads, D, device=device, dtype=dtype).transpose(1, 2).requires_grad_()
        k = torch.randn(B, S, cfg.num_key_value_heads, D, device=device, dtype=dtype).transpose(1, 2).requires_grad_()
        layers.append((q, k))
        grads += [torch.randn(q.shape, device=device, dtype=dtype), torch.randn(k.shape, device=device, dtype=dtype)]
    return layers, grads


def rope_fn(model, x, position_ids, layers, grad_values):
    """The RoPE work of one step as a function: cos/sin once, every layer's apply forward, then
    the gradients of all q and k (torch.autograd.grad), the upstream gradients laid out like the
    outputs (SDPA's backward returns them in its inputs' layout). Uses the modeling module's
    apply_rotary_pos_emb and the rotary module as they are when called (whichever arm is on)."""
    import torch
    modeling = sys.modules[type(model).__module__]

    def forward():
        cos, sin = model.model.rotary_emb(x, position_ids)
        outs = []
        for q, k in layers:
            outs += modeling.apply_rotary_pos_emb(q, k, cos, sin)
        return outs
    outs = forward()
    grads = [torch.empty_like(o).copy_(g) for o, g in zip(outs, grad_values)]
    del outs
    inputs = [t for qk in layers for t in qk]

    def run():
        torch.autograd.grad(forward(), inputs, grads)
    return run


def bench_model(name, args, device, dtype):
    import torch
    import ropegrad.hf
    model = build(name, args, device, dtype)
    modeling = sys.modules[type(model).__module__]
    stock_apply = modeling.apply_rotary_pos_emb
    gen = torch.Generator(device="cpu").manual_seed(1)
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.seq), generator=gen).to(device)
    pos = torch.arange(args.seq, device=device)[None, :].expand(args.batch, -1)
    x = torch.empty(1, dtype=dtype, device=device)
    layers, grad_values = rope_inputs(model, args, device, dtype)
    rope_timer = timer(device, args.warmup, args.iters)

    liger = liger_arm(name, modeling, device)
    state = {}

    def on(arm):
        if modeling.apply_rotary_pos_emb is not stock_apply or "forward" in vars(model.model.rotary_emb):
            raise RuntimeError("%s: the modeling module is not stock before %s's turn" % (name, arm))
        if arm == "ropegrad":
            state["switch"] = ropegrad.hf.use_ropegrad(model)
        elif arm == "liger":
            liger.on()

    def off(arm):
        if arm == "ropegrad":
            state.pop("switch").remove()
        elif arm == "liger":
            liger.off()

    def step():
        model.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss

    arms = [a for a in ARMS if a != "liger" or not isinstance(liger, str)]
    result = {a: dict(step_ms=[], round_median_ms=[]) for a in arms}
    if isinstance(liger, str):
        result["liger"] = dict(skipped=liger)
    for arm in arms:   # warm-up, the loss of the first step, and the RoPE work alone
        on(arm)
        try:
            result[arm]["loss"] = float(step().detach())
            for _ in range(args.warmup):
                step()
            result[arm]["rope"] = rope_timer(rope_fn(model, x, pos, layers, grad_values))
            if arm == "ropegrad":
                result[arm]["path"] = state["switch"].path
        finally:
            off(arm)
    for r in range(args.rounds):   # interleaved: ABC, BCA, CAB, ...
        for arm in arms[r % len(arms):] + arms[:r % len(arms)]:
            on(arm)
            try:
                step()
                times = [time_once(device, step) for _ in range(args.per_round)]
            finally:
                off(arm)
            result[arm]["step_ms"] += times
            result[arm]["round_median_ms"].append(statistics.median(times))
    for arm in arms:
        t = result[arm]["step_ms"]
        result[arm]["step"] = dict(median_ms=statistics.median(t), min_ms=min(t), iters=len(t))
        result[arm]["loss_rel_vs_stock"] = abs(result[arm]["loss"] / result["stock"]["loss"] - 1)
    result["ratios"] = {}
    for a, b in RATIOS:
        if a in arms and b in arms:
            per_round = [x / y for x, y in zip(result[a]["round_median_ms"], result[b]["round_median_ms"])]
            med, lo, hi, cov = median_interval(per_round)
            result["ratios"]["%s/%s" % (a, b)] = dict(median=med, lo=lo, hi=hi, coverage=cov, rounds=len(per_round),
                                                    per_round=per_round)
    result["speedup_step"] = result["stock"]["step"]["median_ms"] / result["ropegrad"]["step"]["median_ms"]
    result["speedup_rope"] = result["stock"]["rope"]["median_ms"] / result["ropegrad"]["rope"]["median_ms"]
    result["step_change_pct"] = 100.0 * (result["ratios"]["ropegrad/stock"]["median"] - 1)
    del model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


def report(res):
    """The printed table and summary lines."""
    out = ["| model | arm | step ms (median) | step ms (min) | steps | rope ms | loss | loss vs stock |",
           "|---|---|---|---|---|---|---|---|"]
    for name, r in res["models"].items():
        for arm in ARMS:
            a = r[arm]
            if "skipped" in a:
                out.append("| %s | %s | - | - | - | - | - | skipped: %s |" % (name, arm, a["skipped"]))
                continue
            out.append("| %s | %s | %.2f | %.2f | %d | %.3f | %.5f | %.1e |" % (
                name, arm, a["step"]["median_ms"], a["step"]["min_ms"], a["step"]["iters"], a["rope"]["median_ms"],
                a["loss"], a["loss_rel_vs_stock"]))
    out.append("")
    for name, r in res["models"].items():
        for key, q in r["ratios"].items():
            out.append("%s: step %s %.4f [%.4f, %.4f] (median of %d per-round ratios; interval coverage %.1f%%), "
                       "%+.2f%%" % (name, key, q["median"], q["lo"], q["hi"], q["rounds"], 100 * q["coverage"],
                                    100 * (q["median"] - 1)))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON results file")
    ap.add_argument("--models", default="llama,qwen3")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    ap.add_argument("--attn", default="sdpa", help="transformers attention implementation (sdpa, eager, ...)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps per arm before the rounds (and RoPE-work warm-up)")
    ap.add_argument("--iters", type=int, default=20, help="timed repetitions of the RoPE work alone")
    ap.add_argument("--rounds", type=int, default=10, help="interleaved rounds of the step (each arm once per round)")
    ap.add_argument("--per-round", type=int, default=3, help="timed steps per arm and round")
    ap.add_argument("--smoke", action="store_true", help="tiny models and sizes (B=2, S=64, 2 rounds of 1 step): "
                    "checks the script runs, on the CPU too")
    args = ap.parse_args(argv)
    for opt in ("layers", "batch", "seq", "iters", "rounds", "per_round"):
        if getattr(args, opt) < 1:
            ap.error("--%s must be at least 1, got %d" % (opt.replace("_", "-"), getattr(args, opt)))
    models = args.models.split(",")
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        ap.error("unknown model %r (%s)" % (unknown[0], ", ".join(MODELS)))
    if args.smoke:
        args.batch, args.seq, args.warmup, args.iters, args.rounds, args.per_round = 2, 64, 1, 2, 2, 1
    import torch
    import transformers
    from ropegrad import _lib
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type != "cuda" and not args.smoke:
        print("hf_step: no CUDA device; the figures are for a GPU (use --smoke to check the script on the CPU)")
        return 2
    dtype = getattr(torch, args.dtype)
    try:
        from importlib import metadata
        liger_version = metadata.version("liger_kernel")
    except Exception:   # noqa: BLE001 -- not installed: the arm says why
        liger_version = None
    res = dict(device=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
               timer="cuda events" if device.type == "cuda" else "perf_counter", torch=torch.__version__,
               transformers=transformers.__version__, liger_kernel=liger_version, library=_lib.library_path(),
               args=dict(vars(args), out=None), models={})
    for name in models:
        res["models"][name] = bench_model(name, args, device, dtype)
    print("device: %s (%s), torch %s, transformers %s, Liger-Kernel %s" % (
        res["device"], res["timer"], res["torch"], res["transformers"], liger_version or "not installed"))
    print(report(res))
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.out)
    bad = ["%s %s: loss %.6f, stock %.6f" % (n, a, r[a]["loss"], r["stock"]["loss"])
           for n, r in res["models"].items() for a in ARMS if r[a].get("loss_rel_vs_stock", 0) > LOSS_RTOL]
    for b in bad:
        print("FAIL loss differs from stock by more than 2^-7 relative: %s" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
