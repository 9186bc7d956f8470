# SPDX-License-Identifier: Apache-2.0
"""Where a Python implementation comes from: a module's function, a
SOL-ExecBench solution file, or the definition's reference code (eager or
torch.compile'd). Each gives an impl.Callable; errors are ValueError with
one line (the CLI prints it and exits 2).

A solution is first checked against the machine (check_solution): what
its languages need (torch always; triton; nvcc, ninja and a C++ compiler for
cuda_cpp) and the Python modules its dependencies name; anything missing
refuses it in one line before torch is imported or anything is built.

Solutions are loaded as the official evaluator loads them
(sol_execbench/driver/templates): the sources are written into a fresh
folder; pytorch and triton sources are imported from it (the entry point's
file as a module); cuda_cpp sources (.cu .cpp .cc .cxx .c) are built with
torch.utils.cpp_extension.load, the folder on the include path, and the
entry point's function is taken from the built module. destination_passing_style
defaults to true, as in the evaluator's Solution model.

A cuda_cpp build is kept: it is made in $ROPEGRAD_SOLUTION_CACHE (default
~/.cache/ropegrad/solutions), one folder per solution content and GPU
architecture, and the sources are written there only when their bytes
changed, so a later run of the same solution finds ninja's work done (torch's
cpp_extension lock makes concurrent builds of one folder wait for each
other). `python3 -m ropegrad bench --solution F --build-only` builds and
stops, which lets a device script build while the GPU times something else.
As the official packager does (ProblemPackager._inject_gencode_flags), a
solution whose target_hardware holds LOCAL and whose cuda_cflags name no
-arch/-gencode is built for the local GPU's architecture, read from
$ROPEGRAD_CUDA_ARCH (e.g. sm_90) or nvidia-smi, never from the CUDA runtime:
building touches no GPU. (The official build adds sm_100a for a B200 target;
that code never runs on another GPU, so it is left out here.)
"""

import hashlib
import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from . import progress
from . import worker
from .impl import Callable

PY_LANGUAGES = {"pytorch", "triton", "python"}
CPP_LANGUAGES = {"cuda_cpp", "cutlass", "cudnn", "cublas"}
CPP_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _versions(torch):
    return {"python": sys.version.split()[0], "torch": torch.__version__}


def _import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError("%s: not a Python source file" % path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _function(mod, fname, where):
    fn = getattr(mod, fname, None)
    if not callable(fn):
        raise ValueError("%s has no function %s" % (where, fname))
    return fn


def from_module(torch, spec, op, dps):
    """--impl module.py:function (function defaults to run)."""
    path, _, fname = spec.rpartition(":") if ":" in spec else (spec, ":", "run")
    fname = fname or "run"
    if not os.path.isfile(path):
        raise ValueError("--impl %s: no such file %s" % (spec, path))
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        mod = _import_file(path, "_ropegrad_impl_" + stem)
    except Exception as e:  # the user's module: any error is one line
        raise ValueError("--impl %s: importing it failed: %s: %s" % (spec, type(e).__name__, e)) from None
    fn = _function(mod, fname, path)
    meta = dict(_versions(torch), kind="module", module=os.path.basename(path), function=fname,
                destinationPassingStyle=bool(dps))
    return Callable(fn, op, "%s.%s" % (stem, fname), "py-" + _sha256(path)[:12], path, dps, meta)


def _read_json(path, what):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError("%s %s: %s" % (what, path, e)) from None


def write_if_changed(path, text):
    """Writes text to path unless the file already holds exactly it (its
    modification time then stays, and ninja sees nothing to rebuild).
    Returns True when it wrote."""
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except OSError:
        pass
    with open(path, "wb") as f:
        f.write(data)
    return True


def _write_sources(sol, folder):
    for s in sol.get("sources") or []:
        rel = s.get("path", "")
        if not rel or os.path.isabs(rel) or ".." in rel.split("/"):
            raise ValueError("a source path %r is not a plain relative path" % rel)
        dst = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        write_if_changed(dst, s.get("content", ""))


def local_sm():
    """The local GPU's architecture as sm_NN: $ROPEGRAD_CUDA_ARCH, else the
    first GPU's compute capability from nvidia-smi (as the official packager
    reads it), else None. Never initializes CUDA."""
    env = os.environ.get("ROPEGRAD_CUDA_ARCH", "").strip()
    if env:
        return env if env.startswith("sm_") else "sm_" + env.replace(".", "")
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    first = out.stdout.strip().splitlines()[0].strip() if out.returncode == 0 and out.stdout.strip() else ""
    return "sm_" + first.replace(".", "") if first.replace(".", "").isdigit() else None


def arch_flags(spec, cuda_cflags, sm):
    """The -gencode flag to add for the local GPU (a list of zero or one):
    none when the solution names -arch/-gencode itself, when its
    target_hardware lacks LOCAL, or when the architecture is unknown (sm None:
    torch then picks, from the GPU)."""
    if any("-gencode" in f or "-arch" in f for f in cuda_cflags):
        return []
    targets = {str(h).upper() for h in spec.get("target_hardware") or []}
    if "LOCAL" not in targets or not sm:
        return []
    arch = sm[len("sm_"):] if sm.startswith("sm_") else sm
    return ["-gencode=arch=compute_%s,code=%s" % (arch, sm)]


def solution_cache_dir():
    return os.environ.get("ROPEGRAD_SOLUTION_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "ropegrad", "solutions")


def _build_cpp(torch, sol, fname):
    from torch.utils import cpp_extension
    spec = sol["spec"]
    opts = spec.get("compile_options") or {}
    cuda_cflags = list(opts.get("cuda_cflags") or [])
    sm = local_sm()
    cuda_cflags = arch_flags(spec, cuda_cflags, sm) + cuda_cflags
    digest = hashlib.sha256(json.dumps(sol, sort_keys=True).encode()).hexdigest()[:12]
    name = "rg_solution_%s_%s" % (digest, sm or "auto")
    folder = os.path.join(solution_cache_dir(), name)
    os.makedirs(folder, exist_ok=True)
    _write_sources(sol, folder)
    sources = [os.path.join(folder, p) for p in sorted(os.listdir(folder)) if p.endswith(CPP_SUFFIXES)]
    if not sources:
        raise ValueError("no CUDA/C++ source file in the solution")
    had = any(p.endswith(".so") for p in os.listdir(folder))
    progress.log("cuda_cpp build in %s (%s, %s)", folder, " ".join(cuda_cflags) or "no cuda flags",
                 "a build is there: ninja checks it" if had else "first build here")
    t0 = time.monotonic()
    mod = cpp_extension.load(name=name, sources=sources, extra_cuda_cflags=cuda_cflags,
                             extra_cflags=opts.get("cflags") or [], extra_ldflags=opts.get("ld_flags") or [],
                             extra_include_paths=[folder], build_directory=folder, verbose=False)
    progress.log("cuda_cpp build and load: %.1f s", time.monotonic() - t0)
    return _function(mod, fname, "the built extension")


# What each language needs beyond torch (which every solution needs: the
# harness hands it torch tensors). cuda_cpp and its kind are built by
# torch.utils.cpp_extension: nvcc, ninja and a C++ compiler.
LANGUAGE_MODULES = {"triton": ("triton",)}
BUILD_TOOLS = ("nvcc", "ninja", "c++")


def _nvcc(env, which):
    """nvcc where torch.utils.cpp_extension looks for it: $CUDA_HOME or
    $CUDA_PATH, else nvcc on PATH, else /usr/local/cuda; None when absent."""
    home = env.get("CUDA_HOME") or env.get("CUDA_PATH")
    if home:
        path = os.path.join(home, "bin", "nvcc")
        return path if os.path.isfile(path) else None
    return which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.isfile("/usr/local/cuda/bin/nvcc") else None)


def missing_needs(sol, find_module=importlib.util.find_spec, which=shutil.which, env=None):
    """What the solution (a parsed solution JSON) needs that this machine
    lacks, as a list of words ("the Python modules torch and triton", "the
    CUDA toolkit (nvcc: ...)", "ninja", ...); [] when it has everything. Looks, imports nothing: called
    before torch is imported or anything is built."""
    env = os.environ if env is None else env
    spec = sol.get("spec") or {}
    langs = set(spec.get("languages") or [])
    modules = ["torch"]
    for lang in sorted(langs):
        modules += LANGUAGE_MODULES.get(lang, ())
    for dep in spec.get("dependencies") or []:
        # a requirement ("triton>=3", "numpy[extra]; python_version>'3'") -> its import name
        name = re.split(r"[\s<>=!~;\[(]", str(dep).strip(), 1)[0].lower().replace("-", "_")
        modules.append({"pytorch": "torch"}.get(name, name))
    absent = []
    for m in dict.fromkeys(m for m in modules if m):
        try:
            found = find_module(m) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            absent.append(m)
    lacking = ["the Python module%s %s" % ("s" if len(absent) > 1 else "", " and ".join(absent))] if absent else []
    if langs & CPP_LANGUAGES:
        if not _nvcc(env, which):
            lacking.append("the CUDA toolkit (nvcc: $CUDA_HOME/bin, PATH or /usr/local/cuda)")
        if not which("ninja"):
            lacking.append("ninja")
        if not which(env.get("CXX") or "c++"):
            lacking.append("a C++ compiler (%s)" % (env.get("CXX") or "c++"))
    return lacking


# A solution file's shape, as SOL-ExecBench's Solution model defines it
# (sol_execbench/core/data/solution.py): the languages and hardware it
# names, the entry point's form, the members' types.
ALL_PY_LANGUAGES = {"pytorch", "triton", "cute_dsl", "cutile", "cudnn_frontend"}
ALL_CPP_LANGUAGES = {"cutlass", "cudnn", "cublas", "cuda_cpp"}
HARDWARE = {"B200", "LOCAL"}
CPP_ENTRY_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cuh")


def _kind(v):
    """What a JSON value is, in words."""
    if isinstance(v, bool):
        return "a boolean"
    return {dict: "a JSON object", list: "a JSON array", str: "a string", type(None): "null"}.get(type(v), "a number")


def _text(o, key, where):
    v = o.get(key)
    if not isinstance(v, str) or not v:
        raise ValueError("%s%s is %s, not a non-empty string" % (where, key, "missing" if key not in o
                                                                  else "empty" if v == "" else _kind(v)))
    return v


def _texts(o, key, where, allowed=None, non_empty=False):
    v = o.get(key)
    if v is None and not non_empty:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v) or (non_empty and not v):
        raise ValueError("%s%s is not a%s list of non-empty strings" % (where, key, " non-empty" if non_empty else ""))
    bad = [x for x in v if allowed is not None and x not in allowed]
    if bad:
        raise ValueError("%s%s: %r is not one of %s" % (where, key, bad[0], ", ".join(sorted(allowed))))
    return v


def _entry_point(spec, langs):
    """spec.entry_point: '<file>::<function>', the file's suffix that of its languages."""
    entry = _text(spec, "entry_point", "spec.")
    if entry.count("::") != 1 or not all(entry.split("::")):
        raise ValueError("spec.entry_point %r is not of the form <file>::<function>" % entry)
    suffix = os.path.splitext(entry.split("::")[0])[1]
    if set(langs) & ALL_CPP_LANGUAGES and suffix not in CPP_ENTRY_SUFFIXES:
        raise ValueError("spec.entry_point %r: C++ languages need a C++/CUDA file" % entry)
    if set(langs) & ALL_PY_LANGUAGES and suffix != ".py":
        raise ValueError("spec.entry_point %r: Python languages need a .py file" % entry)
    return entry


def _spec_shape(spec):
    if not isinstance(spec, dict):
        raise ValueError("spec is not a JSON object")
    langs = _texts(spec, "languages", "spec.", ALL_PY_LANGUAGES | ALL_CPP_LANGUAGES)
    if set(langs) & ALL_PY_LANGUAGES and set(langs) & ALL_CPP_LANGUAGES:
        raise ValueError("spec.languages mixes C++ and Python languages")
    _texts(spec, "target_hardware", "spec.", HARDWARE, non_empty=True)
    _texts(spec, "dependencies", "spec.")
    if not isinstance(spec.get("destination_passing_style", True), bool):
        raise ValueError("spec.destination_passing_style is not true or false")
    if spec.get("binding") not in (None, "torch"):
        raise ValueError("spec.binding is not null or \"torch\"")
    opts = spec.get("compile_options")
    if opts is not None:
        if not isinstance(opts, dict):
            raise ValueError("spec.compile_options is not a JSON object")
        for key in ("cflags", "cuda_cflags", "ld_flags"):
            _texts(opts, key, "spec.compile_options.")
    return _entry_point(spec, langs)


def _sources_shape(sources, entry):
    if not isinstance(sources, list) or not sources:
        raise ValueError("sources is not a non-empty list")
    seen = set()
    for i, s in enumerate(sources):
        where = "sources[%d]." % i
        if not isinstance(s, dict):
            raise ValueError("sources[%d] is not a JSON object" % i)
        path = _text(s, "path", where)
        _text(s, "content", where)
        if os.path.isabs(path) or ".." in path.split("/"):
            raise ValueError("%spath %r is not a plain relative path" % (where, path))
        if path in seen:
            raise ValueError("%spath %r is given twice" % (where, path))
        seen.add(path)
    if entry.split("::")[0] not in seen:
        raise ValueError("the entry point's file %r is not among the sources" % entry.split("::")[0])


def solution_shape(sol):
    """Refuses (ValueError, one line) a parsed solution file that is not a
    SOL-ExecBench solution: a JSON object with non-empty strings name,
    definition and author, a spec (languages, target_hardware, entry_point
    '<file>::<function>', dependencies, destination_passing_style, binding,
    compile_options, each of its type) and sources (objects with a relative
    path and content, the entry point's file among them)."""
    if not isinstance(sol, dict):
        raise ValueError("a solution file is a JSON object, this one is %s" % _kind(sol))
    for key in ("name", "definition", "author"):
        _text(sol, key, "")
    if not isinstance(sol.get("description", ""), (str, type(None))):
        raise ValueError("description is not a string")
    _sources_shape(sol.get("sources"), _spec_shape(sol.get("spec")))


def read_solution(path):
    """The parsed solution file at path, its shape checked (ValueError, one line)."""
    sol = _read_json(path, "--solution")
    try:
        solution_shape(sol)
    except ValueError as e:
        raise ValueError("--solution %s: %s" % (path, e)) from None
    return sol


def check_solution(path):
    """Refuses, in one line (ValueError), a solution this machine cannot run:
    a file that is not a solution's shape (solution_shape), an unknown
    language, or what its languages and dependencies need and the machine
    lacks. Before torch is imported and before anything is built."""
    sol = read_solution(path)
    langs = sorted(set((sol.get("spec") or {}).get("languages") or []))
    if not set(langs) & (CPP_LANGUAGES | PY_LANGUAGES):
        raise ValueError("--solution %s: languages %s: this driver runs pytorch, triton and cuda_cpp" % (path, langs))
    lacking = missing_needs(sol)
    if lacking:
        raise ValueError("--solution %s: a %s solution needs %s, which this machine lacks (Python: %s)"
                         % (path, "+".join(langs), "; ".join(lacking), sys.executable))


def from_solution(torch, path, op, backend):
    """--solution FILE.json (a SOL-ExecBench solution) for backend cpu or
    cuda (cuda_cpp and triton solutions run on a GPU only: refused on the CPU
    before anything is built)."""
    sol = read_solution(path)
    spec = sol["spec"]
    if sol.get("definition") != op:
        raise ValueError("--solution %s: it solves %r, the suite is %r" % (path, sol.get("definition"), op))
    langs = set(spec.get("languages") or [])
    if backend != "cuda" and langs & (CPP_LANGUAGES | {"triton"}):
        raise ValueError("--solution %s: languages %s run on a GPU only (--backend cuda)" % (path, sorted(langs)))
    entry = spec["entry_point"]   # '<file>::<function>' (solution_shape)
    file_part, _, fname = entry.rpartition("::")
    t0 = time.monotonic()
    try:
        if langs & CPP_LANGUAGES:
            worker.pause()   # the compiler's time is not the solution's loading (python/ropegrad/worker.py)
            try:
                fn = _build_cpp(torch, sol, fname)
            finally:
                worker.restart()
            backends = ("cuda",)
        elif langs & PY_LANGUAGES:
            folder = tempfile.mkdtemp(prefix="rg-solution-")
            _write_sources(sol, folder)
            sys.path.insert(0, folder)
            mod = importlib.import_module(file_part[:-3].replace("/", ".") if file_part.endswith(".py")
                                          else file_part.replace("/", "."))
            fn = _function(mod, fname, file_part)
            backends = ("cuda",) if "triton" in langs else ("cpu", "cuda")
            progress.log("%s imported in %.1f s (%s)", file_part, time.monotonic() - t0, ", ".join(sorted(langs)))
        else:
            raise ValueError("languages %s: this driver runs pytorch, triton and cuda_cpp" % sorted(langs))
    except ValueError as e:
        raise ValueError("--solution %s: %s" % (path, e)) from None
    except Exception as e:
        raise ValueError("--solution %s: loading it failed: %s: %s" % (path, type(e).__name__, e)) from None
    dps = bool(spec.get("destination_passing_style", True))
    meta = dict(_versions(torch), kind="solution", solution={
        "name": sol.get("name", ""), "author": sol.get("author", ""), "definition": op,
        "languages": sorted(langs), "entryPoint": entry, "destinationPassingStyle": dps})
    author = sol.get("author") or "unknown"
    return Callable(fn, op, sol.get("name") or os.path.basename(path), "by " + author.split()[0], path, dps, meta,
                    backends)


def reference_code(suite, reference):
    """(code, the file it came from): --reference FILE (a definition.json with
    "reference", or a .py), else the suite's definition.json "reference", else
    its reference.json (the dataset definition's reference, kept apart so the
    suite's definition.json stays the dataset's bytes minus the code)."""
    if reference:
        if reference.endswith(".py"):
            with open(reference, encoding="utf-8") as f:
                return f.read(), reference
        d = _read_json(reference, "--reference")
        if not isinstance(d.get("reference"), str):
            raise ValueError("--reference %s: no \"reference\" code in it" % reference)
        return d["reference"], reference
    for name in ("definition.json", "reference.json"):
        p = os.path.join(suite, name)
        if os.path.isfile(p):
            d = _read_json(p, "suite file")
            if isinstance(d.get("reference"), str):
                return d["reference"], p
    raise ValueError("no reference code for suite %s (give --reference DEFINITION.json)" % suite)


def from_reference(torch, suite, reference, op, compiled):
    """--impl reference | reference-compile."""
    code, source = reference_code(suite, reference)
    folder = tempfile.mkdtemp(prefix="rg-reference-")
    py = os.path.join(folder, "_reference.py")   # a real file: inspect.getsource works, as in the evaluator
    with open(py, "w", encoding="utf-8") as f:
        f.write(code)
    try:
        fn = _function(_import_file(py, "_ropegrad_reference"), "run", "the reference code")
    except ValueError:
        raise
    except Exception as e:
        raise ValueError("the reference code failed to load: %s: %s" % (type(e).__name__, e)) from None
    meta = dict(_versions(torch), kind="reference", source=os.path.basename(source),
                codeSha256=hashlib.sha256(code.encode()).hexdigest())
    if compiled:
        if not hasattr(torch, "compile"):
            raise ValueError("--impl reference-compile needs torch >= 2 (torch.compile); this is torch %s"
                             % torch.__version__)
        # One specialised graph per workload shape, as a tuned deployment would
        # compile it; the recompile limit raised so no shape falls back to eager.
        dyn = torch._dynamo.config
        for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                     "accumulated_recompile_limit"):
            if hasattr(dyn, knob):
                setattr(dyn, knob, max(getattr(dyn, knob), 256))
        fn = torch.compile(fn, dynamic=False)
        progress.log("torch.compile(dynamic=False): each shape compiles in its first call (the 'first call' lines)")
        meta["compile"] = {"dynamic": False}
        return Callable(fn, op, "reference (torch.compile)", "torch " + torch.__version__, source, False, meta)
    return Callable(fn, op, "reference (torch eager)", "torch " + torch.__version__, source, False, meta)
