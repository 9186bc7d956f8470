#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The official SOL-ExecBench CLI's two phases, for several solutions, reordered
for time: every compile first, in parallel; then every evaluation, one after
another. It drives the evaluator's OWN code, imported from PYTHONPATH (the
carried, unmodified copy: sol-execbench/src): nothing of it is copied here.

    PYTHONPATH=.../sol-execbench/src python3 dev/official/two_phase.py --out DIR \\
        --item PROBLEM_DIR SOLUTION.json LABEL [--item ...] [--jobs N] \\
        [--compile-timeout 600] [--timeout 540] [--deadline EPOCH] [--go-file FILE] \\
        [--hide-gpu-in-compile] [--keep-staging] [--validate-only]

Why this is the CLI (sol_execbench/cli/main.py, `sol-execbench PROBLEM --solution S
-o TRACES`), call for call, for each solution:

  1. the models: main._load_definition(PROBLEM/definition.json),
     main._load_workloads(PROBLEM/workload.jsonl), main._load_solution(S),
     main._load_config(PROBLEM/config.json or None): the CLI's own functions;
  2. staging_dir = tempfile.mkdtemp(prefix="sol_execbench_") and
     ProblemPackager(definition, workloads, solution, config, staging_dir,
     keep_output_dir) (driver/problem_packager.py);
  3. when packager._is_cpp: cmd, _ = packager.compile(), then
     subprocess.run(cmd, cwd=staging_dir, capture_output=True, text=True,
     timeout=compile_timeout, env={**os.environ, "PYTORCH_ALLOC_CONF":
     "expandable_segments:True"}); a non-zero exit ends that solution (the CLI
     exits 1);
  4. eval_cmd = packager.execute(), then subprocess.run(eval_cmd, the same
     keywords with timeout=timeout); exit != 0 with an empty stdout ends it;
  5. traces = packager.convert_stdout_to_traces(stdout) (none: it ends), and
     the trace file written as the CLI writes `-o FILE`:
     json.dumps(t.model_dump(mode="json")) + "\\n" per trace;
  6. the CLI's exit code: 0 when every trace PASSED, else 1 (status.json's
     cli_exit; a compile or evaluation past its timeout is an exit 1 there: the
     CLI dies with subprocess.TimeoutExpired).

Within one solution the calls and their order are the CLI's. What differs is
only when they run: every solution's step 3 runs first, concurrently (--jobs),
then step 4 for each solution in turn, after --go-file appears (the caller
says when the GPU is free). A compile's output does not depend on when it
runs; an evaluation runs as the CLI runs it, alone on the GPU.

Does phase 1 put work on the GPU? The compile is `python build_ext.py`
(driver/templates/build_ext.py): it imports torch and torch.utils.cpp_extension
and calls cpp_extension.load(), which writes a ninja file, runs nvcc and the
host compiler, and imports the built module (pybind11 registers its functions;
no CUDA call). torch asks the GPU for its architecture only inside
_get_cuda_arch_flags (torch.cuda.device_count, get_device_capability: device
queries, no kernel), and in recent torch (the JIT path passes
extra_cuda_cflags to it) only when no flag names an arch; the packager
injects -gencode for the solution's targets first (B200: sm_100a; LOCAL: the
local GPU's sm, read through nvidia-smi, i.e. NVML). Older torch (1.13, seen
on the CPU machine) calls it without the flags and always queries the
device. Either way no kernel runs in phase 1; whether the GPU is touched at
all depends on the torch there, so --hide-gpu-in-compile checks it on the
machine instead of trusting it: the compile runs with CUDA_VISIBLE_DEVICES="" (torch then sees
no GPU; nvidia-smi still does), so one that needed the GPU fails; when its
error is torch asking for the GPU (GPU_NEEDED_MARKS) it is run once more with
the GPU visible and status.json says so (compile.gpu_needed). That variable is the only difference from the CLI's
environment, and only for phase 1.

Output in --out: LABEL.traces.jsonl (the CLI's -o file), LABEL.log (the
commands, exit codes, seconds, the compile's and the evaluation's output),
status.json (per solution: compile and evaluation status, seconds, exit codes,
traces, passed/total, cli_exit; rewritten after every step, so a stopped run
leaves it). Exit 0 when every solution was evaluated (whatever its
workloads' status), 1 when one was not, 2 on bad usage.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

EVAL_ENV = {"PYTORCH_ALLOC_CONF": "expandable_segments:True"}   # cli/main.py, both subprocess.run calls
MARGIN_S = 15        # kept free before the deadline (writing the traces, the caller's own steps)
POLL_S = 0.5
# What a compile that wanted the hidden GPU prints (torch's _get_cuda_arch_flags
# asking the device for its architecture): only such a failure is run once more
# with the GPU visible; any other failure is the solution's own.
GPU_NEEDED_MARKS = ("_get_cuda_arch_flags", "get_device_capability", "No CUDA GPUs are available",
                    "Found no NVIDIA driver", "cudaGetDeviceCount", "device_count")


def now_s():
    return time.time()


class Status:
    """status.json, rewritten atomically on every change."""

    def __init__(self, out, items):
        self.path = os.path.join(out, "status.json")
        self.lock = threading.Lock()
        self.doc = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "phase": "setup",
                    "solutions": [{"label": lab, "problem": str(pd), "solution": str(sf),
                                   "compile": {"status": "pending"}, "evaluation": {"status": "pending"},
                                   "cli_exit": None} for pd, sf, lab in items]}
        self.write()

    def set(self, i, part, **kv):
        with self.lock:
            self.doc["solutions"][i][part].update(kv)
            self.write()

    def exit_code(self, i, code):
        with self.lock:
            self.doc["solutions"][i]["cli_exit"] = code
            self.write()

    def top(self, **kv):
        with self.lock:
            self.doc.update(kv)
            self.write()

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
        os.replace(tmp, self.path)


class Logs:
    """One log file per solution, appended to as its steps run."""

    def __init__(self, out):
        self.out = out

    def add(self, label, title, text):
        with open(os.path.join(self.out, label + ".log"), "a") as f:
            f.write("==== %s [%s]\n%s\n" % (title, time.strftime("%H:%M:%S"), text.rstrip("\n")))


def say(fmt, *args):
    sys.stderr.write("two_phase [%s]: %s\n" % (time.strftime("%H:%M:%S"), fmt % args if args else fmt))
    sys.stderr.flush()


def load_cli():
    """The official CLI module (its loaders) and the packager, from PYTHONPATH."""
    try:
        from sol_execbench.cli import main as cli_main
        from sol_execbench.driver import ProblemPackager
        from sol_execbench.core import EvaluationStatus
    except ImportError as e:
        raise SystemExit("two_phase: cannot import the official evaluator (%s): put its src/ on PYTHONPATH" % e)
    return cli_main, ProblemPackager, EvaluationStatus


def stage(cli_main, packager_cls, problem_dir, solution_file, keep):
    """Steps 1 and 2 of the CLI for one solution: the models and the packager."""
    def_path, wkl_path, cfg_path, _ = cli_main._resolve_problem_dir(Path(problem_dir))
    definition = cli_main._load_definition(def_path)
    workloads = cli_main._load_workloads(wkl_path)
    solution = cli_main._load_solution(Path(solution_file))
    config = cli_main._load_config(cfg_path)
    staging_dir = Path(tempfile.mkdtemp(prefix="sol_execbench_"))
    packager = packager_cls(definition=definition, workloads=workloads, solution=solution, config=config,
                            output_dir=staging_dir, keep_output_dir=keep)
    return packager, staging_dir, len(workloads)


def run_step(cmd, cwd, timeout, extra_env=None):
    """subprocess.run as the CLI calls it; (returncode or None on timeout, stdout, stderr, seconds)."""
    env = {**os.environ, **EVAL_ENV, **(extra_env or {})}
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, out, err, time.monotonic() - t0


def time_left(deadline):
    return deadline - now_s() if deadline else float("inf")


def compile_one(i, label, packager, staging_dir, a, st, logs):
    """Step 3 for one solution (hidden GPU first when asked; visible once more if that failed)."""
    cmd, _artifact = packager.compile()
    tries = [{"CUDA_VISIBLE_DEVICES": ""}] if a.hide_gpu_in_compile else []
    tries.append(None)
    for n, extra in enumerate(tries):
        left = time_left(a.deadline) - MARGIN_S
        if left < 30:
            st.set(i, "compile", status="skipped-budget", note="%.0f s left before the deadline" % max(left, 0))
            logs.add(label, "compile skipped", "only %.0f s left before the deadline" % max(left, 0))
            return False
        timeout = int(min(a.compile_timeout, left))
        hidden = extra is not None
        st.set(i, "compile", status="running", gpu_hidden=hidden, command=cmd, timeout_s=timeout)
        rc, out, err, secs = run_step(cmd, str(staging_dir), timeout, extra)
        logs.add(label, "compile: %s (cwd %s, timeout %d s%s): exit %s, %.1f s" % (
            " ".join(cmd), staging_dir, timeout, ", CUDA_VISIBLE_DEVICES=\"\"" if hidden else "",
            "timeout" if rc is None else rc, secs), "---- stdout\n%s\n---- stderr\n%s" % (out, err))
        if rc == 0:
            st.set(i, "compile", status="ok", rc=0, seconds=round(secs, 1), gpu_hidden=hidden,
                   gpu_needed=(n > 0 and a.hide_gpu_in_compile))
            say("%s: compiled in %.1f s%s", label, secs, " with the GPU hidden" if hidden else "")
            return True
        status = "timeout" if rc is None else "failed"
        st.set(i, "compile", status=status, rc=rc, seconds=round(secs, 1), gpu_hidden=hidden)
        again = hidden and rc is not None and any(m in err for m in GPU_NEEDED_MARKS)
        say("%s: compile %s after %.1f s%s", label, status, secs,
            " with the GPU hidden, asking for a GPU: once more with it visible" if again else "")
        if not again:
            return False
    return False


def phase1(items, staged, a, st, logs):
    """Every C++/CUDA solution's compile, concurrently."""
    st.top(phase="compile")
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for i, (_pd, _sf, label) in enumerate(items):
            packager, staging_dir, _n = staged[i]
            if packager is None:
                continue
            if not packager._is_cpp:
                st.set(i, "compile", status="not-needed", note="language %s: the CLI compiles nothing" %
                       ", ".join(x.value for x in packager.solution.spec.languages))
                continue
            jobs[i] = pool.submit(compile_one, i, label, packager, staging_dir, a, st, logs)
        ok = {i: f.result() for i, f in jobs.items()}
    return ok


def wait_for_go(a, st):
    if not a.go_file:
        return
    st.top(phase="waiting for the GPU (%s)" % a.go_file)
    say("compiles done; waiting for %s", a.go_file)
    while not os.path.exists(a.go_file):
        if time_left(a.deadline) < MARGIN_S:
            say("the deadline passed before %s appeared", a.go_file)
            return
        time.sleep(POLL_S)


def evaluate_one(i, label, packager, staging_dir, n_workloads, a, st, logs, statuses):
    """Steps 4-6 for one solution."""
    left = time_left(a.deadline) - MARGIN_S
    if left < a.min_eval_s:
        st.set(i, "evaluation", status="skipped-budget",
               note="%.0f s left before the deadline, an evaluation is given at least %d s" % (max(left, 0),
                                                                                               a.min_eval_s))
        say("%s: evaluation skipped: %.0f s left", label, max(left, 0))
        return False
    timeout = int(min(a.timeout, left))
    eval_cmd = packager.execute()
    st.set(i, "evaluation", status="running", command=eval_cmd, timeout_s=timeout)
    say("%s: evaluating (%d workloads, timeout %d s)", label, n_workloads, timeout)
    rc, out, err, secs = run_step(eval_cmd, str(staging_dir), timeout)
    logs.add(label, "evaluation: %s (cwd %s, timeout %d s): exit %s, %.1f s" % (
        " ".join(eval_cmd), staging_dir, timeout, "timeout" if rc is None else rc, secs),
        "---- stderr\n%s\n---- stdout lines that are not traces\n%s" % (
            err, "\n".join(x for x in out.splitlines() if not x.strip().startswith("{"))))
    if rc is None:
        st.set(i, "evaluation", status="timeout", seconds=round(secs, 1))
        st.exit_code(i, 1)
        say("%s: evaluation timed out after %.1f s", label, secs)
        return False
    if rc != 0 and not out.strip():
        st.set(i, "evaluation", status="failed", rc=rc, seconds=round(secs, 1), note="no output (the CLI: "
               "Evaluation failed)")
        st.exit_code(i, 1)
        return False
    traces = packager.convert_stdout_to_traces(out)
    if not traces:
        st.set(i, "evaluation", status="failed", rc=rc, seconds=round(secs, 1), note="no traces produced")
        st.exit_code(i, 1)
        return False
    path = os.path.join(a.out, label + ".traces.jsonl")
    with open(path, "w") as f:
        for t in traces:
            f.write(json.dumps(t.model_dump(mode="json")) + "\n")
    passed = sum(1 for t in traces if t.evaluation and t.evaluation.status == statuses.PASSED)
    st.set(i, "evaluation", status="ok", rc=rc, seconds=round(secs, 1), traces=os.path.basename(path),
           passed=passed, total=len(traces))
    st.exit_code(i, 0 if passed == len(traces) else 1)
    say("%s: %d/%d passed, %.1f s", label, passed, len(traces), secs)
    return True


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--item", nargs=3, action="append", metavar=("PROBLEM_DIR", "SOLUTION", "LABEL"),
                    required=True, help="a problem folder, a solution file and a label (file names)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4, help="compiles at once")
    ap.add_argument("--compile-timeout", type=int, default=600, help="the CLI's --compile-timeout (s)")
    ap.add_argument("--timeout", type=int, default=540, help="the CLI's --timeout (s), per evaluation")
    ap.add_argument("--deadline", type=float, default=0, help="epoch seconds: nothing starts that cannot end "
                    "before it (timeouts are cut to it; a step without time left is skipped, saying so)")
    ap.add_argument("--min-eval-s", type=int, default=45, help="an evaluation starts only with this much left")
    ap.add_argument("--go-file", help="evaluate once this file exists (the caller's GPU work is done)")
    ap.add_argument("--hide-gpu-in-compile", action="store_true",
                    help="compile with CUDA_VISIBLE_DEVICES=\"\" (checks that no compile touches the GPU)")
    ap.add_argument("--keep-staging", action="store_true", help="the CLI's --keep-staging")
    ap.add_argument("--validate-only", action="store_true",
                    help="load each problem and solution with the CLI's loaders, print one line each, stop")
    a = ap.parse_args(argv)
    labels = [x[2] for x in a.item]
    bad = [lab for lab in labels if not lab or "/" in lab or lab.startswith(".")]
    if bad or len(set(labels)) != len(labels):
        ap.error("labels must be distinct file names: %s" % labels)
    return a


def validate(cli_main, items):
    """Step 1 alone for every solution, with one line each (as run.sh's validate()); 0 when all are valid."""
    bad = 0
    for pd, sf, label in items:
        try:
            def_path, wkl_path, _cfg, _ = cli_main._resolve_problem_dir(pd)
            d = cli_main._load_definition(def_path)
            w = cli_main._load_workloads(wkl_path)
            s = cli_main._load_solution(sf)
            if s.definition != d.name:
                raise ValueError("the solution is for %s, the problem is %s" % (s.definition, d.name))
            print("valid: %s: %s, %d workloads, solution %s (%s, target %s, entry %s, DPS %s, hash %s)" % (
                label, d.name, len(w), s.name, ", ".join(x.value for x in s.spec.languages),
                ", ".join(str(getattr(h, "value", h)) for h in s.spec.target_hardware), s.spec.entry_point,
                s.spec.destination_passing_style, s.hash()[:12]))
        except Exception as e:  # one line per invalid input, the others still checked
            bad += 1
            print("INVALID: %s: %s: %s" % (label, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    return 1 if bad else 0


def main(argv):
    a = parse(argv)
    os.makedirs(a.out, exist_ok=True)
    cli_main, packager_cls, statuses = load_cli()
    items = [(Path(pd), Path(sf), lab) for pd, sf, lab in a.item]
    if a.validate_only:
        return validate(cli_main, items)
    st, logs = Status(a.out, items), Logs(a.out)
    staged = []
    for i, (pd, sf, label) in enumerate(items):
        try:
            staged.append(stage(cli_main, packager_cls, pd, sf, a.keep_staging))
            st.set(i, "compile", staging=str(staged[-1][1]))
        except Exception as e:  # the CLI would stop with this error: recorded, the others go on
            staged.append((None, None, 0))
            st.set(i, "compile", status="invalid", note="%s: %s" % (type(e).__name__, str(e).splitlines()[0]
                                                                    if str(e) else ""))
            st.exit_code(i, 1)
            logs.add(label, "loading the files failed", "%s: %s" % (type(e).__name__, e))
    t0 = time.monotonic()
    compiled = phase1(items, staged, a, st, logs)
    st.top(compile_phase_s=round(time.monotonic() - t0, 1))
    wait_for_go(a, st)
    st.top(phase="evaluate")
    evaluated = 0
    for i, (_pd, _sf, label) in enumerate(items):
        packager, staging_dir, n = staged[i]
        if packager is None:
            continue
        if packager._is_cpp and not compiled.get(i):
            st.set(i, "evaluation", status="not-run", note="the compile did not succeed (the CLI exits 1 there)")
            st.exit_code(i, 1)
            continue
        evaluated += evaluate_one(i, label, packager, staging_dir, n, a, st, logs, statuses)
    st.top(phase="done", finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    del staged   # the packagers remove their staging folders (unless --keep-staging), as in the CLI
    return 0 if evaluated == len(items) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
