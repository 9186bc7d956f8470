# SPDX-License-Identifier: Apache-2.0
"""The supervised worker's watched page, seen from a Python worker
(src/harness/worker.h, docs/protocol.md "Supervised worker").

The parent kills a worker whose loading, or one of its calls, runs past
--timeout; the page's first member is when the current one started
(CLOCK_MONOTONIC nanoseconds as an int64, 0: none), armed by the parent
before the worker starts. A Python worker stops that clock while it imports
torch and while a cuda_cpp solution is built by the compiler (ropegrad's own
steps, not the implementation's code), and starts it again right before the
implementation is loaded: its import, a plugin's constructor, the built
module's import have the whole --timeout.
"""

import mmap
import struct
import time

_fd = None


def watch(fd):
    """This process is a worker whose watched page is fd (None: not a worker)."""
    global _fd
    _fd = fd


def _write(value):
    if _fd is None:
        return
    try:
        with mmap.mmap(_fd, 8) as page:
            struct.pack_into("=q", page, 0, value)
    except (OSError, ValueError):
        pass   # the parent's clock keeps running as it was


def restart():
    """The loading's clock starts again now."""
    _write(time.monotonic_ns())


def pause():
    """No clock until restart()."""
    _write(0)
