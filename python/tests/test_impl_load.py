# SPDX-License-Identifier: Apache-2.0
"""The parts of python/ropegrad/impl_load.py that decide how a cuda_cpp
solution is built, without torch or a GPU (standard library only):

  write_if_changed leaves a file with the same bytes untouched (its
  modification time stays, so ninja rebuilds nothing) and rewrites one that
  differs; arch_flags adds the local GPU's -gencode exactly when the official
  packager adds it (target_hardware with LOCAL, no -arch/-gencode given),
  nothing otherwise; local_sm reads $ROPEGRAD_CUDA_ARCH in either spelling;
  the build folder follows $ROPEGRAD_SOLUTION_CACHE; progress lines go to
  stderr only when enabled.

    python3 python/tests/test_impl_load.py      (exit 0 when every case passes)
"""

import io
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from ropegrad import impl_load, progress  # noqa: E402

failures = []


def expect(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + str(detail)) if not cond and detail else ""))
    if not cond:
        failures.append(name)


def check_write_if_changed(tmp):
    path = os.path.join(tmp, "kernel.cu")
    expect("a new file is written", impl_load.write_if_changed(path, "int x;\n"))
    old = time.time() - 1000
    os.utime(path, (old, old))
    expect("the same bytes: not written", not impl_load.write_if_changed(path, "int x;\n"))
    expect("the same bytes: the modification time stays", abs(os.stat(path).st_mtime - old) < 1e-3,
           os.stat(path).st_mtime - old)
    expect("other bytes: written", impl_load.write_if_changed(path, "int y;\n"))
    with open(path) as f:
        expect("other bytes: the file holds them", f.read() == "int y;\n")


def check_arch_flags():
    local = {"target_hardware": ["B200", "LOCAL"]}
    expect("LOCAL without arch flags: the local GPU's gencode",
           impl_load.arch_flags(local, ["-O3"], "sm_90") == ["-gencode=arch=compute_90,code=sm_90"],
           impl_load.arch_flags(local, ["-O3"], "sm_90"))
    expect("lower-case local counts as LOCAL", impl_load.arch_flags({"target_hardware": ["local"]}, [], "sm_90")
           == ["-gencode=arch=compute_90,code=sm_90"])
    expect("an -arch flag given: nothing added", impl_load.arch_flags(local, ["-arch=sm_80"], "sm_90") == [])
    expect("a -gencode flag given: nothing added",
           impl_load.arch_flags(local, ["-gencode=arch=compute_80,code=sm_80"], "sm_90") == [])
    expect("no LOCAL target: nothing added", impl_load.arch_flags({"target_hardware": ["B200"]}, [], "sm_90") == [])
    expect("unknown local GPU: nothing added (torch picks)", impl_load.arch_flags(local, [], None) == [])
    expect("sm_100a keeps its suffix", impl_load.arch_flags(local, [], "sm_100a")
           == ["-gencode=arch=compute_100a,code=sm_100a"])


def check_local_sm_and_cache():
    saved = {k: os.environ.get(k) for k in ("ROPEGRAD_CUDA_ARCH", "ROPEGRAD_SOLUTION_CACHE")}
    try:
        os.environ["ROPEGRAD_CUDA_ARCH"] = "9.0"
        expect("ROPEGRAD_CUDA_ARCH=9.0 -> sm_90", impl_load.local_sm() == "sm_90", impl_load.local_sm())
        os.environ["ROPEGRAD_CUDA_ARCH"] = "sm_90"
        expect("ROPEGRAD_CUDA_ARCH=sm_90 -> sm_90", impl_load.local_sm() == "sm_90", impl_load.local_sm())
        os.environ["ROPEGRAD_SOLUTION_CACHE"] = "/x/cache"
        expect("the build folder follows ROPEGRAD_SOLUTION_CACHE", impl_load.solution_cache_dir() == "/x/cache")
        del os.environ["ROPEGRAD_SOLUTION_CACHE"]
        expect("the default build folder is under ~/.cache/ropegrad",
               impl_load.solution_cache_dir().endswith(os.path.join(".cache", "ropegrad", "solutions")))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def check_progress():
    err, saved = io.StringIO(), sys.stderr
    sys.stderr = err
    try:
        progress.enable(False)
        progress.log("hidden %d", 1)
        progress.enable(True, time.monotonic() - 2.0)
        progress.log("shown %d", 2)
        clock = progress.ShapeClock()
        t = clock.begin((2, 3), "2x3")
        clock.end(t, 0.0)
        t = clock.begin((2, 3), "2x3")
        clock.end(t, 0.0)
        shapes, _ = clock.close()
    finally:
        sys.stderr = saved
        progress.enable(False)
    text = err.getvalue()
    expect("a line while disabled stays out", "hidden" not in text, text)
    expect("a line while enabled carries the elapsed seconds", "ropegrad [+2." in text and "shown 2" in text, text)
    expect("one shape's first call and summary are reported",
           "shape 2x3: first call" in text and "shape 2x3 done: 2 calls" in text and shapes == 1, text)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_write_if_changed(tmp)
    check_arch_flags()
    check_local_sm_and_cache()
    check_progress()
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
