# SPDX-License-Identifier: Apache-2.0
"""ropegrad for PyTorch: every op's torch function in one namespace, and what
they share. Each op's torch code lives in its own module (with its ctypes
code); this module re-exports them:

    from ropegrad.torch import rope_position_grad, rotary_cos_sin    # rope_backward (014)
    from ropegrad.torch import rope_forward, RotaryEmbedding          # rope_forward (011)
    from ropegrad.torch import cos_sin_from_freqs                     # cos_sin (012)
    from ropegrad.torch import apply_rotary_pos_emb                   # rope_apply (088; backward 068)
    from ropegrad.torch import rope_apply_backward                    # rope_apply_backward (068)
    from ropegrad.torch import rope_apply_pos                         # rope_apply_pos (backward: rope_apply_pos_backward)
    from ropegrad.torch import rope_apply_thd                         # rope_apply_thd (backward: rope_apply_thd_backward)

Each op is also a torch.library op, torch.ops.ropegrad.<op> (custom_op()
below registers it, from its op module): with a fake implementation for
FakeTensor and torch.compile, and its autograd formula; the functions above
call these ops, so eager and compiled code run the same implementation.

The library runs on the tensors' memory through ctypes (ropegrad._lib); CUDA
tensors are processed asynchronously on the current stream of their device,
CPU tensors by the library's multithreaded CPU path. No copies are made
behind your back: the functions raise on layouts the kernels do not take
(call .contiguous() yourself, so the cost is visible). The autograd formulas
are the exception: autograd may hand them non-contiguous or differently typed
gradients, and they make them contiguous (and of a supported dtype) themselves.
"""

import importlib

import torch

from . import _lib
from ._lib import RopegradError  # noqa: F401  (re-exported)

# Each re-exported name -> the op module defining it (imported on first use:
# the op modules import this one).
_EXPORTS = {
    "rope_position_grad": "rope_backward", "RotaryEmbeddingQwen3": "rope_backward", "rotary_cos_sin": "rope_backward",
    "rope_forward": "rope_forward", "RopeForward": "rope_forward", "RotaryEmbedding": "rope_forward",
    "rotary_embedding": "rope_forward",
    "cos_sin_from_freqs": "cos_sin",
    "apply_rotary_pos_emb": "rope_apply",
    "rope_apply_backward": "rope_apply_backward",
    "rope_apply_pos": "rope_apply_pos",
    "rope_apply_thd": "rope_apply_thd",
}

__all__ = sorted(_EXPORTS) + ["RopegradError", "DTYPES", "launch", "custom_op"]

# The tensor dtypes the kernels take, as ropegrad_dtype codes.
DTYPES = {torch.bfloat16: _lib.BF16, torch.float16: _lib.F16, torch.float32: _lib.F32}


def launch(device, op, p, num_threads=0, who="ropegrad"):
    """Runs op (an op module: its cuda() or cpu()) on the problem p for
    tensors on device: CUDA on the device's current stream (asynchronously),
    else the CPU path with num_threads (0 = all cores)."""
    if device.type == "cuda":
        with torch.cuda.device(device):
            op.cuda(p, torch.cuda.current_stream(device).cuda_stream)
    elif device.type == "cpu":
        op.cpu(p, num_threads)
    else:
        raise ValueError("%s: tensors must be on a CUDA device or the CPU, got %s" % (who, device))


# Every op's outputs are laid out after its inputs' strides, so compiled code
# must hand the kernels exactly the strides eager code would (inductor may
# otherwise pick its own): the strictest tag this torch knows.
_TAGS = tuple(getattr(torch.Tag, t) for t in ("needs_exact_strides", "needs_fixed_stride_order")
              if hasattr(torch.Tag, t))[:1]


def custom_op(name, schema, impl, fake, backward=None, setup_context=None):
    """Registers ropegrad::name (torch.ops.ropegrad.name) through torch.library:
    impl the real implementation (CPU and CUDA tensors alike: it calls launch()),
    fake its fake (meta) implementation for torch.compile and FakeTensor,
    backward/setup_context its autograd formula (register_autograd). Functional:
    no op mutates or aliases its inputs. Returns the op (callable)."""
    if not hasattr(torch.library, "custom_op"):
        raise ImportError("ropegrad's torch ops need torch >= 2.4 (torch.library.custom_op); this is torch %s"
                          % torch.__version__)
    op = torch.library.custom_op("ropegrad::" + name, impl, mutates_args=(), schema=schema, tags=_TAGS)
    op.register_fake(fake)
    if backward is not None:
        op.register_autograd(backward, setup_context=setup_context)
    return op


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module("." + _EXPORTS[name], __package__), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
