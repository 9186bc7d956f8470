# SPDX-License-Identifier: Apache-2.0
"""rope_forward (L1/011): cos_sin bf16 [B,S,D,2] (cos_sin[...,0] = cos,
[...,1] = sin) from int64 position_ids [B,S] and float32 inv_freq [H], each
element the bf16 nearest to attention_scaling * cos/sin(float32(position) * inv_freq).

ctypes (standard library only): Problem (struct ropegrad_rope_forward_problem),
cpu(), cuda(). With torch: the op ropegrad::rope_forward (torch.library, with a
fake implementation; its autograd formula w.r.t. floating-point positions is
rope_backward's, L1/014); rope_forward() on tensors and RopeForward.apply()
call it; RotaryEmbedding / rotary_embedding(), a drop-in for Hugging Face's
LlamaRotaryEmbedding / Qwen3RotaryEmbedding.
"""

import ctypes
import math
import sys

from . import _lib
from .rope_backward import position_backward

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Problem", "cpu", "cuda", "rope_forward", "rope_forward_op", "RopeForward", "RotaryEmbedding", "rotary_embedding"]

_C = "ropegrad_rope_forward"


class Problem(ctypes.Structure):
    """struct ropegrad_rope_forward_problem: 3 x int64, 2 pointers, float (+4 pad), pointer: 56 bytes on LP64."""

    _fields_ = [
        ("batch_size", ctypes.c_int64),
        ("seq_len", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("position_ids", ctypes.c_void_p),   # const int64_t *
        ("inv_freq", ctypes.c_void_p),       # const float *
        ("attention_scaling", ctypes.c_float),
        ("cos_sin", ctypes.c_void_p),        # uint16_t * (bf16 bits)
    ]


_lib.check_layout(Problem, 56, {"attention_scaling": 40, "cos_sin": 48})
cpu, cuda = _lib.entry_points(_C, Problem)


# ---- torch -----------------------------------------------------------------------------------

def _check(position_ids, inv_freq, attention_scaling):
    """rope_forward's inputs (dtypes, shapes, layouts, devices; never the data)."""
    if not isinstance(position_ids, torch.Tensor) or position_ids.dim() != 2 or \
            not (position_ids.dtype == torch.int64 or position_ids.is_floating_point()):
        raise TypeError("ropegrad: position_ids must be an int64 tensor [B,S]")
    if not isinstance(inv_freq, torch.Tensor) or inv_freq.dtype != torch.float32 or inv_freq.dim() != 1:
        raise TypeError("ropegrad: inv_freq must be a float32 tensor [H]")
    if inv_freq.device != position_ids.device:
        raise ValueError("ropegrad: inv_freq is on %s but position_ids is on %s" % (inv_freq.device, position_ids.device))
    if not position_ids.is_contiguous() or not inv_freq.is_contiguous():
        raise ValueError("ropegrad: position_ids and inv_freq must be contiguous")
    if not math.isfinite(float(attention_scaling)):
        raise ValueError("ropegrad: attention_scaling must be finite, got %r" % attention_scaling)
    H = inv_freq.shape[0]
    if H < 1 or 2 * H > _lib.MAX_HEAD_DIM:
        raise ValueError("ropegrad: inv_freq must hold 1..%d values, got %d" % (_lib.MAX_HEAD_DIM // 2, H))
    return position_ids.shape[0], position_ids.shape[1], H


def _forward(position_ids, inv_freq, attention_scaling, num_threads=0):
    """ropegrad::rope_forward's implementation: 011 on the CPU path or the
    current CUDA stream. Floating-point positions (the differentiable path)
    must hold whole numbers."""
    _check(position_ids, inv_freq, attention_scaling)
    return _run(position_ids, inv_freq, attention_scaling, num_threads)


def _run(position_ids, inv_freq, attention_scaling, num_threads=0):
    """_forward on checked inputs."""
    B, S, H = position_ids.shape[0], position_ids.shape[1], inv_freq.shape[0]
    if position_ids.is_floating_point():
        ids = position_ids.to(torch.int64)
        if not torch.equal(ids.to(position_ids.dtype), position_ids):
            raise ValueError("ropegrad: rope_forward needs whole-number positions (use RotaryEmbeddingQwen3 otherwise)")
        position_ids = ids
    out = torch.empty((B, S, 2 * H, 2), dtype=torch.bfloat16, device=position_ids.device)
    if B == 0 or S == 0:
        return out
    p = Problem(B, S, 2 * H, position_ids.data_ptr(), inv_freq.data_ptr(), float(attention_scaling), out.data_ptr())
    _rt.launch(position_ids.device, _module, p, num_threads)
    return out


def _forward_fake(position_ids, inv_freq, attention_scaling, num_threads=0):
    B, S, H = _check(position_ids, inv_freq, attention_scaling)
    return position_ids.new_empty((B, S, 2 * H, 2), dtype=torch.bfloat16)


def _setup(ctx, inputs, output):
    position_ids, inv_freq, attention_scaling = inputs[:3]
    ctx.save_for_backward(position_ids, inv_freq)
    ctx.scale = float(attention_scaling)


def _backward(ctx, grad_cos_sin):
    position_ids, inv_freq = ctx.saved_tensors
    grad = position_backward(ctx, grad_cos_sin[..., 0], grad_cos_sin[..., 1], position_ids, inv_freq)
    return grad, None, None, None


# ropegrad::rope_forward (torch.ops.ropegrad.rope_forward): 011; with
# floating-point positions, autograd w.r.t. them through 014.
rope_forward_op = _rt.custom_op(
    "rope_forward", "(Tensor position_ids, Tensor inv_freq, float attention_scaling, int num_threads=0) -> Tensor",
    _forward, _forward_fake, _backward, _setup) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager: its implementation directly where nothing can tell).
_rope_forward = _rt.Eager(rope_forward_op, _forward, _setup, _backward) if torch else None
_module = sys.modules[__name__]


def rope_forward(position_ids, inv_freq, attention_scaling=1.0, *, num_threads=0):
    """L1/011: cos_sin bf16 [B,S,2H,2] (cos_sin[...,0] = cos, [...,1] = sin)
    from int64 position_ids [B,S] (each batch its own positions) and float32
    inv_freq [H], every element the bf16 nearest to
    attention_scaling * cos/sin(float32(position) * inv_freq). The op ropegrad::rope_forward."""
    if not isinstance(position_ids, torch.Tensor) or position_ids.dtype != torch.int64:
        raise TypeError("ropegrad: position_ids must be an int64 tensor [B,S]")
    _check(position_ids, inv_freq, attention_scaling)
    return _rope_forward.call((position_ids, inv_freq, float(attention_scaling), int(num_threads)), _run)


class RopeForward:
    """(cos, sin) bf16 [B,S,D] of integral positions: the op ropegrad::rope_forward,
    forward ropegrad's L1/011 kernel, backward (w.r.t. position_ids) L1/014.

    apply(position_ids, inv_freq, attention_scaling) with position_ids a
    floating-point [B,S] tensor holding whole numbers (it may require grad),
    inv_freq float32 [H]."""

    @staticmethod
    def apply(position_ids, inv_freq, attention_scaling=1.0):
        if not isinstance(position_ids, torch.Tensor) or not position_ids.is_floating_point() or position_ids.dim() != 2:
            raise TypeError("ropegrad: position_ids must be a floating-point tensor [B,S] of whole numbers")
        cs = _rope_forward(position_ids.contiguous(), inv_freq.detach().float().contiguous(),
                           float(attention_scaling), 0)
        return cs[..., 0], cs[..., 1]


class RotaryEmbedding(torch.nn.Module if torch else object):
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
        cs = _rope_forward(pos.detach().to(torch.int64).contiguous(), inv_freq, float(attention_scaling), 0)
        return cs.select(-1, 0), cs.select(-1, 1)   # cs[..., 0], cs[..., 1]
    inv = inv_freq.float()[None, :, None].expand(pos.shape[0], -1, 1)
    freqs = (inv @ pos[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * attention_scaling).to(x.dtype), (emb.sin() * attention_scaling).to(x.dtype)
