# SPDX-License-Identifier: Apache-2.0
"""The real client: Hugging Face transformers' LlamaForCausalLM and
Qwen3ForCausalLM (small random configs, GQA, heads of 64 and 128) trained one
step stock and with ropegrad switched in (ropegrad.hf.use_ropegrad), same
weights, same inputs, on both of the switch's paths: from positions (the
default: rope_apply_pos forward and backward, no cos/sin tensor) and with
tables (use_ropegrad(model, positions=False): 012 cos/sin, 088/068 apply).
In bf16 the two paths give the same loss, logits and gradients bit for bit (the
table path's bf16 values are exact, and the positions op computes those).
Then torch.compile(fullgraph=True) on each attention block of the switched
model (positions path, bf16): with the aot_eager backend the step equals the
eager step bit for bit; with inductor (which compiles the rest of the block
its own way) it is within the bound below, as eager is.

    ROPEGRAD_LIB=build/libropegrad.so .venv/bin/python python/tests/test_hf_real_client.py

Needs torch >= 2 and transformers >= 5 (scripts/deps.sh with ROPEGRAD_WITH_HF=1
makes .venv with both); CTest runs it through run_with_hf.sh. CPU always,
CUDA too where there is a GPU ("cuda cases on <GPU>" is printed then, "cuda
cases skipped: ..." otherwise); every switched step checks that ropegrad's
entry points ran on the step's device (the ops' cuda() on CUDA, cpu() on the
CPU). ROPEGRAD_HF_DEVICES (e.g. "cuda", as scripts/gpu-ops.sh sets it) names
the devices to run instead; a device named there that is missing is a failure.

The tolerance, and why. A bf16 (or fp32) training step is not exact: stock
transformers in bf16 already differs from the exact step. So both runs are
measured against the same model in float64 (stock), and ropegrad passes when
for the loss and for every parameter's gradient

    |ropegrad - float64|  <=  K * |stock - float64|  +  A * |float64|

(logits and gradients: L2 norms over the tensor), with K = 1.5 and A = 2^-8 for bf16
(one bf16 rounding of the whole tensor: a step whose RoPE work is rounded
differently may not be more than half again as far from exact as stock, or
further than one rounding of the exact values), K = 1.5 and A = 2^-20 for fp32.
Measured ratios are printed. It also checks that the switch really routes
through ropegrad (the library's entry points are counted: positions, one
rope_apply_pos and one rope_apply_pos_backward call per layer and step and
nothing else; tables, one 088 and one 068 call per layer and step, one 012
call per step in bf16), that remove() restores
stock, and the inputs: sequential positions shared by the batch, packed
batches (each row several sequences, positions restarting, different per
row), and positions near 3e5.
"""

import copy
import importlib
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import transformers  # noqa: E402

import ropegrad.hf  # noqa: E402
from ropegrad import _lib  # noqa: E402

TOL = {torch.bfloat16: (1.5, 2.0 ** -8), torch.float32: (1.5, 2.0 ** -20)}
LAYERS = 3


def configs():
    common = dict(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=LAYERS,
                  num_key_value_heads=2, max_position_embeddings=400000,
                  initializer_range=0.1)   # attention far from uniform: the loss depends on RoPE
    return {
        "llama": (transformers.LlamaForCausalLM,
                  transformers.LlamaConfig(num_attention_heads=4, rope_theta=500000.0, **common)),  # head_dim 64
        "qwen3": (transformers.Qwen3ForCausalLM,
                  transformers.Qwen3Config(num_attention_heads=4, head_dim=128, rope_theta=1e6, **common)),
    }


def batches(B=2, S=64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 512, (B, S), generator=gen)
    packed = torch.stack([torch.cat((torch.arange(20), torch.arange(S - 20))),
                          torch.cat((torch.arange(5), torch.arange(30), torch.arange(S - 35)))])
    far = torch.stack([299_990 + torch.arange(S), 150_000 + 3 * torch.arange(S)])
    return {
        "sequential": dict(input_ids=ids, labels=ids),
        "packed": dict(input_ids=ids, labels=ids, position_ids=packed),
        "far": dict(input_ids=ids, labels=ids, position_ids=far),
    }


def step(model, batch, device):
    """Loss, logits and every parameter's gradient (float64, CPU) of one step:
    a dict name -> tensor ("loss", "logits", the parameters' names)."""
    model.zero_grad(set_to_none=True)
    out = model(**{k: v.to(device) for k, v in batch.items()})
    out.loss.backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None]
    assert not missing, "no gradient for %s" % missing
    result = {"loss": out.loss.detach().double().cpu(), "logits": out.logits.detach().double().cpu()}
    result.update((n, p.grad.detach().double().cpu()) for n, p in model.named_parameters())
    return result


class Counter:
    """Counts the library entry points the torch layer calls (wraps each op module's cpu() and cuda())."""

    NAMES = ("rope_apply", "rope_apply_backward", "rope_forward", "cos_sin", "rope_apply_pos",
             "rope_apply_pos_backward")

    def __init__(self):
        self.counts = dict.fromkeys(self.NAMES, 0)
        self.entries = dict(cpu=0, cuda=0)   # calls per entry point: the device the kernels ran on
        self.saved = []

    def __enter__(self):
        for name in self.NAMES:
            mod = importlib.import_module("ropegrad." + name)
            for entry in ("cpu", "cuda"):
                fn = getattr(mod, entry)
                self.saved.append((mod, entry, fn))

                def counted(*a, _fn=fn, _name=name, _entry=entry, **kw):
                    self.counts[_name] += 1
                    self.entries[_entry] += 1
                    return _fn(*a, **kw)
                setattr(mod, entry, counted)
        return self

    def __exit__(self, *exc):
        for mod, entry, fn in self.saved:
            setattr(mod, entry, fn)
        return False


def compare(what, dtype, rg, st, f64):
    """Checks ropegrad's distance to float64 against stock's for the loss, the
    logits and every gradient; returns the worst ratio."""
    K, A = TOL[dtype]
    worst, failures = (0.0, ""), []
    for name in f64:
        d_rg, d_st, size = float((rg[name] - f64[name]).norm()), float((st[name] - f64[name]).norm()), \
            float(f64[name].norm())
        if d_rg > K * d_st + A * size:
            failures.append("%s: |ropegrad-f64| %.3e > %.1f*|stock-f64| %.3e + %.0e*|f64| %.3e"
                            % (name, d_rg, K, d_st, A, size))
        if d_st > 0 and d_rg / d_st > worst[0]:
            worst = (d_rg / d_st, name)
    assert not failures, "%s: %d of %d over the tolerance: %s" % (what, len(failures), len(f64),
                                                                 "; ".join(failures[:4]))
    return worst


def identical(what, a, b):
    differ = [n for n in a if not torch.equal(a[n], b[n])]
    assert not differ, "%s: %d of %d differ (%s), largest difference %.3e" % (
        what, len(differ), len(a), ", ".join(differ[:4]), max(float((a[n] - b[n]).abs().max()) for n in differ))


def models(name, device, dtype):
    cls, cfg = configs()[name]
    torch.manual_seed(1234)
    base = cls(cfg).eval()   # eval: no dropout (these configs have none anyway)
    return copy.deepcopy(base).double().to(device), copy.deepcopy(base).to(dtype).to(device)


def switched_step(model, batch, device, positions):
    """One step with the switch on (the path `positions` asks for), with the entry points counted."""
    modeling = sys.modules[type(model).__module__]
    stock_apply = modeling.apply_rotary_pos_emb
    with ropegrad.hf.use_ropegrad(model, positions=positions) as switch, Counter() as calls:
        assert modeling.apply_rotary_pos_emb is not stock_apply
        assert len(switch.rotary) == 1 and switch.modeling == [modeling]
        assert switch.path == ("tables" if positions is False else "positions"), (switch.path, switch.reason)
        result = step(model, batch, device)
    other = "cpu" if device == "cuda" else "cuda"
    assert calls.entries[device] > 0 and calls.entries[other] == 0, \
        "ropegrad's kernels ran on %s, the step on %s" % (calls.entries, device)
    assert modeling.apply_rotary_pos_emb is stock_apply, "remove() did not restore apply_rotary_pos_emb"
    assert "forward" not in model.model.rotary_emb.__dict__, "remove() did not restore the rotary module"
    return result, calls.counts


def run_model(name, device, dtype):
    model64, model = models(name, device, dtype)
    for what, batch in batches().items():
        f64 = step(model64, batch, device)
        with Counter() as stock_calls:
            st = step(model, batch, device)
        assert sum(stock_calls.counts.values()) == 0, "stock run called ropegrad: %s" % stock_calls.counts
        results = {}
        for path, positions in (("positions", None), ("tables", False)):
            rg, counts = switched_step(model, batch, device, positions)
            want = dict.fromkeys(Counter.NAMES, 0)
            if path == "positions":
                want.update(rope_apply_pos=LAYERS, rope_apply_pos_backward=LAYERS)
            else:
                want.update(rope_apply=LAYERS, rope_apply_backward=LAYERS,
                            cos_sin=1 if dtype == torch.bfloat16 else 0)
            assert counts == want, "%s %s: ropegrad calls %s, expected %s" % (what, path, counts, want)
            worst = compare("%s %s %s %s %s" % (name, device, dtype, what, path), dtype, rg, st, f64)
            print("  %s %s %s %-10s %-9s loss f64 %.6f stock %.6f ropegrad %.6f; largest |rg-f64|/|stock-f64| "
                  "%.2f (%s)" % (name, device, str(dtype)[6:], what, path, f64["loss"], st["loss"], rg["loss"],
                                 worst[0], worst[1]))
            results[path] = rg
        if dtype == torch.bfloat16:
            identical("%s %s %s: positions vs tables" % (name, device, what), results["positions"],
                      results["tables"])


def run_compiled(name, device, dtype):
    """torch.compile(fullgraph=True) on every attention block of the model switched to positions."""
    batch = batches()["packed"]
    model64, model = models(name, device, dtype)
    f64, st = step(model64, batch, device), step(model, batch, device)
    eager, _ = switched_step(model, batch, device, None)
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        compiled = copy.deepcopy(model)
        for layer in compiled.model.layers:
            layer.self_attn.compile(fullgraph=True, backend=backend)
        rg, counts = switched_step(compiled, batch, device, None)
        assert counts["rope_apply_pos"] == LAYERS and counts["rope_apply_pos_backward"] == LAYERS, counts
        if backend == "aot_eager":
            identical("%s %s compiled (aot_eager) vs eager" % (name, device), rg, eager)
        worst = compare("%s %s %s compiled (%s)" % (name, device, dtype, backend), dtype, rg, st, f64)
        print("  %s %s %s compiled (%s): loss %.6f (eager %.6f); largest |rg-f64|/|stock-f64| %.2f (%s)"
              % (name, device, str(dtype)[6:], backend, rg["loss"], eager["loss"], worst[0], worst[1]))
    torch._dynamo.reset()


def test_refusals():
    cls, cfg = configs()["llama"]
    model = cls(cfg)
    with ropegrad.hf.use_ropegrad(model):
        try:
            ropegrad.hf.use_ropegrad(model)
            raise AssertionError("a second switch of one model was accepted")
        except ValueError as e:
            assert "already" in str(e)

    class UsesCos(torch.nn.Module):   # attention code that reads cos itself: real tables needed
        def forward(self, position_embeddings):
            cos, sin = position_embeddings
            return cos.sum()

    model.extra = UsesCos()
    with ropegrad.hf.use_ropegrad(model) as switch:
        assert switch.path == "tables" and "UsesCos" in switch.reason, (switch.path, switch.reason)
    try:
        ropegrad.hf.use_ropegrad(model, positions=True)
        raise AssertionError("positions=True was accepted for a model that reads cos")
    except ValueError as e:
        assert "UsesCos" in str(e)
    del model.extra
    try:
        ropegrad.hf.use_ropegrad(torch.nn.Linear(2, 2))
        raise AssertionError("a model without RoPE was accepted")
    except ValueError as e:
        assert "no rotary-embedding module" in str(e)
    dyn = copy.deepcopy(cfg)
    dyn.rope_parameters = dict(rope_type="dynamic", factor=2.0, rope_theta=500000.0)
    try:
        ropegrad.hf.use_ropegrad(cls(dyn))
        raise AssertionError("dynamic RoPE was accepted")
    except ValueError as e:
        assert "dynamic" in str(e)


def test_rotary_tables(device):
    """rotary_tables (the table path's cos and sin: 012 on the stock module's float32 frequencies)
    equals 011's values (rotary_embedding) bit for bit, each output contiguous, on the rotary modules
    of both models (Llama's with default and llama3-scaled frequencies, Qwen3's) at head dims 64 and
    128, at sequential, packed and far (~3e5) positions; in float32 it is rotary_embedding's formula.
    Bad inputs are refused with a message."""
    from ropegrad.rope_forward import rotary_embedding
    llama3 = dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                  original_max_position_embeddings=8192, rope_theta=500000.0)
    variants = [(n, cls, cfg, None) for n, (cls, cfg) in configs().items()]
    variants.append(("llama llama3", *configs()["llama"], llama3))
    S = 64
    for name, cls, cfg, rope in variants:
        for hd in (64, 128):
            c = copy.deepcopy(cfg)
            c.head_dim = hd
            if rope:
                c.rope_parameters = dict(rope)
            rot = cls(c).model.rotary_emb.to(device)
            assert rot.inv_freq.shape == (hd // 2,), (name, hd, rot.inv_freq.shape)
            for what, batch in batches(S=S).items():
                pos = batch.get("position_ids", torch.arange(S)[None].expand(2, -1)).to(device)
                for dtype in (torch.bfloat16, torch.float32):
                    x = torch.empty(1, dtype=dtype, device=device)
                    got = ropegrad.hf.rotary_tables(x, pos, rot.inv_freq, rot.attention_scaling)
                    want = rotary_embedding(x, pos, rot.inv_freq, rot.attention_scaling)
                    for g, w, part in zip(got, want, ("cos", "sin")):
                        label = "%s head_dim %d %s %s %s" % (name, hd, what, dtype, part)
                        assert g.is_contiguous() and g.dtype == dtype and g.shape == w.shape, label
                        assert torch.equal(g, w), "%s: %d values differ from 011's" % (label, int((g != w).sum()))
    x, pos, inv = torch.empty(1, dtype=torch.bfloat16, device=device), torch.arange(8, device=device)[None], rot.inv_freq
    for args, want in (((x, pos[0], inv), "position_ids must be a [B,S] tensor"),
                       ((x, pos, inv[None]), "inv_freq must be a [head_dim/2] tensor"),
                       ((x, pos, inv.to("meta")), "inv_freq must be a [head_dim/2] tensor"),
                       ((None, pos, inv), "x must be a tensor"),
                       ((x, pos, inv, float("nan")), "attention_scaling must be finite")):
        try:
            ropegrad.hf.rotary_tables(*args)
            raise AssertionError("rotary_tables accepted bad input (%s)" % want)
        except (TypeError, ValueError) as e:
            assert want in str(e), (want, str(e))


def main():
    print("torch %s, transformers %s, library %s" % (torch.__version__, transformers.__version__, _lib.library_path()))
    torch.set_num_threads(min(2, torch.get_num_threads()))
    failed = 0
    cases = [("refusals", test_refusals)]
    asked = os.environ.get("ROPEGRAD_HF_DEVICES", "").split()
    bad = [d for d in asked if d not in ("cpu", "cuda")]
    if bad:
        print("FAIL ROPEGRAD_HF_DEVICES: unknown device %r (cpu, cuda)" % bad[0])
        return 1
    devs = asked or ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if "cuda" in devs and torch.cuda.is_available():
        print("cuda cases on %s (torch %s, CUDA %s)" % (torch.cuda.get_device_name(), torch.__version__,
                                                      torch.version.cuda))
    elif "cuda" in devs:
        failed += 1
        devs.remove("cuda")
        print("FAIL cuda cases: ROPEGRAD_HF_DEVICES asks for cuda, but torch.cuda.is_available() is False")
    else:
        print("cuda cases skipped: %s" % ("ROPEGRAD_HF_DEVICES=%s" % " ".join(asked) if asked else
                                          "no CUDA device (torch.cuda.is_available() is False)"))
    for dev in devs:
        cases.append(("rotary_tables %s" % dev, lambda d=dev: test_rotary_tables(d)))
        for name in ("llama", "qwen3"):
            for dtype in (torch.bfloat16, torch.float32):
                cases.append(("%s %s %s" % (name, dev, dtype),
                              lambda n=name, d=dev, t=dtype: run_model(n, d, t)))
            cases.append(("%s %s bfloat16 compiled" % (name, dev),
                          lambda n=name, d=dev: run_compiled(n, d, torch.bfloat16)))
    for label, fn in cases:
        try:
            fn()
            print("ok   %s" % label)
        except Exception as e:  # every failure reported, then exit 1
            failed += 1
            print("FAIL %s: %s: %s" % (label, type(e).__name__, e))
    print("%s" % ("FAILED" if failed else "all passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
