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

__all__ = sorted(_EXPORTS) + ["RopegradError", "DTYPES", "launch", "custom_op", "Eager", "later"]

# The tensor dtypes the kernels take, as ropegrad_dtype codes.
DTYPES = {torch.bfloat16: _lib.BF16, torch.float16: _lib.F16, torch.float32: _lib.F32}


def launch(device, op, p, num_threads=0, who="ropegrad"):
    """Runs op (an op module: its cuda() or cpu()) on the problem p for
    tensors on device: CUDA on the device's current stream (asynchronously),
    else the CPU path with num_threads (0 = all cores)."""
    if device.type == "cuda":
        index = device.index
        if index is None or index == _current_device():
            op.cuda(p, _current_stream(index))
        else:
            with torch.cuda.device(index):
                op.cuda(p, _current_stream(index))
    elif device.type == "cpu":
        op.cpu(p, num_threads)
    else:
        raise ValueError("%s: tensors must be on a CUDA device or the CPU, got %s" % (who, device))


# The current CUDA device and the raw cudaStream_t of a device's current
# stream (None: the current device's), as torch.cuda.current_device() and
# torch.cuda.current_stream(device).cuda_stream give them, without building a
# torch.cuda.Stream object per call where this torch has the raw calls.
if hasattr(torch._C, "_cuda_getCurrentRawStream") and hasattr(torch._C, "_cuda_getDevice"):
    def _current_device():
        return torch._C._cuda_getDevice()

    def _current_stream(index):
        return torch._C._cuda_getCurrentRawStream(torch._C._cuda_getDevice() if index is None else index)
else:
    def _current_device():
        return torch.cuda.current_device()

    def _current_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


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
    _SCHEMAS[op] = name, _arguments(schema)
    return op


# ---- the eager fast path -------------------------------------------------------------------
#
# In plain eager code, calling an op through the dispatcher costs tens of
# microseconds of Python per call (the custom op's autograd kernel, its
# generated autograd.Function, the backend wrapper), more than a small kernel
# takes. Eager (below) calls the op's implementation
# directly, under an autograd.Function with the op's own setup_context and
# backward, when nothing could tell the difference: no torch.compile tracing,
# no dispatch or torch-function mode, no functorch transform, no JIT tracing,
# no forward-mode AD level, and every argument of the type the schema names
# (plain torch.Tensor objects on the CPU or a CUDA device, Python ints and
# floats, torch.dtype). Anything else goes through the op
# (torch.ops.ropegrad.*) exactly as before, so compiled code, FakeTensor,
# tensor subclasses and the dispatcher's own argument errors are unchanged.
# Under the profiler the call is recorded under the op's name
# (ropegrad::<op>), as the dispatcher records it.

_SCHEMAS = {}   # op -> its name, its arguments' kinds and defaults (_arguments)
_TENSOR, _OPT_TENSOR, _INT, _FLOAT, _DTYPE = range(5)
_KINDS = {"Tensor": _TENSOR, "Tensor?": _OPT_TENSOR, "int": _INT, "float": _FLOAT, "ScalarType": _DTYPE}
_INT64 = (-(1 << 63), 1 << 63)


def _arguments(schema):
    """(kinds, defaults) of a schema's arguments ("(Tensor q, int style=0) -> ..."),
    or None when one has a type the fast path does not take."""
    text = schema[schema.index("(") + 1:schema.index(") ->")]
    kinds, defaults = [], []
    for arg in text.split(","):
        decl, _, default = arg.strip().partition("=")
        kind = _KINDS.get(decl.split()[0])
        if kind is None:
            return None
        kinds.append(kind)
        defaults.append(None if not default else float(default) if kind == _FLOAT else int(default))
    return tuple(kinds), tuple(defaults)


def _fits(kinds, args):
    """Whether args are exactly what the schema's kinds name (no subclass, no
    conversion the dispatcher would make or refuse), tensors on CPU or CUDA."""
    tensor = torch.Tensor
    for kind, a in zip(kinds, args):
        if kind == _TENSOR or (kind == _OPT_TENSOR and a is not None):
            if type(a) is not tensor or not (a.is_cpu or a.is_cuda):
                return False
        elif kind == _INT:
            if type(a) is not int or not _INT64[0] <= a < _INT64[1]:
                return False
        elif kind == _FLOAT:
            if type(a) is not float:
                return False
        elif kind == _DTYPE and type(a) is not torch.dtype:
            return False
    return True


_C = torch._C
_fwd_ad = torch.autograd.forward_ad


def _plain_eager():
    """Nothing active that sees or transforms op calls (see above)."""
    return not (torch.compiler.is_compiling() or _C._len_torch_dispatch_stack() or
                _C._is_torch_function_mode_enabled() or _C._are_functorch_transforms_active() or
                _C._get_tracing_state() is not None or _fwd_ad._current_level >= 0)


class Eager:
    """Calls op (a custom_op() op) as op(*args) does, through its
    implementation impl directly where nothing can tell (see above). With a
    backward, the autograd.Function it runs under calls setup_context(ctx,
    inputs, output) and backward(ctx, *grads) exactly as the op's autograd
    registration does. call(args, run): run(*args) in place of impl, for
    callers that have checked args as impl would (run must raise nothing impl
    would not and return what impl returns)."""

    def __init__(self, op, impl, setup_context=None, backward=None):
        self.op, self.impl = op, impl
        name, arguments = _SCHEMAS[op]
        self.qualname = "ropegrad::" + name
        self.kinds, self.defaults = arguments or (None, None)
        self.function = None
        if backward is not None:
            def forward(ctx, *args):
                out = args[-1](*args[:-1])
                setup_context(ctx, args[:-1], out)
                return out

            def backward_(ctx, *grads):
                needs = ctx.needs_input_grad
                ctx.needs_input_grad = needs[:-1]   # the op's inputs only, as its autograd registration has them
                try:
                    result = backward(ctx, *grads)
                finally:
                    ctx.needs_input_grad = needs
                return (*result, None) if isinstance(result, tuple) else (result, None)

            # named as the op's autograd registration names its Function (custom_op's
            # GeneratedBackwardFor_<namespace>_<op>_<overload>): autograd's messages and nodes read alike
            self.function = type("GeneratedBackwardFor_ropegrad_%s_default" % name, (torch.autograd.Function,),
                                 {"forward": staticmethod(forward), "backward": staticmethod(backward_)})

    def __call__(self, *args):
        return self.call(args, self.impl)

    def call(self, args, run):
        kinds = self.kinds
        if kinds is None or len(args) > len(kinds) or not _plain_eager():
            return self.op(*args)
        if len(args) < len(kinds):
            if any(d is None for d in self.defaults[len(args):]):
                return self.op(*args)
            args = args + self.defaults[len(args):]
        if not _fits(kinds, args):
            return self.op(*args)
        if _C._autograd._profiler_enabled():
            with torch.autograd.profiler.record_function(self.qualname):
                return self._run(args, run)
        return self._run(args, run)

    def _run(self, args, run):
        if _C.is_grad_enabled() and _C._any_requires_grad(*args):
            # an op with no autograd formula (a backward) keeps the op's own autograd
            # node (double backward through it raises as the op says)
            return self.op(*args) if self.function is None else self.function.apply(*args, run)
        return run(*args)


def later(module, name):
    """A function calling name of the op module `module` (imported on the
    first call, once: for op modules that import each other, or that an older
    library may lack)."""
    found = []

    def call(*args, **kwargs):
        if not found:
            found.append(getattr(importlib.import_module("." + module, __package__), name))
        return found[0](*args, **kwargs)

    return call


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module("." + _EXPORTS[name], __package__), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
