# SPDX-License-Identifier: Apache-2.0
"""rope_apply_pos: the rotary embedding applied to q and k from positions,
with no cos/sin table: each cos/sin is computed in the kernel from the token's
position and inv_freq, rounded to the dtype the table would have had (bf16 like
Hugging Face's, f16 or f32), then q and k are rotated as rope_apply (088) does:
the same bits as 088 on a table holding those values (011's, for bf16).

ctypes (standard library only): Problem (struct ropegrad_rope_apply_pos_problem,
shared with rope_apply_pos_backward), validate(), reference(), cpu(), cuda().
With torch: the op ropegrad::rope_apply_pos (torch.library, with a fake
implementation; its autograd formula is ropegrad::rope_apply_pos_backward, the
rotation by minus the angle) and rope_apply_pos(), which calls it:

    from ropegrad.rope_apply_pos import rope_apply_pos
    q_embed, k_embed = rope_apply_pos(q, k, position_ids, inv_freq, attention_scaling)

What it takes (anything else raises ValueError or TypeError saying what was given):
  q, k as apply_rotary_pos_emb takes them ([B,H,S,D] / [B,Hkv,S,D] with
  unsqueeze_dim=1, [B,S,H,D] with 2; contiguous as BHSD or BSHD, both alike;
  bfloat16, float16 or float32), or packed ([T,H,D] / [T,Hkv,D] with cu_seqlens).
  position_ids: int32 or int64 [B,S] or [1,S] (shared by the batch); not read
  with cu_seqlens (int32 [num_seqs+1]: each token at its offset in its sequence).
  inv_freq: float32 [rotary_dim/2]; rotary_dim 0 = head_dim, else even and at
  most head_dim (the elements beyond it are copied through).
  interleaved: False = rotate-half pairs (i, i+R/2), Hugging Face's and NeoX's;
  True = GPT-J pairs (2i, 2i+1).
  cos_sin_dtype: the dtype each cos/sin is rounded to (default: q's).
"""

import ctypes
import sys

from . import _lib
from . import rope_apply as _apply
from .rope_apply import STYLE_HALF, STYLE_INTERLEAVED, Shape

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Problem", "validate", "reference", "cpu", "cuda", "STYLE_HALF", "STYLE_INTERLEAVED", "rope_apply_pos",
           "rope_apply_pos_op"]

_C = "ropegrad_rope_apply_pos"
_NAME = "ropegrad.rope_apply_pos"

class Problem(ctypes.Structure):
    """struct ropegrad_rope_apply_pos_problem (rope_apply_pos's and
    rope_apply_pos_backward's): the shape, style (+4 pad), rotary_dim, pointer,
    int (+4), pointer, int64, pointer, float (+4), 4 pointers: 176 bytes on LP64."""

    _fields_ = [
        ("shape", Shape),
        ("style", ctypes.c_int),
        ("rotary_dim", ctypes.c_int64),
        ("position_ids", ctypes.c_void_p),
        ("position_bits", ctypes.c_int),
        ("cu_seqlens", ctypes.c_void_p),     # const int32_t *
        ("num_seqs", ctypes.c_int64),
        ("inv_freq", ctypes.c_void_p),       # const float *
        ("attention_scaling", ctypes.c_float),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("q_out", ctypes.c_void_p),
        ("k_out", ctypes.c_void_p),
    ]


_lib.check_layout(Problem, 176, {"style": 80, "rotary_dim": 88, "position_bits": 104, "cu_seqlens": 112,
                                 "inv_freq": 128, "attention_scaling": 136, "q": 144, "k_out": 168})


def checks(prefix, struct=None):
    """Declares <prefix>_validate and <prefix>_reference over struct (default
    Problem; rope_apply_thd's passes its own); returns (validate(p),
    reference(p, out)) raising RopegradError on a non-zero status."""
    ptr = ctypes.POINTER(struct or Problem)
    fn_v, fn_r = prefix + "_validate", prefix + "_reference"
    _lib.declare({fn_v: (ctypes.c_int, [ptr]), fn_r: (ctypes.c_int, [ptr, ctypes.POINTER(ctypes.c_double)])})

    def validate(p):
        _lib.check(getattr(_lib.load(), fn_v)(ctypes.byref(p)), fn_v)

    def reference(p, out):
        _lib.check(getattr(_lib.load(), fn_r)(ctypes.byref(p), ctypes.cast(out, ctypes.POINTER(ctypes.c_double))),
                   fn_r)

    validate.__doc__ = "Raises RopegradError naming what is wrong with the problem p (%s)." % fn_v
    reference.__doc__ = "The float64 reference into out: q_out's values, then k_out's (%s)." % fn_r
    return validate, reference


validate, reference = checks(_C)
cpu, cuda = _lib.entry_points(_C, Problem)


# ---- torch (rope_apply_pos_backward's too) -----------------------------------------------------

def check(qc, kc, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens):
    """The op's inputs (shapes, dtypes, layouts, devices; never the data): q and
    k (or their gradients) logical [B,H,S,D]. Returns their layout."""
    _apply.check_pair(_NAME, ("q", "k"), qc, kc)
    B, _, S, D = qc.shape
    layout = _apply._layout_of(qc, kc)
    if cos_sin_dtype not in _rt.DTYPES:
        raise TypeError("%s: cos_sin_dtype must be bfloat16, float16 or float32, got %s" % (_NAME, cos_sin_dtype))
    R = _apply.check_style(_NAME, style, rotary_dim, D)
    if not isinstance(inv_freq, torch.Tensor) or inv_freq.dtype != torch.float32 or inv_freq.dim() != 1 \
            or inv_freq.shape[0] != R // 2 or not inv_freq.is_contiguous():
        raise ValueError("%s: inv_freq must be a contiguous float32 tensor [%d] (rotary_dim/2), got %s"
                         % (_NAME, R // 2, "%s %s" % (list(inv_freq.shape), inv_freq.dtype)
                            if isinstance(inv_freq, torch.Tensor) else type(inv_freq).__name__))
    devices = [t.device for t in (kc, inv_freq, position_ids, cu_seqlens) if t is not None]
    if any(d != qc.device for d in devices):
        raise ValueError("%s: every tensor must be on q's device (%s), got %s" % (_NAME, qc.device,
                                                                                 [str(d) for d in devices]))
    if cu_seqlens is not None:
        if cu_seqlens.dtype != torch.int32 or cu_seqlens.dim() != 1 or cu_seqlens.shape[0] < 2 \
                or not cu_seqlens.is_contiguous():
            raise ValueError("%s: cu_seqlens must be a contiguous int32 tensor [num_seqs+1], got %s %s"
                             % (_NAME, list(cu_seqlens.shape), cu_seqlens.dtype))
        if B != 1 or layout != _apply.LAYOUT_BSHD:
            raise ValueError("%s: with cu_seqlens q and k are packed [T,H,D] (one batch, BSHD memory)" % _NAME)
    else:
        if position_ids is None or position_ids.dtype not in (torch.int32, torch.int64) \
                or tuple(position_ids.shape) != (B, S) or not position_ids.is_contiguous():
            raise ValueError("%s: position_ids must be a contiguous int32 or int64 tensor [B,S] = [%d,%d], got %s"
                             % (_NAME, B, S, "%s %s" % (list(position_ids.shape), position_ids.dtype)
                                if position_ids is not None else "None"))
    return layout


def launch(module, qc, kc, q_out, k_out, layout, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style,
           rotary_dim, cu_seqlens):
    """Runs module's op (rope_apply_pos or rope_apply_pos_backward) on the checked tensors."""
    if not (qc.numel() and kc.numel()):
        return
    B, H, S, D = qc.shape
    s = Shape(B, S, D, H, kc.shape[1], layout, _rt.DTYPES[qc.dtype], _rt.DTYPES[cos_sin_dtype], 0)
    if cu_seqlens is not None:   # position_bits is checked even then: 64, unused
        ids, bits, cu, num_seqs = None, 64, cu_seqlens.data_ptr(), cu_seqlens.shape[0] - 1
    else:
        ids, bits, cu, num_seqs = position_ids.data_ptr(), 64 if position_ids.dtype == torch.int64 else 32, None, 0
    p = Problem(s, style, rotary_dim, ids, bits, cu, num_seqs, inv_freq.data_ptr(), float(attention_scaling),
                qc.data_ptr(), kc.data_ptr(), q_out.data_ptr(), k_out.data_ptr())
    _rt.launch(qc.device, module, p, who=_NAME)


def _forward(q, k, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens):
    """ropegrad::rope_apply_pos: (q_embed, k_embed), in q's and k's layout."""
    layout = check(q, k, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens)
    q_out, k_out = _apply._empty(layout, q.shape, q), _apply._empty(layout, k.shape, k)
    launch(_module, q, k, q_out, k_out, layout, position_ids, inv_freq, attention_scaling,
           cos_sin_dtype, style, rotary_dim, cu_seqlens)
    return q_out, k_out


def _forward_fake(q, k, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens):
    layout = check(q, k, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens)
    return _apply._empty(layout, q.shape, q), _apply._empty(layout, k.shape, k)


def _setup_context(ctx, inputs, output):
    q, k, position_ids, inv_freq, attention_scaling, cos_sin_dtype, style, rotary_dim, cu_seqlens = inputs
    ctx.save_for_backward(position_ids, inv_freq, cu_seqlens)
    ctx.args = (float(attention_scaling), cos_sin_dtype, int(style), int(rotary_dim))
    # _layout_of(q, k) of the checked inputs: BHSD where both are contiguous so, else BSHD
    ctx.layout = _apply.LAYOUT_BHSD if q.is_contiguous() and k.is_contiguous() else _apply.LAYOUT_BSHD
    ctx.dtype = q.dtype
    ctx.q_shape, ctx.k_shape = tuple(q.shape), tuple(k.shape)


def _backward(ctx, grad_q_out, grad_k_out):
    position_ids, inv_freq, cu_seqlens = ctx.saved_tensors
    grads = []
    for g, shape in ((grad_q_out, ctx.q_shape), (grad_k_out, ctx.k_shape)):
        if g is None:
            g = _apply._empty(ctx.layout, shape, inv_freq.new_empty(0, dtype=ctx.dtype)).zero_()
        grads.append(g if g.dtype == ctx.dtype else g.to(ctx.dtype))
    grad_q, grad_k = _rope_apply_pos_backward(grads[0], grads[1], position_ids, inv_freq, *ctx.args, cu_seqlens,
                                              ctx.layout)
    return (grad_q, grad_k) + (None,) * 7


# ropegrad::rope_apply_pos (torch.ops.ropegrad.rope_apply_pos): q, k logical
# [B,H,S,D]; autograd (q's and k's gradients) through ropegrad::rope_apply_pos_backward.
rope_apply_pos_op = _rt.custom_op(
    "rope_apply_pos",
    "(Tensor q, Tensor k, Tensor? position_ids, Tensor inv_freq, float attention_scaling, ScalarType cos_sin_dtype, "
    "int style, int rotary_dim, Tensor? cu_seqlens) -> (Tensor, Tensor)",
    _forward, _forward_fake, _backward, _setup_context) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager: its implementation directly where nothing can tell).
_rope_apply_pos = _rt.Eager(rope_apply_pos_op, _forward, _setup_context, _backward) if torch else None
_rope_apply_pos_backward = _rt.later("rope_apply_pos_backward", "autograd_call") if torch else None
_module = sys.modules[__name__]


def rope_apply_pos(q, k, position_ids, inv_freq, attention_scaling=1.0, *, cos_sin_dtype=None, unsqueeze_dim=1,
                   interleaved=False, rotary_dim=0, cu_seqlens=None):
    """(q_embed, k_embed): q and k rotated by the angles position * inv_freq,
    each cos/sin rounded to cos_sin_dtype (default q's dtype) as a table would
    hold it, with autograd for q and k. See the module's docstring for what
    it takes; returns q's and k's shapes and memory layouts."""
    packed = cu_seqlens is not None
    for name, t in (("q", q), ("k", k)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s: %s must be a torch.Tensor, got %s" % (_NAME, name, type(t).__name__))
        if t.dim() != (3 if packed else 4):
            raise ValueError("%s: %s must have %s, got shape %s" % (
                _NAME, name, "3 dims ([T,H,D]) with cu_seqlens" if packed else
                "4 dims ([B,H,S,D] with unsqueeze_dim=1, [B,S,H,D] with 2)", list(t.shape)))
    if unsqueeze_dim < 0:
        unsqueeze_dim += 4
    if packed:
        qc, kc = q[None].transpose(1, 2), k[None].transpose(1, 2)
    elif unsqueeze_dim in (1, 2):
        qc, kc = (q, k) if unsqueeze_dim == 1 else (q.transpose(1, 2), k.transpose(1, 2))
    else:
        raise ValueError("%s: unsqueeze_dim must be 1 (q [B,H,S,D]) or 2 (q [B,S,H,D]), got %r"
                         % (_NAME, unsqueeze_dim))
    if not packed:
        if not isinstance(position_ids, torch.Tensor) or position_ids.dim() != 2:
            raise ValueError("%s: position_ids must be a tensor [B,S] or [1,S]" % _NAME)
        B = qc.shape[0]
        if position_ids.shape[0] == 1 and B != 1:
            position_ids = position_ids.expand(B, -1)   # a copy of B*S ids, not of any table
        position_ids = position_ids.contiguous()
    else:
        position_ids = None
    cos_sin_dtype = qc.dtype if cos_sin_dtype is None else cos_sin_dtype
    style = STYLE_INTERLEAVED if interleaved else STYLE_HALF
    q_embed, k_embed = _rope_apply_pos(qc, kc, position_ids, inv_freq, float(attention_scaling), cos_sin_dtype,
                                       style, int(rotary_dim), cu_seqlens)
    if packed:
        return q_embed.transpose(1, 2)[0], k_embed.transpose(1, 2)[0]
    if unsqueeze_dim == 2:
        return q_embed.transpose(1, 2), k_embed.transpose(1, 2)
    return q_embed, k_embed
