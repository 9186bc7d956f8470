# SPDX-License-Identifier: Apache-2.0
"""rope_apply_pos_backward: rope_apply_pos's gradients, grad_q and grad_k (the
rotation by minus the angle, each cos/sin computed in the kernel as the forward
computes it; there is no table, so no table gradient).

ctypes (standard library only): validate(), reference(), cpu(), cuda() over
rope_apply_pos's Problem (q, k = grad_q_out, grad_k_out; q_out, k_out = grad_q,
grad_k). With torch: the op ropegrad::rope_apply_pos_backward (torch.library,
with a fake implementation), the autograd formula of ropegrad::rope_apply_pos.
"""

import functools
import sys

from . import rope_apply as _apply
from . import rope_apply_pos as _fwd
from .rope_apply_pos import Problem

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["validate", "reference", "cpu", "cuda", "rope_apply_pos_backward_op"]

_C = "ropegrad_rope_apply_pos_backward"

validate, reference = _fwd.checks(_C)
cpu, cuda = _fwd._lib.entry_points(_C, Problem)


def _check_layout(layout, *grads):
    for name, g in zip(("grad_q_out", "grad_k_out"), grads):
        if g.dim() != 4:
            raise ValueError("%s: %s must be [B,H,S,D], got shape %s" % (_fwd._NAME, name, list(g.shape)))
    if layout not in (_apply.LAYOUT_BHSD, _apply.LAYOUT_BSHD):
        raise ValueError("%s: layout must be %d (BHSD) or %d (BSHD), got %r"
                         % (_fwd._NAME, _apply.LAYOUT_BHSD, _apply.LAYOUT_BSHD, layout))


def _backward(grad_q_out, grad_k_out, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim,
              cu_seqlens, layout):
    """ropegrad::rope_apply_pos_backward: (grad_q, grad_k) in layout `layout`
    (the forward's q and k), from the outputs' gradients in any strides."""
    _check_layout(layout, grad_q_out, grad_k_out)
    return _run(grad_q_out, grad_k_out, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim,
                cu_seqlens, layout)


def _run(grad_q_out, grad_k_out, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim,
         cu_seqlens, layout, check=True):
    """_backward after _check_layout; check=False skips the checks of what
    rope_apply_pos's forward checked (autograd_call)."""
    gq, own_q = _apply._in_layout(grad_q_out, layout, tuple(grad_q_out.shape), grad_q_out)
    gk, own_k = _apply._in_layout(grad_k_out, layout, tuple(grad_k_out.shape), grad_k_out)
    if check:
        _fwd.check(gq, gk, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens)
    # In place into a copy made here; a new tensor where the gradient is used as given.
    grad_q = gq if own_q else _apply._empty(layout, gq.shape, gq)
    grad_k = gk if own_k else _apply._empty(layout, gk.shape, gk)
    _fwd.launch(_module, gq, gk, grad_q, grad_k, layout, position_ids, inv_freq, attention_scaling,
                cos_sin_dtype, style, rotary_dim, cu_seqlens)
    return grad_q, grad_k


def _backward_fake(grad_q_out, grad_k_out, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style,
                   rotary_dim, cu_seqlens, layout):
    _check_layout(layout, grad_q_out, grad_k_out)
    gq = _apply._empty(layout, grad_q_out.shape, grad_q_out)
    gk = _apply._empty(layout, grad_k_out.shape, grad_k_out)
    _fwd.check(gq, gk, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens)
    return gq, gk


# ropegrad::rope_apply_pos_backward (torch.ops.ropegrad.rope_apply_pos_backward):
# the backward of ropegrad::rope_apply_pos; no autograd of its own.
rope_apply_pos_backward_op = _rt.custom_op(
    "rope_apply_pos_backward",
    "(Tensor grad_q_out, Tensor grad_k_out, Tensor? position_ids, Tensor inv_freq, float attention_scaling, "
    "ScalarType cos_sin_dtype, int style, int rotary_dim, Tensor? cu_seqlens, int layout) -> (Tensor, Tensor)",
    _backward, _backward_fake) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager).
_rope_apply_pos_backward = _rt.Eager(rope_apply_pos_backward_op, _backward) if torch else None
_run_for_autograd = functools.partial(_run, check=False)


def autograd_call(*args):
    """The op on autograd's gradients, as rope_apply_pos's autograd formula
    calls it: the forward checked its inputs (its saved tensors, style,
    rotary_dim, layout) and autograd hands gradients of the outputs' shapes,
    dtype and device, so the eager path runs it without checking them again."""
    return _rope_apply_pos_backward.call(args, _run_for_autograd)
_module = sys.modules[__name__]
