# SPDX-License-Identifier: Apache-2.0
"""cos_sin (L1/012): (cos, sin), bf16 [B,S,2H] each, from float32 freqs
[B,S,H]: attention_scaling * cos/sin(cat(freqs, freqs)), each element the
bf16 nearest to the exact value.

ctypes (standard library only): Problem (struct ropegrad_cos_sin_problem),
cpu(), cuda(). With torch: the op ropegrad::cos_sin (torch.library, with a fake
implementation) and cos_sin_from_freqs() on tensors, which calls it.
"""

import ctypes
import math
import sys

from . import _lib

try:
    import torch

    from . import torch as _rt
except ImportError:  # the ctypes half needs no torch
    torch = _rt = None

__all__ = ["Problem", "cpu", "cuda", "cos_sin_from_freqs", "cos_sin_op"]

_C = "ropegrad_cos_sin"


class Problem(ctypes.Structure):
    """struct ropegrad_cos_sin_problem: 3 x int64, pointer, float (+4 pad), 2 pointers: 56 bytes on LP64."""

    _fields_ = [
        ("batch_size", ctypes.c_int64),
        ("seq_len", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("freqs", ctypes.c_void_p),          # const float *
        ("attention_scaling", ctypes.c_float),
        ("cos", ctypes.c_void_p),            # uint16_t *
        ("sin", ctypes.c_void_p),            # uint16_t *
    ]


_lib.check_layout(Problem, 56, {"attention_scaling": 32, "cos": 40, "sin": 48})
cpu, cuda = _lib.entry_points(_C, Problem)


# ---- torch -----------------------------------------------------------------------------------

def _check(freqs, attention_scaling):
    if not isinstance(freqs, torch.Tensor) or freqs.dtype != torch.float32 or freqs.dim() != 3:
        raise TypeError("ropegrad: freqs must be a float32 tensor [B,S,H]")
    if not freqs.is_contiguous():
        raise ValueError("ropegrad: freqs must be contiguous")
    if not math.isfinite(float(attention_scaling)):
        raise ValueError("ropegrad: attention_scaling must be finite, got %r" % attention_scaling)
    B, S, H = freqs.shape
    if H < 1 or 2 * H > _lib.MAX_HEAD_DIM:
        raise ValueError("ropegrad: freqs' last dim must be 1..%d, got %d" % (_lib.MAX_HEAD_DIM // 2, H))
    return B, S, H


def _cos_sin(freqs, attention_scaling, num_threads=0):
    """ropegrad::cos_sin's implementation: 012 on the CPU path or the current CUDA stream."""
    _check(freqs, attention_scaling)
    return _run(freqs, attention_scaling, num_threads)


def _run(freqs, attention_scaling, num_threads=0):
    """_cos_sin on checked inputs."""
    B, S, H = freqs.shape
    cos = torch.empty((B, S, 2 * H), dtype=torch.bfloat16, device=freqs.device)
    sin = torch.empty_like(cos)
    if B == 0 or S == 0:
        return cos, sin
    p = Problem(B, S, 2 * H, freqs.data_ptr(), float(attention_scaling), cos.data_ptr(), sin.data_ptr())
    _rt.launch(freqs.device, _module, p, num_threads)
    return cos, sin


def _cos_sin_fake(freqs, attention_scaling, num_threads=0):
    B, S, H = _check(freqs, attention_scaling)
    return (freqs.new_empty((B, S, 2 * H), dtype=torch.bfloat16),
            freqs.new_empty((B, S, 2 * H), dtype=torch.bfloat16))


# ropegrad::cos_sin (torch.ops.ropegrad.cos_sin): 012, no autograd (its inputs
# are frequencies, not parameters).
cos_sin_op = _rt.custom_op("cos_sin", "(Tensor freqs, float attention_scaling, int num_threads=0) -> (Tensor, Tensor)",
                           _cos_sin, _cos_sin_fake) if torch else None
# The op as eager code calls it (ropegrad.torch.Eager).
_cos_sin_eager = _rt.Eager(cos_sin_op, _cos_sin) if torch else None
_module = sys.modules[__name__]


def cos_sin_from_freqs(freqs, attention_scaling=1.0, *, num_threads=0):
    """L1/012: (cos, sin), bf16 [B,S,2H] each, from float32 freqs [B,S,H]. The op ropegrad::cos_sin."""
    _check(freqs, attention_scaling)
    return _cos_sin_eager.call((freqs, float(attention_scaling), int(num_threads)), _run)
