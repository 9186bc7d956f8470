# SPDX-License-Identifier: Apache-2.0
"""A Python callable measured by ropegrad's C harness (`ropegrad bench|check`).

The harness stays in C (build/libropegrad_cli.so, src/cli/embed.h): it makes
the inputs, flushes the caches, times (the CUPTI span of the call's GPU work
on a GPU, the wall clock on the CPU), checks, and writes the manifest and the registry exactly
as `ropegrad bench --impl PATH.so` does. This module hands it an
implementation descriptor (include/ropegrad_impl.h) built in memory whose
entry points are ctypes callbacks into the callable:

  cuda / cpu   wrap the problem's buffers as tensors (impl_ops.py), make the
               harness's stream torch's current stream, and call the function:
               fn(*inputs, *outputs) in destination-passing style, else
               result = fn(*inputs) (kept, not copied: this call is timed);
  stage_cuda / stage_cpu
               called by the harness before every timed call, after the
               inputs are re-staged and before the cache flush (outside the
               timed span): makes the call's tensors, which the call then
               uses, so that the call carries no more host work than the
               official evaluator's (it makes its tensors before its flush
               too); on the CPU the wall clock then no longer counts them.
               --tensors in-call makes them inside the call instead;
  finish       called by the harness after every checked call and outside
               every timed span: copies a returned result into the output
               buffers (shape, dtype and device checked first); a result
               that shares memory with an input (the input, or a view of it)
               fails the workload as REWARD_HACK.

An exception in the callable fails its workload with the error's one line.

The tensors are made anew for every call (staged or not), on purpose: a solution may cache
results by the identity of its input tensors (the public 011 peer does), and
the official evaluator hands it fresh tensors every iteration; reusing the
objects would let such a cache skip the work being timed. Making them costs
a few microseconds of host time per call, outside the timed kernel spans
(`--verbose` reports it per shape: progress.py).
"""

import ctypes
import os
import time

from . import _lib
from . import impl_ops
from . import progress

ABI_VERSION = 1
MAX_NAME = 31

# When a timed CUDA call's tensors are made: before the cold-L2 flush (staged:
# the default, as the official evaluator) or inside the call.
TENSORS = ("before-flush", "in-call")

_CUDA_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_CPU_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
_TEXT_FN = ctypes.CFUNCTYPE(ctypes.c_void_p)


class ImplDescriptor(ctypes.Structure):
    """struct ropegrad_impl (include/ropegrad_impl.h)."""
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p), ("version", ctypes.c_char_p),
                ("op", ctypes.c_char_p), ("cuda", _CUDA_FN), ("cpu", _CPU_FN)]


class Embedded(ctypes.Structure):
    """struct rg_impl_embedded (src/harness/impl.h)."""
    _fields_ = [("desc", ctypes.POINTER(ImplDescriptor)), ("path", ctypes.c_char_p), ("meta_json", ctypes.c_char_p),
                ("finish_cuda", _CUDA_FN), ("finish_cpu", _CPU_FN), ("error_text", _TEXT_FN),
                ("stage_cuda", _CUDA_FN), ("stage_cpu", _CPU_FN)]


def one_line(e):
    """An exception as one line: its type and the first line of its text."""
    text = str(e).strip().splitlines()
    line = "%s: %s" % (type(e).__name__, text[0]) if text else type(e).__name__
    return line[:300]


def clip_label(s):
    """A descriptor name or version: printable ASCII, at most 31 bytes, no spaces at its ends."""
    s = "".join(c if 0x20 <= ord(c) <= 0x7E else "?" for c in str(s)).strip()
    if len(s) > MAX_NAME:
        s = s[:MAX_NAME - 1].rstrip() + "~"
    return s or "?"


class Callable:
    """What is measured: fn, the op it implements, how it is called, and what
    the record says about it (name, version, the file it came from, metadata)."""

    def __init__(self, fn, op, name, version, path, dps=False, meta=None, backends=("cpu", "cuda"),
                 tensors="before-flush"):
        if tensors not in TENSORS:
            raise ValueError("--tensors %s: one of %s" % (tensors, ", ".join(TENSORS)))
        self.fn, self.op, self.dps, self.tensors = fn, op, bool(dps), tensors
        self.name, self.version = clip_label(name), clip_label(version)
        self.path, self.meta, self.backends = path, dict(meta or {}), tuple(backends)


class _Runner:
    """The callbacks. Every exception is caught here: one escaping a ctypes
    callback would be printed and the call would look successful."""

    def __init__(self, torch, c):
        self.torch, self.c = torch, c
        self.pending = None
        self.staged = None
        self.error = ctypes.create_string_buffer(512)
        self.streams = {}
        self.threads_set = None
        self.clock = progress.ShapeClock() if progress.enabled() else None

    def _fail(self, e):
        # A reward hack is said as such: the C harness fails the workload as REWARD_HACK (rounds.c).
        text = "REWARD_HACK: %s" % e if isinstance(e, impl_ops.RewardHack) else one_line(e)
        line = text.encode("ascii", "replace")[:511]
        self.error = ctypes.create_string_buffer(line)
        return 1

    def _stream(self, ptr):
        s = self.streams.get(ptr)
        if s is None:
            s = self.streams[ptr] = self.torch.cuda.ExternalStream(ptr)
        return s

    def _invoke(self, addr, device):
        t0 = time.monotonic() if self.clock else 0.0
        staged, self.staged = self.staged, None
        ins, outs = staged if staged is not None else impl_ops.tensors(self.torch, self.c.op, addr, device)
        if self.clock:
            shape = tuple(ins[0].shape)
            started = self.clock.begin(shape, "x".join(str(d) for d in shape))
            wrap_s = started - t0
        self.pending = None
        try:
            with self.torch.no_grad():
                if self.c.dps:
                    self.c.fn(*ins, *outs)
                else:
                    self.pending = self.c.fn(*ins)
        finally:
            if self.clock:
                self.clock.end(started, wrap_s)
        return 0

    def _stage(self, addr, device, stream=None):
        """The next timed call's tensors, made before the cache flush: fresh objects every time."""
        self.staged = None
        try:
            if stream is None:
                self.staged = impl_ops.tensors(self.torch, self.c.op, addr, device)
            else:
                with self.torch.cuda.stream(self._stream(stream)):
                    self.staged = impl_ops.tensors(self.torch, self.c.op, addr, device)
            return 0
        except BaseException as e:  # noqa: B902 -- nothing may escape into C
            self.staged = None
            return self._fail(e)

    def stage_cuda(self, addr, stream):
        return self._stage(addr, "cuda", stream)

    def stage_cpu(self, addr, threads):
        return self._stage(addr, "cpu")

    def call_cuda(self, addr, stream):
        try:
            with self.torch.cuda.stream(self._stream(stream)):
                return self._invoke(addr, "cuda")
        except BaseException as e:  # noqa: B902 -- nothing may escape into C
            return self._fail(e)

    def call_cpu(self, addr, threads):
        try:
            if threads > 0 and threads != self.threads_set:
                self.torch.set_num_threads(threads)
                self.threads_set = threads
            return self._invoke(addr, "cpu")
        except BaseException as e:  # noqa: B902
            return self._fail(e)

    def _finish(self, addr, device):
        if self.c.dps:
            return 0
        ins, outs = impl_ops.tensors(self.torch, self.c.op, addr, device)
        result, self.pending = self.pending, None
        impl_ops.copy_outputs(self.torch, self.c.op, result, outs, ins)
        return 0

    def finish_cuda(self, addr, stream):
        try:
            with self.torch.cuda.stream(self._stream(stream)):
                return self._finish(addr, "cuda")
        except BaseException as e:  # noqa: B902
            return self._fail(e)

    def finish_cpu(self, addr, threads):
        try:
            return self._finish(addr, "cpu")
        except BaseException as e:  # noqa: B902
            return self._fail(e)

    def error_text(self):
        return ctypes.addressof(self.error)


_cli = None


def cli_library():
    """build/libropegrad_cli.so: $ROPEGRAD_CLI_LIB, else beside the libropegrad
    this package loads (ropegrad._lib)."""
    global _cli
    if _cli is not None:
        return _cli
    path = os.environ.get("ROPEGRAD_CLI_LIB")
    if not path:
        path = os.path.join(os.path.dirname(os.path.realpath(_lib.library_path())), "libropegrad_cli.so")
    lib = ctypes.CDLL(path)
    lib.ropegrad_cli_run.restype = ctypes.c_int
    lib.ropegrad_cli_run.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(Embedded)]
    lib.ropegrad_cli_supervise.restype = ctypes.c_int
    lib.ropegrad_cli_supervise.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p]
    lib.ropegrad_cli_embedded_size.restype = ctypes.c_size_t
    lib.ropegrad_cli_impl_size.restype = ctypes.c_size_t
    got = (lib.ropegrad_cli_embedded_size(), lib.ropegrad_cli_impl_size())
    if got != (ctypes.sizeof(Embedded), ctypes.sizeof(ImplDescriptor)):
        raise OSError("%s: struct sizes %r, this package lays out %r" %
                      (path, got, (ctypes.sizeof(Embedded), ctypes.sizeof(ImplDescriptor))))
    _cli = lib
    return lib


def _argv(args):
    return (ctypes.c_char_p * (len(args) + 1))(*[os.fsencode(a) for a in args], None)


def supervise(argv, worker_argv, impl_path=None):
    """Runs argv ("bench" or "check", then the CLI's options) in the C harness,
    the implementation in a supervised worker started as worker_argv (a
    `python3 -m ropegrad` of its own, which loads it: this process never
    does). impl_path: the file that is the implementation (None: argv names
    a plugin, --impl PATH.so). Returns the CLI's exit status."""
    lib = cli_library()
    progress.log("the C harness starts, the implementation in a worker: ropegrad %s", " ".join(argv))
    code = lib.ropegrad_cli_supervise(len(argv), _argv(argv), len(worker_argv), _argv(worker_argv),
                                      os.fsencode(impl_path) if impl_path else None)
    progress.log("the C harness finished (exit %d)", code)
    return code


def send_refusal(fd, line):
    """A worker's refusal (src/harness/worker.h: one framed message) on its
    channel fd: the parent prints the line and exits 2. Returns 0 once sent."""
    import json
    text = " ".join(str(line).split()).encode("ascii", "replace").decode("ascii")[:500] or "refused"
    body = json.dumps({"worker": 1, "refusal": text}).encode("ascii")
    data = b"RGW1" + len(body).to_bytes(4, "big") + body
    try:
        while data:
            data = data[os.write(fd, data):]
        os.close(fd)
    except OSError:
        return 2
    return 0


def run(argv, c=None, torch=None):
    """Runs argv ("bench" or "check", then the CLI's options) in the C harness,
    measuring the Callable c (None: ropegrad's own kernels, or a plugin named
    by --impl PATH.so in argv). Returns the CLI's exit status."""
    import json
    lib = cli_library()
    keep = []
    emb_p = None
    if c is not None:
        runner = _Runner(torch, c)
        none_cuda, none_cpu = _CUDA_FN(), _CPU_FN()
        desc = ImplDescriptor(ABI_VERSION, c.name.encode(), c.version.encode(), c.op.encode(),
                              _CUDA_FN(runner.call_cuda) if "cuda" in c.backends else none_cuda,
                              _CPU_FN(runner.call_cpu) if "cpu" in c.backends else none_cpu)
        meta = dict(c.meta, tensors=c.tensors)
        staged = c.tensors == "before-flush"
        emb = Embedded(ctypes.pointer(desc), os.fsencode(c.path), json.dumps(meta, sort_keys=True).encode(),
                       _CUDA_FN(runner.finish_cuda), _CPU_FN(runner.finish_cpu), _TEXT_FN(runner.error_text),
                       _CUDA_FN(runner.stage_cuda) if staged else none_cuda,
                       _CPU_FN(runner.stage_cpu) if staged else none_cpu)
        keep += [runner, desc, emb]
        emb_p = ctypes.pointer(emb)
    args = _argv(argv)
    progress.log("the C harness starts: ropegrad %s", " ".join(argv))
    code = lib.ropegrad_cli_run(len(argv), args, emb_p)
    if c is not None and runner.clock:
        shapes, inside = runner.clock.close()
        progress.log("the C harness finished (exit %d): %d shapes, %.3f s inside the callable", code, shapes, inside)
    else:
        progress.log("the C harness finished (exit %d)", code)
    del keep
    return code
