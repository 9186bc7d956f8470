# SPDX-License-Identifier: Apache-2.0
"""ropegrad: the backward pass of RoPE cos/sin generation (gradient w.r.t.
position_ids), through ctypes over libropegrad.

    import ropegrad                 # standard library only; the C library loads on first use
    from ropegrad import torch as rt   # rope_position_grad, RotaryEmbeddingQwen3, rotary_cos_sin

Nothing to build beyond the C library: see ropegrad._lib for where it is found.
"""

from ._lib import (  # noqa: F401
    BF16,
    F16,
    F32,
    Problem,
    RopegradError,
    backward_cpu,
    backward_cuda,
    backward_reference,
    cpu_isa,
    cuda_available,
    library_path,
    strerror,
    validate,
    version,
)

__all__ = [
    "BF16", "F16", "F32", "Problem", "RopegradError", "backward_cpu", "backward_cuda", "backward_reference",
    "cpu_isa", "cuda_available", "library_path", "strerror", "validate", "version",
]
