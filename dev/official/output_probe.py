# SPDX-License-Identifier: Apache-2.0
"""Where 011's output lives, as a Python implementation for `python3 -m ropegrad bench --impl`
(issue 26: why ropegrad's harness times ropegrad's exported 011 solution about 5% faster than both
the official evaluator and `ropegrad bench` of the same kernel).

Both functions run libropegrad's own 011 kernel through the Python driver; they differ only in the
output buffer the kernel writes:

  returning   a new tensor from torch's caching allocator, returned (as the exported solution's
              torch::empty does);
  into        the harness's own output buffer (cudaMalloc'd, as `ropegrad bench`'s C path), given
              by the harness with --dps.

  python3 -m ropegrad bench --impl dev/official/output_probe.py:returning --suite suites/011-rope_forward
  python3 -m ropegrad bench --impl dev/official/output_probe.py:into --dps --suite suites/011-rope_forward

`into` near `ropegrad bench` and `returning` near the solution file: the output's placement is the
point; both near the solution file: the Python path's host time around the call is.
"""

import torch

from ropegrad import rope_forward as op_011
from ropegrad.rope_forward import rope_forward


def returning(position_ids, inv_freq, attention_scaling):
    return rope_forward(position_ids, inv_freq, attention_scaling)


def into(position_ids, inv_freq, attention_scaling, cos_sin):
    B, S = position_ids.shape
    H = inv_freq.shape[0]
    if cos_sin.shape != (B, S, 2 * H, 2) or cos_sin.dtype != torch.bfloat16 or not cos_sin.is_contiguous():
        raise ValueError("output_probe.into: cos_sin must be a contiguous bf16 [B,S,2H,2]")
    p = op_011.Problem()
    p.batch_size, p.seq_len, p.head_dim = B, S, 2 * H
    p.position_ids, p.inv_freq, p.cos_sin = position_ids.data_ptr(), inv_freq.data_ptr(), cos_sin.data_ptr()
    p.attention_scaling = float(attention_scaling)
    if position_ids.device.type == "cuda":
        op_011.cuda(p, torch.cuda.current_stream(position_ids.device).cuda_stream)
    else:
        op_011.cpu(p)
