# SPDX-License-Identifier: Apache-2.0
"""ropegrad.torch against PyTorch: rope_position_grad vs a float64 torch
evaluation of the formula, and the autograd Function's position gradient vs
torch autograd of the same forward. Runs under pytest or standalone:

    python3 python/tests/test_torch_binding.py        # exit 0 all passed, 1 a failure
    python3 -m pytest -q python/tests/test_torch_binding.py

CUDA cases need a GPU; without torch everything is skipped (standalone: prints
"SKIP: ..." and exits 0), without CUDA the CPU cases still run.

Error bounds (derived, not fitted; see tests/test_cpu.c): for a row let
M = sum_d |inv_d| (|gs_d+gs_{d+H}| + |gc_d+gc_{d+H}|). Every path computes in
float32 from the same inputs, so |out - ref64| <= |scale| (H+12) u M with
u = 2^-24 (x1.01 for second-order terms). On real positions (0..262143,
rope_theta 1e6, head_dim 128, scale 1, N(0,1) upstream gradients) we also
assert the project's figure: max abs error vs float64 <= 4e-6.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

try:
    import pytest
except ImportError:
    pytest = None

U = 2.0 ** -24
SUITE_ATOL = SUITE_RTOL = 1e-5


class Skip(Exception):
    pass


_under_pytest = __name__ != "__main__"


def skip(msg):
    if _under_pytest and pytest is not None:
        pytest.skip(msg)
    raise Skip(msg)


def need_torch():
    if torch is None:
        skip("torch is not installed")


def need_cuda():
    need_torch()
    if not torch.cuda.is_available():
        skip("no CUDA device")


def devices():
    need_torch()
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


# ---- the formula in float64 torch --------------------------------------------
def ref64(gc, gs, emb, inv, scale):
    """float64 out[b,s] and its error bound per row; inv any accepted layout."""
    B, S, D = gc.shape
    H = D // 2
    gc, gs, emb = gc.double(), gs.double(), emb.double()
    inv = inv.double()
    if inv.dim() == 1:
        inv = inv[None, :].expand(B, H)
    elif inv.dim() == 3:
        inv = inv[:, :, 0]
    inv = inv.expand(B, H)[:, None, :]  # [B,1,H]
    GS = gs[..., :H] + gs[..., H:]
    GC = gc[..., :H] + gc[..., H:]
    e = emb[..., :H]
    out = scale * (inv * (GS * torch.cos(e) - GC * torch.sin(e))).sum(-1)
    mag = (inv.abs() * (GS.abs() + GC.abs())).sum(-1)
    bound = abs(scale) * (H + 12) * U * mag * 1.01 + 1e-30
    return out, bound


def random_inputs(B, S, D, dtype, device, shared, seed):
    g = torch.Generator().manual_seed(seed)
    H = D // 2
    gc = torch.randn(B, S, D, generator=g).to(dtype).to(device)
    gs = torch.randn(B, S, D, generator=g).to(dtype).to(device)
    emb = torch.randn(B, S, D, generator=g).to(device)
    if shared:
        inv = torch.randn(1, H, 1, generator=g).to(device).expand(B, H, 1)  # stride 0 in dim 0
    else:
        inv = torch.randn(B, H, 1, generator=g).to(device)
    return gc, gs, emb, inv


def check_against_ref(out, ref, bound, what):
    out64 = out.double().cpu()
    ref, bound = ref.cpu(), bound.cpu()
    assert out.dtype == torch.float32 and tuple(out.shape) == tuple(ref.shape), (what, out.dtype, out.shape)
    assert torch.isfinite(out64).all(), "%s: non-finite output" % what
    err = (out64 - ref).abs()
    q = (err / bound).max().item()
    assert q <= 1.0, "%s: error %.3g x the derived bound (max abs err %.3g)" % (what, q, err.max().item())
    # and the suite's rule: elements within atol + rtol*|ref|, matched ratio >= 0.99
    ok = err <= SUITE_ATOL + SUITE_RTOL * ref.abs()
    ratio = ok.double().mean().item()
    assert ratio >= 0.99, "%s: only %.4f of elements within atol=rtol=1e-5" % (what, ratio)
    return err.max().item()


# ---- rope_position_grad -------------------------------------------------------
def test_rope_position_grad_matches_float64():
    from ropegrad.rope_backward import rope_position_grad
    for device in devices():
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            for shared in (False, True):
                for (B, S, D, scale) in ((3, 257, 128, 0.0883883), (1, 5, 64, 1.0), (2, 33, 256, -0.5)):
                    gc, gs, emb, inv = random_inputs(B, S, D, dtype, device, shared, seed=B * 1000 + S)
                    out = rope_position_grad(gc, gs, emb, inv, scale)
                    if device == "cuda":
                        torch.cuda.synchronize()
                    ref, bound = ref64(gc, gs, emb, inv, scale)
                    check_against_ref(out, ref, bound, "%s %s shared=%s B=%d S=%d D=%d" % (
                        device, dtype, shared, B, S, D))
                    assert out.device.type == device


def test_inv_freq_layouts_agree():
    """[H], [B,H], [B,H,1], [1,H,1] and a stride-0 expansion give one answer."""
    from ropegrad.rope_backward import rope_position_grad
    for device in devices():
        B, S, D = 4, 19, 128
        H = D // 2
        gc, gs, emb, _ = random_inputs(B, S, D, torch.bfloat16, device, False, seed=5)
        v = torch.randn(H, generator=torch.Generator().manual_seed(9)).to(device)
        layouts = {
            "[H]": v,
            "[B,H]": v[None, :].repeat(B, 1),
            "[B,H,1]": v[None, :, None].repeat(B, 1, 1),
            "[1,H,1]": v[None, :, None],
            "expand": v[None, :, None].expand(B, H, 1),
        }
        ref, bound = ref64(gc, gs, emb, v, 0.125)
        for k, t in layouts.items():
            out = rope_position_grad(gc, gs, emb, t, 0.125)
            check_against_ref(out, ref, bound, "%s inv_freq layout %s" % (device, k))


def test_cuda_current_stream():
    """Runs on the current stream of the tensors' device: the result is
    complete once that stream is synchronized, whichever stream it is."""
    need_cuda()
    from ropegrad.rope_backward import rope_position_grad
    gc, gs, emb, inv = random_inputs(8, 4096, 128, torch.bfloat16, "cuda", False, seed=77)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out = rope_position_grad(gc, gs, emb, inv, 0.0883883)
    s.synchronize()
    ref, bound = ref64(gc, gs, emb, inv, 0.0883883)
    check_against_ref(out, ref, bound, "side stream")


def expect(exc, fn, needle):
    try:
        fn()
    except exc as e:
        assert needle in str(e), "message %r lacks %r" % (str(e), needle)
        return
    except Exception as e:  # wrong exception type
        raise AssertionError("expected %s(%r), got %s: %s" % (exc.__name__, needle, type(e).__name__, e))
    raise AssertionError("expected %s(%r), nothing raised" % (exc.__name__, needle))


def test_bad_inputs_raise():
    from ropegrad.rope_backward import rope_position_grad
    for device in devices():
        B, S, D = 2, 8, 128
        gc, gs, emb, inv = random_inputs(B, S, D, torch.bfloat16, device, False, seed=1)
        f = rope_position_grad
        expect(TypeError, lambda: f(gc.double(), gs.double(), emb, inv, 1.0), "bfloat16, float16 or float32")
        expect(TypeError, lambda: f(gc, gs.half(), emb, inv, 1.0), "one dtype")
        expect(TypeError, lambda: f(gc, gs, emb.double(), inv, 1.0), "emb must be float32")
        expect(TypeError, lambda: f(gc, gs, emb, inv.double(), 1.0), "inv_freq must be float32")
        expect(TypeError, lambda: f(gc.tolist(), gs, emb, inv, 1.0), "torch.Tensor")
        expect(ValueError, lambda: f(gc[0], gs[0], emb[0], inv, 1.0), "[B,S,D]")
        expect(ValueError, lambda: f(gc, gs[:, :4], emb, inv, 1.0), "grad_sin has shape")
        expect(ValueError, lambda: f(gc, gs, emb[:, :4], inv, 1.0), "emb has shape")
        expect(ValueError, lambda: f(gc[..., :127], gs[..., :127], emb[..., :127].contiguous(), inv, 1.0),
               "contiguous")
        odd = lambda t: t[..., :127].contiguous()  # noqa: E731
        expect(ValueError, lambda: f(odd(gc), odd(gs), odd(emb), inv, 1.0), "even")
        expect(ValueError, lambda: f(gc.transpose(0, 1).contiguous().transpose(0, 1), gs, emb, inv, 1.0),
               "grad_cos must be contiguous")
        expect(ValueError, lambda: f(gc, gs, emb, inv[:, :32], 1.0), "inv_freq has shape")
        expect(ValueError, lambda: f(gc, gs, emb, inv[:1].expand(3, 64, 1), 1.0), "inv_freq has shape")
        wide = torch.randn(B, 128, 1, device=device)[:, ::2]  # [B,64,1] with stride(1) = 2
        expect(ValueError, lambda: f(gc, gs, emb, wide, 1.0), "contiguous")
        expect(ValueError, lambda: f(gc, gs, emb, inv, float("nan")), "finite")
        expect(ValueError, lambda: f(gc, gs, emb, inv, float("inf")), "finite")
    # mixed devices
    if torch.cuda.is_available():
        gc, gs, emb, inv = random_inputs(2, 8, 128, torch.bfloat16, "cuda", False, seed=2)
        f = rope_position_grad
        expect(ValueError, lambda: f(gc, gs.cpu(), emb, inv, 1.0), "one device")
        expect(ValueError, lambda: f(gc, gs, emb.cpu(), inv, 1.0), "one device")
        expect(ValueError, lambda: f(gc, gs, emb, inv.cpu(), 1.0), "one device")
        expect(ValueError, lambda: f(gc.cpu(), gs, emb, inv, 1.0), "one device")


def test_empty_batch():
    from ropegrad.rope_backward import rope_position_grad
    for device in devices():
        gc, gs, emb, inv = random_inputs(2, 0, 128, torch.bfloat16, device, False, seed=3)
        out = rope_position_grad(gc, gs, emb, inv, 1.0)
        assert tuple(out.shape) == (2, 0)


# ---- the autograd Function ------------------------------------------------------
def qwen3_inv_freq(head_dim=128, theta=1e6):
    """transformers' default RoPE frequencies: 1 / theta^(2i/d), computed in float32."""
    return 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))


def plain_torch_forward64(pos, inv, scale):
    """The same forward in plain float64 torch, for autograd. The float32
    forward rounds emb = pos*inv to float32 (at positions ~2.6e5 that moves
    emb by up to ~0.008 rad); the gradient is defined at that rounded emb, so
    the float64 forward reproduces it exactly: its value is the float32 emb,
    its derivative d emb / d pos = inv (straight through the rounding)."""
    B, S = pos.shape
    inv32 = inv.float().reshape(-1, inv.shape[1] if inv.dim() > 1 else inv.shape[0])  # [1,H] or [B,H]
    exact = pos[:, :, None] * inv32.double()[:, None, :]
    rounded = (pos.detach().float()[:, :, None] * inv32[:, None, :]).double()
    freqs = exact + (rounded - exact).detach()
    emb = torch.cat((freqs, freqs), -1)
    return emb.cos() * scale, emb.sin() * scale


def run_autograd_case(device, B, S, positions, inv, scale, upstream_dtype, seed):
    from ropegrad.rope_backward import rotary_cos_sin
    g = torch.Generator().manual_seed(seed)
    D = 2 * (inv.shape[-2] if inv.dim() == 3 else inv.shape[-1])
    wc = torch.randn(B, S, D, generator=g).to(upstream_dtype).to(device)
    ws = torch.randn(B, S, D, generator=g).to(upstream_dtype).to(device)

    pos = positions.clone().to(device).requires_grad_(True)
    cos, sin = rotary_cos_sin(pos, inv.to(device), scale)
    assert cos.dtype == torch.float32 and tuple(cos.shape) == (B, S, D)
    # HF casts cos/sin to the activations' dtype; do the same so the incoming
    # gradients are in upstream_dtype, as in training.
    loss = (cos.to(upstream_dtype) * wc).float().sum() + (sin.to(upstream_dtype) * ws).float().sum()
    loss.backward()
    got = pos.grad.detach().double().cpu()

    pos64 = positions.clone().double().to(device).requires_grad_(True)
    c64, s64 = plain_torch_forward64(pos64, inv.to(device), scale)
    # The same forward values must come out (float32 vs float64 evaluation of cos/sin of one emb).
    assert (c64 - cos.double()).abs().max().item() <= 1e-6 * abs(scale) + 1e-7
    loss64 = (c64 * wc.double()).sum() + (s64 * ws.double()).sum()
    loss64.backward()
    want = pos64.grad.detach().cpu()

    # Per-row bound from the ropegrad inputs the Function sees.
    H = D // 2
    inv_b = inv.double().reshape(-1, H).to("cpu")
    GS = (ws.double()[..., :H] + ws.double()[..., H:]).cpu()
    GC = (wc.double()[..., :H] + wc.double()[..., H:]).cpu()
    mag = (inv_b[:, None, :].abs() * (GS.abs() + GC.abs())).sum(-1)
    bound = abs(scale) * (H + 12) * U * mag * 1.01
    err = (got - want).abs()
    return err, bound


def test_autograd_real_positions():
    """Positions 0..262143, rope_theta 1e6, head_dim 128, scale 1."""
    for device in devices():
        B, S = 2, 4096
        positions = torch.stack([
            torch.linspace(0, 262143, S).round(),                          # spread over the whole context
            torch.randint(0, 262144, (S,), generator=torch.Generator().manual_seed(4)).float(),
        ])
        inv = qwen3_inv_freq(128, 1e6)
        for upstream in (torch.float32, torch.bfloat16):
            err, bound = run_autograd_case(device, B, S, positions, inv, 1.0, upstream, seed=11)
            mx = err.max().item()
            print("  autograd %s upstream %s: max abs err vs float64 %.3g (x%.3g of the derived bound)"
                  % (device, upstream, mx, (err / bound).max().item()))
            assert mx <= 4e-6, "%s %s: max abs err %.3g > 4e-6" % (device, upstream, mx)
            assert (err <= bound).all(), "%s %s: error above the derived bound" % (device, upstream)


def test_autograd_batched_inv_freq_and_scale():
    """inv_freq [B,H,1] (per batch) and a non-unit attention scaling."""
    for device in devices():
        B, S = 3, 100
        g = torch.Generator().manual_seed(8)
        positions = torch.randint(0, 32768, (B, S), generator=g).float()
        inv = qwen3_inv_freq(64, 1e4)[None, :, None].repeat(B, 1, 1) * torch.tensor([1.0, 0.5, 0.25])[:, None, None]
        err, bound = run_autograd_case(device, B, S, positions, inv, 0.7, torch.float32, seed=12)
        assert (err <= bound).all(), "%s: max abs err %.3g above the derived bound" % (device, err.max().item())


def test_autograd_only_sin_used_and_no_grad_inputs():
    from ropegrad.rope_backward import rotary_cos_sin, RotaryEmbeddingQwen3
    for device in devices():
        pos = torch.arange(16, dtype=torch.float32, device=device)[None].repeat(2, 1).requires_grad_(True)
        inv = qwen3_inv_freq(128, 1e6).to(device)
        cos, sin = rotary_cos_sin(pos, inv, 1.0)
        sin.sum().backward()  # grad_cos never flows: autograd passes zeros or None
        # d/dp sum sin(p*inv) over both halves = 2 * sum inv*cos(p*inv)
        want = 2 * (inv.double()[None, None, :] * torch.cos((pos.detach()[..., None] * inv[None, None, :]).double())
                    ).sum(-1)
        assert (pos.grad.double() - want).abs().max().item() <= 1e-5 * want.abs().max().item() + 1e-6
        # integer positions: no gradient is possible, a clear TypeError
        expect(TypeError, lambda: RotaryEmbeddingQwen3.apply(torch.arange(4, device=device)[None], inv, 1.0),
               "floating-point")
        # without requires_grad the forward still works
        c2, s2 = rotary_cos_sin(pos.detach(), inv, 2.0)
        assert torch.allclose(c2, 2 * cos.detach())



def test_torch_namespace_reexports_each_op():
    """ropegrad.torch holds every op's torch functions, each the object its op module defines."""
    import importlib
    import ropegrad.torch as rt
    for name in rt.__all__:
        obj = getattr(rt, name)
        home = rt._EXPORTS.get(name)
        if home:
            assert obj is getattr(importlib.import_module("ropegrad." + home), name), name
    expect(AttributeError, lambda: rt.no_such_function, "no_such_function")

# ---- runner ------------------------------------------------------------------------
def main():
    if torch is None:
        print("SKIP: torch is not installed")
        return 0
    import ropegrad
    print("ropegrad %s (%s), torch %s, CUDA %s" % (
        ropegrad.version(), ropegrad.library_path(), torch.__version__,
        torch.cuda.get_device_name(0) if torch.cuda.is_available() else "not available (CPU cases only)"))
    tests = [(k, v) for k, v in globals().items() if k.startswith("test_") and callable(v)]
    failed = skipped = 0
    for name, fn in tests:
        try:
            fn()
            print("ok    %s" % name)
        except Skip as e:
            skipped += 1
            print("SKIP: %s: %s" % (name, e))
        except Exception as e:  # report every test, then fail
            failed += 1
            import traceback
            traceback.print_exc()
            print("FAIL  %s: %s" % (name, e))
    print("%d passed, %d failed, %d skipped" % (len(tests) - failed - skipped, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
elif torch is None and pytest is not None:
    pytest.skip("torch is not installed", allow_module_level=True)
