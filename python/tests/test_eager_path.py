# SPDX-License-Identifier: Apache-2.0
"""ropegrad's eager calls (ropegrad.torch.Eager) against the same calls through
the dispatcher (torch.ops.ropegrad.*): every public torch function, run once as
plain eager code (the op's implementation called directly under an
autograd.Function of its own) and once under a pass-through TorchDispatchMode
(which sends every call through the op, as before), gives the same outputs and
gradients bit for bit, the same errors (type and message) on bad inputs, and
takes the path it should (the autograd node's class says which; under the mode
the op's calls are seen by it; under the profiler the call is recorded under the
op's name), and returns views where the op does (so in-place
use meets the same autograd rules and messages); with two GPUs, tensors on the
one that is not current run there and leave the current one as it was. CPU always, CUDA too where there is a GPU.

    ROPEGRAD_LIB=build/libropegrad.so PYTHONPATH=python .venv/bin/python python/tests/test_eager_path.py

Needs torch >= 2.4 (torch.library.custom_op); CTest runs it through
run_with_torch.sh (skipped, saying why, without a Python that has torch).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


class Seen(TorchDispatchMode):
    """Passes every call on unchanged, noting the ropegrad ops it sees."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "ropegrad":
            self.ops.append(func.__name__.split(".")[0])
        return func(*args, **(kwargs or {}))


def heads(B, H, S, D, dtype, device, gen):
    """[B,H,S,D] views of [B,S,H,D] memory (as the attention makes them), requiring grad."""
    return torch.randn(B, S, H, D, generator=gen).to(device, dtype).transpose(1, 2).requires_grad_()


def inv_freq(R, device, theta=1e4):
    return (1.0 / (theta ** (torch.arange(0, R, 2, dtype=torch.float32) / R))).to(device)


def cases(device):
    """name -> (fn() -> outputs, the tensors to differentiate, the op the first output's node must come from)."""
    from ropegrad import torch as rgt
    from ropegrad.rope_backward import rotary_cos_sin
    gen = torch.Generator().manual_seed(7)
    B, H, Hkv, S, D = 2, 4, 2, 8, 32
    out = {}
    for dtype in (torch.bfloat16, torch.float32):
        q, k = heads(B, H, S, D, dtype, device, gen), heads(B, Hkv, S, D, dtype, device, gen)
        cos = torch.randn(1, S, D, generator=gen).to(device, dtype).requires_grad_()
        sin = torch.randn(1, S, D, generator=gen).to(device, dtype).requires_grad_()
        out["apply %s" % dtype] = (lambda q=q, k=k, c=cos, s=sin: rgt.apply_rotary_pos_emb(q, k, c, s),
                                   (q, k, cos, sin), "rope_apply")
        c2, s2 = cos[..., :12].detach().contiguous(), sin[..., :12].detach().contiguous()
        out["apply interleaved partial %s" % dtype] = (
            lambda q=q, k=k, c=c2, s=s2: rgt.apply_rotary_pos_emb(q, k, c, s, interleaved=True, rotary_dim=12),
            (q, k), "rope_apply")
        pos = torch.arange(S, device=device)[None].expand(B, -1) + 3
        out["pos %s" % dtype] = (lambda q=q, k=k, p=pos: rgt.rope_apply_pos(q, k, p, inv_freq(D, device), 0.5),
                                 (q, k), "rope_apply_pos")
        qt = torch.randn(S, H, D, generator=gen).to(device, dtype).requires_grad_()
        kt = torch.randn(S, Hkv, D, generator=gen).to(device, dtype).requires_grad_()
        cu = torch.tensor([0, 3, S], dtype=torch.int32, device=device)
        out["pos packed %s" % dtype] = (
            lambda q=qt, k=kt, c=cu: rgt.rope_apply_pos(q, k, None, inv_freq(D, device), cu_seqlens=c),
            (qt, kt), "rope_apply_pos")
        table = cos[0].detach(), sin[0].detach()
        out["thd %s" % dtype] = (lambda q=qt, k=kt, c=cu, t=table: rgt.rope_apply_thd(q, k, t[0], t[1], cu_seqlens=c),
                                 (qt, kt), "rope_apply_thd")
    x = torch.zeros(B, S, D, dtype=torch.bfloat16, device=device)
    ids = torch.arange(S, device=device)[None].expand(B, -1).contiguous()
    out["rotary_embedding"] = (lambda: rgt.rotary_embedding(x, ids, inv_freq(D, device), 1.0), (), None)
    fpos = ids.float().requires_grad_()
    out["rotary_embedding float positions"] = (lambda: rgt.rotary_embedding(x, fpos, inv_freq(D, device), 1.0),
                                               (fpos,), "rope_forward")
    out["rotary_cos_sin"] = (lambda: rotary_cos_sin(fpos, inv_freq(D, device), 2.0), (fpos,), "rotary_cos_sin")
    freqs = ids[..., None].float() * inv_freq(D, device)
    out["cos_sin"] = (lambda: rgt.cos_sin_from_freqs(freqs, 0.75), (), None)
    return out


def run(fn, wrt):
    outs = fn()
    outs = (outs,) if isinstance(outs, torch.Tensor) else tuple(outs)
    grads = ()
    if wrt:
        gen = torch.Generator().manual_seed(11)
        ups = [torch.randn(o.shape, generator=gen).to(o.device, o.dtype) for o in outs]
        grads = torch.autograd.grad(outs, wrt, ups, allow_unused=True)
    return outs, grads


# op -> (its module, the ropegrad.torch.Eager its torch functions call)
EAGER = {"rope_apply": ("rope_apply", "_rope_apply"), "rope_apply_pos": ("rope_apply_pos", "_rope_apply_pos"),
         "rope_apply_thd": ("rope_apply_thd", "_rope_apply_thd"), "rope_forward": ("rope_forward", "_rope_forward"),
         "rotary_cos_sin": ("rope_backward", "_rotary_cos_sin")}


def node_types(t):
    """The classes of the autograd graph's nodes behind t."""
    found, todo = [], [t.grad_fn]
    while todo:
        n = todo.pop()
        if n is not None:
            found.append(type(n))
            todo.extend(f for f, _ in n.next_functions)
    return found


def path_taken(t, op):
    """"eager" when t's graph holds the node of op's eager autograd.Function, "op" when it holds
    the node of the op's autograd registration (both named GeneratedBackwardFor_ropegrad_<op>_default)."""
    import importlib
    module, attr = EAGER[op]
    eager = getattr(importlib.import_module("ropegrad." + module), attr).function._backward_cls
    types = node_types(t)
    if eager in types:
        return "eager"
    named = [c for c in types if c.__name__ == "GeneratedBackwardFor_ropegrad_%s_defaultBackward" % op]
    return "op" if named else "neither (%s)" % [c.__name__ for c in types]


def same(a, b):
    return a is None and b is None or (a is not None and b is not None and a.dtype == b.dtype and
                                       a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b))


def test_equal_to_op_path(device):
    for name, (fn, wrt, node) in cases(device).items():
        outs, grads = run(fn, wrt)
        if node:
            path = path_taken(outs[0], node)
            assert path == "eager", "%s: plain eager call took the %s path" % (name, path)
        with Seen() as mode:
            outs_op, grads_op = run(fn, wrt)
        assert mode.ops, "%s: the dispatch mode saw no ropegrad op" % name
        if node:
            path = path_taken(outs_op[0], node)
            assert path == "op", "%s: the call under a dispatch mode took the %s path" % (name, path)
        assert len(outs) == len(outs_op) and all(same(a, b) for a, b in zip(outs, outs_op)), "%s: outputs" % name
        assert all(same(a, b) for a, b in zip(grads, grads_op)), "%s: gradients" % name


def test_same_errors(device):
    from ropegrad import torch as rgt
    gen = torch.Generator().manual_seed(3)
    q, k = heads(1, 4, 8, 32, torch.bfloat16, device, gen), heads(1, 2, 8, 32, torch.bfloat16, device, gen)
    cos = torch.randn(1, 8, 32, generator=gen).to(device)
    pos = torch.arange(8, device=device)[None]
    bad = {
        "rotary_dim odd": lambda: rgt.apply_rotary_pos_emb(q, k, cos, cos, rotary_dim=3),
        "tables short": lambda: rgt.apply_rotary_pos_emb(q, k, cos[:, :5], cos[:, :5]),
        "tables strided": lambda: rgt.apply_rotary_pos_emb(q, k, cos.transpose(0, 1), cos.transpose(0, 1)),
        "pos inv_freq": lambda: rgt.rope_apply_pos(q, k, pos, inv_freq(30, device)),
        "pos dtype": lambda: rgt.rope_apply_pos(q, k, pos, inv_freq(32, device), cos_sin_dtype="bfloat16"),
        "pos ids": lambda: rgt.rope_apply_pos(q, k, pos.float(), inv_freq(32, device)),
        "thd both": lambda: rgt.rope_apply_thd(q[0].transpose(0, 1), k[0].transpose(0, 1), cos[0], cos[0]),
        "cos_sin": lambda: rgt.cos_sin_from_freqs(cos[..., :16].double()),
    }
    for name, fn in bad.items():
        got = []
        for mode in (None, Seen()):
            try:
                if mode is None:
                    fn()
                else:
                    with mode:
                        fn()
                got.append(None)
            except Exception as e:  # noqa: BLE001 -- the error is the result
                got.append((type(e), str(e)))
        assert got[0] is not None, "%s: no error" % name
        assert got[0] == got[1], "%s: eager %r, through the op %r" % (name, got[0], got[1])


def test_expanded_table_refused_as_the_op(device):
    """cos and sin expanded over the batch, needing gradients, given to the op itself: its
    backward refuses them (the per-batch gradient does not exist) on both paths alike."""
    from ropegrad.rope_apply import _rope_apply, rope_apply_op
    gen = torch.Generator().manual_seed(23)
    q, k = heads(2, 4, 8, 32, torch.float32, device, gen), heads(2, 2, 8, 32, torch.float32, device, gen)
    table = torch.randn(1, 8, 32, generator=gen).to(device).requires_grad_()
    got = []
    for fn in (_rope_apply, rope_apply_op):
        a, b = fn(q, k, table.expand(2, -1, -1), table.expand(2, -1, -1))
        try:
            torch.autograd.grad((a, b), (q, k, table), (torch.ones_like(a), torch.ones_like(b)))
            got.append(None)
        except ValueError as e:
            got.append(str(e))
    assert got[0] is not None and got[0] == got[1], "eager %r, the op %r" % tuple(got)


def test_views_as_the_op(device):
    """The outputs are views (BSHD: a transposed [B,S,H,D] tensor) or not as the op's are, so
    in-place use of them meets the same autograd rules and messages."""
    from ropegrad import torch as rgt
    from ropegrad.rope_apply import rope_apply_op
    from ropegrad.rope_apply_pos import rope_apply_pos_op
    gen = torch.Generator().manual_seed(9)
    q, k = heads(1, 4, 8, 32, torch.float32, device, gen), heads(1, 2, 8, 32, torch.float32, device, gen)
    cos = torch.randn(1, 8, 32, generator=gen).to(device)
    pos, inv = torch.arange(8, device=device)[None], inv_freq(32, device)
    pairs = {"apply": (lambda: rgt.apply_rotary_pos_emb(q, k, cos, cos), lambda: rope_apply_op(q, k, cos, cos)),
             "pos": (lambda: rgt.rope_apply_pos(q, k, pos, inv),
                     lambda: rope_apply_pos_op(q, k, pos, inv, 1.0, q.dtype, 0, 0, None))}
    for name, (eager, op) in pairs.items():
        errors = []
        for fn in (eager, op):
            a, _ = fn()
            try:
                a.mul_(2)
                errors.append((a._is_view(), None))
            except RuntimeError as e:
                errors.append((a._is_view(), str(e)))
        assert errors[0] == errors[1], "%s: eager %r, the op %r" % (name, errors[0], errors[1])


def test_double_backward_as_the_op(device):
    """create_graph=True with upstream gradients that need gradients: the backward ops keep the
    op's autograd node (which refuses a second backward), on both paths."""
    from ropegrad import torch as rgt
    gen = torch.Generator().manual_seed(13)
    q, k = heads(1, 4, 8, 32, torch.float32, device, gen), heads(1, 2, 8, 32, torch.float32, device, gen)
    cos = torch.randn(1, 8, 32, generator=gen).to(device)
    got = []
    for mode in (None, Seen()):
        with mode if mode is not None else torch.enable_grad():
            a, b = rgt.apply_rotary_pos_emb(q, k, cos, cos)
            ga, gb = torch.ones_like(a, requires_grad=True), torch.ones_like(b, requires_grad=True)
            dq, _ = torch.autograd.grad((a, b), (q, k), (ga, gb), create_graph=True)
            try:
                torch.autograd.grad(dq.sum(), ga)
                got.append((dq.requires_grad, None))
            except RuntimeError as e:
                got.append((dq.requires_grad, str(e)))
    assert got[0] == got[1], "eager %r, through the op %r" % tuple(got)


def test_profiler_names_the_op(device):
    """Under torch.profiler the eager path runs, recorded under the op's name."""
    from torch.profiler import ProfilerActivity, profile
    from ropegrad import torch as rgt
    gen = torch.Generator().manual_seed(19)
    q, k = heads(1, 4, 8, 32, torch.float32, device, gen), heads(1, 2, 8, 32, torch.float32, device, gen)
    pos, inv = torch.arange(8, device=device)[None], inv_freq(32, device)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        a, _ = rgt.rope_apply_pos(q, k, pos, inv)
    names = {e.key for e in prof.key_averages()}
    assert "ropegrad::rope_apply_pos" in names, "the profile has no ropegrad::rope_apply_pos: %s" % sorted(names)
    path = path_taken(a, "rope_apply_pos")
    assert path == "eager", "under the profiler the call took the %s path" % path


def test_second_gpu(device):
    """CUDA with two GPUs: tensors on cuda:1 while cuda:0 is current give cuda:0's results bit for
    bit (the kernels ran on cuda:1's current stream) and leave cuda:0 current. Skipped (passes)
    on the CPU and with one GPU."""
    if device != "cuda" or torch.cuda.device_count() < 2:
        return
    from ropegrad import torch as rgt
    outs = []
    for dev in ("cuda:0", "cuda:1"):
        gen = torch.Generator().manual_seed(17)
        q, k = heads(2, 4, 8, 32, torch.bfloat16, dev, gen), heads(2, 2, 8, 32, torch.bfloat16, dev, gen)
        cos = torch.randn(1, 8, 32, generator=gen).to(dev, torch.bfloat16)
        pos, inv = torch.arange(8, device=dev)[None], inv_freq(32, dev)
        with torch.cuda.device(0):
            got = run(lambda: rgt.apply_rotary_pos_emb(q, k, cos, cos), (q, k))
            got += run(lambda: rgt.rope_apply_pos(q, k, pos, inv), (q, k))
            assert torch.cuda.current_device() == 0, "the current device changed to %d" % torch.cuda.current_device()
        torch.cuda.synchronize(dev)
        outs.append([t.cpu() for pair in got for t in pair])
    assert all(torch.equal(a, b) for a, b in zip(*outs)), "cuda:1 differs from cuda:0"


def test_no_grad_and_compile_use_op(device):
    """Without gradients the eager path returns plain outputs; under torch.compile the op is called."""
    from ropegrad import torch as rgt
    gen = torch.Generator().manual_seed(5)
    q, k = heads(1, 4, 8, 32, torch.float32, device, gen), heads(1, 2, 8, 32, torch.float32, device, gen)
    pos = torch.arange(8, device=device)[None]
    inv = inv_freq(32, device)
    with torch.no_grad():
        a, b = rgt.rope_apply_pos(q, k, pos, inv)
    assert a.grad_fn is None and not a.requires_grad
    seen = []

    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    torch._dynamo.reset()
    fn = torch.compile(lambda q, k: rgt.rope_apply_pos(q, k, pos, inv), backend=backend, fullgraph=True)
    c, d = fn(q.detach(), k.detach())
    assert any("rope_apply_pos" in s for s in seen), "torch.compile did not record the op: %s" % seen
    assert torch.equal(c, a) and torch.equal(d, b)


def outcome(test, device):
    """None when test(device) passes, else what failed."""
    try:
        test(device)
    except Exception as e:  # every failure is reported, then exit 1
        return "%s: %s" % (type(e).__name__, e)
    return None


def main():
    if not hasattr(torch.library, "custom_op"):
        print("SKIP: torch %s lacks torch.library.custom_op (needed: torch >= 2.4)" % torch.__version__)
        return 77
    from ropegrad import _lib
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print("torch %s, library %s, devices %s" % (torch.__version__, _lib.library_path(), ", ".join(devices)))
    tests = (test_equal_to_op_path, test_same_errors, test_expanded_table_refused_as_the_op, test_views_as_the_op,
             test_double_backward_as_the_op, test_profiler_names_the_op, test_second_gpu,
             test_no_grad_and_compile_use_op)
    failed = 0
    for device in devices:
        for test in tests:
            why = outcome(test, device)
            failed += why is not None
            print("%s %s[%s]%s" % ("FAIL" if why else "ok  ", test.__name__, device, ": " + why if why else ""))
    print("%d cases failed" % failed if failed else "all passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
