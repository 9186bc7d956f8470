# SPDX-License-Identifier: Apache-2.0
"""rope_apply_backward (L1/068): rope_apply's gradients, grad_x = g*cos -
rotate_half(g)*sin for q and k, and (when asked) cos's and sin's.

ctypes (standard library only): Problem (struct
ropegrad_rope_apply_backward_problem, over rope_apply's Shape), cpu(), cuda().
With torch: the op ropegrad::rope_apply_backward (torch.library, with a fake
implementation), the autograd formula of ropegrad::rope_apply
(apply_rotary_pos_emb's backward), and rope_apply_backward() on tensors.

068's grad_x = g*cos - rotate_half(g)*sin is the exact gradient when sin's two
halves are equal (every RoPE table: Hugging Face builds cos and sin as
cat(freqs, freqs)); for a sin whose halves differ it is 068's formula, not the
derivative of the forward. The style and rotary_dim are rope_apply's
(interleaved pairs, partial rotary: grad_cos and grad_sin are then [..., R],
the exact gradient of each table entry as the forward indexes it).
"""

import ctypes
import functools
import sys

from . import _lib
from . import rope_apply as _fwd
from .rope_apply import Shape

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Problem", "cpu", "cuda", "rope_apply_backward", "rope_apply_backward_op"]

_C = "ropegrad_rope_apply_backward"
_NAME = _fwd._NAME


class Problem(ctypes.Structure):
    """struct ropegrad_rope_apply_backward_problem: the shape, 10 pointers: 160 bytes."""

    _fields_ = [("shape", Shape)] + [(n, ctypes.c_void_p) for n in (
        "grad_q_out", "grad_k_out", "q", "k", "cos", "sin", "grad_q", "grad_k", "grad_cos", "grad_sin")]


_lib.check_layout(Problem, 160, {"grad_q_out": 80, "grad_sin": 152})
cpu, cuda = _lib.entry_points(_C, Problem)


# ---- torch -----------------------------------------------------------------------------------

def _check(grad_q_out, grad_k_out, cos, sin, q, k, layout, style, rotary_dim):
    """The op's inputs (shapes, dtypes, layouts; never the data); returns cos's batch stride."""
    _fwd.check_pair(_NAME, ("grad_q_out", "grad_k_out"), grad_q_out, grad_k_out)
    _fwd.check_style(_NAME, style, rotary_dim, grad_q_out.shape[3])
    if layout not in (_fwd.LAYOUT_BHSD, _fwd.LAYOUT_BSHD):
        raise ValueError("%s: layout must be %d (BHSD) or %d (BSHD), got %r"
                         % (_NAME, _fwd.LAYOUT_BHSD, _fwd.LAYOUT_BSHD, layout))
    if (q is None) != (k is None):
        raise ValueError("%s: q and k go together (both for cos's and sin's gradients, or neither)" % _NAME)
    if q is not None:
        for name, t, g in (("q", q, grad_q_out), ("k", k, grad_k_out)):
            if tuple(t.shape) != tuple(g.shape) or t.dtype != g.dtype or t.device != g.device:
                raise ValueError("%s: %s (%s, %s) must have grad_%s_out's shape and dtype (%s, %s)"
                                 % (_NAME, name, list(t.shape), t.dtype, name, list(g.shape), g.dtype))
            if not _fwd._is_layout(t, layout):
                raise ValueError("%s: %s (strides %s) is not laid out as layout %d" % (_NAME, name, list(t.stride()),
                                                                                        layout))
    stride = _fwd._check_tables(cos, sin, grad_q_out, rotary_dim)
    if q is not None and cos.shape[0] > 1 and stride == 0:
        raise ValueError("%s: cos expanded over the batch has no per-batch gradient here; pass [1,S,R]" % _NAME)
    return stride


def _backward(grad_q_out, grad_k_out, cos, sin, q, k, layout, style=0, rotary_dim=0):
    """ropegrad::rope_apply_backward: [grad_q, grad_k] (layout `layout`), and
    [grad_cos, grad_sin] (cos's shape) after them when q and k are given."""
    stride = _check(grad_q_out, grad_k_out, cos, sin, q, k, layout, style, rotary_dim)
    return _run(grad_q_out, grad_k_out, cos, sin, q, k, layout, style, rotary_dim, stride=stride)


def _run(grad_q_out, grad_k_out, cos, sin, q, k, layout, style=0, rotary_dim=0, *, stride):
    """_backward on checked inputs (cos's batch stride as _check returns it)."""
    q_shape, k_shape = tuple(grad_q_out.shape), tuple(grad_k_out.shape)
    gq, own_q = _fwd._in_layout(grad_q_out, layout, q_shape, grad_q_out)
    gk, own_k = _fwd._in_layout(grad_k_out, layout, k_shape, grad_k_out)
    # In place into a copy made here; a new tensor where the gradient is used as given.
    grad_q = gq if own_q else _fwd._empty(layout, q_shape, gq)
    grad_k = gk if own_k else _fwd._empty(layout, k_shape, gk)
    out = [grad_q, grad_k]
    p = Problem()
    if q is not None:
        out += [torch.empty(cos.shape, dtype=cos.dtype, device=cos.device) for _ in range(2)]
        p.q, p.k, p.grad_cos, p.grad_sin = q.data_ptr(), k.data_ptr(), out[2].data_ptr(), out[3].data_ptr()
    if gq.numel() and gk.numel():
        p.shape = _fwd._shape(gq, gk, layout, cos, stride, style, rotary_dim)
        p.grad_q_out, p.grad_k_out, p.cos, p.sin = gq.data_ptr(), gk.data_ptr(), cos.data_ptr(), sin.data_ptr()
        p.grad_q, p.grad_k = grad_q.data_ptr(), grad_k.data_ptr()
        _rt.launch(gq.device, _module, p, who=_NAME)
    else:
        for t in out[2:]:
            t.zero_()
    return out


def _backward_fake(grad_q_out, grad_k_out, cos, sin, q, k, layout, style=0, rotary_dim=0):
    _check(grad_q_out, grad_k_out, cos, sin, q, k, layout, style, rotary_dim)
    out = [_fwd._empty(layout, grad_q_out.shape, grad_q_out), _fwd._empty(layout, grad_k_out.shape, grad_k_out)]
    if q is not None:
        out += [torch.empty(cos.shape, dtype=cos.dtype, device=cos.device) for _ in range(2)]
    return out


# ropegrad::rope_apply_backward (torch.ops.ropegrad.rope_apply_backward): 068,
# the backward of ropegrad::rope_apply; no autograd of its own.
rope_apply_backward_op = _rt.custom_op(
    "rope_apply_backward",
    "(Tensor grad_q_out, Tensor grad_k_out, Tensor cos, Tensor sin, Tensor? q, Tensor? k, int layout, int style=0, "
    "int rotary_dim=0) -> Tensor[]",
    _backward, _backward_fake) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager).
_rope_apply_backward = _rt.Eager(rope_apply_backward_op, _backward) if torch else None
_module = sys.modules[__name__]


def autograd_backward(ctx, grad_q_out, grad_k_out):
    """ropegrad::rope_apply's autograd formula (rope_apply.py): this op on
    autograd's gradients (missing ones as zeros, in q's dtype), with what the
    forward saved in ctx."""
    cos, sin = ctx.saved_tensors[:2]
    q, k = ctx.saved_tensors[2:] if ctx.table_grads else (None, None)
    grads = []
    for g, shape in ((grad_q_out, ctx.q_shape), (grad_k_out, ctx.k_shape)):
        if g is None:
            g = _fwd._empty(ctx.layout, shape, cos.new_empty(0, dtype=ctx.dtype)).zero_()
        grads.append(g if g.dtype == ctx.dtype else g.to(ctx.dtype))
    args = (grads[0], grads[1], cos, sin, q, k, ctx.layout, ctx.style, ctx.rotary_dim)
    if q is not None and cos.shape[0] > 1 and ctx.stride == 0:
        out = _rope_apply_backward(*args)   # refused, as the op says why
    else:
        # the forward checked cos, sin, q, k, style, rotary_dim and the layout; autograd hands
        # gradients of the outputs' shapes, dtype and device: the eager path runs it unchecked
        out = _rope_apply_backward.call(args, functools.partial(_run, stride=ctx.stride))
    grad_cos, grad_sin = out[2:] if ctx.table_grads else (None, None)
    return out[0], out[1], grad_cos, grad_sin, None, None


def rope_apply_backward(grad_q_embed, grad_k_embed, q, k, cos, sin, *, interleaved=False, rotary_dim=0):
    """L1/068 as a plain function (no autograd): (grad_q, grad_k, grad_cos,
    grad_sin) from out's gradients [B,H,S,D] / [B,Hkv,S,D], the forward's q and k
    (laid out alike: one of the layouts apply_rotary_pos_emb takes with
    unsqueeze_dim=1) and cos, sin [B,S,R] or [1,S,R] (R = rotary_dim, 0:
    head_dim); grad_cos and grad_sin have cos's shape. interleaved and
    rotary_dim as apply_rotary_pos_emb's. The suite's op
    (ropegrad::rope_apply_backward with q and k)."""
    style = _fwd.STYLE_INTERLEAVED if interleaved else _fwd.STYLE_HALF
    with torch.no_grad():
        qc, kc, layout = _fwd._check_heads(q, k, 1)
        grads = [g if g.dtype == qc.dtype else g.to(qc.dtype) for g in (grad_q_embed, grad_k_embed)]
        return tuple(_rope_apply_backward(grads[0], grads[1], cos, sin, qc, kc, layout, style, int(rotary_dim)))
