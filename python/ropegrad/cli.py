# SPDX-License-Identifier: Apache-2.0
"""python3 -m ropegrad bench|check: `ropegrad bench|check` for Python implementations.

    python3 -m ropegrad bench --impl module.py:function [--dps] [CLI options]
    python3 -m ropegrad bench --solution SOLUTION.json   [CLI options]
    python3 -m ropegrad bench --impl reference           [--reference DEFINITION.json] [CLI options]
    python3 -m ropegrad bench --impl reference-compile   [CLI options]

Every other option is `ropegrad bench|check`'s own (--suite, --backend,
--workloads, --iterations, --record, --db, --manifest, ...), passed to the
same C harness (impl.py). --impl PATH.so (a C plugin) runs as the CLI runs
it, in a supervised worker; no --impl at all (ropegrad's own kernels) runs
in this process.

Every implementation other than ropegrad's own kernels runs in a supervised
worker (docs/protocol.md, "Supervised worker"): this process never imports
or loads it; it starts `python3 -m ropegrad` again with the same options
and --worker-channel/--worker-watch (a pipe and a watched page), and the C
harness here accepts only the result that worker sends on its channel after
exiting normally. A worker that exits early (sys.exit while the solution is
imported), is killed by a signal, or outlasts --timeout is one line and
exit 1 (a failed run with --record). In the worker, a refusal (a solution
for another op, a load that fails) goes to the parent as its one message.

--verbose (or ROPEGRAD_VERBOSE=1) prints where the time goes on stderr, with
elapsed seconds (progress.py), and a line per workload from the harness
(its --progress). --build-only loads the implementation (builds a cuda_cpp
solution into its cache folder) and stops before the harness.
"""

import json
import os
import sys
import time

from . import progress
from . import worker

USAGE = """usage: python3 -m ropegrad bench|check [--impl WHAT | --solution FILE.json] [ropegrad bench options]

  --impl module.py:function   a Python function over torch tensors (function defaults to run), called
                              as the SOL-ExecBench evaluator calls it: inputs in the definition's order
  --dps                       with --impl module.py:function: it writes its outputs, passed after the
                              inputs (destination-passing style); default: it returns them
  --solution FILE.json        a SOL-ExecBench solution (languages pytorch, triton, cuda_cpp); refused in one
                              line, before anything is built, when this machine lacks what it needs (torch,
                              triton, the CUDA toolkit and ninja for cuda_cpp, the modules it names)
  --impl reference            the definition's reference code, eager torch
  --impl reference-compile    the same through torch.compile (torch >= 2)
  --reference FILE            where the reference code is: a definition.json with "reference", or a .py
                              (default: the suite's definition.json or reference.json)
  --impl PATH.so              a C plugin (include/ropegrad_impl.h), as `ropegrad bench --impl`
  --verbose                   where the time goes, with elapsed seconds, on stderr (also ROPEGRAD_VERBOSE=1):
                              importing torch, building or importing the solution, each shape's first call
                              (JIT compiles and autotuning inside the callable), time in the callable and in
                              the harness; adds the harness's --progress
  --tensors WHEN              when a timed call's tensors are made: before-flush (default: before the cache
                              flush, outside the timed span, as the official evaluator) or in-call (inside
                              the timed call: on the CPU its wall clock then counts them)
  --build-only                load the implementation (build a cuda_cpp solution into $ROPEGRAD_SOLUTION_CACHE,
                              default ~/.cache/ropegrad/solutions) and exit 0 without measuring

The C harness's options follow ("ropegrad bench --help").
"""

_OURS_WITH_VALUE = ("--impl", "--solution", "--reference", "--tensors")


def _split(argv):
    """(our options, the harness's argv); ValueError with one line on misuse."""
    ours, rest, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        key, eq, val = a.partition("=")
        if key in _OURS_WITH_VALUE:
            if not eq:
                if i + 1 >= len(argv):
                    raise ValueError("option '%s' needs a value" % key)
                i += 1
                val = argv[i]
            if key in ours:
                raise ValueError("%s given twice" % key)
            ours[key] = val
        elif a in ("--dps", "--verbose", "--build-only"):
            ours[a] = True
        else:
            rest.append(a)
        i += 1
    return ours, rest


def _suite_dir(rest):
    """The --suite the harness will use (the bundled 014 suite when absent,
    added to rest so that both read the same folder)."""
    for i, a in enumerate(rest):
        if a == "--suite" and i + 1 < len(rest):
            return rest[i + 1]
        if a.startswith("--suite="):
            return a.split("=", 1)[1]
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    default = os.path.join(repo, "suites", "014-rope_backward")
    rest += ["--suite", default]
    return default


def _backend(rest, torch):
    """The backend the harness will measure on: --backend, "auto" resolved as
    the harness resolves it (CUDA when a GPU is usable)."""
    b = "auto"
    for i, a in enumerate(rest):
        if a == "--backend" and i + 1 < len(rest):
            b = rest[i + 1]
        elif a.startswith("--backend="):
            b = a.split("=", 1)[1]
    if b == "auto":
        b = "cuda" if torch.cuda.is_available() else "cpu"
    return b


def _op_of(suite):
    try:
        with open(os.path.join(suite, "definition.json"), "rb") as f:
            return json.loads(f.read().decode("utf-8"))["name"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError("--suite %s: cannot read its definition.json name (%s)" % (suite, e)) from None


def _check_ours(ours):
    """Our options that go together; ValueError with one line."""
    impl, solution = ours.get("--impl"), ours.get("--solution")
    if impl and solution:
        raise ValueError("--impl and --solution: give one")
    if ours.get("--dps") and not (impl and ":" in impl or impl and impl.endswith(".py")):
        raise ValueError("--dps applies to --impl module.py:function (a solution file says its own style)")
    if ours.get("--reference") and impl not in ("reference", "reference-compile"):
        raise ValueError("--reference applies to --impl reference|reference-compile")
    if ours.get("--tensors") and not (solution or impl and not impl.endswith(".so")):
        raise ValueError("--tensors applies to a Python implementation (--impl module.py:function, --solution, "
                         "--impl reference|reference-compile)")
    from .impl import TENSORS
    if ours.get("--tensors") and ours["--tensors"] not in TENSORS:
        raise ValueError("--tensors %s: one of %s" % (ours["--tensors"], ", ".join(TENSORS)))


def _callable(ours, suite, rest):
    """The impl.Callable asked for, or None (the harness's own path)."""
    _check_ours(ours)
    impl, solution = ours.get("--impl"), ours.get("--solution")
    if not impl and not solution:
        return None
    if impl and impl.endswith(".so"):
        return None
    if solution:
        # What the solution needs and the machine lacks, refused before anything is imported or built.
        from .impl_load import check_solution
        check_solution(solution)
    t0 = time.monotonic()
    try:
        import torch
    except ImportError as e:
        raise ValueError("a Python implementation needs torch, which this Python cannot import (%s)" % e) from None
    progress.log("torch %s imported in %.1f s", torch.__version__, time.monotonic() - t0)
    worker.restart()   # a worker: the implementation's loading starts here (worker.py)
    from . import impl_load
    op = _op_of(suite)
    if solution:
        return impl_load.from_solution(torch, solution, op, _backend(rest, torch))
    if impl in ("reference", "reference-compile"):
        return impl_load.from_reference(torch, suite, ours.get("--reference"), op, impl == "reference-compile")
    return impl_load.from_module(torch, impl, op, ours.get("--dps", False))


def _fd_option(rest, name):
    """FD of `name FD` in rest (--worker-channel, --worker-watch: this process
    is a supervised worker), else None."""
    for i, a in enumerate(rest):
        if a == name and i + 1 < len(rest) and rest[i + 1].isdigit():
            return int(rest[i + 1])
    return None


def _impl_path(ours, suite):
    """The file that is the implementation (hashed into the record by the
    parent), None for a plugin (--impl PATH.so: the harness hashes it)."""
    impl, solution = ours.get("--impl"), ours.get("--solution")
    if solution:
        return solution
    if impl in ("reference", "reference-compile"):
        from .impl_load import reference_code
        return reference_code(suite, ours.get("--reference"))[1]
    if impl.endswith(".so"):
        return None
    path = impl.rpartition(":")[0] if ":" in impl else impl
    if not os.path.isfile(path):
        raise ValueError("--impl %s: no such file %s" % (impl, path))
    return path


def _supervise(cmd, args, ours, rest):
    """The parent: everything checked that can be without loading the
    implementation (a solution's shape and needs), then the C harness with
    the implementation in a worker, `python3 -m ropegrad cmd args...`."""
    from . import impl
    _check_ours(ours)
    suite = _suite_dir(rest)
    if ours.get("--solution"):
        from .impl_load import check_solution
        check_solution(ours["--solution"])
    path = _impl_path(ours, suite)
    harness = [cmd] + (["--impl", ours["--impl"]] if path is None else []) + rest
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    sys.stdout.flush()
    return impl.supervise(harness, [sys.executable, "-m", "ropegrad", cmd] + args, path)


def main(argv=None):
    started = time.monotonic()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    cmd = argv[0]
    if cmd not in ("bench", "check"):
        sys.stderr.write("python3 -m ropegrad: unknown command '%s' (bench or check)\n" % cmd)
        return 2
    from . import impl
    channel = None
    try:
        ours, rest = _split(argv[1:])
        channel = _fd_option(rest, "--worker-channel")
        if channel is not None:   # torch's import is not the implementation's loading (worker.py)
            worker.watch(_fd_option(rest, "--worker-watch"))
            worker.pause()
        if ours.get("--verbose"):
            progress.enable(True, started)
        if progress.enabled() and "--quiet" not in rest and "--progress" not in rest:
            rest.append("--progress")
        if "--help" in rest:
            sys.stdout.write(USAGE + "\n")
            sys.stdout.flush()
            return impl.run([cmd, "--help"])
        if channel is None and (ours.get("--impl") or ours.get("--solution")) and not ours.get("--build-only"):
            return _supervise(cmd, argv[1:], ours, rest)
        suite = _suite_dir(rest)
        c = _callable(ours, suite, rest)
        if c is not None and ours.get("--tensors"):
            c.tensors = ours["--tensors"]
        if ours.get("--build-only"):
            if c is None:
                raise ValueError("--build-only applies to --solution or --impl with a Python implementation")
            sys.stdout.write("python3 -m ropegrad: %s loaded (%s), not measured (--build-only)\n" % (c.name, c.path))
            return 0
        if c is None and ours.get("--impl"):
            rest = ["--impl", ours["--impl"]] + rest
            worker.restart()   # a worker: the plugin is loaded by the harness, timed from here
        sys.stdout.flush()
        return impl.run([cmd] + rest, c, sys.modules.get("torch"))
    except (ValueError, OSError) as e:
        line = str(e).splitlines()[0] if str(e) else repr(e)
        if channel is not None:   # a worker's refusal is its one message to the parent
            return impl.send_refusal(channel, line)
        sys.stderr.write("python3 -m ropegrad %s: %s\n" % (cmd, line))
        return 2
