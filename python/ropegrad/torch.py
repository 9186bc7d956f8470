# SPDX-License-Identifier: Apache-2.0
"""ropegrad for PyTorch: the RoPE position gradient on torch tensors, and an
autograd Function for the Qwen3-style rotary embedding (cos/sin generation
with attention scaling) whose backward runs ropegrad.

    from ropegrad.torch import rope_position_grad, RotaryEmbeddingQwen3, rotary_cos_sin

    # forward: cos, sin = [B,S,D] float32, differentiable w.r.t. position_ids
    cos, sin = rotary_cos_sin(position_ids.float().requires_grad_(), inv_freq, attention_scaling)

The library runs on the tensors' memory through ctypes (ropegrad._lib); CUDA
tensors are processed asynchronously on the current stream of their device,
CPU tensors by the library's multithreaded CPU path. No copies are made
behind your back: rope_position_grad raises on non-contiguous grads or emb
(call .contiguous() yourself, so the cost is visible). The autograd Function
is the exception: autograd may hand it non-contiguous or differently typed
gradients, and it makes them contiguous (and float32 when needed) itself.
"""

import math

import torch

from . import _lib
from ._lib import RopegradError  # noqa: F401  (re-exported)
# The apply ops (L1/088 forward, L1/068 backward): Hugging Face's apply_rotary_pos_emb.
from .rope_apply import RopeApply, apply_rotary_pos_emb, rope_apply_backward  # noqa: F401  (re-exported)

__all__ = ["rope_position_grad", "RotaryEmbeddingQwen3", "rotary_cos_sin", "RopegradError",
           "rope_forward", "cos_sin_from_freqs", "RopeForward", "RotaryEmbedding", "rotary_embedding",
           "RopeApply", "apply_rotary_pos_emb", "rope_apply_backward"]

_GRAD_DTYPES = {torch.bfloat16: _lib.BF16, torch.float16: _lib.F16, torch.float32: _lib.F32}


def _inv_freq_batch_stride(inv_freq, B, H):
    """Checks inv_freq's layout; returns its batch stride in elements (0 when
    every batch shares one vector). Accepted: [H], [B,H], [B,H,1], and [1,H],
    [1,H,1] or a stride-0 expansion of one vector along dim 0. The H values of
    a batch must be contiguous."""
    if not isinstance(inv_freq, torch.Tensor):
        raise TypeError("ropegrad: inv_freq must be a torch.Tensor, got %s" % type(inv_freq).__name__)
    if inv_freq.dtype != torch.float32:
        raise TypeError("ropegrad: inv_freq must be float32, got %s" % inv_freq.dtype)
    shape = tuple(inv_freq.shape)
    want = "[%d], [%d,%d] or [%d,%d,1] (head_dim/2 = %d frequencies per batch)" % (H, B, H, B, H, H)
    if inv_freq.dim() == 1:
        if shape != (H,):
            raise ValueError("ropegrad: inv_freq has shape %s; expected %s" % (list(shape), want))
        if H > 1 and inv_freq.stride(0) != 1:
            raise ValueError("ropegrad: inv_freq must be contiguous (stride %d); call .contiguous()"
                             % inv_freq.stride(0))
        return 0
    if inv_freq.dim() == 3 and shape[2] != 1 or inv_freq.dim() not in (2, 3):
        raise ValueError("ropegrad: inv_freq has shape %s; expected %s" % (list(shape), want))
    if shape[0] not in (1, B) or shape[1] != H:
        raise ValueError("ropegrad: inv_freq has shape %s; expected %s" % (list(shape), want))
    if H > 1 and inv_freq.stride(1) != 1:
        raise ValueError("ropegrad: the %d frequencies of each batch must be contiguous in inv_freq "
                         "(its stride(1) is %d, not 1); call .contiguous()" % (H, inv_freq.stride(1)))
    if shape[0] == 1 or B == 1:
        return 0
    stride = inv_freq.stride(0)
    if stride < 0:
        raise ValueError("ropegrad: inv_freq has a negative batch stride")
    return stride


def _check_grad_like(name, t, shape, device):
    if not isinstance(t, torch.Tensor):
        raise TypeError("ropegrad: %s must be a torch.Tensor, got %s" % (name, type(t).__name__))
    if t.device != device:
        raise ValueError("ropegrad: %s is on %s but grad_cos is on %s; every tensor must be on one device"
                         % (name, t.device, device))
    if tuple(t.shape) != shape:
        raise ValueError("ropegrad: %s has shape %s; expected %s (the shape of grad_cos)"
                         % (name, list(t.shape), list(shape)))
    if not t.is_contiguous():
        raise ValueError("ropegrad: %s must be contiguous; call .contiguous() first" % name)


def rope_position_grad(grad_cos, grad_sin, emb, inv_freq, scale, *, kernel=0, num_threads=0):
    """grad_position_ids [B,S] float32 for the op

        out[b,s] = scale * sum_{d<H} inv_freq[b,d] * ((gs[d]+gs[d+H])*cos(emb[d]) - (gc[d]+gc[d+H])*sin(emb[d]))

    grad_cos, grad_sin: [B,S,D] contiguous, both bfloat16, float16 or float32.
    emb: [B,S,D] float32 contiguous (only the first half is read).
    inv_freq: float32 [H], [B,H], [B,H,1] (or a stride-0 expansion along dim 0).
    scale: attention scaling (a finite float).
    All tensors on one device: CUDA (runs on the device's current stream,
    asynchronously) or CPU (num_threads, 0 = all cores).
    kernel: CUDA kernel version (0 = the default; see `ropegrad bench --kernel`).

    Raises TypeError (wrong type or dtype), ValueError (shape, device,
    layout) or ropegrad.RopegradError (the library refused or the launch
    failed)."""
    if not isinstance(grad_cos, torch.Tensor):
        raise TypeError("ropegrad: grad_cos must be a torch.Tensor, got %s" % type(grad_cos).__name__)
    device = grad_cos.device
    if grad_cos.dim() != 3:
        raise ValueError("ropegrad: grad_cos must be [B,S,D], got shape %s" % list(grad_cos.shape))
    shape = tuple(grad_cos.shape)
    B, S, D = shape
    if grad_cos.dtype not in _GRAD_DTYPES:
        raise TypeError("ropegrad: grad_cos must be bfloat16, float16 or float32, got %s" % grad_cos.dtype)
    if not isinstance(grad_sin, torch.Tensor):
        raise TypeError("ropegrad: grad_sin must be a torch.Tensor, got %s" % type(grad_sin).__name__)
    if grad_sin.dtype != grad_cos.dtype:
        raise TypeError("ropegrad: grad_sin is %s but grad_cos is %s; they must have one dtype"
                        % (grad_sin.dtype, grad_cos.dtype))
    if not isinstance(emb, torch.Tensor):
        raise TypeError("ropegrad: emb must be a torch.Tensor, got %s" % type(emb).__name__)
    if emb.dtype != torch.float32:
        raise TypeError("ropegrad: emb must be float32, got %s" % emb.dtype)
    _check_grad_like("grad_cos", grad_cos, shape, device)
    _check_grad_like("grad_sin", grad_sin, shape, device)
    _check_grad_like("emb", emb, shape, device)
    if D < 2 or D % 2 or D > _lib.MAX_HEAD_DIM:
        raise ValueError("ropegrad: head_dim (last dim) must be even and in 2..%d, got %d" % (_lib.MAX_HEAD_DIM, D))
    H = D // 2
    stride = _inv_freq_batch_stride(inv_freq, B, H)
    if inv_freq.device != device:
        raise ValueError("ropegrad: inv_freq is on %s but grad_cos is on %s; every tensor must be on one device"
                         % (inv_freq.device, device))
    if device.type not in ("cuda", "cpu"):
        raise ValueError("ropegrad: tensors must be on a CUDA device or the CPU, got %s" % device)
    scale = float(scale)
    if not math.isfinite(scale):
        raise ValueError("ropegrad: scale must be finite, got %r" % scale)
    out = torch.empty((B, S), dtype=torch.float32, device=device)
    if B == 0 or S == 0:
        return out

    p = _lib.Problem()
    p.batch_size, p.seq_len, p.head_dim = B, S, D
    p.grad_dtype = _GRAD_DTYPES[grad_cos.dtype]
    p.grad_cos = grad_cos.data_ptr()
    p.grad_sin = grad_sin.data_ptr()
    p.emb = emb.data_ptr()
    p.inv_freq = inv_freq.data_ptr()
    p.inv_freq_batch_stride = stride
    p.attention_scaling = scale
    p.grad_position_ids = out.data_ptr()

    if device.type == "cuda":
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream(device).cuda_stream
            _lib.backward_cuda(p, stream, kernel)
    else:
        if kernel:
            raise ValueError("ropegrad: kernel=%d selects a CUDA kernel; these tensors are on the CPU" % kernel)
        _lib.backward_cpu(p, num_threads)
    return out


def _grads_for_014(grad_cos, grad_sin):
    """The gradients autograd hands a backward, as rope_position_grad takes them:
    a missing one as zeros, one supported dtype for both (anything else, float64
    or mixed, goes to float32), contiguous."""
    if grad_cos is None:
        grad_cos = torch.zeros_like(grad_sin)
    if grad_sin is None:
        grad_sin = torch.zeros_like(grad_cos)
    if grad_cos.dtype != grad_sin.dtype or grad_cos.dtype not in _GRAD_DTYPES:
        grad_cos, grad_sin = grad_cos.float(), grad_sin.float()
    return grad_cos.contiguous(), grad_sin.contiguous()


class RotaryEmbeddingQwen3(torch.autograd.Function):
    """Qwen3-style rotary embedding forward (transformers' Qwen3RotaryEmbedding,
    default rope type), differentiable w.r.t. position_ids through ropegrad:

        freqs = position_ids[..., None] * inv_freq          # [B,S,H], float32
        emb   = cat(freqs, freqs, -1)                         # [B,S,D]
        cos   = emb.cos() * attention_scaling
        sin   = emb.sin() * attention_scaling

    apply(position_ids, inv_freq, attention_scaling=1.0) -> (cos, sin), both
    float32 [B,S,D]. position_ids: floating point [B,S] (integer ids carry no
    gradient; pass them as float). inv_freq: [H] shared by every batch, or
    [B,H,1] / [B,H]. Only position_ids gets a gradient; inv_freq is a buffer
    (its gradient is returned as None)."""

    @staticmethod
    def forward(ctx, position_ids, inv_freq, attention_scaling=1.0):
        if not isinstance(position_ids, torch.Tensor) or not position_ids.is_floating_point():
            raise TypeError("ropegrad: position_ids must be a floating-point tensor [B,S] (got %s)"
                            % (position_ids.dtype if isinstance(position_ids, torch.Tensor)
                               else type(position_ids).__name__))
        if position_ids.dim() != 2:
            raise ValueError("ropegrad: position_ids must be [B,S], got shape %s" % list(position_ids.shape))
        if not isinstance(inv_freq, torch.Tensor) or not inv_freq.is_floating_point():
            raise TypeError("ropegrad: inv_freq must be a floating-point tensor")
        if inv_freq.device != position_ids.device:
            raise ValueError("ropegrad: inv_freq is on %s but position_ids is on %s"
                             % (inv_freq.device, position_ids.device))
        B, S = position_ids.shape
        pos = position_ids.float()
        inv = inv_freq.float()
        if inv.dim() == 1:
            freqs = pos[:, :, None] * inv[None, None, :]
        elif inv.dim() == 3 and inv.shape[2] == 1 and inv.shape[0] in (1, B):
            freqs = pos[:, :, None] * inv[:, None, :, 0]
        elif inv.dim() == 2 and inv.shape[0] in (1, B):
            freqs = pos[:, :, None] * inv[:, None, :]
        else:
            raise ValueError("ropegrad: inv_freq must be [H], [B,H] or [B,H,1], got shape %s" % list(inv.shape))
        emb = torch.cat((freqs, freqs), dim=-1)
        scale = float(attention_scaling)
        cos = emb.cos() * scale
        sin = emb.sin() * scale
        # What backward needs: emb (float32, contiguous: cat made it) and the
        # frequencies in a layout rope_position_grad accepts.
        ctx.save_for_backward(emb, inv.contiguous())
        ctx.scale = scale
        ctx.pos_dtype = position_ids.dtype
        return cos, sin

    @staticmethod
    def backward(ctx, grad_cos, grad_sin):
        emb, inv = ctx.saved_tensors
        if not ctx.needs_input_grad[0] or (grad_cos is None and grad_sin is None):
            return None, None, None
        grad_cos, grad_sin = _grads_for_014(grad_cos, grad_sin)
        g = rope_position_grad(grad_cos, grad_sin, emb, inv, ctx.scale)
        return g.to(ctx.pos_dtype), None, None


def rotary_cos_sin(position_ids, inv_freq, attention_scaling=1.0):
    """(cos, sin) = RotaryEmbeddingQwen3.apply(position_ids, inv_freq, attention_scaling)."""
    return RotaryEmbeddingQwen3.apply(position_ids, inv_freq, float(attention_scaling))



# ---- the forward ops (L1/011, L1/012) and a drop-in module ------------------------------------

def _launch(device, p, fn, num_threads):
    if device.type == "cuda":
        with torch.cuda.device(device):
            fn(p, torch.cuda.current_stream(device).cuda_stream)
    elif device.type == "cpu":
        fn(p, None, num_threads)
    else:
        raise ValueError("ropegrad: tensors must be on a CUDA device or the CPU, got %s" % device)


def rope_forward(position_ids, inv_freq, attention_scaling=1.0, *, num_threads=0):
    """L1/011: cos_sin bf16 [B,S,2H,2] (cos_sin[...,0] = cos, [...,1] = sin)
    from int64 position_ids [B,S] (each batch its own positions) and float32
    inv_freq [H], every element the bf16 nearest to
    attention_scaling * cos/sin(float32(position) * inv_freq)."""
    if not isinstance(position_ids, torch.Tensor) or position_ids.dtype != torch.int64 or position_ids.dim() != 2:
        raise TypeError("ropegrad: position_ids must be an int64 tensor [B,S]")
    if not isinstance(inv_freq, torch.Tensor) or inv_freq.dtype != torch.float32 or inv_freq.dim() != 1:
        raise TypeError("ropegrad: inv_freq must be a float32 tensor [H]")
    if inv_freq.device != position_ids.device:
        raise ValueError("ropegrad: inv_freq is on %s but position_ids is on %s" % (inv_freq.device, position_ids.device))
    if not position_ids.is_contiguous() or not inv_freq.is_contiguous():
        raise ValueError("ropegrad: position_ids and inv_freq must be contiguous")
    scale = float(attention_scaling)
    if not math.isfinite(scale):
        raise ValueError("ropegrad: attention_scaling must be finite, got %r" % scale)
    B, S = position_ids.shape
    H = inv_freq.shape[0]
    if H < 1 or 2 * H > _lib.MAX_HEAD_DIM:
        raise ValueError("ropegrad: inv_freq must hold 1..%d values, got %d" % (_lib.MAX_HEAD_DIM // 2, H))
    out = torch.empty((B, S, 2 * H, 2), dtype=torch.bfloat16, device=position_ids.device)
    if B == 0 or S == 0:
        return out
    p = _lib.ForwardProblem()
    p.batch_size, p.seq_len, p.head_dim = B, S, 2 * H
    p.position_ids, p.inv_freq, p.cos_sin = position_ids.data_ptr(), inv_freq.data_ptr(), out.data_ptr()
    p.attention_scaling = scale
    _launch(position_ids.device, p, _lib.rope_forward, num_threads)
    return out


def cos_sin_from_freqs(freqs, attention_scaling=1.0, *, num_threads=0):
    """L1/012: (cos, sin), bf16 [B,S,2H] each, from float32 freqs [B,S,H]."""
    if not isinstance(freqs, torch.Tensor) or freqs.dtype != torch.float32 or freqs.dim() != 3:
        raise TypeError("ropegrad: freqs must be a float32 tensor [B,S,H]")
    if not freqs.is_contiguous():
        raise ValueError("ropegrad: freqs must be contiguous")
    scale = float(attention_scaling)
    if not math.isfinite(scale):
        raise ValueError("ropegrad: attention_scaling must be finite, got %r" % scale)
    B, S, H = freqs.shape
    if H < 1 or 2 * H > _lib.MAX_HEAD_DIM:
        raise ValueError("ropegrad: freqs' last dim must be 1..%d, got %d" % (_lib.MAX_HEAD_DIM // 2, H))
    cos = torch.empty((B, S, 2 * H), dtype=torch.bfloat16, device=freqs.device)
    sin = torch.empty_like(cos)
    if B == 0 or S == 0:
        return cos, sin
    p = _lib.CosSinProblem()
    p.batch_size, p.seq_len, p.head_dim = B, S, 2 * H
    p.freqs, p.cos, p.sin = freqs.data_ptr(), cos.data_ptr(), sin.data_ptr()
    p.attention_scaling = scale
    _launch(freqs.device, p, _lib.cos_sin, num_threads)
    return cos, sin


class RopeForward(torch.autograd.Function):
    """(cos, sin) bf16 [B,S,D] of integral positions: the forward is ropegrad's
    L1/011 kernel, the backward (w.r.t. position_ids) ropegrad's L1/014.

    apply(position_ids, inv_freq, attention_scaling) with position_ids a
    floating-point [B,S] tensor holding whole numbers (it may require grad),
    inv_freq float32 [H]."""

    @staticmethod
    def forward(ctx, position_ids, inv_freq, attention_scaling=1.0):
        if not isinstance(position_ids, torch.Tensor) or not position_ids.is_floating_point() or position_ids.dim() != 2:
            raise TypeError("ropegrad: position_ids must be a floating-point tensor [B,S] of whole numbers")
        ids = position_ids.detach().to(torch.int64)
        if not torch.equal(ids.to(position_ids.dtype), position_ids.detach()):
            raise ValueError("ropegrad: RopeForward needs whole-number positions (use RotaryEmbeddingQwen3 otherwise)")
        inv = inv_freq.detach().float().contiguous()
        cs = rope_forward(ids.contiguous(), inv, attention_scaling)
        ctx.save_for_backward(position_ids.detach(), inv)
        ctx.scale = float(attention_scaling)
        return cs[..., 0], cs[..., 1]

    @staticmethod
    def backward(ctx, grad_cos, grad_sin):
        pos, inv = ctx.saved_tensors
        if not ctx.needs_input_grad[0] or (grad_cos is None and grad_sin is None):
            return None, None, None
        grad_cos, grad_sin = _grads_for_014(grad_cos, grad_sin)
        freqs = pos.float()[:, :, None] * inv[None, None, :]   # the forward's float32 products
        emb = torch.cat((freqs, freqs), dim=-1)
        g = rope_position_grad(grad_cos, grad_sin, emb, inv, ctx.scale)
        return g.to(pos.dtype), None, None


class RotaryEmbedding(torch.nn.Module):
    """Drop-in for Hugging Face's LlamaRotaryEmbedding / Qwen3RotaryEmbedding:
    forward(x, position_ids) -> (cos, sin), [B,S,D] in x.dtype, from the
    inv_freq buffer and attention_scaling given at construction.

    For bf16 activations the values come from ropegrad's L1/011 kernel (each
    the bf16 nearest to the exact formula; Hugging Face's float32 evaluation
    rounds twice), through RopeForward when position_ids needs a gradient
    (its backward is L1/014). Other dtypes, or positions that are not whole
    numbers, use Hugging Face's float32 formula."""

    def __init__(self, inv_freq, attention_scaling=1.0):
        super().__init__()
        self.register_buffer("inv_freq", inv_freq.detach().float().contiguous(), persistent=False)
        self.attention_scaling = float(attention_scaling)

    def forward(self, x, position_ids):
        return rotary_embedding(x, position_ids, self.inv_freq, self.attention_scaling)


def rotary_embedding(x, position_ids, inv_freq, attention_scaling=1.0):
    """RotaryEmbedding's forward on a given inv_freq (float32 [H]): (cos, sin),
    [B,S,D] in x.dtype. For bf16 x and whole-number positions the values come
    from L1/011 (as views of its interleaved [B,S,D,2] output), else from Hugging
    Face's float32 formula."""
    pos = position_ids
    whole = not pos.is_floating_point() or bool(torch.equal(pos.detach(), pos.detach().round()))
    if x.dtype == torch.bfloat16 and whole and pos.device.type in ("cuda", "cpu"):
        inv_freq = inv_freq.detach().float().contiguous()
        if pos.is_floating_point() and pos.requires_grad:
            return RopeForward.apply(pos, inv_freq, attention_scaling)
        cs = rope_forward(pos.detach().to(torch.int64).contiguous(), inv_freq, attention_scaling)
        return cs[..., 0], cs[..., 1]
    inv = inv_freq.float()[None, :, None].expand(pos.shape[0], -1, 1)
    freqs = (inv @ pos[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * attention_scaling).to(x.dtype), (emb.sin() * attention_scaling).to(x.dtype)
