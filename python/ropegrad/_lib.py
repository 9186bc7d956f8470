# SPDX-License-Identifier: Apache-2.0
"""ctypes declarations for libropegrad (include/ropegrad.h), nothing else.

The library is found, in order, at:
  1. $ROPEGRAD_LIB (a path to libropegrad.so), and only there when it is set;
  2. libropegrad.so inside this package (what `pip install ./python` builds
     and bundles: python/_backend/ropegrad_build.py);
  3. <repo>/build/libropegrad.so, relative to this package (python/ropegrad/);
  4. an installed copy (the prefix's lib/, the dynamic loader's path).
It is loaded once, on first use, so importing the package never fails just
because the library has not been built yet.
"""

import ctypes
import ctypes.util
import os
import sys
import threading

# ropegrad_dtype (a C enum: an int)
BF16 = 0
F16 = 1
F32 = 2

# Status codes (a subset used by name here; every code has a message from
# ropegrad_strerror()).
OK = 0
ERR_NO_CUDA = 12
ERR_NOT_DEVICE_POINTER = 13
ERR_CUDA = 14
ERR_OVERLAP = 17

MAX_HEAD_DIM = 1024

# The SONAME's major version this package speaks to (libropegrad.so.0).
SONAME_MAJOR = 0


class RopegradError(RuntimeError):
    """A libropegrad call returned a non-zero status."""

    def __init__(self, code, message, call=None):
        self.code = code
        self.message = message
        where = "%s: " % call if call else ""
        super().__init__("%sropegrad error %d: %s" % (where, code, message))


class Problem(ctypes.Structure):
    """struct ropegrad_problem, field for field. ctypes applies the C ABI's
    alignment rules from the same order and types, so the padding after the
    enum (4 bytes before the first pointer, on LP64) and after the float
    matches the compiler's layout; _check_layout() asserts it."""

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


def _check_layout():
    # On LP64 (x86-64, aarch64 Linux), as the C compiler lays it out
    # (offsetof checked with gcc): 3 x int64 (0..24), enum int at 24 + 4 pad,
    # 4 pointers at 32..64, int64 at 64, float at 72 + 4 pad, pointer at 80;
    # 88 bytes. Not an assert statement: python -O must not skip it.
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return
    got = (ctypes.sizeof(Problem), Problem.grad_dtype.offset, Problem.grad_cos.offset,
           Problem.inv_freq_batch_stride.offset, Problem.attention_scaling.offset,
           Problem.grad_position_ids.offset)
    if got != (88, 24, 32, 64, 72, 80):
        raise ImportError("ropegrad: ctypes layout of ropegrad_problem %r does not match the C ABI" % (got,))


_check_layout()

_PROBLEM_P = ctypes.POINTER(Problem)


class ForwardProblem(ctypes.Structure):
    """struct ropegrad_rope_forward_problem (L1/011): 3 x int64, 2 pointers,
    float (+4 pad), pointer: 56 bytes on LP64."""

    _fields_ = [
        ("batch_size", ctypes.c_int64),
        ("seq_len", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("position_ids", ctypes.c_void_p),   # const int64_t *
        ("inv_freq", ctypes.c_void_p),       # const float *
        ("attention_scaling", ctypes.c_float),
        ("cos_sin", ctypes.c_void_p),        # uint16_t * (bf16 bits)
    ]


class CosSinProblem(ctypes.Structure):
    """struct ropegrad_cos_sin_problem (L1/012): 3 x int64, pointer, float
    (+4 pad), 2 pointers: 56 bytes on LP64."""

    _fields_ = [
        ("batch_size", ctypes.c_int64),
        ("seq_len", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("freqs", ctypes.c_void_p),          # const float *
        ("attention_scaling", ctypes.c_float),
        ("cos", ctypes.c_void_p),            # uint16_t *
        ("sin", ctypes.c_void_p),            # uint16_t *
    ]


if ctypes.sizeof(ctypes.c_void_p) == 8 and (ctypes.sizeof(ForwardProblem), ForwardProblem.cos_sin.offset,
                                            ctypes.sizeof(CosSinProblem), CosSinProblem.cos.offset) != (56, 48, 56, 40):
    raise ImportError("ropegrad: ctypes layout of the forward problems does not match the C ABI")

_FWD_P = ctypes.POINTER(ForwardProblem)
_CS_P = ctypes.POINTER(CosSinProblem)

# ropegrad_layout (a C enum: an int)
LAYOUT_BHSD = 0
LAYOUT_BSHD = 1


class ApplyShape(ctypes.Structure):
    """struct ropegrad_rope_apply_shape (L1/088, L1/068): 5 x int64, 3 enums
    (+4 pad), int64: 64 bytes on LP64."""

    _fields_ = [
        ("batch_size", ctypes.c_int64),
        ("seq_len", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("num_heads", ctypes.c_int64),
        ("num_kv_heads", ctypes.c_int64),
        ("layout", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("cos_sin_dtype", ctypes.c_int),
        ("cos_sin_batch_stride", ctypes.c_int64),
    ]


class ApplyProblem(ctypes.Structure):
    """struct ropegrad_rope_apply_problem (L1/088): the shape, 6 pointers: 112 bytes."""

    _fields_ = [("shape", ApplyShape)] + [(n, ctypes.c_void_p) for n in ("q", "k", "cos", "sin", "q_out", "k_out")]


class ApplyBackwardProblem(ctypes.Structure):
    """struct ropegrad_rope_apply_backward_problem (L1/068): the shape, 10 pointers: 144 bytes."""

    _fields_ = [("shape", ApplyShape)] + [(n, ctypes.c_void_p) for n in (
        "grad_q_out", "grad_k_out", "q", "k", "cos", "sin", "grad_q", "grad_k", "grad_cos", "grad_sin")]


# Offsets as gcc lays them out (offsetof, checked against include/ropegrad.h).
if ctypes.sizeof(ctypes.c_void_p) == 8 and (
        ctypes.sizeof(ApplyShape), ApplyShape.layout.offset, ApplyShape.cos_sin_batch_stride.offset,
        ctypes.sizeof(ApplyProblem), ApplyProblem.q.offset, ApplyProblem.k_out.offset,
        ctypes.sizeof(ApplyBackwardProblem), ApplyBackwardProblem.grad_sin.offset) != (64, 40, 56, 112, 64, 104, 144, 136):
    raise ImportError("ropegrad: ctypes layout of the apply problems does not match the C ABI")

_APPLY_P = ctypes.POINTER(ApplyProblem)
_APPLY_BWD_P = ctypes.POINTER(ApplyBackwardProblem)

# name: (restype, argtypes)
_SIGNATURES = {
    "ropegrad_validate": (ctypes.c_int, [_PROBLEM_P]),
    "ropegrad_backward_reference": (ctypes.c_int, [_PROBLEM_P, ctypes.POINTER(ctypes.c_double)]),
    "ropegrad_backward_cpu": (ctypes.c_int, [_PROBLEM_P, ctypes.c_int]),
    "ropegrad_backward_cuda": (ctypes.c_int, [_PROBLEM_P, ctypes.c_void_p]),
    "ropegrad_backward_cuda_kernel": (ctypes.c_int, [_PROBLEM_P, ctypes.c_int, ctypes.c_void_p]),
    "ropegrad_rope_forward_cpu": (ctypes.c_int, [_FWD_P, ctypes.c_int]),
    "ropegrad_rope_forward_cuda": (ctypes.c_int, [_FWD_P, ctypes.c_void_p]),
    "ropegrad_cos_sin_cpu": (ctypes.c_int, [_CS_P, ctypes.c_int]),
    "ropegrad_cos_sin_cuda": (ctypes.c_int, [_CS_P, ctypes.c_void_p]),
    "ropegrad_rope_apply_cpu": (ctypes.c_int, [_APPLY_P, ctypes.c_int]),
    "ropegrad_rope_apply_cuda": (ctypes.c_int, [_APPLY_P, ctypes.c_void_p]),
    "ropegrad_rope_apply_backward_cpu": (ctypes.c_int, [_APPLY_BWD_P, ctypes.c_int]),
    "ropegrad_rope_apply_backward_cuda": (ctypes.c_int, [_APPLY_BWD_P, ctypes.c_void_p]),
    "ropegrad_cuda_kernel_count": (ctypes.c_int, []),
    "ropegrad_cuda_kernel_name": (ctypes.c_char_p, [ctypes.c_int]),
    "ropegrad_cuda_available": (ctypes.c_int, []),
    "ropegrad_cpu_isa": (ctypes.c_char_p, []),
    "ropegrad_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "ropegrad_version": (ctypes.c_char_p, []),
    "ropegrad_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
}

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates():
    """Where the library may be, in order: $ROPEGRAD_LIB alone when set; else
    the copy bundled in this package (a wheel's); a source tree's build/ (this package run from python/ of a checkout);
    the lib/ of the prefix this package is installed in (cmake --install and
    pip install into one prefix, a venv's or a --target's sibling lib/);
    the versioned SONAME and the plain name through the dynamic loader
    (LD_LIBRARY_PATH, ldconfig's cache, the system's lib folders)."""
    env = os.environ.get("ROPEGRAD_LIB")
    if env:
        # An explicit choice: only that one, so a typo is an error, not a
        # silent fallback to some other build.
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    paths = [os.path.join(here, "libropegrad.so"), os.path.join(repo, "build", "libropegrad.so")]
    # <prefix>/lib/pythonX.Y/site-packages/ropegrad -> <prefix>/lib (only in
    # that layout: a --target folder's grandparent is anybody's, /tmp say);
    # a --target dir's lib/; the running Python's prefix.
    site = os.path.dirname(here)
    libdirs = []
    if os.path.basename(site) in ("site-packages", "dist-packages") and \
            os.path.basename(os.path.dirname(site)).startswith("python"):
        libdirs.append(os.path.join(site, "..", ".."))
    libdirs += [os.path.join(site, "lib"), os.path.join(sys.prefix, "lib")]
    for libdir in libdirs:
        paths.append(os.path.normpath(os.path.join(libdir, "libropegrad.so.%d" % SONAME_MAJOR)))
    paths.append("libropegrad.so.%d" % SONAME_MAJOR)
    found = ctypes.util.find_library("ropegrad")
    if found:
        paths.append(found)
    return paths, False


def _loaded_from(name):
    """The file the dynamic loader picked for a bare name (from
    /proc/self/maps), or the name itself where that cannot be read."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip("\n").split(" ")[-1]
                if os.path.basename(path).startswith("libropegrad.so"):
                    return path
    except OSError:
        pass
    return name


def load():
    """The loaded CDLL (loading it on first call). Raises OSError naming every
    place it looked when no library can be loaded."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        paths, explicit = _candidates()
        errors = []
        for path in paths:
            if os.sep in path and not os.path.exists(path):
                errors.append("%s: no such file" % path)
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                errors.append("%s: %s" % (path, e))
                continue
            for name, (res, args) in _SIGNATURES.items():
                fn = getattr(lib, name)  # AttributeError: not a libropegrad
                fn.restype = res
                fn.argtypes = args
            _lib, _lib_path = lib, path if os.sep in path else _loaded_from(path)
            return lib
        hint = ("$ROPEGRAD_LIB is set" if explicit else
                "build it (cmake -S . -B build -G Ninja && ninja -C build) or set $ROPEGRAD_LIB")
        raise OSError("libropegrad not found (%s); tried: %s" % (hint, "; ".join(errors) or "nothing"))


def library_path():
    """Path of the loaded library (loads it)."""
    load()
    return _lib_path


def strerror(code):
    s = load().ropegrad_strerror(int(code))
    return s.decode() if s else "unknown error"


def check(code, call=None):
    """Raise RopegradError(code, ropegrad_strerror(code)) when code != 0."""
    if code != 0:
        raise RopegradError(code, strerror(code), call)


def version():
    return load().ropegrad_version().decode()


def cuda_available():
    return bool(load().ropegrad_cuda_available())


def cpu_isa():
    return load().ropegrad_cpu_isa().decode()


def validate(p):
    check(load().ropegrad_validate(ctypes.byref(p)), "ropegrad_validate")


def backward_cpu(p, num_threads=0):
    check(load().ropegrad_backward_cpu(ctypes.byref(p), int(num_threads)), "ropegrad_backward_cpu")


def backward_cuda(p, stream=0, kernel=0):
    """stream: a cudaStream_t as an int (0 = the legacy default stream)."""
    lib = load()
    s = ctypes.c_void_p(int(stream) or None)
    if kernel:
        check(lib.ropegrad_backward_cuda_kernel(ctypes.byref(p), int(kernel), s), "ropegrad_backward_cuda_kernel")
    else:
        check(lib.ropegrad_backward_cuda(ctypes.byref(p), s), "ropegrad_backward_cuda")


def backward_reference(p, out):
    """out: a ctypes array (or pointer) of batch_size*seq_len doubles."""
    check(load().ropegrad_backward_reference(ctypes.byref(p), ctypes.cast(out, ctypes.POINTER(ctypes.c_double))),
          "ropegrad_backward_reference")


def rope_forward(p, stream=None, num_threads=0):
    """L1/011 on a ForwardProblem: CUDA when stream is not None (a cudaStream_t
    as an int, 0 = the legacy default stream), else the CPU path."""
    lib = load()
    if stream is None:
        check(lib.ropegrad_rope_forward_cpu(ctypes.byref(p), int(num_threads)), "ropegrad_rope_forward_cpu")
    else:
        check(lib.ropegrad_rope_forward_cuda(ctypes.byref(p), ctypes.c_void_p(int(stream) or None)),
              "ropegrad_rope_forward_cuda")


def cos_sin(p, stream=None, num_threads=0):
    """L1/012 on a CosSinProblem (as rope_forward)."""
    lib = load()
    if stream is None:
        check(lib.ropegrad_cos_sin_cpu(ctypes.byref(p), int(num_threads)), "ropegrad_cos_sin_cpu")
    else:
        check(lib.ropegrad_cos_sin_cuda(ctypes.byref(p), ctypes.c_void_p(int(stream) or None)), "ropegrad_cos_sin_cuda")



def _run_op(name, p, stream, num_threads):
    """ropegrad_<name>_cpu (stream None) or ropegrad_<name>_cuda (stream: a cudaStream_t as an int, 0 = legacy)."""
    lib = load()
    if stream is None:
        check(getattr(lib, "ropegrad_%s_cpu" % name)(ctypes.byref(p), int(num_threads)), "ropegrad_%s_cpu" % name)
    else:
        check(getattr(lib, "ropegrad_%s_cuda" % name)(ctypes.byref(p), ctypes.c_void_p(int(stream) or None)),
              "ropegrad_%s_cuda" % name)


def rope_apply(p, stream=None, num_threads=0):
    """L1/088 on an ApplyProblem (as rope_forward)."""
    _run_op("rope_apply", p, stream, num_threads)


def rope_apply_backward(p, stream=None, num_threads=0):
    """L1/068 on an ApplyBackwardProblem (as rope_forward)."""
    _run_op("rope_apply_backward", p, stream, num_threads)
