# SPDX-License-Identifier: Apache-2.0
"""The parts of python/ropegrad/impl_load.py that decide how a cuda_cpp
solution is built, without torch or a GPU (standard library only):

  write_if_changed leaves a file with the same bytes untouched (its
  modification time stays, so ninja rebuilds nothing) and rewrites one that
  differs; arch_flags adds the local GPU's -gencode exactly when the official
  packager adds it (target_hardware with LOCAL, no -arch/-gencode given),
  nothing otherwise; local_sm reads $ROPEGRAD_CUDA_ARCH in either spelling;
  the build folder follows $ROPEGRAD_SOLUTION_CACHE; progress lines go to
  stderr only when enabled; a solution whose languages or dependencies need
  what the machine lacks (torch, triton, the CUDA toolkit, ninja, a module it
  names) is refused by `python3 -m ropegrad bench --solution` in one line,
  exit 2, before torch is imported or anything is built; so is a file that
  is not a SOL-ExecBench solution's shape (a JSON array, a numeric
  entry_point, an entry point not of the form <file>::<function>, sources
  that are not objects with string path and content, ...): one line, never
  a traceback.

    python3 python/tests/test_impl_load.py      (exit 0 when every case passes)
"""

import io
import json
import os
import subprocess
import sys
import tempfile
import time

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PYDIR)

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


def check_solution_needs(tmp):
    def sol(langs, deps=()):
        return {"spec": {"languages": list(langs), "dependencies": list(deps)}}

    def needs(s, modules=("torch",), tools=("nvcc", "ninja", "c++"), env=None):
        return impl_load.missing_needs(s, find_module=lambda m: object() if m in modules else None,
                                       which=lambda t: "/bin/" + t if t in tools else None, env=env or {})

    expect("pytorch with torch: nothing lacking", needs(sol(["pytorch"])) == [])
    expect("triton without triton: the module named", needs(sol(["triton"])) == ["the Python module triton"],
           needs(sol(["triton"])))
    expect("triton without torch nor triton: both named", needs(sol(["triton"]), modules=())
           == ["the Python modules torch and triton"], needs(sol(["triton"]), modules=()))
    expect("a dependency is looked up by its import name ('triton>=3.0', 'my-pkg')",
           needs(sol(["pytorch"], ["triton>=3.0", "my-pkg[x]"]), modules=("torch", "my_pkg"))
           == ["the Python module triton"])
    expect("cuda_cpp with everything: nothing lacking", needs(sol(["cuda_cpp"])) == [])
    got = needs(sol(["cuda_cpp"]), tools=("c++",), env={"CUDA_HOME": os.path.join(tmp, "no-cuda")})
    expect("cuda_cpp without nvcc ($CUDA_HOME empty) nor ninja: both named",
           len(got) == 2 and got[0].startswith("the CUDA toolkit") and got[1] == "ninja", got)

    # The CLI: one line on stderr, exit 2, nothing built. python3 -S: no
    # site-packages, so neither torch nor triton can be found, whatever this
    # machine has installed.
    path = os.path.join(tmp, "triton-solution.json")
    with open(path, "w") as f:
        json.dump({"name": "t", "definition": "014_rotary_embedding_with_attention_scaling_backward", "author": "t",
                   "spec": {"languages": ["triton"], "target_hardware": ["LOCAL"], "entry_point": "k.py::run",
                            "dependencies": ["triton"]},
                   "sources": [{"path": "k.py", "content": "import triton\n"}]}, f)
    env = dict(os.environ, PYTHONPATH=PYDIR, ROPEGRAD_SOLUTION_CACHE=os.path.join(tmp, "cache"))
    p = subprocess.run([sys.executable, "-S", "-m", "ropegrad", "bench", "--solution", path], env=env, cwd=tmp,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = p.stderr.strip().splitlines()
    expect("--solution of a triton solution without triton: exit 2", p.returncode == 2, (p.returncode, p.stderr))
    expect("... refused in one line naming triton", len(lines) == 1 and "needs the Python modules torch and triton"
           in lines[0] and path in lines[0], p.stderr)
    expect("... nothing built or written", not os.path.exists(os.path.join(tmp, "cache")) and p.stdout == "",
           p.stdout)


GOOD = {"name": "s", "definition": "014_rotary_embedding_with_attention_scaling_backward", "author": "a",
        "spec": {"languages": ["pytorch"], "target_hardware": ["LOCAL"], "entry_point": "k.py::run",
                 "dependencies": ["torch"], "destination_passing_style": True,
                 "compile_options": {"cflags": [], "cuda_cflags": ["-O3"], "ld_flags": []}},
        "sources": [{"path": "k.py", "content": "def run(*a):\n    pass\n"}]}


def _with(path, value):
    """GOOD with the member at path (a tuple of keys and indices) set to value (None: removed)."""
    sol = json.loads(json.dumps(GOOD))
    o = sol
    for k in path[:-1]:
        o = o[k]
    if value is None:
        del o[path[-1]]
    else:
        o[path[-1]] = value
    return sol


# Each bad shape, and a word its one line must hold.
BAD_SHAPES = [
    ("a JSON array", [GOOD], "is a JSON array"),
    ("a string", "solution", "is a string"),
    ("a numeric entry_point", _with(("spec", "entry_point"), 5), "spec.entry_point is a number"),
    ("an entry_point without ::", _with(("spec", "entry_point"), "k.py"), "<file>::<function>"),
    ("an entry_point with two ::", _with(("spec", "entry_point"), "k.py::a::b"), "<file>::<function>"),
    ("a .cu entry point for pytorch", _with(("spec", "entry_point"), "k.cu::run"), "need a .py file"),
    ("no name", _with(("name",), None), "name is missing"),
    ("a numeric author", _with(("author",), 7), "author is a number"),
    ("spec an array", _with(("spec",), []), "spec is not a JSON object"),
    ("an unknown language", _with(("spec", "languages"), ["cobol"]), "'cobol' is not one of"),
    ("mixed languages", _with(("spec", "languages"), ["pytorch", "cuda_cpp"]), "mixes C++ and Python"),
    ("no target_hardware", _with(("spec", "target_hardware"), None), "target_hardware is not a non-empty list"),
    ("a string dependencies", _with(("spec", "dependencies"), "torch"), "dependencies is not a list"),
    ("a string destination_passing_style", _with(("spec", "destination_passing_style"), "yes"),
     "destination_passing_style is not true or false"),
    ("numeric cuda_cflags", _with(("spec", "compile_options", "cuda_cflags"), [3]), "cuda_cflags is not a list"),
    ("sources an object", _with(("sources",), {"k.py": "x"}), "sources is not a non-empty list"),
    ("a source that is a string", _with(("sources", 0), "k.py"), "sources[0] is not a JSON object"),
    ("a numeric source content", _with(("sources", 0, "content"), 1), "sources[0].content is a number"),
    ("a source path with ..", _with(("sources", 0, "path"), "../k.py"), "not a plain relative path"),
    ("the entry file not among the sources", _with(("spec", "entry_point"), "other.py::run"),
     "not among the sources"),
]


def check_solution_shape(tmp):
    """impl_load.solution_shape, and the CLI's one line for each bad file."""
    try:
        impl_load.solution_shape(GOOD)
        expect("a well-formed solution passes solution_shape", True)
    except ValueError as e:
        expect("a well-formed solution passes solution_shape", False, str(e))
    env = dict(os.environ, PYTHONPATH=PYDIR, ROPEGRAD_SOLUTION_CACHE=os.path.join(tmp, "cache"))
    for i, (what, sol, word) in enumerate(BAD_SHAPES):
        path = os.path.join(tmp, "bad%d.json" % i)
        with open(path, "w") as f:
            json.dump(sol, f)
        p = subprocess.run([sys.executable, "-S", "-m", "ropegrad", "check", "--solution", path], env=env, cwd=tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = p.stderr.strip().splitlines()
        expect("--solution with %s: exit 2, one line naming it" % what,
               p.returncode == 2 and len(lines) == 1 and word in lines[0] and path in lines[0] and
               "Traceback" not in p.stderr and p.stdout == "", (p.returncode, p.stderr))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_write_if_changed(tmp)
        check_solution_needs(tmp)
        check_solution_shape(tmp)
    check_arch_flags()
    check_local_sm_and_cache()
    check_progress()
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
