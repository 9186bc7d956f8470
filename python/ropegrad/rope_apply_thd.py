# SPDX-License-Identifier: Apache-2.0
"""rope_apply_thd: the rotary embedding applied to packed sequences (the thd
layout of TransformerEngine's fused RoPE) from one cos/sin table: q [T,H,D]
and k [T,Hkv,D] hold the tokens of every sequence back to back, cos and sin
[table_len, R] hold one row per position, and token t is rotated by the row of
its position -- its offset in its sequence (cu_seqlens) or its own id
(position_ids) -- as rope_apply (088) rotates it: the same bits as 088 on the
per-token table gathered from those rows.

ctypes (standard library only): Problem (struct ropegrad_rope_apply_thd_problem,
shared with rope_apply_thd_backward), validate(), reference(), cpu(), cuda().
With torch: the op ropegrad::rope_apply_thd (torch.library, with a fake
implementation; its autograd formula is ropegrad::rope_apply_thd_backward, the
rotation by minus the angle, for q and k only) and rope_apply_thd(), which
calls it:

    from ropegrad.rope_apply_thd import rope_apply_thd
    q_embed, k_embed = rope_apply_thd(q, k, cos, sin, cu_seqlens=cu_seqlens)

What it takes (anything else raises ValueError or TypeError saying what was given):
  q, k: [T,H,D] / [T,Hkv,D], contiguous, bfloat16, float16 or float32 (one dtype).
  cos, sin: [table_len, R] contiguous, one dtype of the three, R = rotary_dim
  (0: head_dim). Table gradients are not computed in this layout (the rows are
  gathered by position): cos or sin requiring grad raises ValueError.
  cu_seqlens: int32 [num_seqs+1] (0, ..., T), each token at its offset in its
  sequence; or position_ids: int32 or int64 [T], each token's row. Exactly one.
  interleaved: False = rotate-half pairs (i, i+R/2), Hugging Face's and NeoX's;
  True = GPT-J pairs (2i, 2i+1). The elements beyond rotary_dim are copied through.
Positions beyond the table are refused on the CPU (RopegradError); on CUDA they
are clamped into the table and those tokens' outputs are unspecified.
"""

import ctypes
import sys

from . import _lib
from . import rope_apply as _apply
from . import rope_apply_pos as _pos
from .rope_apply import STYLE_HALF, STYLE_INTERLEAVED, Shape

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Problem", "validate", "reference", "cpu", "cuda", "STYLE_HALF", "STYLE_INTERLEAVED", "rope_apply_thd",
           "rope_apply_thd_op"]

_C = "ropegrad_rope_apply_thd"
_NAME = "ropegrad.rope_apply_thd"


class Problem(ctypes.Structure):
    """struct ropegrad_rope_apply_thd_problem (rope_apply_thd's and
    rope_apply_thd_backward's): the shape, 2 pointers, int64, pointer, int64,
    pointer, int (+4), 4 pointers: 168 bytes on LP64."""

    _fields_ = [
        ("shape", Shape),
        ("cos", ctypes.c_void_p),
        ("sin", ctypes.c_void_p),
        ("table_len", ctypes.c_int64),
        ("cu_seqlens", ctypes.c_void_p),     # const int32_t *
        ("num_seqs", ctypes.c_int64),
        ("position_ids", ctypes.c_void_p),
        ("position_bits", ctypes.c_int),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("q_out", ctypes.c_void_p),
        ("k_out", ctypes.c_void_p),
    ]


_lib.check_layout(Problem, 168, {"cos": 80, "table_len": 96, "cu_seqlens": 104, "position_ids": 120,
                                 "position_bits": 128, "q": 136, "k_out": 160})


validate, reference = _pos.checks(_C, Problem)
cpu, cuda = _lib.entry_points(_C, Problem)


# ---- torch (rope_apply_thd_backward's too) -----------------------------------------------------

def check(qc, kc, cos, sin, cu_seqlens, position_ids, style, rotary_dim, names=("q", "k")):
    """The op's inputs (shapes, dtypes, strides, devices; never the data): q
    and k (or their gradients) [T,H,D] / [T,Hkv,D] contiguous."""
    for name, t in zip(names, (qc, kc)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or not t.is_contiguous():
            raise ValueError("%s: %s must be a contiguous tensor [T,H,D], got %s" % (
                _NAME, name, "shape %s strides %s" % (list(t.shape), list(t.stride()))
                if isinstance(t, torch.Tensor) else type(t).__name__))
    T, _, D = qc.shape
    if not (qc.dtype in _rt.DTYPES and kc.dtype == qc.dtype and kc.shape[0] == T and kc.shape[2] == D and
            2 <= D <= _lib.MAX_HEAD_DIM and D % 2 == 0 and kc.device == qc.device):
        # what is wrong, as check_pair says it of [1,H,T,D] in BSHD memory (the C API's view of packed tokens)
        _apply.check_pair(_NAME, names, qc.transpose(0, 1)[None], kc.transpose(0, 1)[None])
    R = _apply.check_style(_NAME, style, rotary_dim, D)
    for name, t in (("cos", cos), ("sin", sin)):
        if not isinstance(t, torch.Tensor) or t.dim() != 2 or t.shape[0] < 1 or t.shape[1] != R \
                or not t.is_contiguous():
            raise ValueError("%s: %s must be a contiguous table [table_len, %d] (R = rotary_dim), got %s" % (
                _NAME, name, R, "shape %s strides %s" % (list(t.shape), list(t.stride()))
                if isinstance(t, torch.Tensor) else type(t).__name__))
        if t.dtype not in _rt.DTYPES:
            raise TypeError("%s: %s must be bfloat16, float16 or float32, got %s" % (_NAME, name, t.dtype))
    if sin.dtype != cos.dtype or sin.shape != cos.shape:
        raise ValueError("%s: cos (%s, %s) and sin (%s, %s) must match in shape and dtype"
                         % (_NAME, list(cos.shape), cos.dtype, list(sin.shape), sin.dtype))
    if (cu_seqlens is None) == (position_ids is None):
        raise ValueError("%s: give exactly one of cu_seqlens and position_ids" % _NAME)
    if cu_seqlens is not None:
        if cu_seqlens.dtype != torch.int32 or cu_seqlens.dim() != 1 or cu_seqlens.shape[0] < 2 \
                or not cu_seqlens.is_contiguous():
            raise ValueError("%s: cu_seqlens must be a contiguous int32 tensor [num_seqs+1], got %s %s"
                             % (_NAME, list(cu_seqlens.shape), cu_seqlens.dtype))
    elif position_ids.dtype not in (torch.int32, torch.int64) or tuple(position_ids.shape) != (T,) \
            or not position_ids.is_contiguous():
        raise ValueError("%s: position_ids must be a contiguous int32 or int64 tensor [T] = [%d], got %s %s"
                         % (_NAME, T, list(position_ids.shape), position_ids.dtype))
    devices = [t.device for t in (kc, cos, sin, cu_seqlens, position_ids) if t is not None]
    if any(d != qc.device for d in devices):
        raise ValueError("%s: every tensor must be on q's device (%s), got %s" % (_NAME, qc.device,
                                                                                 [str(d) for d in devices]))


def launch(module, qc, kc, q_out, k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim):
    """Runs module's op (rope_apply_thd or rope_apply_thd_backward) on the checked tensors."""
    if not (qc.numel() and kc.numel()):
        return
    T, H, D = qc.shape
    s = Shape(1, T, D, H, kc.shape[1], _apply.LAYOUT_BSHD, _rt.DTYPES[qc.dtype], _rt.DTYPES[cos.dtype], 0, style,
              rotary_dim)
    if cu_seqlens is not None:   # position_bits is checked even then: 64, unused
        cu, num_seqs, ids, bits = cu_seqlens.data_ptr(), cu_seqlens.shape[0] - 1, None, 64
    else:
        cu, num_seqs, ids, bits = None, 0, position_ids.data_ptr(), 64 if position_ids.dtype == torch.int64 else 32
    p = Problem(s, cos.data_ptr(), sin.data_ptr(), cos.shape[0], cu, num_seqs, ids, bits,
                qc.data_ptr(), kc.data_ptr(), q_out.data_ptr(), k_out.data_ptr())
    _rt.launch(qc.device, module, p, who=_NAME)


def _forward(q, k, cos, sin, cu_seqlens, position_ids, style, rotary_dim):
    """ropegrad::rope_apply_thd: (q_embed, k_embed), [T,H,D] / [T,Hkv,D]."""
    check(q, k, cos, sin, cu_seqlens, position_ids, style, rotary_dim)
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    launch(_module, q, k, q_out, k_out, cos, sin, cu_seqlens, position_ids, style, rotary_dim)
    return q_out, k_out


def _forward_fake(q, k, cos, sin, cu_seqlens, position_ids, style, rotary_dim):
    check(q, k, cos, sin, cu_seqlens, position_ids, style, rotary_dim)
    return torch.empty_like(q), torch.empty_like(k)


def _setup_context(ctx, inputs, output):
    q, k, cos, sin, cu_seqlens, position_ids, style, rotary_dim = inputs
    if ctx.needs_input_grad[2] or ctx.needs_input_grad[3]:
        raise ValueError("%s: table gradients are not computed in the thd layout (the rows are gathered by "
                         "position); pass cos and sin without requires_grad (.detach()), or use "
                         "apply_rotary_pos_emb on per-token tables" % _NAME)
    ctx.save_for_backward(cos, sin, cu_seqlens, position_ids)
    ctx.args = (int(style), int(rotary_dim))
    ctx.dtype, ctx.q_shape, ctx.k_shape = q.dtype, tuple(q.shape), tuple(k.shape)


def _backward(ctx, grad_q_out, grad_k_out):
    cos, sin, cu_seqlens, position_ids = ctx.saved_tensors
    grads = []
    for g, shape in ((grad_q_out, ctx.q_shape), (grad_k_out, ctx.k_shape)):
        if g is None:
            g = cos.new_zeros(shape, dtype=ctx.dtype)
        grads.append(g.to(ctx.dtype).contiguous())
    grad_q, grad_k = _rope_apply_thd_backward(grads[0], grads[1], cos, sin, cu_seqlens, position_ids, *ctx.args)
    return (grad_q, grad_k) + (None,) * 6


# ropegrad::rope_apply_thd (torch.ops.ropegrad.rope_apply_thd): q, k [T,H,D];
# autograd (q's and k's gradients) through ropegrad::rope_apply_thd_backward.
rope_apply_thd_op = _rt.custom_op(
    "rope_apply_thd",
    "(Tensor q, Tensor k, Tensor cos, Tensor sin, Tensor? cu_seqlens, Tensor? position_ids, int style, "
    "int rotary_dim) -> (Tensor, Tensor)",
    _forward, _forward_fake, _backward, _setup_context) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager: its implementation directly where nothing can tell).
_rope_apply_thd = _rt.Eager(rope_apply_thd_op, _forward, _setup_context, _backward) if torch else None
_rope_apply_thd_backward = _rt.later("rope_apply_thd_backward", "autograd_call") if torch else None
_module = sys.modules[__name__]


def rope_apply_thd(q, k, cos, sin, *, cu_seqlens=None, position_ids=None, interleaved=False, rotary_dim=0):
    """(q_embed, k_embed): packed q [T,H,D] and k [T,Hkv,D] rotated by the
    table rows of their positions (cu_seqlens: each token's offset in its
    sequence; position_ids: its id), with autograd for q and k. See the
    module's docstring for what it takes."""
    style = STYLE_INTERLEAVED if interleaved else STYLE_HALF
    return _rope_apply_thd(q, k, cos, sin, cu_seqlens, position_ids, style, int(rotary_dim))
