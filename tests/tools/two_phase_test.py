#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dev/official/two_phase.py on the CPU, with the official evaluator's own
code (its loaders, ProblemPackager, Trace) and stand-ins only for the two
commands the packager hands out: a fake `python` on PATH runs a fake
build_ext.py (it writes benchmark_kernel.so and records what it saw) and a
fake eval_driver.py (it prints one PASSED trace per workload of the staged
workload.jsonl, plus a line of noise), and a fake nvidia-smi says 9.0.

  one run, four solutions, --go-file appearing after the compiles: a cuda_cpp
  solution compiles with the GPU hidden and the packager's injected
  -gencode for sm_90, then is evaluated (16 traces in the CLI's -o format,
  cli_exit 0); one whose hidden compile fails asking for a GPU is compiled
  again with it visible (gpu_needed); one whose compile fails is not
  evaluated (cli_exit 1); a pytorch one needs no compile; every evaluation
  starts after the go file, every compile ends before; exit 1 (one not
  evaluated); the staging folders are removed;
  a deadline too close for an evaluation: skipped-budget, saying so;
  an evaluation past --timeout: timeout, cli_exit 1;
  --validate-only: one line per solution, a solution of another problem
  INVALID, exit 1.

    python3 tests/tools/two_phase_test.py SOURCE_DIR OFFICIAL_EVALUATOR_DIR
Exit 77 (skipped, saying why) without the evaluator folder or pydantic 2.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

src, evaluator = sys.argv[1], sys.argv[2]
tool = os.path.join(src, "dev", "official", "two_phase.py")
OP = "014_rotary_embedding_with_attention_scaling_backward"
failures, passes = [], []

FAKE_BUILD = r'''
import json, os, sys, time
sol = json.load(open("solution.json"))
log = os.path.join(os.environ["FAKE_LOG"], "compile-%s-%d.json" % (sol["name"], time.monotonic_ns()))
hidden = os.environ.get("CUDA_VISIBLE_DEVICES", "unset") == ""
json.dump({"hidden": hidden, "cuda_cflags": (sol["spec"].get("compile_options") or {}).get("cuda_cflags", []),
           "end": time.time()}, open(log, "w"))
if "failcompile" in sol["name"]:
    sys.stderr.write("kernel.cu(1): error: this solution does not compile\n")
    sys.exit(1)
if "needgpu" in sol["name"] and hidden:
    sys.stderr.write("File cpp_extension.py, in _get_cuda_arch_flags\nIndexError: list index out of range\n")
    sys.exit(1)
open("benchmark_kernel.so", "w").write("fake")
print("benchmark_kernel.so ready")
'''

FAKE_EVAL = r'''
import json, os, sys, time
sol = json.load(open("solution.json"))
json.dump({"start": time.time()}, open(os.path.join(os.environ["FAKE_LOG"], "eval-%s.json" % sol["name"]), "w"))
if "sloweval" in sol["name"]:
    time.sleep(30)
print("noise a library printed")
d = json.load(open("definition.json"))
for line in open("workload.jsonl"):
    w = json.loads(line)
    ms = 1e-3 * (1 + w["axes"]["batch_size"] * w["axes"]["seq_len"] / 1e5)
    print(json.dumps({"definition": d["name"], "workload": w, "solution": sol["name"], "evaluation": {
        "status": "PASSED", "environment": {"hardware": "FAKE GPU", "libs": {}}, "timestamp": "2026-12-02T00:00:00",
        "log": "", "correctness": {"max_relative_error": 0.0, "max_absolute_error": 0.0, "has_nan": False,
                                   "has_inf": False, "extra": None},
        "performance": {"latency_ms": ms, "reference_latency_ms": 10 * ms, "speedup_factor": 10.0}}}))
'''


def expect(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + str(detail)[:3000]) if not cond and detail else ""))
    (passes if cond else failures).append(name)


def python_path(tmp):
    """The evaluator's src, then stand-ins for what this Python lacks."""
    pp = [os.path.join(evaluator, "sol-execbench", "src")]
    probe = "import pydantic, sys; sys.exit(0 if int(pydantic.VERSION.split('.')[0]) >= 2 else 1)"
    if subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode != 0:
        pp.append(os.path.join(evaluator, "shims", "pydantic"))
    for mod in ("click", "rich"):
        if subprocess.run([sys.executable, "-c", "import " + mod], capture_output=True).returncode != 0:
            pp.append(os.path.join(src, "tests", "stub_cli"))
            break
    return ":".join(pp)


def fake_bin(tmp):
    b = os.path.join(tmp, "bin")
    os.makedirs(b)
    for name, body in (("fake_build.py", FAKE_BUILD), ("fake_eval.py", FAKE_EVAL)):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(body)
    with open(os.path.join(b, "python"), "w") as f:
        f.write('#!/bin/sh\ncase "$1" in\n  build_ext.py) exec "%s" "%s/fake_build.py" ;;\n'
                '  eval_driver.py) exec "%s" "%s/fake_eval.py" ;;\n  *) exec "%s" "$@" ;;\nesac\n'
                % (sys.executable, tmp, sys.executable, tmp, sys.executable))
    with open(os.path.join(b, "nvidia-smi"), "w") as f:
        f.write("#!/bin/sh\necho 9.0\n")
    for n in ("python", "nvidia-smi"):
        os.chmod(os.path.join(b, n), 0o755)
    return b


def solution(tmp, name, language):
    path = os.path.join(tmp, name + ".json")
    files = {"cuda_cpp": ("kernel.cu", "// a stand-in source\n"), "pytorch": ("kernel.py", "def run(*a):\n    pass\n")}
    fname, body = files[language]
    with open(path, "w") as f:
        json.dump({"name": name, "definition": OP, "author": "tests", "description": "a test solution",
                   "spec": {"languages": [language], "target_hardware": ["LOCAL"], "entry_point": fname + "::run",
                            "dependencies": [], "destination_passing_style": False},
                   "sources": [{"path": fname, "content": body}]}, f)
    return path


def run_tool(tmp, out, items, extra, env):
    args = [sys.executable, tool, "--out", out, "--jobs", "4", "--hide-gpu-in-compile"] + extra
    for sol, label in items:
        args += ["--item", os.path.join(evaluator, "problems", "014"), sol, label]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    status = None
    if os.path.exists(os.path.join(out, "status.json")):
        with open(os.path.join(out, "status.json")) as f:
            status = json.load(f)
    return p.returncode, status, p.stderr


def by_label(status, label):
    return next(s for s in status["solutions"] if s["label"] == label)


def main_run(tmp, env, log):
    out, go = os.path.join(tmp, "out"), os.path.join(tmp, "go")
    items = [(solution(tmp, "ok_cpp", "cuda_cpp"), "ok"), (solution(tmp, "needgpu_cpp", "cuda_cpp"), "needgpu"),
             (solution(tmp, "failcompile_cpp", "cuda_cpp"), "failcompile"), (solution(tmp, "py_sol", "pytorch"), "py")]
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "sol_execbench_*")))
    go_at = []

    def open_go():
        time.sleep(3)
        go_at.append(time.time())
        open(go, "w").close()
    t = threading.Thread(target=open_go)
    t.start()
    rc, st, err = run_tool(tmp, out, items, ["--go-file", go, "--deadline", str(time.time() + 240)], env)
    t.join()
    expect("exit 1: one solution was not evaluated", rc == 1, err)
    if not st:
        expect("status.json written", False, err)
        return
    s = by_label(st, "ok")
    expect("cuda_cpp: compiled with the GPU hidden, evaluated, cli_exit 0",
           s["compile"]["status"] == "ok" and s["compile"]["gpu_hidden"] and not s["compile"]["gpu_needed"]
           and s["evaluation"]["status"] == "ok" and s["evaluation"]["passed"] == 16 and s["cli_exit"] == 0, s)
    seen = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(log, "compile-ok_cpp-*.json")))]
    expect("the compile saw the packager's -gencode for sm_90 and CUDA_VISIBLE_DEVICES=\"\"",
           len(seen) == 1 and seen[0]["hidden"] and "-gencode=arch=compute_90,code=sm_90" in seen[0]["cuda_cflags"],
           seen)
    with open(os.path.join(out, "ok.traces.jsonl")) as f:
        lines = [json.loads(x) for x in f]
    expect("the trace file: 16 traces in the CLI's -o format (model_dump)",
           len(lines) == 16 and all(x["evaluation"]["status"] == "PASSED" and x["solution"] == "ok_cpp"
                                    for x in lines) and "performance" in lines[0]["evaluation"], lines[:1])
    s = by_label(st, "needgpu")
    expect("a hidden compile asking for the GPU: compiled again with it visible, gpu_needed",
           s["compile"]["status"] == "ok" and s["compile"]["gpu_needed"] and not s["compile"]["gpu_hidden"]
           and s["evaluation"]["status"] == "ok", s)
    s = by_label(st, "failcompile")
    expect("a failed compile: not evaluated, cli_exit 1, tried once (not a GPU error)",
           s["compile"]["status"] == "failed" and s["evaluation"]["status"] == "not-run" and s["cli_exit"] == 1
           and len(glob.glob(os.path.join(log, "compile-failcompile_cpp-*.json"))) == 1, s)
    s = by_label(st, "py")
    expect("a pytorch solution: no compile, evaluated",
           s["compile"]["status"] == "not-needed" and s["evaluation"]["status"] == "ok", s)
    starts = [json.load(open(p))["start"] for p in glob.glob(os.path.join(log, "eval-*.json"))]
    ends = [json.load(open(p))["end"] for p in glob.glob(os.path.join(log, "compile-*.json"))]
    expect("every evaluation started after the go file, every compile ended before it",
           go_at and len(starts) == 3 and min(starts) >= go_at[0] and max(ends) < go_at[0], (go_at, starts, ends))
    with open(os.path.join(out, "ok.log")) as f:
        text = f.read()
    expect("the log holds the commands, the compile's output and the noise line",
           "python build_ext.py" in text and "benchmark_kernel.so ready" in text and "noise a library printed" in text,
           text[:2000])
    after = set(glob.glob(os.path.join(tempfile.gettempdir(), "sol_execbench_*")))
    expect("the staging folders are removed", not (after - before), after - before)


def validate_run(tmp, env):
    good = solution(tmp, "valid_cpp", "cuda_cpp")
    other = os.path.join(tmp, "other.json")
    with open(good) as f:
        d = json.load(f)
    d["definition"] = "011_rotary_position_embedding"
    with open(other, "w") as f:
        json.dump(d, f)
    args = [sys.executable, tool, "--out", os.path.join(tmp, "out-validate"), "--validate-only",
            "--item", os.path.join(evaluator, "problems", "014"), good, "good",
            "--item", os.path.join(evaluator, "problems", "014"), other, "other"]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    lines = p.stdout.strip().splitlines()
    expect("--validate-only: one line per solution, the wrong problem INVALID, exit 1",
           p.returncode == 1 and len(lines) == 2 and lines[0].startswith("valid: good: " + OP + ", 16 workloads")
           and lines[1].startswith("INVALID: other:") and not glob.glob(os.path.join(tmp, "out-validate", "*.log")),
           p.stdout + p.stderr)


def budget_runs(tmp, env):
    sol = solution(tmp, "ok2_cpp", "cuda_cpp")
    out = os.path.join(tmp, "out-deadline")
    rc, st, err = run_tool(tmp, out, [(sol, "late")], ["--deadline", str(time.time() + 55), "--min-eval-s", "45"], env)
    s = by_label(st, "late") if st else {}
    expect("an evaluation without enough time left: skipped-budget, saying so, exit 1",
           rc == 1 and s.get("evaluation", {}).get("status") == "skipped-budget"
           and "left before the deadline" in s["evaluation"].get("note", ""), (rc, s, err))
    sol = solution(tmp, "sloweval_py", "pytorch")
    out = os.path.join(tmp, "out-timeout")
    rc, st, err = run_tool(tmp, out, [(sol, "slow")], ["--timeout", "2"], env)
    s = by_label(st, "slow") if st else {}
    expect("an evaluation past --timeout: timeout, cli_exit 1",
           rc == 1 and s.get("evaluation", {}).get("status") == "timeout" and s.get("cli_exit") == 1, (rc, s, err))


def main():
    if not os.path.isdir(os.path.join(evaluator, "sol-execbench", "src", "sol_execbench")):
        print("SKIP: no official evaluator at %s (../shared/official-evaluator)" % evaluator)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log")
        os.makedirs(log)
        env = dict(os.environ, PATH=fake_bin(tmp) + ":" + os.environ.get("PATH", ""), PYTHONPATH=python_path(tmp),
                   FAKE_LOG=log, PYTHONDONTWRITEBYTECODE="1")
        probe = subprocess.run([sys.executable, "-c", "import sol_execbench.cli.main"], env=env, capture_output=True,
                               text=True)
        if probe.returncode != 0:
            print("SKIP: the official CLI module does not import here: %s" % probe.stderr.strip().splitlines()[-1:])
            return 77
        main_run(tmp, env, log)
        validate_run(tmp, env)
        budget_runs(tmp, env)
    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
