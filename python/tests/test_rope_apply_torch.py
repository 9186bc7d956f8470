# SPDX-License-Identifier: Apache-2.0
"""ropegrad.rope_apply.apply_rotary_pos_emb (L1/088 forward, L1/068 backward)
against torch autograd of Hugging Face's formula in float64 on the same
(widened) inputs: outputs and the gradients of q, k, cos and sin, for
bf16/fp16/fp32, both memory layouts, unsqueeze_dim 1 and 2, GQA, cos/sin per
batch and shared; the refusals; CPU always, CUDA too where there is a GPU.
Runs with any torch (Debian's 1.13 included):

    python3 python/tests/test_rope_apply_torch.py     # exit 0 all passed, 1 a failure

Error bounds (derived): every ropegrad path computes in float32 and rounds
each output once, so |out - ref64| <= u_t*|ref64| + n*2^-24*M, u_t the unit
roundoff of the output dtype (2^-8 bf16, 2^-11 fp16, 2^-24 fp32), M the sum
of the magnitudes of the n products summed (n = 2 for out and grad_x, 2x the
heads for grad_cos/grad_sin), with n+2 as a margin for the float32 sums; plus
half the dtype's subnormal spacing (fp16 outputs below 2^-14).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from ropegrad.rope_apply import apply_rotary_pos_emb  # noqa: E402

U32 = 2.0 ** -24
UNIT = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11, torch.float32: U32}
# Half the spacing of the dtype's subnormals (fp16's reach the values here).
TINY = {torch.bfloat16: 2.0 ** -134, torch.float16: 2.0 ** -25, torch.float32: 2.0 ** -150}


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def stock(q, k, cos, sin, unsqueeze_dim=1):
    """Hugging Face's apply_rotary_pos_emb."""
    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def tables(Bc, S, D, dtype, device, gen):
    """cos, sin as RoPE builds them (two equal halves), at positions to ~3e5."""
    pos = torch.randint(0, 300000, (Bc, S, 1), generator=gen).double()
    inv = 1.0 / (1e6 ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    emb = torch.cat((pos * inv, pos * inv), dim=-1)
    return emb.cos().to(dtype).to(device), emb.sin().to(dtype).to(device)


def heads(B, H, S, D, dtype, device, gen, bshd, unsqueeze_dim):
    """A [B,H,S,D] (unsqueeze_dim 1) or [B,S,H,D] (2) tensor whose memory is
    [B,S,H,D] when bshd, else [B,H,S,D]."""
    x = torch.randn(B, S, H, D, generator=gen) if bshd else torch.randn(B, H, S, D, generator=gen)
    x = x.to(dtype).to(device)
    logical_bhsd = x.transpose(1, 2) if bshd else x
    return logical_bhsd if unsqueeze_dim == 1 else logical_bhsd.transpose(1, 2)


def check(name, got, ref, bound):
    got, ref = got.detach(), ref.detach()
    err = (got.double() - ref).abs()
    over = err > bound
    if bool(over.any()):
        i = int(over.flatten().nonzero()[0])
        raise AssertionError("%s: %d of %d values over the bound; first at %d: got %r, float64 %r, bound %r"
                             % (name, int(over.sum()), err.numel(), i, float(got.flatten()[i]),
                                float(ref.flatten()[i]), float(bound.flatten()[i])))
    return float(err.max())


def run_case(device, dtype, B, H, Hkv, S, D, Bc, bshd, unsqueeze_dim, table_grads, seed):
    gen = torch.Generator().manual_seed(seed)
    q = heads(B, H, S, D, dtype, device, gen, bshd, unsqueeze_dim).requires_grad_()
    k = heads(B, Hkv, S, D, dtype, device, gen, bshd, unsqueeze_dim).requires_grad_()
    cos, sin = tables(Bc, S, D, dtype, device, gen)
    cos.requires_grad_(table_grads)
    sin.requires_grad_(table_grads)
    gq = torch.randn(q.shape, generator=gen).to(dtype).to(device)
    gk = torch.randn(k.shape, generator=gen).to(dtype).to(device)

    q_embed, k_embed = apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=unsqueeze_dim)
    assert q_embed.shape == q.shape and k_embed.shape == k.shape and q_embed.dtype == dtype
    assert q_embed.stride() == q.stride(), "q_embed keeps q's memory layout"
    torch.autograd.backward((q_embed, k_embed), (gq, gk))

    # float64 truth: torch autograd of the stock formula on the same values widened.
    q64, k64, c64, s64 = (t.detach().double().requires_grad_() for t in (q, k, cos, sin))
    r_q, r_k = stock(q64, k64, c64, s64, unsqueeze_dim)
    torch.autograd.backward((r_q, r_k), (gq.double(), gk.double()))
    # Magnitudes of the products each value sums (the bound's M).
    cu, su = c64.detach().abs().unsqueeze(unsqueeze_dim), s64.detach().abs().unsqueeze(unsqueeze_dim)
    qa, ka, gqa, gka = q64.detach().abs(), k64.detach().abs(), gq.double().abs(), gk.double().abs()
    u, tiny = UNIT[dtype], TINY[dtype]
    errs = {}
    for nm, got, ref, m in (("q_embed", q_embed, r_q, qa * cu + rotate_half(qa).abs() * su),
                            ("k_embed", k_embed, r_k, ka * cu + rotate_half(ka).abs() * su),
                            ("grad_q", q.grad, q64.grad, gqa * cu + rotate_half(gqa).abs() * su),
                            ("grad_k", k.grad, k64.grad, gka * cu + rotate_half(gka).abs() * su)):
        errs[nm] = check(nm, got, ref.detach(), u * ref.detach().abs() + 4 * U32 * m + tiny)
    if table_grads:
        hd = 1 if unsqueeze_dim == 1 else 2
        n = 2 * (H + Hkv) + 2
        m = (gqa * qa).sum(hd) + (gka * ka).sum(hd)
        if Bc == 1 and B > 1:
            m, n = m.sum(0, keepdim=True), n * B
        for nm, got, ref in (("grad_cos", cos.grad, c64.grad), ("grad_sin", sin.grad, s64.grad)):
            assert got is not None and got.shape == ref.shape, "%s: shape %s" % (nm, None if got is None else got.shape)
            errs[nm] = check(nm, got, ref, u * ref.abs() + n * U32 * m + tiny)
    else:
        assert cos.grad is None and sin.grad is None
    return errs


def test_matches_float64_autograd(device):
    cases = 0
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for bshd in (False, True):
            for unsqueeze_dim in (1, 2):
                for Bc in (1, 3):
                    errs = run_case(device, dtype, B=3, H=8, Hkv=2, S=37, D=64, Bc=Bc, bshd=bshd,
                                    unsqueeze_dim=unsqueeze_dim, table_grads=(Bc == 3) ^ bshd,
                                    seed=cases)
                    cases += 1
        print("%s %s: max abs err vs float64 %s" % (device, dtype, " ".join("%s %.2e" % kv for kv in errs.items())))
    # MHA, head_dim 128, a batch of one.
    run_case(device, torch.bfloat16, B=1, H=4, Hkv=4, S=65, D=128, Bc=1, bshd=True, unsqueeze_dim=1,
             table_grads=True, seed=99)
    print("%s: %d cases within the derived bounds" % (device, cases + 1))


def test_expanded_tables_get_per_batch_grads(device):
    # cos/sin expanded over the batch (stride 0) and requiring grad: autograd
    # sums per-batch gradients through the expand, so ropegrad must not sum them itself.
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(2, 4, 5, 8, generator=gen).to(device)
    k = torch.randn(2, 2, 5, 8, generator=gen).to(device)
    c1, s1 = tables(1, 5, 8, torch.float32, device, gen)
    c1.requires_grad_()
    s1.requires_grad_()
    grads = []
    for fn in (apply_rotary_pos_emb, stock):
        c1.grad = s1.grad = None
        a, b = fn(q, k, c1.expand(2, -1, -1), s1.expand(2, -1, -1))
        (a.square().sum() + b.sum()).backward()
        grads.append((c1.grad.clone(), s1.grad.clone()))
    for got, want in zip(*grads):
        assert torch.allclose(got, want, rtol=1e-5, atol=1e-5), float((got - want).abs().max())


def expect(exc, needle, fn):
    try:
        fn()
    except exc as e:
        assert needle in str(e), "message %r lacks %r" % (str(e), needle)
        return
    raise AssertionError("no %s raised (wanted one mentioning %r)" % (exc.__name__, needle))


def test_refusals(device):
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(2, 4, 6, 8, generator=gen).to(device)
    k = torch.randn(2, 2, 6, 8, generator=gen).to(device)
    cos, sin = tables(2, 6, 8, torch.float32, device, gen)
    # A layout the kernels cannot take: heads and head_dim swapped in memory.
    expect(ValueError, "contiguous as [B,H,S,D]",
           lambda: apply_rotary_pos_emb(q.transpose(2, 3).contiguous().transpose(2, 3)[..., :8], k, cos, sin))
    expect(ValueError, "both as", lambda: apply_rotary_pos_emb(q, k.transpose(1, 2).contiguous().transpose(1, 2),
                                                                cos, sin))
    expect(TypeError, "float64", lambda: apply_rotary_pos_emb(q.double(), k.double(), cos, sin))
    expect(TypeError, "one dtype", lambda: apply_rotary_pos_emb(q, k.half(), cos, sin))
    expect(ValueError, "[B,S,D]", lambda: apply_rotary_pos_emb(q, k, cos[0], sin[0]))
    expect(ValueError, "must match", lambda: apply_rotary_pos_emb(q, k, cos, sin.half()))
    expect(ValueError, "contiguous [S,D]", lambda: apply_rotary_pos_emb(q, k, cos.transpose(1, 2).contiguous()
                                                                         .transpose(1, 2)[:, :6, :8], sin))
    expect(ValueError, "unsqueeze_dim", lambda: apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=3))
    expect(ValueError, "head_dim must be even", lambda: apply_rotary_pos_emb(q[..., :7], k[..., :7],
                                                                               cos[..., :7], sin[..., :7]))
    expect(ValueError, "4 dims", lambda: apply_rotary_pos_emb(q[0], k[0], cos, sin))


def devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def main():
    failed = 0
    tests = [test_matches_float64_autograd, test_expanded_tables_get_per_batch_grads, test_refusals]
    if not torch.cuda.is_available():
        print("cuda cases skipped: no CUDA device")
    for dev in devices():
        for t in tests:
            try:
                t(dev)
                print("ok   %s[%s]" % (t.__name__, dev))
            except Exception as e:  # report every failure, then exit 1
                failed += 1
                print("FAIL %s[%s]: %s: %s" % (t.__name__, dev, type(e).__name__, e))
    print("%s (torch %s)" % ("FAILED" if failed else "all passed", torch.__version__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
