# SPDX-License-Identifier: Apache-2.0
"""The ops' problem structs (include/ropegrad.h) as torch tensors, without copies.

The harness (C) owns every buffer; a Python implementation sees them as
torch tensors over the same memory: on the CPU through torch.frombuffer over
a ctypes array at the pointer, on a GPU through an object exposing
__cuda_array_interface__ (torch.as_tensor). Inputs come in the definition's
order, scalars as Python floats, as the official SOL-ExecBench evaluator
passes them; outputs in the definition's output order.
"""

import ctypes

from . import cos_sin, rope_backward, rope_forward

OP_014 = "014_rotary_embedding_with_attention_scaling_backward"
OP_011 = "011_rotary_position_embedding"
OP_012 = "012_fused_cos_sin_embedding_generation"


class _CudaArray:
    """A device buffer for torch.as_tensor (__cuda_array_interface__ v3;
    stream None: the harness orders the work itself)."""

    def __init__(self, ptr, n, typestr):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (ptr, False),
                                         "version": 3, "strides": None, "stream": None}


def _raw(torch, dtype):
    """The dtype torch can import directly, and the typestr for the interface
    (bfloat16 has none: it travels as int16 and is viewed back)."""
    table = {torch.float32: (torch.float32, "<f4"), torch.float16: (torch.float16, "<f2"),
             torch.bfloat16: (torch.int16, "<i2"), torch.int64: (torch.int64, "<i8")}
    return table[dtype]


def wrap(torch, ptr, shape, dtype, device):
    """A tensor of shape and dtype over the n bytes at ptr (no copy)."""
    n = 1
    for d in shape:
        n *= int(d)
    if not ptr or n <= 0:
        raise ValueError("ropegrad: empty or NULL tensor in the problem")
    raw, typestr = _raw(torch, dtype)
    if device == "cpu":
        size = n * torch.tensor([], dtype=raw).element_size()
        buf = (ctypes.c_char * size).from_address(ptr)
        t = torch.frombuffer(buf, dtype=raw, count=n)
    else:
        t = torch.as_tensor(_CudaArray(ptr, n, typestr), device="cuda")
    if raw is not dtype:
        t = t.view(dtype)
    return t.view(*shape)


def _grad_dtype(torch, code):
    return {0: torch.bfloat16, 1: torch.float16, 2: torch.float32}[code]


def _tensors_014(torch, addr, device):
    p = rope_backward.Problem.from_address(addr)
    B, S, D = p.batch_size, p.seq_len, p.head_dim
    g = _grad_dtype(torch, p.grad_dtype)
    stride = p.inv_freq_batch_stride
    base = wrap(torch, p.inv_freq, (B if stride else 1, D // 2), torch.float32, device)
    inv = base.view(-1, D // 2, 1).expand(B, D // 2, 1) if not stride else base.view(B, D // 2, 1)
    ins = [wrap(torch, p.grad_cos, (B, S, D), g, device), wrap(torch, p.grad_sin, (B, S, D), g, device),
           wrap(torch, p.emb, (B, S, D), torch.float32, device), inv, float(p.attention_scaling)]
    outs = [wrap(torch, p.grad_position_ids, (B, S), torch.float32, device)]
    return ins, outs


def _tensors_011(torch, addr, device):
    p = rope_forward.Problem.from_address(addr)
    B, S, D = p.batch_size, p.seq_len, p.head_dim
    ins = [wrap(torch, p.position_ids, (B, S), torch.int64, device),
           wrap(torch, p.inv_freq, (D // 2,), torch.float32, device), float(p.attention_scaling)]
    outs = [wrap(torch, p.cos_sin, (B, S, D, 2), torch.bfloat16, device)]
    return ins, outs


def _tensors_012(torch, addr, device):
    p = cos_sin.Problem.from_address(addr)
    B, S, D = p.batch_size, p.seq_len, p.head_dim
    ins = [wrap(torch, p.freqs, (B, S, D // 2), torch.float32, device), float(p.attention_scaling)]
    outs = [wrap(torch, p.cos, (B, S, D), torch.bfloat16, device),
            wrap(torch, p.sin, (B, S, D), torch.bfloat16, device)]
    return ins, outs


# definition name -> (inputs, outputs) over a problem struct's address
TENSORS = {OP_014: _tensors_014, OP_011: _tensors_011, OP_012: _tensors_012}
INPUT_NAMES = {OP_014: ["grad_cos", "grad_sin", "emb", "inv_freq_expanded", "attention_scaling"],
               OP_011: ["position_ids", "inv_freq", "attention_scaling"], OP_012: ["freqs", "attention_scaling"]}
OUTPUT_NAMES = {OP_014: ["grad_position_ids"], OP_011: ["cos_sin"], OP_012: ["cos", "sin"]}


class RewardHack(Exception):
    """A call the harness fails as REWARD_HACK (impl.py reports it so)."""


def tensors(torch, op, addr, device):
    """(inputs, outputs) of op's problem at addr on device ("cpu" or "cuda")."""
    if op not in TENSORS:
        raise ValueError("ropegrad: op %s takes no Python implementations (011, 012 and 014 do)" % op)
    return TENSORS[op](torch, addr, device)


def returned_outputs(torch, op, result):
    """The tensors a return-style call gave, in the definition's output order
    (a tensor, a tuple/list, or a dict by output name, as the official
    evaluator's normalize_outputs accepts)."""
    names = OUTPUT_NAMES[op]
    if isinstance(result, dict):
        missing = [n for n in names if n not in result]
        if missing:
            raise ValueError("returned a dict without %s" % ", ".join(missing))
        result = [result[n] for n in names]
    elif isinstance(result, torch.Tensor):
        result = [result]
    elif not isinstance(result, (tuple, list)):
        raise TypeError("returned %s, expected a tensor, a tuple of tensors or a dict" % type(result).__name__)
    if len(result) != len(names):
        raise ValueError("returned %d outputs, the definition has %d (%s)" % (len(result), len(names),
                                                                              ", ".join(names)))
    return list(result)


def _byte_range(torch, t):
    """[first, end) of the bytes a tensor view can reach, None when empty."""
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        return None
    span = 1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))
    return t.data_ptr(), t.data_ptr() + span * t.element_size()


def check_not_inputs(torch, op, outputs, ins):
    """Raises RewardHack when a returned output shares memory with an input
    (the input itself, or a view of it): its result would live in memory the
    harness handed in as an input, not in an output of its own."""
    for name, out in zip(OUTPUT_NAMES[op], outputs):
        o = _byte_range(torch, out)
        for in_name, inp in zip(INPUT_NAMES[op], ins):
            i = _byte_range(torch, inp)
            if o and i and o[0] < i[1] and i[0] < o[1]:
                raise RewardHack("output %s is its input %s or a view of it" % (name, in_name))


def copy_outputs(torch, op, result, outs, ins=()):
    """Copies a return-style call's outputs into the harness's buffers, after
    checking that none is (a view of) an input and each one's shape, dtype
    and device kind against them."""
    got = returned_outputs(torch, op, result)
    check_not_inputs(torch, op, got, ins)
    for name, src, dst in zip(OUTPUT_NAMES[op], got, outs):
        if not isinstance(src, torch.Tensor):
            raise TypeError("output %s is a %s, not a tensor" % (name, type(src).__name__))
        if tuple(src.shape) != tuple(dst.shape):
            raise ValueError("output %s has shape %s, the definition's is %s" % (name, list(src.shape),
                                                                                 list(dst.shape)))
        if src.dtype != dst.dtype:
            raise ValueError("output %s is %s, the definition's is %s" % (name, src.dtype, dst.dtype))
        if src.device.type != dst.device.type:
            raise ValueError("output %s is on %s, the harness's buffers on %s" % (name, src.device.type,
                                                                                   dst.device.type))
        dst.copy_(src)
