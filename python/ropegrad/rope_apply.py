# SPDX-License-Identifier: Apache-2.0
"""Applying the rotary embedding to q and k with autograd: a drop-in for
Hugging Face's apply_rotary_pos_emb whose forward is ropegrad's L1/088 kernel
and whose backward is L1/068's.

    from ropegrad.torch import apply_rotary_pos_emb
    q_embed, k_embed = apply_rotary_pos_emb(q, k, cos, sin)      # as transformers' function

What it takes (anything else raises ValueError or TypeError saying what was
given; nothing is computed some other way behind your back):
  q [B,H,S,D] and k [B,Hkv,S,D] (unsqueeze_dim=1, Hugging Face's) or
  [B,S,H,D] / [B,S,Hkv,D] (unsqueeze_dim=2); GQA: any Hkv. Their memory is
  contiguous either in that order or with heads and sequence swapped (q_proj's
  output viewed and transposed, as Llama and Qwen3 make them); q and k alike.
  bfloat16, float16 or float32 (q and k one dtype).
  cos, sin [B,S,D] or [1,S,D] (shared by every batch), contiguous per batch,
  one floating dtype of the three (it may differ from q's).
  All on the CPU (the library's OpenMP+SIMD path) or one CUDA device (the
  kernels run on torch's current stream of that device, asynchronously).

Gradients: q's and k's always, cos's and sin's when either requires grad
(then q and k are kept for the backward; otherwise only cos and sin are, as
autograd keeps for the stock function). 068's grad_x = g*cos - rotate_half(g)*sin
is the exact gradient when sin's two halves are equal (every RoPE table:
Hugging Face builds cos and sin as cat(freqs, freqs)); for a sin whose halves
differ it is 068's formula, not the derivative of the forward.
"""

import torch

from . import _lib

__all__ = ["apply_rotary_pos_emb", "RopeApply", "rope_apply_backward"]

_DTYPES = {torch.bfloat16: _lib.BF16, torch.float16: _lib.F16, torch.float32: _lib.F32}
_NAME = "ropegrad.apply_rotary_pos_emb"


def _layouts(x):
    """The ropegrad layouts whose memory order x (logical [B,H,S,D]) is
    contiguous in: BHSD as is, BSHD when heads and sequence are swapped."""
    found = []
    if x.is_contiguous():
        found.append(_lib.LAYOUT_BHSD)
    if x.transpose(1, 2).is_contiguous():
        found.append(_lib.LAYOUT_BSHD)
    return found


def _empty(layout, shape, like):
    """An uninitialized [B,H,S,D] tensor (shape) laid out in memory as layout."""
    B, H, S, D = shape
    if layout == _lib.LAYOUT_BSHD:
        return torch.empty((B, S, H, D), dtype=like.dtype, device=like.device).transpose(1, 2)
    return torch.empty((B, H, S, D), dtype=like.dtype, device=like.device)


def _in_layout(x, layout, shape, like):
    """x as a tensor in layout (x itself when it already is, else a copy);
    None becomes zeros (an output autograd has no gradient for)."""
    if x is None:
        return _empty(layout, shape, like).zero_(), True
    if x.dtype == like.dtype and layout in _layouts(x):
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
    if q.dtype not in _DTYPES:
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
    common = [lay for lay in _layouts(qc) if lay in _layouts(kc)]
    if not common:
        raise ValueError("%s: q (strides %s) and k (strides %s) must both be contiguous as [B,H,S,D] or both as "
                         "[B,S,H,D] in memory; call .contiguous() on them (or use the stock function)"
                         % (_NAME, list(q.stride()), list(k.stride())))
    return qc, kc, common[0]


def _check_tables(cos, sin, qc):
    """cos/sin against q (logical [B,H,S,D]); returns their batch stride in elements (0: shared)."""
    B, _, S, D = qc.shape
    for name, t in (("cos", cos), ("sin", sin)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s: %s must be a torch.Tensor, got %s" % (_NAME, name, type(t).__name__))
        if t.dim() != 3 or t.shape[0] not in (1, B) or tuple(t.shape[1:]) != (S, D):
            raise ValueError("%s: %s must be [B,S,D] = [%d,%d,%d] or [1,%d,%d], got shape %s"
                             % (_NAME, name, B, S, D, S, D, list(t.shape)))
        if t.dtype not in _DTYPES:
            raise TypeError("%s: %s must be bfloat16, float16 or float32, got %s" % (_NAME, name, t.dtype))
        if t.device != qc.device:
            raise ValueError("%s: %s is on %s but q is on %s; every tensor must be on one device"
                             % (_NAME, name, t.device, qc.device))
        if (S > 1 and t.stride(1) != D) or t.stride(2) != 1:
            raise ValueError("%s: each batch of %s must be contiguous [S,D] (strides %s); call .contiguous()"
                             % (_NAME, name, list(t.stride())))
    if sin.dtype != cos.dtype or sin.shape != cos.shape or sin.stride() != cos.stride():
        raise ValueError("%s: cos (%s, %s, strides %s) and sin (%s, %s, strides %s) must match in shape, dtype and "
                         "strides" % (_NAME, list(cos.shape), cos.dtype, list(cos.stride()),
                                      list(sin.shape), sin.dtype, list(sin.stride())))
    if cos.shape[0] == 1 or cos.stride(0) == 0:
        return 0
    if cos.stride(0) != S * D:
        raise ValueError("%s: cos and sin must be contiguous (batch stride %d, not %d); call .contiguous()"
                         % (_NAME, cos.stride(0), S * D))
    return S * D


def _shape(qc, kc, layout, cos, stride):
    s = _lib.ApplyShape()
    s.batch_size, s.num_heads, s.seq_len, s.head_dim = qc.shape
    s.num_kv_heads = kc.shape[1]
    s.layout, s.dtype = layout, _DTYPES[qc.dtype]
    s.cos_sin_dtype, s.cos_sin_batch_stride = _DTYPES[cos.dtype], stride
    return s


def _launch(device, fn, p):
    if device.type == "cuda":
        with torch.cuda.device(device):
            fn(p, torch.cuda.current_stream(device).cuda_stream)
    elif device.type == "cpu":
        fn(p, None, 0)
    else:
        raise ValueError("%s: tensors must be on a CUDA device or the CPU, got %s" % (_NAME, device))


class RopeApply(torch.autograd.Function):
    """apply(qc, kc, cos, sin, layout, stride) -> (q_embed, k_embed), all of q
    and k logical [B,H,S,D] in memory layout `layout`, checked by the caller
    (apply_rotary_pos_emb). Forward L1/088, backward L1/068."""

    @staticmethod
    def forward(ctx, qc, kc, cos, sin, layout, stride):
        shape = _shape(qc, kc, layout, cos, stride)
        q_out, k_out = _empty(layout, qc.shape, qc), _empty(layout, kc.shape, kc)
        if qc.numel() and kc.numel():
            p = _lib.ApplyProblem()
            p.shape = shape
            p.q, p.k, p.cos, p.sin = qc.data_ptr(), kc.data_ptr(), cos.data_ptr(), sin.data_ptr()
            p.q_out, p.k_out = q_out.data_ptr(), k_out.data_ptr()
            _launch(qc.device, _lib.rope_apply, p)
        ctx.table_grads = ctx.needs_input_grad[2] or ctx.needs_input_grad[3]
        # q and k only when cos/sin need their gradients (as the stock function's autograd).
        ctx.save_for_backward(cos, sin, *((qc, kc) if ctx.table_grads else ()))
        ctx.layout, ctx.stride = layout, stride
        ctx.q_shape, ctx.k_shape, ctx.cos_shape = tuple(qc.shape), tuple(kc.shape), tuple(cos.shape)
        ctx.q_like = torch.empty(0, dtype=qc.dtype, device=qc.device)
        return q_out, k_out

    @staticmethod
    def backward(ctx, grad_q_out, grad_k_out):
        cos, sin = ctx.saved_tensors[:2]
        like, layout = ctx.q_like, ctx.layout
        gq, own_q = _in_layout(grad_q_out, layout, ctx.q_shape, like)
        gk, own_k = _in_layout(grad_k_out, layout, ctx.k_shape, like)
        # In place into a copy we made; a new tensor where autograd's gradient is used as given.
        grad_q = gq if own_q else _empty(layout, ctx.q_shape, like)
        grad_k = gk if own_k else _empty(layout, ctx.k_shape, like)
        B, _, S, D = ctx.q_shape
        grad_cos = grad_sin = None
        p = _lib.ApplyBackwardProblem()
        if ctx.table_grads:
            qc, kc = ctx.saved_tensors[2:]
            cs_shape = (S, D) if ctx.stride == 0 else (B, S, D)
            grad_cos = torch.empty(cs_shape, dtype=cos.dtype, device=cos.device)
            grad_sin = torch.empty_like(grad_cos)
            p.q, p.k, p.grad_cos, p.grad_sin = qc.data_ptr(), kc.data_ptr(), grad_cos.data_ptr(), grad_sin.data_ptr()
        if gq.numel() and gk.numel():
            p.shape = _shape(gq, gk, layout, cos, ctx.stride)
            p.grad_q_out, p.grad_k_out, p.cos, p.sin = gq.data_ptr(), gk.data_ptr(), cos.data_ptr(), sin.data_ptr()
            p.grad_q, p.grad_k = grad_q.data_ptr(), grad_k.data_ptr()
            _launch(like.device, _lib.rope_apply_backward, p)
        elif grad_cos is not None:
            grad_cos.zero_()
            grad_sin.zero_()
        if grad_cos is not None:
            grad_cos, grad_sin = grad_cos.view(ctx.cos_shape), grad_sin.view(ctx.cos_shape)
        return grad_q, grad_k, grad_cos, grad_sin, None, None


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    """Hugging Face's apply_rotary_pos_emb (q*cos + rotate_half(q)*sin, the same
    for k, cos/sin unsqueezed at unsqueeze_dim) through ropegrad's kernels, with
    autograd. position_ids is accepted and unused (as in transformers 4.x).
    Returns (q_embed, k_embed) in q's and k's shapes and memory layouts."""
    if unsqueeze_dim < 0:
        unsqueeze_dim += 4
    if unsqueeze_dim not in (1, 2):
        raise ValueError("%s: unsqueeze_dim must be 1 (q [B,H,S,D]) or 2 (q [B,S,H,D]), got %r"
                         % (_NAME, unsqueeze_dim))
    qc, kc, layout = _check_heads(q, k, unsqueeze_dim)
    if kc.device != qc.device:
        raise ValueError("%s: k is on %s but q is on %s" % (_NAME, kc.device, qc.device))
    stride = _check_tables(cos, sin, qc)
    if stride == 0 and cos.shape[0] > 1 and (cos.requires_grad or sin.requires_grad):
        # One table expanded over the batch: its gradient is per batch
        # element (autograd sums it through the expand), so give each its own.
        cos, sin = cos.contiguous(), sin.contiguous()
        stride = cos.shape[1] * cos.shape[2]
    q_embed, k_embed = RopeApply.apply(qc, kc, cos, sin, layout, stride)
    if unsqueeze_dim == 2:
        return q_embed.transpose(1, 2), k_embed.transpose(1, 2)
    return q_embed, k_embed


def rope_apply_backward(grad_q_embed, grad_k_embed, q, k, cos, sin):
    """L1/068 as a plain function (no autograd): (grad_q, grad_k, grad_cos,
    grad_sin) from out's gradients [B,H,S,D] / [B,Hkv,S,D], the forward's q and k
    (laid out alike: one of the layouts apply_rotary_pos_emb takes with
    unsqueeze_dim=1) and cos, sin [B,S,D] or [1,S,D]; grad_cos and grad_sin have
    cos's shape. The suite's op (suites/sol-execbench-068)."""
    with torch.no_grad():
        qc, kc, layout = _check_heads(q, k, 1)
        stride = _check_tables(cos, sin, qc)
        if cos.shape[0] > 1 and stride == 0:
            raise ValueError("%s: cos expanded over the batch has no per-batch gradient here; pass [1,S,D]" % _NAME)
        gq, _ = _in_layout(grad_q_embed, layout, tuple(qc.shape), qc)
        gk, _ = _in_layout(grad_k_embed, layout, tuple(kc.shape), kc)
        grads = (_empty(layout, qc.shape, qc), _empty(layout, kc.shape, kc),
                 torch.empty(cos.shape, dtype=cos.dtype, device=cos.device), torch.empty(cos.shape, dtype=cos.dtype,
                                                                                         device=cos.device))
        p = _lib.ApplyBackwardProblem()
        p.shape = _shape(qc, kc, layout, cos, stride)
        p.grad_q_out, p.grad_k_out, p.q, p.k = gq.data_ptr(), gk.data_ptr(), qc.data_ptr(), kc.data_ptr()
        p.cos, p.sin = cos.data_ptr(), sin.data_ptr()
        p.grad_q, p.grad_k, p.grad_cos, p.grad_sin = (t.data_ptr() for t in grads)
        if qc.numel() and kc.numel():
            _launch(qc.device, _lib.rope_apply_backward, p)
        return grads
