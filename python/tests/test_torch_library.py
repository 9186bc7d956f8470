# SPDX-License-Identifier: Apache-2.0
"""ropegrad's torch ops as torch.library sees them (torch.ops.ropegrad.*):
torch.library.opcheck on every op (its schema, its fake implementation against
the real one, its autograd registration, AOT dispatch with dynamic shapes), for
both memory layouts, GQA, the dtypes, inputs with and without gradients; then
torch.compile(fullgraph=True) of code calling them (aot_eager and inductor):
the op stays one opaque call, so the outputs and gradients equal eager's bit
for bit; and the positions op against the table path: rope_apply_pos with bf16
cos/sin equals rope_apply on 011's table bit for bit, forward and backward, and
packed sequences (cu_seqlens) equal the same tokens with their offsets as positions.
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
       "rotary_cos_sin": True, "cos_sin": False, "rope_apply_pos": True, "rope_apply_pos_backward": False}


def test_registered(device):
    """Every op under torch.ops.ropegrad, functional, with a fake (meta) implementation; the
    differentiable ones with their autograd formula."""
    from torch._library.custom_ops import OPDEFS
    import ropegrad.cos_sin  # noqa: F401  (each op module registers its op)
    import ropegrad.rope_apply_backward  # noqa: F401
    import ropegrad.rope_apply_pos_backward  # noqa: F401
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

    q = torch.randn(B, S, H, D, generator=gen).to(torch.bfloat16).to(device).requires_grad_()
    k = torch.randn(B, S, Hkv, D, generator=gen).to(torch.bfloat16).to(device).requires_grad_()
    pos = torch.randint(0, 30000, (B, S), generator=gen).to(device)
    cos = torch.randn(1, S, D, generator=gen).to(device).requires_grad_()
    sin = torch.randn(1, S, D, generator=gen).to(device).requires_grad_()
    for backend in ("aot_eager", "inductor"):
        for fn, args in ((tables, (q, k, pos)), (positions, (q, k, pos)), (with_table_grads, (q, k, cos, sin))):
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


def test_refusals(device):
    from ropegrad.rope_apply_pos import rope_apply_pos
    q = torch.randn(1, 2, 4, 8, device=device)
    k = torch.randn(1, 2, 4, 8, device=device)
    pos = torch.arange(4, device=device)[None]
    inv = inv_freq(8).to(device)
    cases = [
        (ValueError, "inv_freq", lambda: rope_apply_pos(q, k, pos, inv[:3])),
        (ValueError, "rotary_dim", lambda: rope_apply_pos(q, k, pos, inv, rotary_dim=5)),
        (ValueError, "position_ids", lambda: rope_apply_pos(q, k, pos.float(), inv)),
        (TypeError, "cos_sin_dtype", lambda: rope_apply_pos(q, k, pos, inv, cos_sin_dtype=torch.float64)),
        (ValueError, "contiguous", lambda: rope_apply_pos(q.transpose(2, 3), k.transpose(2, 3), pos, inv)),
        (ValueError, "cu_seqlens", lambda: rope_apply_pos(q[0], k[0], None, inv,
                                                           cu_seqlens=torch.tensor([0, 2], device=device))),
    ]
    for exc, needle, fn in cases:
        try:
            fn()
        except exc as e:
            assert needle in str(e), "%s: %r does not name %r" % (exc.__name__, str(e), needle)
            continue
        raise AssertionError("accepted: expected %s naming %r" % (exc.__name__, needle))


def main():
    if not hasattr(torch.library, "custom_op"):
        print("SKIP: torch %s has no torch.library.custom_op (ropegrad's torch ops need torch >= 2.4)"
              % torch.__version__)
        return 77
    print("torch %s, library %s" % (torch.__version__, _lib.library_path()))
    torch.set_num_threads(min(2, torch.get_num_threads()))
    tests = [test_registered, test_opcheck_apply, test_opcheck_cos_sin_generation, test_opcheck_positions,
             test_compile_fullgraph, test_positions_equal_tables, test_refusals]
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
