# SPDX-License-Identifier: Apache-2.0
"""The forward ops from PyTorch: ropegrad.rope_forward.rope_forward (L1/011),
cos_sin_from_freqs (L1/012), the autograd Function RopeForward (forward 011,
backward 014) and the drop-in RotaryEmbedding module, against Hugging Face's
formula evaluated in float64. On CUDA when a GPU is usable, and on the CPU.

    PYTHONPATH=python ROPEGRAD_LIB=build/libropegrad.so python3 python/tests/test_forward_torch.py

Exit 0 all passed (or SKIP printed: no torch), 1 a check failed."""

import math
import sys

FAILS = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        FAILS.append(what)


def main():
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    from ropegrad.cos_sin import cos_sin_from_freqs
    from ropegrad.rope_forward import rope_forward, RopeForward, RotaryEmbedding

    def half_ulp_bf16(ref):
        # half the bf16 spacing at |ref| (8 significant bits)
        e = torch.floor(torch.log2(ref.abs().clamp_min(1e-30)))
        return torch.pow(2.0, e - 8)

    def llama3(D):
        d = torch.arange(0, D, 2, dtype=torch.float32)
        inv = 1.0 / (500000.0 ** (d / D))
        wl = 2 * math.pi / inv
        sm = ((8192 / wl - 1.0) / 3.0).clamp(0.0, 1.0)
        return (1 - sm) * inv + sm * (inv / 8.0)

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    g = torch.Generator().manual_seed(7)
    for dev in devices:
        B, S, D = 4, 777, 128
        inv = llama3(D).to(dev)
        # packed sequences: each batch its own positions, up to 131071
        pos = (torch.randint(0, 131072 - S, (B, 1), generator=g) + torch.arange(S)[None, :]).to(dev)
        pos[1, 100:] -= pos[1, 100].item()   # a new document starts at row 100 of batch 1
        scale = 0.75
        x = (pos.float()[:, :, None] * inv[None, None, :]).double()   # HF: float32 product
        x = torch.cat((x, x), dim=-1)
        ref_c, ref_s = x.cos() * scale, x.sin() * scale
        cs = rope_forward(pos, inv, scale)
        torch.cuda.synchronize() if dev == "cuda" else None
        for name, ours, ref in (("cos", cs[..., 0], ref_c), ("sin", cs[..., 1], ref_s)):
            err = (ours.double() - ref).abs()
            check(bool((err <= half_ulp_bf16(ref) * (1 + 1e-6) + 1e-30).all()),
                  "%s rope_forward %s: every element the nearest bf16 (max err %.3e)" % (dev, name, err.max().item()))
            hf = (x.float().cos() if name == "cos" else x.float().sin()) * scale
            hf_err = (hf.to(torch.bfloat16).double() - ref).abs().max().item()
            check(err.max().item() <= hf_err, "%s rope_forward %s: max err %.3e <= HF float32's %.3e"
                  % (dev, name, err.max().item(), hf_err))
        # 012
        freqs = (torch.randn(B, S, D // 2, generator=g) * 50).to(dev)
        c, s = cos_sin_from_freqs(freqs, 1.0)
        xf = torch.cat((freqs, freqs), dim=-1).double()
        for name, ours, ref in (("cos", c, xf.cos()), ("sin", s, xf.sin())):
            err = (ours.double() - ref).abs()
            check(bool((err <= half_ulp_bf16(ref) * (1 + 1e-6) + 1e-30).all()),
                  "%s cos_sin_from_freqs %s: every element the nearest bf16" % (dev, name))
        # the module, bf16 activations: ropegrad's values, HF's shapes and dtype
        m = RotaryEmbedding(inv, scale)
        xact = torch.zeros(B, S, 8, dtype=torch.bfloat16, device=dev)
        mc, ms = m(xact, pos)
        check(mc.shape == (B, S, D) and mc.dtype == torch.bfloat16 and ms.shape == (B, S, D),
              "%s RotaryEmbedding: shapes and dtype as Hugging Face's" % dev)
        check(bool(((mc.double() - ref_c).abs() <= half_ulp_bf16(ref_c) * (1 + 1e-6) + 1e-30).all()),
              "%s RotaryEmbedding: cos within half a bf16 ulp of the float64 formula" % dev)
        # float32 activations: Hugging Face's own float32 formula, exactly
        fc, fs = m(xact.float(), pos)
        hfreqs = (inv[None, :, None].expand(B, -1, 1) @ pos[:, None, :].float()).transpose(1, 2)
        hemb = torch.cat((hfreqs, hfreqs), dim=-1)
        check(torch.equal(fc, hemb.cos() * scale) and torch.equal(fs, hemb.sin() * scale),
              "%s RotaryEmbedding float32 activations: Hugging Face's float32 formula, bit for bit" % dev)
        # autograd: forward 011, backward 014, against float64 autograd of the formula
        pf = pos.float().requires_grad_()
        gc = torch.randn(B, S, D, generator=g).to(torch.bfloat16).to(dev)
        gs = torch.randn(B, S, D, generator=g).to(torch.bfloat16).to(dev)
        oc, os_ = m(xact, pf)
        (oc.float() * gc.float() + os_.float() * gs.float()).sum().backward()
        p64 = pos.double().requires_grad_()
        x64 = (p64[:, :, None] * inv.double()[None, None, :])
        # the same float32 products as the kernel, with the derivative of the exact formula
        x64 = x64 + ((pos.float()[:, :, None] * inv[None, None, :]).double() - x64).detach()
        e64 = torch.cat((x64, x64), dim=-1)
        ((e64.cos() * scale) * gc.double() + (e64.sin() * scale) * gs.double()).sum().backward()
        diff = (pf.grad.double() - p64.grad).abs().max().item()
        tol = 1e-5 * p64.grad.abs().max().item() + 1e-6
        check(diff <= tol, "%s RopeForward backward (014) vs float64 autograd: max diff %.3e (tol %.3e)" % (dev, diff, tol))
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
