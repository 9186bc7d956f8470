# SPDX-License-Identifier: Apache-2.0
"""Loading libropegrad (include/ropegrad.h) through ctypes, and what every op
shares: dtype and status codes, errors, the library-wide calls, and calling
an op's _cpu/_cuda entry point. Each op's problem struct and calls live in
its own module (rope_forward.py, cos_sin.py, rope_backward.py, rope_apply.py,
rope_apply_backward.py), which declares its functions here (declare()).

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

# The SONAME of the library this package speaks to (0.x: major.minor).
SONAME = "libropegrad.so.0.2"


class RopegradError(RuntimeError):
    """A libropegrad call returned a non-zero status."""

    def __init__(self, code, message, call=None):
        self.code = code
        self.message = message
        where = "%s: " % call if call else ""
        super().__init__("%sropegrad error %d: %s" % (where, code, message))


def check_layout(struct, size, offsets):
    """Raises ImportError unless struct (a ctypes mirror of a problem struct
    of include/ropegrad.h) has size bytes and the field offsets given, as the
    C compiler lays it out on LP64 (x86-64, aarch64 Linux; offsetof checked
    with gcc). Not an assert statement: python -O must not skip it."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return
    got = (ctypes.sizeof(struct), {name: getattr(struct, name).offset for name in offsets})
    if got != (size, offsets):
        raise ImportError("ropegrad: ctypes layout of %s %r does not match the C ABI %r"
                          % (struct.__name__, got, (size, offsets)))


# name: (restype, argtypes); each op's module adds its own (declare()).
_SIGNATURES = {
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
        paths.append(os.path.normpath(os.path.join(libdir, SONAME)))
    paths.append(SONAME)
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


def _declare_one(lib, name, sig):
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = sig


def declare(signatures):
    """Adds {C function name: (restype, argtypes)} to what load() declares
    (and declares them at once when the library is loaded already)."""
    with _lock:
        _SIGNATURES.update(signatures)
        if _lib is not None:
            for name, sig in signatures.items():
                _declare_one(_lib, name, sig)


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
            try:
                for name, sig in _SIGNATURES.items():
                    _declare_one(lib, name, sig)
            except AttributeError as e:  # not a libropegrad, or another version's
                errors.append("%s: not the libropegrad this package speaks to (%s)" % (path, e))
                continue
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


def entry_points(prefix, struct):
    """Declares an op's <prefix>_cpu and <prefix>_cuda over its problem struct
    and returns (cpu, cuda): cpu(p, num_threads=0) runs the CPU path (0 = all
    cores), cuda(p, stream=0) the CUDA kernel on stream (a cudaStream_t as an
    int, 0 = the legacy default stream)."""
    ptr = ctypes.POINTER(struct)
    fn_cpu, fn_cuda = prefix + "_cpu", prefix + "_cuda"
    declare({fn_cpu: (ctypes.c_int, [ptr, ctypes.c_int]), fn_cuda: (ctypes.c_int, [ptr, ctypes.c_void_p])})

    def cpu(p, num_threads=0):
        check(getattr(load(), fn_cpu)(ctypes.byref(p), int(num_threads)), fn_cpu)

    def cuda(p, stream=0):
        check(getattr(load(), fn_cuda)(ctypes.byref(p), ctypes.c_void_p(int(stream) or None)), fn_cuda)

    cpu.__doc__, cuda.__doc__ = "%s on the CPU path" % fn_cpu, "%s on a CUDA stream" % fn_cuda
    return cpu, cuda
