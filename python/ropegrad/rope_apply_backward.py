# SPDX-License-Identifier: Apache-2.0
"""rope_apply_backward (L1/068): rope_apply's gradients, grad_x = g*cos -
rotate_half(g)*sin for q and k, and (when asked) cos's and sin's.

ctypes (standard library only): Problem (struct
ropegrad_rope_apply_backward_problem, over rope_apply's Shape), cpu(), cuda().
With torch: rope_apply_backward() on tensors, and the backward of
rope_apply.RopeApply (apply_rotary_pos_emb's autograd).

068's grad_x = g*cos - rotate_half(g)*sin is the exact gradient when sin's two
halves are equal (every RoPE table: Hugging Face builds cos and sin as
cat(freqs, freqs)); for a sin whose halves differ it is 068's formula, not the
derivative of the forward.
"""

import ctypes
import sys

from . import _lib
from . import rope_apply as _fwd
from .rope_apply import Shape

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Problem", "cpu", "cuda", "rope_apply_backward"]

_C = "ropegrad_rope_apply_backward"
_NAME = _fwd._NAME


class Problem(ctypes.Structure):
    """struct ropegrad_rope_apply_backward_problem: the shape, 10 pointers: 144 bytes."""

    _fields_ = [("shape", Shape)] + [(n, ctypes.c_void_p) for n in (
        "grad_q_out", "grad_k_out", "q", "k", "cos", "sin", "grad_q", "grad_k", "grad_cos", "grad_sin")]


_lib.check_layout(Problem, 144, {"grad_q_out": 64, "grad_sin": 136})
cpu, cuda = _lib.entry_points(_C, Problem)


# ---- torch -----------------------------------------------------------------------------------

def autograd_backward(ctx, grad_q_out, grad_k_out):
    """RopeApply's backward (rope_apply.py): this op on autograd's gradients,
    with what the forward saved in ctx."""
    cos, sin = ctx.saved_tensors[:2]
    like, layout = ctx.q_like, ctx.layout
    gq, own_q = _fwd._in_layout(grad_q_out, layout, ctx.q_shape, like)
    gk, own_k = _fwd._in_layout(grad_k_out, layout, ctx.k_shape, like)
    # In place into a copy we made; a new tensor where autograd's gradient is used as given.
    grad_q = gq if own_q else _fwd._empty(layout, ctx.q_shape, like)
    grad_k = gk if own_k else _fwd._empty(layout, ctx.k_shape, like)
    B, _, S, D = ctx.q_shape
    grad_cos = grad_sin = None
    p = Problem()
    if ctx.table_grads:
        qc, kc = ctx.saved_tensors[2:]
        cs_shape = (S, D) if ctx.stride == 0 else (B, S, D)
        grad_cos = torch.empty(cs_shape, dtype=cos.dtype, device=cos.device)
        grad_sin = torch.empty_like(grad_cos)
        p.q, p.k, p.grad_cos, p.grad_sin = qc.data_ptr(), kc.data_ptr(), grad_cos.data_ptr(), grad_sin.data_ptr()
    if gq.numel() and gk.numel():
        p.shape = _fwd._shape(gq, gk, layout, cos, ctx.stride)
        p.grad_q_out, p.grad_k_out, p.cos, p.sin = gq.data_ptr(), gk.data_ptr(), cos.data_ptr(), sin.data_ptr()
        p.grad_q, p.grad_k = grad_q.data_ptr(), grad_k.data_ptr()
        _rt.launch(like.device, sys.modules[__name__], p, who=_NAME)
    elif grad_cos is not None:
        grad_cos.zero_()
        grad_sin.zero_()
    if grad_cos is not None:
        grad_cos, grad_sin = grad_cos.view(ctx.cos_shape), grad_sin.view(ctx.cos_shape)
    return grad_q, grad_k, grad_cos, grad_sin, None, None


def rope_apply_backward(grad_q_embed, grad_k_embed, q, k, cos, sin):
    """L1/068 as a plain function (no autograd): (grad_q, grad_k, grad_cos,
    grad_sin) from out's gradients [B,H,S,D] / [B,Hkv,S,D], the forward's q and k
    (laid out alike: one of the layouts apply_rotary_pos_emb takes with
    unsqueeze_dim=1) and cos, sin [B,S,D] or [1,S,D]; grad_cos and grad_sin have
    cos's shape. The suite's op."""
    with torch.no_grad():
        qc, kc, layout = _fwd._check_heads(q, k, 1)
        stride = _fwd._check_tables(cos, sin, qc)
        if cos.shape[0] > 1 and stride == 0:
            raise ValueError("%s: cos expanded over the batch has no per-batch gradient here; pass [1,S,D]" % _NAME)
        gq, _ = _fwd._in_layout(grad_q_embed, layout, tuple(qc.shape), qc)
        gk, _ = _fwd._in_layout(grad_k_embed, layout, tuple(kc.shape), kc)
        grads = (_fwd._empty(layout, qc.shape, qc), _fwd._empty(layout, kc.shape, kc),
                 torch.empty(cos.shape, dtype=cos.dtype, device=cos.device), torch.empty(cos.shape, dtype=cos.dtype,
                                                                                         device=cos.device))
        p = Problem()
        p.shape = _fwd._shape(qc, kc, layout, cos, stride)
        p.grad_q_out, p.grad_k_out, p.q, p.k = gq.data_ptr(), gk.data_ptr(), qc.data_ptr(), kc.data_ptr()
        p.cos, p.sin = cos.data_ptr(), sin.data_ptr()
        p.grad_q, p.grad_k, p.grad_cos, p.grad_sin = (t.data_ptr() for t in grads)
        if qc.numel() and kc.numel():
            _rt.launch(qc.device, sys.modules[__name__], p, who=_NAME)
        return grads
