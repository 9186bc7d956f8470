# SPDX-License-Identifier: Apache-2.0
"""rope_backward (L1/014): the gradient of RoPE cos/sin generation with
respect to position_ids,

    out[b,s] = scale * sum_{d<H} inv_freq[b,d] * ((gs[d]+gs[d+H])*cos(emb[d]) - (gc[d]+gc[d+H])*sin(emb[d]))

ctypes (standard library only): Problem (struct ropegrad_rope_backward_problem),
validate(), reference(), cpu(), cuda(). With torch: the ops
ropegrad::rope_position_grad (this op) and ropegrad::rotary_cos_sin (the
Qwen3-style cos/sin generation, whose autograd formula is this op), both
registered through torch.library with fake implementations;
rope_position_grad() and RotaryEmbeddingQwen3 / rotary_cos_sin() call them:

    from ropegrad.rope_backward import rotary_cos_sin
    cos, sin = rotary_cos_sin(position_ids.float().requires_grad_(), inv_freq, attention_scaling)
"""

import ctypes
import functools
import math
import sys

from . import _lib

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Problem", "validate", "reference", "cpu", "cuda", "rope_position_grad", "RotaryEmbeddingQwen3",
           "rotary_cos_sin", "backward_grads", "freqs_of", "position_backward", "rope_position_grad_op",
           "rotary_cos_sin_op"]

# The C functions: <_C>_cpu, <_C>_cuda, <_C>_validate, <_C>_reference.
_C = "ropegrad_rope_backward"
_VALIDATE, _REFERENCE = _C + "_validate", _C + "_reference"


class Problem(ctypes.Structure):
    """struct ropegrad_rope_backward_problem, field for field. ctypes applies
    the C ABI's alignment rules from the same order and types, so the padding
    after the enum (4 bytes before the first pointer, on LP64) and after the
    float matches the compiler's layout (checked below)."""

    _fields_ = [
        ("batch_size", ctypes.c_int64),
        ("seq_len", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("grad_dtype", ctypes.c_int),
        ("grad_cos", ctypes.c_void_p),
        ("grad_sin", ctypes.c_void_p),
        ("emb", ctypes.c_void_p),          # const float *
        ("inv_freq", ctypes.c_void_p),     # const float *
        ("inv_freq_batch_stride", ctypes.c_int64),
        ("attention_scaling", ctypes.c_float),
        ("grad_position_ids", ctypes.c_void_p),  # float *
    ]


# 3 x int64 (0..24), enum int at 24 + 4 pad, 4 pointers at 32..64, int64 at
# 64, float at 72 + 4 pad, pointer at 80; 88 bytes.
_lib.check_layout(Problem, 88, {"grad_dtype": 24, "grad_cos": 32, "inv_freq_batch_stride": 64,
                                "attention_scaling": 72, "grad_position_ids": 80})
_P = ctypes.POINTER(Problem)
_lib.declare({_VALIDATE: (ctypes.c_int, [_P]), _REFERENCE: (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_double)])})
cpu, cuda = _lib.entry_points(_C, Problem)


def validate(p):
    """Raises RopegradError naming what is wrong with the problem p."""
    _lib.check(getattr(_lib.load(), _VALIDATE)(ctypes.byref(p)), _VALIDATE)


def reference(p, out):
    """The double-precision reference into out: a ctypes array (or pointer) of batch_size*seq_len doubles."""
    _lib.check(getattr(_lib.load(), _REFERENCE)(ctypes.byref(p), ctypes.cast(out, ctypes.POINTER(ctypes.c_double))),
               _REFERENCE)


# ---- torch -----------------------------------------------------------------------------------

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


def _check_position_grad(grad_cos, grad_sin, emb, inv_freq, scale):
    """rope_position_grad's inputs (shapes, dtypes, layouts, devices; never the
    data); returns (B, S, D, inv_freq's batch stride, scale as a float)."""
    if not isinstance(grad_cos, torch.Tensor):
        raise TypeError("ropegrad: grad_cos must be a torch.Tensor, got %s" % type(grad_cos).__name__)
    device = grad_cos.device
    if grad_cos.dim() != 3:
        raise ValueError("ropegrad: grad_cos must be [B,S,D], got shape %s" % list(grad_cos.shape))
    shape = tuple(grad_cos.shape)
    B, S, D = shape
    if grad_cos.dtype not in _rt.DTYPES:
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
    stride = _inv_freq_batch_stride(inv_freq, B, D // 2)
    if inv_freq.device != device:
        raise ValueError("ropegrad: inv_freq is on %s but grad_cos is on %s; every tensor must be on one device"
                         % (inv_freq.device, device))
    scale = float(scale)
    if not math.isfinite(scale):
        raise ValueError("ropegrad: scale must be finite, got %r" % scale)
    return B, S, D, stride, scale


def _position_grad(grad_cos, grad_sin, emb, inv_freq, scale, num_threads=0):
    """ropegrad::rope_position_grad's implementation: 014 on the CPU path or the current CUDA stream."""
    B, S, D, stride, scale = _check_position_grad(grad_cos, grad_sin, emb, inv_freq, scale)
    return _position_grad_run(grad_cos, grad_sin, emb, inv_freq, scale, num_threads, stride=stride)


def _position_grad_run(grad_cos, grad_sin, emb, inv_freq, scale, num_threads=0, *, stride):
    """_position_grad on checked inputs (inv_freq's batch stride as _check_position_grad returns it)."""
    B, S, D = grad_cos.shape
    out = torch.empty((B, S), dtype=torch.float32, device=grad_cos.device)
    if B == 0 or S == 0:
        return out
    p = Problem()
    p.batch_size, p.seq_len, p.head_dim = B, S, D
    p.grad_dtype = _rt.DTYPES[grad_cos.dtype]
    p.grad_cos = grad_cos.data_ptr()
    p.grad_sin = grad_sin.data_ptr()
    p.emb = emb.data_ptr()
    p.inv_freq = inv_freq.data_ptr()
    p.inv_freq_batch_stride = stride
    p.attention_scaling = scale
    p.grad_position_ids = out.data_ptr()
    _rt.launch(grad_cos.device, _module, p, num_threads)
    return out


def _position_grad_fake(grad_cos, grad_sin, emb, inv_freq, scale, num_threads=0):
    B, S, _, _, _ = _check_position_grad(grad_cos, grad_sin, emb, inv_freq, scale)
    return grad_cos.new_empty((B, S), dtype=torch.float32)


# ropegrad::rope_position_grad (torch.ops.ropegrad.rope_position_grad): 014;
# the backward of ropegrad::rope_forward and ropegrad::rotary_cos_sin.
rope_position_grad_op = _rt.custom_op(
    "rope_position_grad",
    "(Tensor grad_cos, Tensor grad_sin, Tensor emb, Tensor inv_freq, float scale, int num_threads=0) -> Tensor",
    _position_grad, _position_grad_fake) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager: its implementation directly where nothing can tell).
_rope_position_grad = _rt.Eager(rope_position_grad_op, _position_grad) if torch else None
_module = sys.modules[__name__]


def rope_position_grad(grad_cos, grad_sin, emb, inv_freq, scale, *, num_threads=0):
    """grad_position_ids [B,S] float32 for the op

        out[b,s] = scale * sum_{d<H} inv_freq[b,d] * ((gs[d]+gs[d+H])*cos(emb[d]) - (gc[d]+gc[d+H])*sin(emb[d]))

    grad_cos, grad_sin: [B,S,D] contiguous, both bfloat16, float16 or float32.
    emb: [B,S,D] float32 contiguous (only the first half is read).
    inv_freq: float32 [H], [B,H], [B,H,1] (or a stride-0 expansion along dim 0).
    scale: attention scaling (a finite float).
    All tensors on one device: CUDA (runs on the device's current stream,
    asynchronously) or CPU (num_threads, 0 = all cores).
    The op ropegrad::rope_position_grad.

    Raises TypeError (wrong type or dtype), ValueError (shape, device,
    layout) or ropegrad.RopegradError (the library refused or the launch
    failed)."""
    stride = _check_position_grad(grad_cos, grad_sin, emb, inv_freq, scale)[3]   # a non-tensor argument: TypeError here
    return _rope_position_grad.call((grad_cos, grad_sin, emb, inv_freq, float(scale), int(num_threads)),
                                    functools.partial(_position_grad_run, stride=stride))


def backward_grads(grad_cos, grad_sin):
    """The gradients autograd hands a backward, as rope_position_grad takes them:
    a missing one as zeros, one supported dtype for both (anything else, float64
    or mixed, goes to float32), contiguous."""
    if grad_cos is None:
        grad_cos = torch.zeros_like(grad_sin)
    if grad_sin is None:
        grad_sin = torch.zeros_like(grad_cos)
    if grad_cos.dtype != grad_sin.dtype or grad_cos.dtype not in _rt.DTYPES:
        grad_cos, grad_sin = grad_cos.float(), grad_sin.float()
    return grad_cos.contiguous(), grad_sin.contiguous()


def freqs_of(position_ids, inv_freq):
    """float32 position_ids[..., None] * inv_freq [B,S,H] (Hugging Face's float32
    products), inv_freq [H], [B,H] or [B,H,1] (or [1,...] shared)."""
    B = position_ids.shape[0]
    pos, inv = position_ids.float(), inv_freq.float()
    if inv.dim() == 1:
        return pos[:, :, None] * inv[None, None, :]
    if inv.dim() == 3 and inv.shape[2] == 1 and inv.shape[0] in (1, B):
        return pos[:, :, None] * inv[:, None, :, 0]
    if inv.dim() == 2 and inv.shape[0] in (1, B):
        return pos[:, :, None] * inv[:, None, :]
    raise ValueError("ropegrad: inv_freq must be [H], [B,H] or [B,H,1], got shape %s" % list(inv.shape))


def _check_cos_sin_inputs(position_ids, inv_freq):
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


def _cos_sin(position_ids, inv_freq, attention_scaling):
    """ropegrad::rotary_cos_sin's implementation: Hugging Face's float32 formula."""
    _check_cos_sin_inputs(position_ids, inv_freq)
    freqs = freqs_of(position_ids, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * attention_scaling, emb.sin() * attention_scaling


def _cos_sin_fake(position_ids, inv_freq, attention_scaling):
    _check_cos_sin_inputs(position_ids, inv_freq)
    freqs = freqs_of(position_ids, inv_freq)   # shapes only, on fake tensors
    shape = tuple(freqs.shape[:2]) + (2 * freqs.shape[2],)
    return freqs.new_empty(shape), freqs.new_empty(shape)


def _cos_sin_setup(ctx, inputs, output):
    position_ids, inv_freq, attention_scaling = inputs
    ctx.save_for_backward(position_ids, inv_freq)
    ctx.scale = float(attention_scaling)


def position_backward(ctx, grad_cos, grad_sin, position_ids, inv_freq):
    """The gradient w.r.t. position_ids of cos/sin generation (ropegrad::rotary_cos_sin's
    and ropegrad::rope_forward's autograd formula): 014 on autograd's gradients,
    emb recomputed from the saved positions (the forward's float32 products)."""
    if not ctx.needs_input_grad[0] or (grad_cos is None and grad_sin is None):
        return None
    grad_cos, grad_sin = backward_grads(grad_cos, grad_sin)
    freqs = freqs_of(position_ids, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    inv = inv_freq.float().contiguous()
    return _rope_position_grad(grad_cos, grad_sin, emb, inv, ctx.scale, 0).to(position_ids.dtype)


def _cos_sin_backward(ctx, grad_cos, grad_sin):
    position_ids, inv_freq = ctx.saved_tensors
    return position_backward(ctx, grad_cos, grad_sin, position_ids, inv_freq), None, None


# ropegrad::rotary_cos_sin (torch.ops.ropegrad.rotary_cos_sin): Qwen3-style
# float32 cos/sin, autograd w.r.t. the positions through 014.
rotary_cos_sin_op = _rt.custom_op(
    "rotary_cos_sin", "(Tensor position_ids, Tensor inv_freq, float attention_scaling) -> (Tensor, Tensor)",
    _cos_sin, _cos_sin_fake, _cos_sin_backward, _cos_sin_setup) if torch else None
_rotary_cos_sin = _rt.Eager(rotary_cos_sin_op, _cos_sin, _cos_sin_setup, _cos_sin_backward) if torch else None


class RotaryEmbeddingQwen3:
    """Qwen3-style rotary embedding forward (transformers' Qwen3RotaryEmbedding,
    default rope type), differentiable w.r.t. position_ids through ropegrad:

        freqs = position_ids[..., None] * inv_freq          # [B,S,H], float32
        emb   = cat(freqs, freqs, -1)                         # [B,S,D]
        cos   = emb.cos() * attention_scaling
        sin   = emb.sin() * attention_scaling

    apply(position_ids, inv_freq, attention_scaling=1.0) -> (cos, sin), both
    float32 [B,S,D]: the op ropegrad::rotary_cos_sin. position_ids: floating
    point [B,S] (integer ids carry no gradient; pass them as float). inv_freq:
    [H] shared by every batch, or [B,H,1] / [B,H]. Only position_ids gets a
    gradient; inv_freq is a buffer (its gradient is None)."""

    @staticmethod
    def apply(position_ids, inv_freq, attention_scaling=1.0):
        _check_cos_sin_inputs(position_ids, inv_freq)
        return _rotary_cos_sin(position_ids, inv_freq, float(attention_scaling))


def rotary_cos_sin(position_ids, inv_freq, attention_scaling=1.0):
    """(cos, sin) = RotaryEmbeddingQwen3.apply(position_ids, inv_freq, attention_scaling)."""
    return RotaryEmbeddingQwen3.apply(position_ids, inv_freq, float(attention_scaling))
