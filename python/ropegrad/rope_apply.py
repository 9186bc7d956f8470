# SPDX-License-Identifier: Apache-2.0
"""rope_apply (L1/088): the rotary embedding applied to q and k,
q_embed = q*cos + rotate_half(q)*sin (and the same for k), Hugging Face's
apply_rotary_pos_emb; also GPT-J's interleaved pairs and partial rotary.

ctypes (standard library only): Shape (struct ropegrad_rope_apply_shape, shared
with rope_apply_backward), Problem (struct ropegrad_rope_apply_problem), cpu(),
cuda(). With torch: the op ropegrad::rope_apply (torch.library, with a fake
implementation; its autograd formula is rope_apply_backward's op, L1/068) and
apply_rotary_pos_emb(), a drop-in for Hugging Face's that calls it:

    from ropegrad.rope_apply import apply_rotary_pos_emb
    q_embed, k_embed = apply_rotary_pos_emb(q, k, cos, sin)      # as transformers' function

What it takes (anything else raises ValueError or TypeError saying what was
given; nothing is computed some other way behind your back):
  q [B,H,S,D] and k [B,Hkv,S,D] (unsqueeze_dim=1, Hugging Face's) or
  [B,S,H,D] / [B,S,Hkv,D] (unsqueeze_dim=2); GQA: any Hkv. Their memory is
  contiguous either in that order or with heads and sequence swapped (q_proj's
  output viewed and transposed, as Llama and Qwen3 make them); q and k alike.
  bfloat16, float16 or float32 (q and k one dtype).
  cos, sin [B,S,R] or [1,S,R] (shared by every batch), contiguous per batch,
  one floating dtype of the three (it may differ from q's); R = rotary_dim.
  interleaved (keyword): False = rotate-half pairs (i, i+R/2), Hugging Face's
  and NeoX's; True = GPT-J pairs (2i, 2i+1), the table in that order
  (cos[..., 2i] = cos[..., 2i+1], as GPT-J's and Cohere's repeat_interleave
  build it). rotary_dim (keyword): 0 = head_dim, else even and at most
  head_dim; elements beyond it are returned unchanged (include/ropegrad.h).
  All on the CPU (the library's OpenMP+SIMD path) or one CUDA device (the
  kernels run on torch's current stream of that device, asynchronously).

Gradients: q's and k's always, cos's and sin's when either requires grad
(then q and k are kept for the backward; otherwise only cos and sin are, as
autograd keeps for the stock function). 068's grad_x = g*cos - rotate(g)*sin
is the exact gradient when sin's paired columns are equal (every RoPE table:
Hugging Face builds cos and sin as cat(freqs, freqs)); for a sin whose halves
differ it is 068's formula, not the derivative of the forward. cos's and sin's
gradients are exact in both styles.
"""

import ctypes
import functools
import sys

from . import _lib

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Shape", "Problem", "cpu", "cuda", "LAYOUT_BHSD", "LAYOUT_BSHD", "STYLE_HALF", "STYLE_INTERLEAVED",
           "apply_rotary_pos_emb", "rope_apply_op"]

_C = "ropegrad_rope_apply"
_NAME = "ropegrad.apply_rotary_pos_emb"

# ropegrad_layout (a C enum: an int)
LAYOUT_BHSD = 0
LAYOUT_BSHD = 1

# ropegrad_rotary_style (a C enum: an int)
STYLE_HALF = 0
STYLE_INTERLEAVED = 1


class Shape(ctypes.Structure):
    """struct ropegrad_rope_apply_shape (rope_apply's and rope_apply_backward's):
    5 x int64, 3 enums (+4 pad), int64, enum (+4 pad), int64: 80 bytes on LP64."""

    _fields_ = [
        ("batch_size", ctypes.c_int64),
        ("seq_len", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("num_heads", ctypes.c_int64),
        ("num_kv_heads", ctypes.c_int64),
        ("layout", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("cos_sin_dtype", ctypes.c_int),
        ("cos_sin_batch_stride", ctypes.c_int64),
        ("style", ctypes.c_int),
        ("rotary_dim", ctypes.c_int64),
    ]


class Problem(ctypes.Structure):
    """struct ropegrad_rope_apply_problem: the shape, 6 pointers: 128 bytes."""

    _fields_ = [("shape", Shape)] + [(n, ctypes.c_void_p) for n in ("q", "k", "cos", "sin", "q_out", "k_out")]


_lib.check_layout(Shape, 80, {"layout": 40, "cos_sin_batch_stride": 56, "style": 64, "rotary_dim": 72})
_lib.check_layout(Problem, 128, {"q": 80, "k_out": 120})
cpu, cuda = _lib.entry_points(_C, Problem)


# ---- torch (the checks and layouts are rope_apply_backward's too) ----------------------------

def _bshd(x):
    """x.transpose(1, 2).is_contiguous() for x logical [B,H,S,D]: whether its
    memory is [B,S,H,D] in order. For a plain tensor (concrete sizes) from its
    sizes and strides as torch decides contiguity (dims of size 1 skipped, an
    empty tensor contiguous), without making the transposed view."""
    if type(x) is not torch.Tensor:   # FakeTensor and other subclasses: torch decides (symbolic sizes)
        return x.transpose(1, 2).is_contiguous()
    B, H, S, D = x.shape
    sb, sh, ss, sd = x.stride()
    if not (B and H and S and D):
        return True
    z = 1
    if D != 1:
        if sd != 1:
            return False
        z = D
    if H != 1:
        if sh != z:
            return False
        z *= H
    if S != 1:
        if ss != z:
            return False
        z *= S
    return B == 1 or sb == z


def _layouts(x):
    """The ropegrad layouts whose memory order x (logical [B,H,S,D]) is
    contiguous in: BHSD as is, BSHD when heads and sequence are swapped."""
    found = []
    if x.is_contiguous():
        found.append(LAYOUT_BHSD)
    if _bshd(x):
        found.append(LAYOUT_BSHD)
    return found


def _is_layout(x, layout):
    """layout in _layouts(x), deciding only that one."""
    return x.is_contiguous() if layout == LAYOUT_BHSD else layout == LAYOUT_BSHD and _bshd(x)


def _empty(layout, shape, like):
    """An uninitialized [B,H,S,D] tensor (shape) laid out in memory as layout."""
    B, H, S, D = shape
    if layout == LAYOUT_BSHD:
        return torch.empty((B, S, H, D), dtype=like.dtype, device=like.device).transpose(1, 2)
    return torch.empty((B, H, S, D), dtype=like.dtype, device=like.device)


def _in_layout(x, layout, shape, like):
    """x as a tensor in layout (x itself when it already is, else a copy);
    None becomes zeros (an output autograd has no gradient for)."""
    if x is None:
        return _empty(layout, shape, like).zero_(), True
    if x.dtype == like.dtype and _is_layout(x, layout):
        return x, False
    out = _empty(layout, shape, like)
    out.copy_(x)
    return out, True


def _check_heads(q, k, unsqueeze_dim):
    for name, t in (("q", q), ("k", k)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s: %s must be a torch.Tensor, got %s" % (_NAME, name, type(t).__name__))
        if t.dim() != 4:
            raise ValueError("%s: %s must have 4 dims ([B,H,S,D] with unsqueeze_dim=1, [B,S,H,D] with 2), got shape %s"
                             % (_NAME, name, list(t.shape)))
    if q.dtype not in _rt.DTYPES:
        raise TypeError("%s: q must be bfloat16, float16 or float32, got %s" % (_NAME, q.dtype))
    if k.dtype != q.dtype:
        raise TypeError("%s: k is %s but q is %s; they must have one dtype" % (_NAME, k.dtype, q.dtype))
    # Both as logical [B,H,S,D].
    qc, kc = (q, k) if unsqueeze_dim == 1 else (q.transpose(1, 2), k.transpose(1, 2))
    B, _, S, D = qc.shape
    if kc.shape[0] != B or kc.shape[2] != S or kc.shape[3] != D:
        raise ValueError("%s: q %s and k %s differ in batch, sequence or head_dim" % (_NAME, list(q.shape), list(k.shape)))
    if D < 2 or D % 2 or D > _lib.MAX_HEAD_DIM:
        raise ValueError("%s: head_dim must be even and in 2..%d, got %d" % (_NAME, _lib.MAX_HEAD_DIM, D))
    return qc, kc, _layout_of(qc, kc)


def check_style(who, style, rotary_dim, D):
    """style (STYLE_HALF or STYLE_INTERLEAVED) and rotary_dim (0, or even in
    2..D) as the C API takes them; returns R, the rotated elements a row."""
    if style not in (STYLE_HALF, STYLE_INTERLEAVED):
        raise ValueError("%s: style must be %d (rotate-half) or %d (interleaved), got %r"
                         % (who, STYLE_HALF, STYLE_INTERLEAVED, style))
    if rotary_dim < 0 or rotary_dim > D or rotary_dim % 2:
        raise ValueError("%s: rotary_dim must be 0 (head_dim) or even and in 2..%d, got %d" % (who, D, rotary_dim))
    return rotary_dim or D


def _check_tables(cos, sin, qc, rotary_dim=0):
    """cos/sin against q (logical [B,H,S,D]) and rotary_dim (0: D, validated);
    returns their batch stride in elements (0: shared)."""
    B, _, S, D = qc.shape
    D = rotary_dim or D   # the tables' columns
    device, dtypes = qc.device, _rt.DTYPES
    for name, t in (("cos", cos), ("sin", sin)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s: %s must be a torch.Tensor, got %s" % (_NAME, name, type(t).__name__))
        shape = t.shape
        if len(shape) != 3 or shape[0] not in (1, B) or tuple(shape[1:]) != (S, D):
            raise ValueError("%s: %s must be [B,S,%s] = [%d,%d,%d] or [1,%d,%d]%s, got shape %s"
                             % (_NAME, name, "R" if rotary_dim else "D", B, S, D, S, D,
                                " (R = rotary_dim)" if rotary_dim else "", list(shape)))
        if t.dtype not in dtypes:
            raise TypeError("%s: %s must be bfloat16, float16 or float32, got %s" % (_NAME, name, t.dtype))
        if t.device != device:
            raise ValueError("%s: %s is on %s but q is on %s; every tensor must be on one device"
                             % (_NAME, name, t.device, device))
        stride = t.stride()
        if (S > 1 and stride[1] != D) or stride[2] != 1:
            raise ValueError("%s: each batch of %s must be contiguous [S,D] (strides %s); call .contiguous()"
                             % (_NAME, name, list(stride)))
    cos_stride = cos.stride()
    if sin.dtype != cos.dtype or sin.shape != cos.shape or sin.stride() != cos_stride:
        raise ValueError("%s: cos (%s, %s, strides %s) and sin (%s, %s, strides %s) must match in shape, dtype and "
                         "strides" % (_NAME, list(cos.shape), cos.dtype, list(cos_stride),
                                      list(sin.shape), sin.dtype, list(sin.stride())))
    if cos.shape[0] == 1 or cos_stride[0] == 0:
        return 0
    if cos_stride[0] != S * D:
        raise ValueError("%s: cos and sin must be contiguous (batch stride %d, not %d); call .contiguous()"
                         % (_NAME, cos_stride[0], S * D))
    return S * D


def _shape(qc, kc, layout, cos, stride, style=STYLE_HALF, rotary_dim=0):
    B, H, S, D = qc.shape
    dtypes = _rt.DTYPES
    return Shape(B, S, D, H, kc.shape[1], layout, dtypes[qc.dtype], dtypes[cos.dtype], stride, style, rotary_dim)


def check_pair(who, names, a, b):
    """Two head tensors (q and k, or their gradients), logical [B,H,S,D] and
    [B,Hkv,S,D]: 4 dims, one dtype the kernels take, one batch, sequence and
    head_dim (even, 2..MAX_HEAD_DIM). Shapes and dtypes only."""
    for name, t in zip(names, (a, b)):
        if t.dim() != 4:
            raise ValueError("%s: %s must be [B,H,S,D], got shape %s" % (who, name, list(t.shape)))
    if a.dtype not in _rt.DTYPES or b.dtype != a.dtype:
        raise TypeError("%s: %s and %s must be one dtype of bfloat16, float16, float32, got %s and %s"
                        % ((who,) + tuple(names) + (a.dtype, b.dtype)))
    B, _, S, D = a.shape
    if b.shape[0] != B or b.shape[2] != S or b.shape[3] != D:
        raise ValueError("%s: %s %s and %s %s differ in batch, sequence or head_dim"
                         % (who, names[0], list(a.shape), names[1], list(b.shape)))
    if D < 2 or D % 2 or D > _lib.MAX_HEAD_DIM:
        raise ValueError("%s: head_dim must be even and in 2..%d, got %d" % (who, _lib.MAX_HEAD_DIM, D))
    if b.device != a.device:
        raise ValueError("%s: %s is on %s but %s is on %s" % (who, names[1], b.device, names[0], a.device))


def _layout_of(qc, kc):
    """The one ropegrad layout q and k (logical [B,H,S,D]) share; raises
    ValueError when they share none. Reads only shapes and strides, so the
    fake (meta) implementation decides exactly as the real one."""
    in_k = _layouts(kc)
    common = [lay for lay in _layouts(qc) if lay in in_k]
    if not common:
        raise ValueError("%s: q (strides %s) and k (strides %s) must both be contiguous as [B,H,S,D] or both as "
                         "[B,S,H,D] in memory; call .contiguous() on them (or use the stock function)"
                         % (_NAME, list(qc.stride()), list(kc.stride())))
    return common[0]


def _check_op(qc, kc, cos, sin, style=STYLE_HALF, rotary_dim=0):
    """The op's inputs (shapes, dtypes, strides, devices, style, rotary_dim;
    never the data): (layout, cos's batch stride)."""
    check_pair(_NAME, ("q", "k"), qc, kc)
    check_style(_NAME, style, rotary_dim, qc.shape[3])
    return _layout_of(qc, kc), _check_tables(cos, sin, qc, rotary_dim)


def _forward(qc, kc, cos, sin, style=STYLE_HALF, rotary_dim=0):
    """ropegrad::rope_apply: (q_embed, k_embed) of q, k logical [B,H,S,D]
    (one layout of the two), cos/sin [B,S,R] or [1,S,R], the style's pairs.
    The op's real implementation: the CPU path or the CUDA kernel on the
    current stream."""
    layout, stride = _check_op(qc, kc, cos, sin, style, rotary_dim)
    return _run(qc, kc, cos, sin, style, rotary_dim, layout=layout, stride=stride)


def _run(qc, kc, cos, sin, style, rotary_dim, layout, stride):
    """_forward on checked inputs (layout and cos's batch stride as _check_op returns them)."""
    q_out, k_out = _empty(layout, qc.shape, qc), _empty(layout, kc.shape, kc)
    if qc.numel() and kc.numel():
        p = Problem(_shape(qc, kc, layout, cos, stride, style, rotary_dim), qc.data_ptr(), kc.data_ptr(),
                    cos.data_ptr(), sin.data_ptr(), q_out.data_ptr(), k_out.data_ptr())
        _rt.launch(qc.device, _module, p, who=_NAME)
    return q_out, k_out


def _forward_fake(qc, kc, cos, sin, style=STYLE_HALF, rotary_dim=0):
    layout, _ = _check_op(qc, kc, cos, sin, style, rotary_dim)
    return _empty(layout, qc.shape, qc), _empty(layout, kc.shape, kc)


def _setup_context(ctx, inputs, output):
    qc, kc, cos, sin, style, rotary_dim = inputs
    ctx.style, ctx.rotary_dim = int(style), int(rotary_dim)
    ctx.table_grads = ctx.needs_input_grad[2] or ctx.needs_input_grad[3]
    # q and k only when cos/sin need their gradients (as the stock function's autograd).
    ctx.save_for_backward(cos, sin, *((qc, kc) if ctx.table_grads else ()))
    # _layout_of(qc, kc) of the checked inputs: BHSD where both are contiguous so, else BSHD
    ctx.layout = LAYOUT_BHSD if qc.is_contiguous() and kc.is_contiguous() else LAYOUT_BSHD
    ctx.dtype = qc.dtype
    ctx.q_shape, ctx.k_shape = tuple(qc.shape), tuple(kc.shape)
    # _check_tables(cos, sin, qc, rotary_dim) of the checked inputs: cos's batch stride
    ctx.stride = 0 if cos.shape[0] == 1 or cos.stride(0) == 0 else qc.shape[2] * (ctx.rotary_dim or qc.shape[3])


def _backward(ctx, grad_q_out, grad_k_out):
    return _autograd_backward(ctx, grad_q_out, grad_k_out)


# ropegrad::rope_apply (torch.ops.ropegrad.rope_apply): forward 088, autograd
# through ropegrad::rope_apply_backward (068); its fake implementation gives
# torch.compile the outputs' shapes and strides (q's and k's layout).
rope_apply_op = _rt.custom_op(
    "rope_apply", "(Tensor q, Tensor k, Tensor cos, Tensor sin, int style=0, int rotary_dim=0) -> (Tensor, Tensor)",
    _forward, _forward_fake, _backward, _setup_context) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager: its implementation directly where nothing can tell).
_rope_apply = _rt.Eager(rope_apply_op, _forward, _setup_context, _backward) if torch else None
_autograd_backward = _rt.later("rope_apply_backward", "autograd_backward") if torch else None   # it imports this module
_module = sys.modules[__name__]


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1, *, interleaved=False, rotary_dim=0):
    """Hugging Face's apply_rotary_pos_emb (q*cos + rotate_half(q)*sin, the same
    for k, cos/sin unsqueezed at unsqueeze_dim) through ropegrad's kernels, with
    autograd. position_ids is accepted and unused (as in transformers 4.x).
    interleaved=True: GPT-J's pairs (2i, 2i+1); rotary_dim: the first
    rotary_dim elements of each head rotate (cos/sin [..., rotary_dim]), the
    rest pass through (0: all). Returns (q_embed, k_embed) in q's and k's
    shapes and memory layouts."""
    if unsqueeze_dim < 0:
        unsqueeze_dim += 4
    if unsqueeze_dim not in (1, 2):
        raise ValueError("%s: unsqueeze_dim must be 1 (q [B,H,S,D]) or 2 (q [B,S,H,D]), got %r"
                         % (_NAME, unsqueeze_dim))
    qc, kc, layout = _check_heads(q, k, unsqueeze_dim)
    if kc.device != qc.device:
        raise ValueError("%s: k is on %s but q is on %s" % (_NAME, kc.device, qc.device))
    style = STYLE_INTERLEAVED if interleaved else STYLE_HALF
    rotary_dim = int(rotary_dim)
    check_style(_NAME, style, rotary_dim, qc.shape[3])
    stride = _check_tables(cos, sin, qc, rotary_dim)
    if stride == 0 and cos.shape[0] > 1 and (cos.requires_grad or sin.requires_grad):
        # One table expanded over the batch: its gradient is per batch
        # element (autograd sums it through the expand), so give each its own.
        cos, sin = cos.contiguous(), sin.contiguous()
        stride = _check_tables(cos, sin, qc, rotary_dim)
    # Every check of the op's was made above: the eager path runs it unchecked.
    q_embed, k_embed = _rope_apply.call((qc, kc, cos, sin, style, rotary_dim),
                                        functools.partial(_run, layout=layout, stride=stride))
    if unsqueeze_dim == 2:
        return q_embed.transpose(1, 2), k_embed.transpose(1, 2)
    return q_embed, k_embed
