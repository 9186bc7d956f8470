# SPDX-License-Identifier: Apache-2.0
"""ropegrad: RoPE kernels through ctypes over libropegrad, one module per op.

    import ropegrad                          # standard library only; the C library loads on first use
    from ropegrad import rope_backward       # its Problem, cpu(), cuda(); with torch, rope_position_grad()
    from ropegrad.torch import apply_rotary_pos_emb   # every op's torch function (torch.py)
    import ropegrad.hf                       # ropegrad.hf.use_ropegrad(model): a transformers model on ropegrad

The ops: rope_forward (011), cos_sin (012), rope_backward (014), rope_apply
(088), rope_apply_backward (068), rope_apply_pos and rope_apply_pos_backward
(apply from positions), rope_apply_thd and rope_apply_thd_backward (packed
sequences from one table). Each op module imports without torch (its ctypes
half); its torch half needs torch (>= 2.4: it registers the op through
torch.library, torch.ops.ropegrad.*). See ropegrad._lib for where the C
library is found.
"""

import importlib

from ._lib import (  # noqa: F401
    BF16,
    F16,
    F32,
    RopegradError,
    cpu_isa,
    cuda_available,
    library_path,
    strerror,
    version,
)

OPS = ("rope_forward", "cos_sin", "rope_backward", "rope_apply", "rope_apply_backward", "rope_apply_pos",
       "rope_apply_pos_backward", "rope_apply_thd", "rope_apply_thd_backward")

__all__ = ["BF16", "F16", "F32", "OPS", "RopegradError", "cpu_isa", "cuda_available", "library_path", "strerror",
           "version"] + list(OPS)


def __getattr__(name):
    # The op modules load on first use: with torch installed, each imports it.
    if name in OPS:
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
