# SPDX-License-Identifier: Apache-2.0
"""Progress lines with elapsed seconds on stderr, for `python3 -m ropegrad
... --verbose` (or ROPEGRAD_VERBOSE=1): where a Python implementation's time
goes on a device (importing torch, building a cuda_cpp solution, the first
call of each shape, which holds any JIT compile or autotuning inside the
callable, the time in the callable against the time in the C harness).

Off unless enabled; the lines never go to stdout (the harness's table)."""

import os
import sys
import time

_t0 = time.monotonic()
_on = os.environ.get("ROPEGRAD_VERBOSE", "") not in ("", "0")


def enable(on=True, t0=None):
    """Turns the lines on (or off); t0 (time.monotonic()) is when elapsed counts from."""
    global _on, _t0
    _on = bool(on)
    if t0 is not None:
        _t0 = t0


def enabled():
    return _on


def elapsed():
    return time.monotonic() - _t0


def log(fmt, *args):
    """One line on stderr, "ropegrad [+12.3s]: ...", when enabled."""
    if not _on:
        return
    text = fmt % args if args else fmt
    sys.stderr.write("ropegrad [+%.1fs]: %s\n" % (elapsed(), text))
    sys.stderr.flush()


class ShapeClock:
    """Per shape (one workload), the time inside the callable and around it.

    A workload is recognised by the shape of its first input (not by its
    pointers, which a harness that re-stages the inputs moves every
    iteration): the harness calls the implementation for one workload's
    checked run, warmup and timed iterations before it moves to the next.
    Reported when the next shape starts, and for the last one by close()."""

    def __init__(self):
        self.key = None
        self.label = ""
        self.calls = 0
        self.first_s = 0.0
        self.inside_s = 0.0
        self.wrap_s = 0.0
        self.started = 0.0
        self.last_end = time.monotonic()   # the first shape's gap counts from here (the harness's start)
        self.gap_before_s = 0.0
        self.shapes = 0
        self.total_inside_s = 0.0

    def begin(self, key, label):
        """Before a call: a new key reports the previous shape and starts a new one."""
        now = time.monotonic()
        if key != self.key:
            self._report()
            self.key, self.label = key, label
            self.calls, self.first_s, self.inside_s, self.wrap_s = 0, 0.0, 0.0, 0.0
            self.gap_before_s = now - self.last_end
            self.started = now
            self.shapes += 1
        return now

    def end(self, started, wrap_s):
        """After a call that began at started (time.monotonic()); wrap_s: building its tensors."""
        now = time.monotonic()
        took = now - started
        if self.calls == 0:
            self.first_s = took
            log("shape %s: first call %.3f s in the callable (any JIT compile or autotuning inside it is here)",
                self.label, took)
        self.calls += 1
        self.inside_s += took
        self.wrap_s += wrap_s
        self.total_inside_s += took
        self.last_end = now

    def _report(self):
        if self.key is None or not _on:
            return
        span = max(self.last_end - self.started, 0.0)
        rest = (self.inside_s - self.first_s) / (self.calls - 1) * 1e3 if self.calls > 1 else 0.0
        log("shape %s done: %d calls, %.3f s in the callable (first %.3f s, the others %.3f ms each, of which "
            "%.3f ms making tensors), %.3f s in the C harness before the first call (inputs, reference) and "
            "%.3f s between calls (check, timing, synchronization)", self.label, self.calls, self.inside_s,
            self.first_s, rest, self.wrap_s / max(self.calls, 1) * 1e3, self.gap_before_s,
            max(span - self.inside_s, 0.0))

    def close(self):
        """Reports the last shape; returns (shapes, seconds inside the callable)."""
        self._report()
        self.key = None
        return self.shapes, self.total_inside_s
