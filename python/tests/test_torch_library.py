# SPDX-License-Identifier: Apache-2.0
"""ropegrad's torch ops as torch.library sees them (torch.ops.ropegrad.*):
torch.library.opcheck on every op (its schema, its fake implementation against
the real one, its autograd registration, AOT dispatch with dynamic shapes), for
both memory layouts, GQA, the dtypes, inputs with and without gradients; then
torch.compile(fullgraph=True) of code calling them (aot_eager and inductor):
the op stays one opaque call, so the outputs and gradients equal eager's bit
for bit; and the positions op against the table path: rope_apply_pos with bf16
cos/sin equals rope_apply on 011's table bit for bit, forward and backward, in
both styles and with partial rotary, and packed sequences (cu_seqlens) equal
the same tokens with their offsets as positions; the packed table op
(rope_apply_thd: one table, cu_seqlens or per-token position_ids) under
opcheck and equal to the Hugging Face per-token table path on the same tokens
(ropegrad's bit for bit, the stock formula within bf16 rounding), table
gradients refused; the table path's interleaved
style and partial rotary against a float64 formula with torch's autograd.
CPU always, CUDA too where there is a GPU.

    ROPEGRAD_LIB=build/libropegrad.so PYTHONPATH=python .venv/bin/python python/tests/test_torch_library.py

Needs torch >= 2.4 (torch.library.custom_op); CTest runs it through
run_with_torch.sh (skipped, saying why, without a Python that has torch).
Inductor on the CPU needs a C++ compiler; without one the inductor cases fail.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from ropegrad import _lib  # noqa: E402

def heads(B, H, S, D, dtype, device, bshd, gen, grad=False):
    """[B,H,S,D] laid out as BSHD (q_proj's output viewed and transposed) or BHSD."""
    shape = (B, S, H, D) if bshd else (B, H, S, D)
    x = torch.randn(shape, generator=gen).to(dtype).to(device)
    x = x.transpose(1, 2) if bshd else x
    return x.requires_grad_(grad)


def inv_freq(D, theta=1e4):
    return 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.float32) / D))


def opcheck(op, args, what):
    result = torch.library.opcheck(op, args)
    bad = {k: v for k, v in result.items() if v != "SUCCESS"}
    assert not bad, "%s: %s" % (what, bad)


# op -> has an autograd formula (the others are backward ops, or take no differentiable input)
OPS = {"rope_apply": True, "rope_apply_backward": False, "rope_forward": True, "rope_position_grad": False,
       "rotary_cos_sin": True, "cos_sin": False, "rope_apply_pos": True, "rope_apply_pos_backward": False,
       "rope_apply_thd": True, "rope_apply_thd_backward": False}


def test_registered(device):
    """Every op under torch.ops.ropegrad, functional, with a fake (meta) implementation; the
    differentiable ones with their autograd formula."""
    from torch._library.custom_ops import OPDEFS
    import ropegrad.cos_sin  # noqa: F401  (each op module registers its op)
    import ropegrad.rope_apply_backward  # noqa: F401
    import ropegrad.rope_apply_pos_backward  # noqa: F401
    import ropegrad.rope_apply_thd_backward  # noqa: F401
    import ropegrad.rope_forward  # noqa: F401
    for name, differentiable in OPS.items():
        schema = str(getattr(torch.ops.ropegrad, name).default._schema)
        assert schema.startswith("ropegrad::%s(" % name), schema
        assert "!" not in schema and "(a" not in schema, "%s mutates or aliases an input: %s" % (name, schema)
        if hasattr(torch.Tag, "needs_exact_strides"):   # compiled code must keep the layouts eager code has
            assert torch.Tag.needs_exact_strides in getattr(torch.ops.ropegrad, name).default.tags, name
        opdef = OPDEFS["ropegrad::" + name]
        assert opdef._abstract_fn is not None, "%s has no fake implementation" % name
        assert (opdef._backward_fn is not None) == differentiable, \
            "%s: autograd formula %s, expected %s" % (name, opdef._backward_fn, differentiable)


def test_opcheck_apply(device):
    from ropegrad.rope_apply import rope_apply_op
    from ropegrad.rope_apply_backward import rope_apply_backward_op
    gen = torch.Generator().manual_seed(1)
    B, H, Hkv, S, D = 2, 4, 2, 8, 32
    for dtype in (torch.bfloat16, torch.float32):
        for bshd in (False, True):
            for Bc in (1, B):
                for table_grads in (False, True):
                    q = heads(B, H, S, D, dtype, device, bshd, gen, True)
                    k = heads(B, Hkv, S, D, dtype, device, bshd, gen, True)
                    cos = torch.randn(Bc, S, D, generator=gen).to(device).requires_grad_(table_grads)
                    sin = torch.randn(Bc, S, D, generator=gen).to(device).requires_grad_(table_grads)
                    what = "rope_apply %s bshd=%s Bc=%d table_grads=%s" % (dtype, bshd, Bc, table_grads)
                    opcheck(rope_apply_op, (q, k, cos, sin), what)
                    g = torch.randn(B, S, H, D, generator=gen).to(dtype).to(device).transpose(1, 2)   # any strides
                    gk = torch.randn(B, Hkv, S, D, generator=gen).to(dtype).to(device)
                    layout = 1 if bshd else 0
                    qk = (q.detach(), k.detach()) if table_grads else (None, None)
                    opcheck(rope_apply_backward_op, (g, gk, cos.detach(), sin.detach(), *qk, layout),
                            "rope_apply_backward " + what)

    # the interleaved style and partial rotary: tables [.., R]
    for style, rotary_dim in ((1, 0), (0, 12), (1, 20)):
        R = rotary_dim or D
        for bshd, Bc, table_grads in ((False, 1, True), (True, B, False), (True, B, True)):
            q = heads(B, H, S, D, torch.bfloat16, device, bshd, gen, True)
            k = heads(B, Hkv, S, D, torch.bfloat16, device, bshd, gen, True)
            cos = torch.randn(Bc, S, R, generator=gen).to(device).requires_grad_(table_grads)
            sin = torch.randn(Bc, S, R, generator=gen).to(device).requires_grad_(table_grads)
            what = "rope_apply style=%d rotary_dim=%d bshd=%s Bc=%d" % (style, rotary_dim, bshd, Bc)
            opcheck(rope_apply_op, (q, k, cos, sin, style, rotary_dim), what)
            g = torch.randn(B, H, S, D, generator=gen).to(torch.bfloat16).to(device)
            gk = torch.randn(B, Hkv, S, D, generator=gen).to(torch.bfloat16).to(device)
            qk = (q.detach(), k.detach()) if table_grads else (None, None)
            opcheck(rope_apply_backward_op, (g, gk, cos.detach(), sin.detach(), *qk, 1 if bshd else 0, style,
                                             rotary_dim), "rope_apply_backward " + what)


def styled_formula(x, cos, sin, interleaved, R):
    """x*cos + rotate(x)*sin on x's first R elements (cos/sin [B,S,R] broadcast
    over heads), the rest passed through: GPT-J's rotate_every_two or
    Hugging Face's rotate_half, as their model code spells it."""
    xr, rest = x[..., :R], x[..., R:]
    if interleaved:
        rot = torch.stack((-xr[..., 1::2], xr[..., ::2]), dim=-1).flatten(-2)
    else:
        rot = torch.cat((-xr[..., R // 2:], xr[..., :R // 2]), dim=-1)
    return torch.cat((xr * cos[:, None] + rot * sin[:, None], rest), dim=-1)


def test_styles_against_formula(device):
    """apply_rotary_pos_emb(interleaved=, rotary_dim=) against styled_formula in
    float64: the outputs within the dtype's rounding, and with torch's autograd
    of the formula q's, k's, cos's and sin's gradients (the tables real RoPE
    tables: repeat_interleave'd or cat'd angles, so 068's grad_x is exact)."""
    from ropegrad.rope_apply import apply_rotary_pos_emb
    gen = torch.Generator().manual_seed(6)
    B, H, Hkv, S, D = 2, 4, 2, 9, 64
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
        for interleaved in (False, True):
            for rotary_dim in (0, 24, 40):
                R = rotary_dim or D
                ang = torch.rand(B, S, R // 2, generator=gen, dtype=torch.float64) * 50
                ang = ang.repeat_interleave(2, dim=-1) if interleaved else torch.cat((ang, ang), dim=-1)
                cos = ang.cos().float().to(device).requires_grad_()
                sin = ang.sin().float().to(device).requires_grad_()
                for bshd in (False, True):
                    q = heads(B, H, S, D, dtype, device, bshd, gen, True)
                    k = heads(B, Hkv, S, D, dtype, device, bshd, gen, True)
                    got = run(lambda q, k, c, s: apply_rotary_pos_emb(q, k, c, s, interleaved=interleaved,
                                                                      rotary_dim=rotary_dim), (q, k, cos, sin))
                    want = run(lambda q, k, c, s: [styled_formula(x.double(), c.double(), s.double(), interleaved, R)
                                                   for x in (q, k)], (q, k, cos, sin))
                    for i, (a, b) in enumerate(zip(got, want)):
                        err = (a.double() - b).abs().max().item()
                        bound = tol * (1 + b.abs().max().item()) * (B * (H + Hkv) if i >= 4 else 1)
                        assert a.shape == b.shape and err <= bound, \
                            "%s interleaved=%s rotary_dim=%d bshd=%s: result %d off by %g (bound %g)" % (
                                dtype, interleaved, rotary_dim, bshd, i, err, bound)
                    if R < D:   # the rest of each row passes through bit for bit
                        assert torch.equal(got[0][..., R:], q[..., R:].detach()), "tail changed"


def test_opcheck_cos_sin_generation(device):
    from ropegrad.cos_sin import cos_sin_op
    from ropegrad.rope_backward import rope_position_grad_op, rotary_cos_sin_op
    from ropegrad.rope_forward import rope_forward_op
    gen = torch.Generator().manual_seed(2)
    B, S, D = 2, 16, 64
    inv = inv_freq(D).to(device)
    pos = torch.randint(0, 40000, (B, S), generator=gen).to(device)
    opcheck(rope_forward_op, (pos, inv, 0.75), "rope_forward int64 positions")
    opcheck(rope_forward_op, (pos.float().requires_grad_(), inv, 0.75, 0), "rope_forward float positions, grad")
    opcheck(rotary_cos_sin_op, (pos.float().requires_grad_(), inv, 1.5), "rotary_cos_sin inv [H]")
    inv_b = inv[None, :, None].repeat(B, 1, 1) * torch.tensor([1.0, 0.5], device=device)[:, None, None]
    opcheck(rotary_cos_sin_op, (pos.float().requires_grad_(), inv_b, 1.0), "rotary_cos_sin inv [B,H,1]")
    for dtype in (torch.bfloat16, torch.float32):
        gc = torch.randn(B, S, D, generator=gen).to(dtype).to(device)
        gs = torch.randn(B, S, D, generator=gen).to(dtype).to(device)
        emb = torch.randn(B, S, D, generator=gen).to(device)
        opcheck(rope_position_grad_op, (gc, gs, emb, inv, 0.5), "rope_position_grad %s" % dtype)
    opcheck(cos_sin_op, (torch.randn(B, S, D // 2, generator=gen).to(device) * 30, 1.0), "cos_sin")


def test_opcheck_positions(device):
    from ropegrad.rope_apply_pos import rope_apply_pos_op
    from ropegrad.rope_apply_pos_backward import rope_apply_pos_backward_op
    gen = torch.Generator().manual_seed(3)
    B, H, Hkv, S, D = 2, 4, 2, 8, 32
    for dtype, cs_dtype in ((torch.bfloat16, torch.bfloat16), (torch.float32, torch.float32),
                            (torch.float16, torch.float32)):
        for bshd in (False, True):
            for style, rotary_dim in ((0, 0), (1, 0), (0, 16), (1, 24)):
                q = heads(B, H, S, D, dtype, device, bshd, gen, True)
                k = heads(B, Hkv, S, D, dtype, device, bshd, gen, True)
                pos = torch.randint(0, 100000, (B, S), generator=gen).to(device)
                pos = pos.int() if style else pos
                inv = inv_freq(rotary_dim or D).to(device)
                args = (pos, inv, 0.8, cs_dtype, style, rotary_dim, None)
                what = "rope_apply_pos %s bshd=%s style=%d rotary_dim=%d" % (dtype, bshd, style, rotary_dim)
                opcheck(rope_apply_pos_op, (q, k) + args, what)
                g = torch.randn(B, S, H, D, generator=gen).to(dtype).to(device).transpose(1, 2)
                gk = torch.randn(B, Hkv, S, D, generator=gen).to(dtype).to(device)
                opcheck(rope_apply_pos_backward_op, (g, gk) + args + (1 if bshd else 0,),
                        "rope_apply_pos_backward " + what)
    # packed sequences: [1, T, H, D] in BSHD memory, cu_seqlens
    T = 13
    q = heads(1, H, T, D, torch.bfloat16, device, True, gen, True)
    k = heads(1, Hkv, T, D, torch.bfloat16, device, True, gen, True)
    cu = torch.tensor([0, 5, 5, 13], dtype=torch.int32, device=device)
    packed = (None, inv_freq(D).to(device), 1.0, torch.bfloat16, 0, 0, cu)
    opcheck(rope_apply_pos_op, (q, k) + packed, "rope_apply_pos packed")
    g = torch.randn(1, T, H, D, generator=gen).to(torch.bfloat16).to(device).transpose(1, 2)
    gk = torch.randn(1, T, Hkv, D, generator=gen).to(torch.bfloat16).to(device).transpose(1, 2)
    opcheck(rope_apply_pos_backward_op, (g, gk) + packed + (1,), "rope_apply_pos_backward packed")


def run(fn, args):
    """fn's outputs and the gradients of args (those that require grad) for the sum of the outputs with weights."""
    args = [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
    outs = fn(*args)
    w = torch.Generator().manual_seed(9)
    loss = sum((o.float() * torch.randn(o.shape, generator=w).to(o.device)).sum() for o in outs)
    loss.backward()
    return [o.detach() for o in outs] + [a.grad for a in args if isinstance(a, torch.Tensor) and a.requires_grad]


def test_compile_fullgraph(device):
    """torch.compile(fullgraph=True) of code around each op: no graph break, and eager's bits."""
    from ropegrad.rope_apply import apply_rotary_pos_emb
    from ropegrad.rope_apply_pos import rope_apply_pos
    from ropegrad.rope_forward import rotary_embedding
    gen = torch.Generator().manual_seed(4)
    B, H, Hkv, S, D = 2, 4, 2, 16, 64
    inv = inv_freq(D).to(device)

    def tables(q, k, pos):   # the switched Hugging Face path: 011 table, 088/068
        cos, sin = rotary_embedding(q, pos, inv, 1.0)   # views of 011's [B,S,D,2]: one copy each
        return apply_rotary_pos_emb(q.transpose(1, 2), k.transpose(1, 2), cos.contiguous(), sin.contiguous())

    def positions(q, k, pos):
        return rope_apply_pos(q.transpose(1, 2), k.transpose(1, 2), pos, inv, 1.0)

    def with_table_grads(q, k, cos, sin):
        return apply_rotary_pos_emb(q * 2, k, cos, sin, unsqueeze_dim=2)

    def interleaved_partial(q, k, cos, sin):
        return apply_rotary_pos_emb(q * 2, k, cos[..., :D // 2].contiguous(), sin[..., :D // 2].contiguous(),
                                    unsqueeze_dim=2, interleaved=True, rotary_dim=D // 2)

    q = torch.randn(B, S, H, D, generator=gen).to(torch.bfloat16).to(device).requires_grad_()
    k = torch.randn(B, S, Hkv, D, generator=gen).to(torch.bfloat16).to(device).requires_grad_()
    pos = torch.randint(0, 30000, (B, S), generator=gen).to(device)
    cos = torch.randn(1, S, D, generator=gen).to(device).requires_grad_()
    sin = torch.randn(1, S, D, generator=gen).to(device).requires_grad_()
    for backend in ("aot_eager", "inductor"):
        for fn, args in ((tables, (q, k, pos)), (positions, (q, k, pos)), (with_table_grads, (q, k, cos, sin)),
                         (interleaved_partial, (q, k, cos, sin))):
            torch._dynamo.reset()
            want = run(fn, args)
            got = run(torch.compile(fn, fullgraph=True, backend=backend), args)
            for i, (a, b) in enumerate(zip(got, want)):
                assert a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b), \
                    "%s %s: result %d differs from eager (max diff %s)" % (fn.__name__, backend, i,
                                                                          (a.float() - b.float()).abs().max().item())


def test_positions_equal_tables(device):
    """rope_apply_pos (bf16 cos/sin computed in the kernel) == rope_apply on 011's table, bits of outputs and grads."""
    from ropegrad.rope_apply import apply_rotary_pos_emb
    from ropegrad.rope_apply_pos import rope_apply_pos
    from ropegrad.rope_forward import rope_forward
    gen = torch.Generator().manual_seed(5)
    B, H, Hkv, S, D = 2, 8, 2, 33, 128
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for bshd in (False, True):
            inv = inv_freq(D, 1e6).to(device)
            pos = torch.randint(0, 300000, (B, S), generator=gen).to(device)
            cs = rope_forward(pos, inv, 0.9)
            cos, sin = cs[..., 0].contiguous(), cs[..., 1].contiguous()
            q = heads(B, H, S, D, dtype, device, bshd, gen, True)
            k = heads(B, Hkv, S, D, dtype, device, bshd, gen, True)
            a = run(lambda q, k: apply_rotary_pos_emb(q, k, cos, sin), (q, k))
            b = run(lambda q, k: rope_apply_pos(q, k, pos, inv, 0.9, cos_sin_dtype=torch.bfloat16), (q, k))
            for i, (x, y) in enumerate(zip(a, b)):
                assert x.stride() == y.stride() and torch.equal(x, y), \
                    "%s bshd=%s: result %d differs (max diff %s)" % (dtype, bshd, i,
                                                                    (x.float() - y.float()).abs().max().item())
            # [1,S] positions shared by the batch: the same as the ids repeated
            p1 = pos[:1]
            c = run(lambda q, k: rope_apply_pos(q, k, p1, inv, 0.9), (q, k))
            d = run(lambda q, k: rope_apply_pos(q, k, p1.expand(B, -1).contiguous(), inv, 0.9), (q, k))
            assert all(torch.equal(x, y) for x, y in zip(c, d)), "%s: [1,S] positions differ from [B,S]" % dtype
        # packed [T,H,D] with cu_seqlens == the same tokens [1,T,H,D] with each token's offset in its sequence
        lens = [7, 0, 19, 1]
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=device)
        offsets = torch.cat([torch.arange(n) for n in lens])[None].to(device)
        T = sum(lens)
        q = torch.randn(T, H, D, generator=gen).to(dtype).to(device).requires_grad_()
        k = torch.randn(T, Hkv, D, generator=gen).to(dtype).to(device).requires_grad_()
        inv = inv_freq(D, 1e6).to(device)
        a = run(lambda q, k: rope_apply_pos(q, k, None, inv, 1.0, cu_seqlens=cu), (q, k))
        b = run(lambda q, k: [t[0] for t in rope_apply_pos(q[None], k[None], offsets, inv, 1.0, unsqueeze_dim=2)],
                (q, k))
        for i, (x, y) in enumerate(zip(a, b)):
            assert x.shape == y.shape and torch.equal(x, y), "%s packed: result %d differs from the unpacked one" % (
                dtype, i)
    # each style, rotary_dim below head_dim: 011's table at head_dim R, its columns in the style's order
    for interleaved, rotary_dim in ((True, 0), (False, 48), (True, 48)):
        R = rotary_dim or D
        inv = inv_freq(R).to(device)
        pos = torch.randint(0, 300000, (B, S), generator=gen).to(device)
        cs = rope_forward(pos, inv, 1.0)   # [B,S,R,2], columns cat(freqs, freqs)
        if interleaved:
            cs = cs[..., :R // 2, :].repeat_interleave(2, dim=2)
        cos, sin = cs[..., 0].contiguous(), cs[..., 1].contiguous()
        q = heads(B, H, S, D, torch.bfloat16, device, True, gen, True)
        k = heads(B, Hkv, S, D, torch.bfloat16, device, True, gen, True)
        a = run(lambda q, k: apply_rotary_pos_emb(q, k, cos, sin, interleaved=interleaved, rotary_dim=rotary_dim),
                (q, k))
        b = run(lambda q, k: rope_apply_pos(q, k, pos, inv, 1.0, interleaved=interleaved, rotary_dim=rotary_dim),
                (q, k))
        for i, (x, y) in enumerate(zip(a, b)):
            assert x.stride() == y.stride() and torch.equal(x, y), \
                "interleaved=%s rotary_dim=%d: result %d differs (max diff %s)" % (
                    interleaved, rotary_dim, i, (x.float() - y.float()).abs().max().item())


def test_refusals(device):
    from ropegrad.rope_apply import apply_rotary_pos_emb
    from ropegrad.rope_apply_backward import rope_apply_backward
    from ropegrad.rope_apply_pos import rope_apply_pos
    q = torch.randn(1, 2, 4, 8, device=device)
    k = torch.randn(1, 2, 4, 8, device=device)
    pos = torch.arange(4, device=device)[None]
    inv = inv_freq(8).to(device)
    cs4 = torch.randn(1, 4, 4, device=device)
    cases = [
        (ValueError, "inv_freq", lambda: rope_apply_pos(q, k, pos, inv[:3])),
        (ValueError, "rotary_dim", lambda: rope_apply_pos(q, k, pos, inv, rotary_dim=5)),
        (ValueError, "rotary_dim", lambda: apply_rotary_pos_emb(q, k, cs4, cs4, rotary_dim=3)),
        (ValueError, "rotary_dim", lambda: apply_rotary_pos_emb(q, k, cs4, cs4, rotary_dim=10)),
        (ValueError, "[B,S,D]", lambda: apply_rotary_pos_emb(q, k, cs4, cs4)),   # [1,4,4] tables, head_dim 8
        (ValueError, "R = rotary_dim", lambda: apply_rotary_pos_emb(q, k, cs4, cs4, interleaved=True, rotary_dim=6)),
        (ValueError, "rotary_dim", lambda: rope_apply_backward(q, k, q, k, cs4, cs4, rotary_dim=-2)),
        (ValueError, "position_ids", lambda: rope_apply_pos(q, k, pos.float(), inv)),
        (TypeError, "cos_sin_dtype", lambda: rope_apply_pos(q, k, pos, inv, cos_sin_dtype=torch.float64)),
        (ValueError, "contiguous", lambda: rope_apply_pos(q.transpose(2, 3), k.transpose(2, 3), pos, inv)),
        (ValueError, "cu_seqlens", lambda: rope_apply_pos(q[0], k[0], None, inv,
                                                           cu_seqlens=torch.tensor([0, 2], device=device))),
    ]
    expect_refusals(cases)


def expect_refusals(cases):
    """Each (exception, needle, fn): fn raises that exception with needle in its message."""
    for exc, needle, fn in cases:
        try:
            fn()
        except exc as e:
            assert needle in str(e), "%s: %r does not name %r" % (exc.__name__, str(e), needle)
            continue
        raise AssertionError("accepted: expected %s naming %r" % (exc.__name__, needle))


def hf_table(n, R, dtype, device, interleaved=False, theta=1e4):
    """Hugging Face's cos/sin rows for positions 0..n-1 ([n, R], emb = cat(freqs, freqs); GPT-J's columns
    repeat each frequency), rounded to dtype."""
    freqs = torch.arange(n, dtype=torch.float32)[:, None] * inv_freq(R, theta)[None]
    emb = freqs.repeat_interleave(2, dim=1) if interleaved else torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype).to(device), emb.sin().to(dtype).to(device)


def packed_case(device, gen, lens=(7, 0, 19, 1)):
    """cu_seqlens of sequences of lens tokens, and each token's offset in its sequence."""
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=device)
    return cu, torch.cat([torch.arange(n) for n in lens]).to(device)


def test_opcheck_thd(device):
    from ropegrad.rope_apply_thd import rope_apply_thd_op
    from ropegrad.rope_apply_thd_backward import rope_apply_thd_backward_op
    gen = torch.Generator().manual_seed(6)
    H, Hkv, D = 4, 2, 32
    cu, offsets = packed_case(device, gen)
    T = int(cu[-1])
    for dtype, cs_dtype in ((torch.bfloat16, torch.bfloat16), (torch.float32, torch.float32),
                            (torch.float16, torch.float32)):
        for style, rotary_dim in ((0, 0), (1, 0), (0, 16), (1, 24)):
            for ids in ("cu_seqlens", "int32", "int64"):
                q = torch.randn(T, H, D, generator=gen).to(dtype).to(device).requires_grad_()
                k = torch.randn(T, Hkv, D, generator=gen).to(dtype).to(device).requires_grad_()
                cos, sin = hf_table(40, rotary_dim or D, cs_dtype, device, style == 1)
                pos = torch.randint(0, 40, (T,), generator=gen).to(device)
                where = (cu, None) if ids == "cu_seqlens" else (None, pos.int() if ids == "int32" else pos)
                args = (cos, sin) + where + (style, rotary_dim)
                what = "rope_apply_thd %s %s style=%d rotary_dim=%d" % (dtype, ids, style, rotary_dim)
                opcheck(rope_apply_thd_op, (q, k) + args, what)
                g = torch.randn(T, H, D, generator=gen).to(dtype).to(device)
                gk = torch.randn(T, Hkv, D, generator=gen).to(dtype).to(device)
                opcheck(rope_apply_thd_backward_op, (g, gk) + args, "rope_apply_thd_backward " + what)


def test_thd_equals_hf_tables(device):
    """Packed thd with one table == the Hugging Face per-token table path on the same tokens: ropegrad's
    apply_rotary_pos_emb (088/068) on the rows gathered per token bit for bit, outputs and gradients; the
    stock formula (q*cos + rotate_half(q)*sin, float64) within the output dtype's rounding."""
    from ropegrad.rope_apply import apply_rotary_pos_emb
    from ropegrad.rope_apply_thd import rope_apply_thd
    gen = torch.Generator().manual_seed(7)
    H, Hkv, D = 8, 2, 128
    cu, offsets = packed_case(device, gen)
    T = int(cu[-1])
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for interleaved, rotary_dim in ((False, 0), (True, 0), (False, 64), (True, 48)):
            R = rotary_dim or D
            cos, sin = hf_table(64, R, torch.bfloat16 if dtype == torch.bfloat16 else torch.float32, device,
                                interleaved)
            q = torch.randn(T, H, D, generator=gen).to(dtype).to(device).requires_grad_()
            k = torch.randn(T, Hkv, D, generator=gen).to(dtype).to(device).requires_grad_()
            pos = torch.randint(0, 64, (T,), generator=gen).to(device)
            for where, rows in (({"cu_seqlens": cu}, offsets), ({"position_ids": pos}, pos),
                                ({"position_ids": pos.int()}, pos)):
                a = run(lambda q, k: rope_apply_thd(q, k, cos, sin, interleaved=interleaved, rotary_dim=rotary_dim,
                                                    **where), (q, k))
                ct, st = cos[rows][None].contiguous(), sin[rows][None].contiguous()   # [1, T, R]: per token
                b = run(lambda q, k: [t[0] for t in apply_rotary_pos_emb(q[None], k[None], ct, st, unsqueeze_dim=2,
                                                                         interleaved=interleaved,
                                                                         rotary_dim=rotary_dim)], (q, k))
                what = "%s interleaved=%s rotary_dim=%d %s" % (dtype, interleaved, rotary_dim, list(where))
                for i, (x, y) in enumerate(zip(a, b)):
                    assert x.shape == y.shape and torch.equal(x, y), "%s: result %d differs (max diff %s)" % (
                        what, i, (x.float() - y.float()).abs().max().item())
                want = [styled_formula(t.double()[None].transpose(1, 2), ct.double(), st.double(), interleaved,
                                       R)[0].transpose(0, 1) for t in (q.detach(), k.detach())]
                tol = {torch.bfloat16: 2 ** -8, torch.float16: 2 ** -10, torch.float32: 2 ** -22}[dtype]
                for x, w in zip(a[:2], want):
                    err = ((x.double() - w).abs() - tol * w.abs() - 2e-6).max().item()
                    assert err <= 0, "%s: off the float64 formula by %s" % (what, err)


def test_thd_compile(device):
    """torch.compile(fullgraph=True) around rope_apply_thd (cu_seqlens; int64 position_ids with interleaved
    pairs and partial rotary): no graph break, and eager's bits."""
    from ropegrad.rope_apply_thd import rope_apply_thd
    gen = torch.Generator().manual_seed(8)
    cu, _ = packed_case(device, gen)
    T, H, Hkv, D = int(cu[-1]), 4, 2, 64
    cos, sin = hf_table(32, D, torch.bfloat16, device)
    cos_il, sin_il = hf_table(32, 32, torch.bfloat16, device, True)
    pos = torch.randint(0, 32, (T,), generator=gen).to(device)

    def packed(q, k):
        return rope_apply_thd(q * 2, k, cos, sin, cu_seqlens=cu)

    def by_ids(q, k):
        return rope_apply_thd(q, k * 2, cos_il, sin_il, position_ids=pos, interleaved=True, rotary_dim=32)

    q = torch.randn(T, H, D, generator=gen).to(torch.bfloat16).to(device).requires_grad_()
    k = torch.randn(T, Hkv, D, generator=gen).to(torch.bfloat16).to(device).requires_grad_()
    for backend in ("aot_eager", "inductor"):
        for fn in (packed, by_ids):
            torch._dynamo.reset()
            want = run(fn, (q, k))
            got = run(torch.compile(fn, fullgraph=True, backend=backend), (q, k))
            for i, (a, b) in enumerate(zip(got, want)):
                assert a.shape == b.shape and torch.equal(a, b), "%s %s: result %d differs from eager" % (
                    fn.__name__, backend, i)


def test_thd_refusals(device):
    from ropegrad import _lib
    from ropegrad.rope_apply_thd import rope_apply_thd
    q = torch.randn(5, 2, 8, device=device)
    k = torch.randn(5, 1, 8, device=device)
    cos, sin = hf_table(4, 8, torch.float32, device)
    cu = torch.tensor([0, 2, 5], dtype=torch.int32, device=device)
    pos = torch.tensor([0, 1, 2, 3, 0], device=device)
    cases = [
        (ValueError, "table gradients", lambda: rope_apply_thd(q, k, cos.clone().requires_grad_(), sin, cu_seqlens=cu)),
        (ValueError, "exactly one", lambda: rope_apply_thd(q, k, cos, sin)),
        (ValueError, "exactly one", lambda: rope_apply_thd(q, k, cos, sin, cu_seqlens=cu, position_ids=pos)),
        (ValueError, "[table_len, 4]", lambda: rope_apply_thd(q, k, cos, sin, cu_seqlens=cu, rotary_dim=4)),
        (ValueError, "contiguous", lambda: rope_apply_thd(q.transpose(0, 1), k, cos, sin, cu_seqlens=cu)),
        (ValueError, "position_ids", lambda: rope_apply_thd(q, k, cos, sin, position_ids=pos[:3])),
        (ValueError, "cu_seqlens", lambda: rope_apply_thd(q, k, cos, sin, cu_seqlens=cu.long())),
        (TypeError, "cos", lambda: rope_apply_thd(q, k, cos.double(), sin.double(), cu_seqlens=cu)),
    ]
    if device == "cpu":   # the CPU path reads the positions: beyond the table, a sequence longer than it
        cases += [(_lib.RopegradError, "", lambda: rope_apply_thd(q, k, cos, sin, position_ids=pos + 1)),
                  (_lib.RopegradError, "", lambda: rope_apply_thd(q, k, cos[:2], sin[:2], cu_seqlens=cu))]
    expect_refusals(cases)


def main():
    if not hasattr(torch.library, "custom_op"):
        print("SKIP: torch %s has no torch.library.custom_op (ropegrad's torch ops need torch >= 2.4)"
              % torch.__version__)
        return 77
    print("torch %s, library %s" % (torch.__version__, _lib.library_path()))
    torch.set_num_threads(min(2, torch.get_num_threads()))
    tests = [test_registered, test_opcheck_apply, test_opcheck_cos_sin_generation, test_opcheck_positions,
             test_compile_fullgraph, test_positions_equal_tables, test_styles_against_formula, test_refusals,
             test_opcheck_thd, test_thd_equals_hf_tables, test_thd_compile, test_thd_refusals]
    devs = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if "cuda" not in devs:
        print("cuda cases skipped: no CUDA device (torch.cuda.is_available() is False)")
    cases = [("%s[%s]" % (t.__name__, dev), t, dev) for dev in devs for t in tests]
    failures = []
    for label, fn, dev in cases:
        try:
            fn(dev)
        except Exception as e:  # report every failure, then exit 1
            failures.append(label)
            print("FAIL %s: %s: %s" % (label, type(e).__name__, e))
        else:
            print("ok   %s" % label)
    print("%d of %d cases failed" % (len(failures), len(cases)) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
