# SPDX-License-Identifier: Apache-2.0
"""rope_apply_thd_backward: rope_apply_thd's gradients, grad_q and grad_k (the
rotation by minus the angle, the table rows gathered as the forward gathers
them; no table gradient in this layout).

ctypes (standard library only): validate(), reference(), cpu(), cuda() over
rope_apply_thd's Problem (q, k = grad_q_out, grad_k_out; q_out, k_out = grad_q,
grad_k). With torch: the op ropegrad::rope_apply_thd_backward (torch.library,
with a fake implementation), the autograd formula of ropegrad::rope_apply_thd.
"""

import sys

from . import rope_apply_pos as _pos
from . import rope_apply_thd as _fwd
from .rope_apply_thd import Problem

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["validate", "reference", "cpu", "cuda", "rope_apply_thd_backward_op"]

_C = "ropegrad_rope_apply_thd_backward"

validate, reference = _pos.checks(_C, Problem)
cpu, cuda = _fwd._lib.entry_points(_C, Problem)


def _backward(grad_q_out, grad_k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim):
    """ropegrad::rope_apply_thd_backward: (grad_q, grad_k), [T,H,D] / [T,Hkv,D]."""
    _fwd.check(grad_q_out, grad_k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim,
               ("grad_q_out", "grad_k_out"))
    return _run(grad_q_out, grad_k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim)


def _run(grad_q_out, grad_k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim):
    """_backward on checked inputs."""
    grad_q, grad_k = torch.empty_like(grad_q_out), torch.empty_like(grad_k_out)
    _fwd.launch(_module, grad_q_out, grad_k_out, grad_q, grad_k, cos, sin, cu_seqlens, position_ids,
                style, rotary_dim)
    return grad_q, grad_k


def _backward_fake(grad_q_out, grad_k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim):
    _fwd.check(grad_q_out, grad_k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim,
               ("grad_q_out", "grad_k_out"))
    return torch.empty_like(grad_q_out), torch.empty_like(grad_k_out)


# ropegrad::rope_apply_thd_backward (torch.ops.ropegrad.rope_apply_thd_backward):
# the backward of ropegrad::rope_apply_thd; no autograd of its own.
rope_apply_thd_backward_op = _rt.custom_op(
    "rope_apply_thd_backward",
    "(Tensor grad_q_out, Tensor grad_k_out, Tensor cos, Tensor sin, Tensor? cu_seqlens, Tensor? position_ids, "
    "int style, int rotary_dim) -> (Tensor, Tensor)",
    _backward, _backward_fake) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager).
_rope_apply_thd_backward = _rt.Eager(rope_apply_thd_backward_op, _backward) if torch else None


def autograd_call(*args):
    """The op on autograd's gradients (made contiguous in q's dtype), as
    rope_apply_thd's autograd formula calls it: the forward checked its
    inputs, so the eager path runs it without checking them again."""
    return _rope_apply_thd_backward.call(args, _run)
_module = sys.modules[__name__]
