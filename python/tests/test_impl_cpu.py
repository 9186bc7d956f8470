# SPDX-License-Identifier: Apache-2.0
"""python3 -m ropegrad bench|check with Python implementations, end to end on
the CPU backend (the C harness through build/libropegrad_cli.so):

  a module's function returning its output; the same in destination-passing
  style (--dps); a SOL-ExecBench solution of language pytorch, both styles;
  an exception in the callable and a wrong shape returned (each: the workload
  fails with one line, exit 1); the reference as a recorded run named
  "reference (torch eager)" (and "reference (torch.compile)" where torch >= 2);
  the implementation digest changing with one byte of the source; a returned
  output that is an input or a view of it (REWARD_HACK, exit 1); refusals
  (another op's solution, a GPU-only solution on the CPU) as one line, exit 2;
  a solution that calls sys.exit(0) while it is imported, and a function
  that calls os._exit(0) inside a call (each after printing a results line
  of its own): the supervised worker's one line, exit 1, nothing of theirs on
  stdout, a failed run in the registry; a solution that sleeps while it is
  imported: killed after --timeout (its clock restarted once torch is imported);
  --verbose's progress lines (stderr only) and --build-only (nothing measured).

Run with a Python that has torch; ROPEGRAD_LIB points at the build's
libropegrad.so (libropegrad_cli.so is found beside it). ROPEGRAD_IMPL_BACKEND=cuda
runs the same cases on a GPU (the device script's peers step). Exit 0 when
every case passes, 1 otherwise.
"""

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.join(REPO, "suites", "014-rope_backward")
OP = "014_rotary_embedding_with_attention_scaling_backward"

FORMULA = '''import torch


def grad(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling):
    h = emb.shape[-1] // 2
    gc, gs, e = grad_cos.float(), grad_sin.float(), emb[..., :h]
    ge = ((gc[..., :h] + gc[..., h:]) * -e.sin() + (gs[..., :h] + gs[..., h:]) * e.cos()) * attention_scaling
    return (inv_freq_expanded.transpose(-2, -1) @ ge.transpose(1, 2)).squeeze(1)


def run(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling):
    return grad(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling)


def run_dps(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling, grad_position_ids):
    grad_position_ids.copy_(grad(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling))


def nothing(*args):
    pass


def boom(*args):
    raise RuntimeError("kaboom\\nthis second line stays out of the record")


def wrong_shape(grad_cos, *args):
    return torch.zeros(grad_cos.shape[0], grad_cos.shape[1] + 1)


def view_of_input(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling):
    return emb[..., 0]


def answer_in_input(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling):
    emb[..., 0].copy_(grad(grad_cos, grad_sin, emb, inv_freq_expanded, attention_scaling))
    return emb[..., 0]
'''

failures = []
BACKEND = os.environ.get("ROPEGRAD_IMPL_BACKEND", "cpu")


def harness(args, tmp):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.run([sys.executable, "-m", "ropegrad"] + args + ["--backend", BACKEND, "--workloads", "0-1",
                                                                    "--quiet"],
                       cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout, p.stderr


def expect(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + detail) if not cond and detail else ""))
    if not cond:
        failures.append(name)


def solution(tmp, name, entry, dps, definition=OP, languages=("pytorch",)):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump({"name": name, "definition": definition, "author": "tester (ropegrad tests)",
                   "spec": {"languages": list(languages), "target_hardware": ["LOCAL"], "entry_point": entry,
                            "dependencies": ["torch"], "destination_passing_style": dps},
                   "sources": [{"path": entry.split("::")[0], "content": FORMULA}]}, f)
    return path


def manifest_impl(path):
    with open(path) as f:
        m = json.load(f)
    for item in m.get("items", [m]) if isinstance(m, dict) else m:
        found = _find(item, "implementationDigest")
        if found:
            return found
    return _find(m, "implementationDigest")


def _find(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        for v in o.values():
            r = _find(v, key)
            if r:
                return r
    elif isinstance(o, list):
        for v in o:
            r = _find(v, key)
            if r:
                return r
    return None


def main():
    import torch
    tmp = tempfile.mkdtemp(prefix="rg-impl-test-")
    try:
        mod = os.path.join(tmp, "mine.py")
        with open(mod, "w") as f:
            f.write(FORMULA)
        rc, out, err = harness(["check", "--impl", mod + ":run"], tmp)
        expect("module function, return style: passes", rc == 0 and "passed 2/2" in out, err + out)
        expect("module function: named mine.run", "mine.run py-" in out, out)
        rc, out, err = harness(["check", "--impl", mod + ":run", "--verbose"], tmp)
        expect("--verbose: progress lines with elapsed seconds on stderr, the table unchanged on stdout",
               rc == 0 and "passed 2/2" in out and "ropegrad [+" in err and "first call" in err and
               "the C harness finished (exit 0): 2 shapes" in err and "ropegrad [+" not in out, err + out)
        rc, out, err = harness(["bench", "--impl", mod + ":run", "--build-only"], tmp)
        expect("--build-only: loaded, nothing measured, exit 0",
               rc == 0 and "not measured (--build-only)" in out and "passed" not in out, err + out)
        # When a timed CUDA call's tensors are made (impl.py, stage_cuda): recorded in the manifest.
        for when in ("before-flush", "in-call"):
            man = os.path.join(tmp, "tensors-%s.json" % when)
            args = ["check", "--impl", mod + ":run", "--manifest", man] + (["--tensors", when] if when == "in-call" else [])
            rc, out, err = harness(args, tmp)
            with open(man) as f:
                got = _find(json.load(f), "tensors") if rc == 0 else None
            want = when
            expect("--tensors %s: passes, recorded in the manifest as %s" % (when, want), rc == 0 and got == want,
                   "%r %s" % (got, err + out))
        rc, out, err = harness(["check", "--impl", mod + ":run", "--tensors", "sometimes"], tmp)
        expect("--tensors sometimes: one line, exit 2", rc == 2 and "--tensors sometimes: one of before-flush, in-call"
               in err and len(err.strip().splitlines()) == 1, err)
        # dev/official/output_probe.py (scripts/gpu-parity.sh's probe step): both styles pass.
        probe = os.path.join(REPO, "dev", "official", "output_probe.py")
        suite011 = os.path.join(REPO, "suites", "011-rope_forward")
        for fn, extra in (("returning", []), ("into", ["--dps"])):
            rc, out, err = harness(["check", "--impl", probe + ":" + fn, "--suite", suite011] + extra, tmp)
            expect("output_probe.%s on 011: passes" % fn, rc == 0 and "passed 2/2" in out, err + out)
        # --settle, a harness option, passes through the driver (the probe step's --settle on run): on CUDA
        # recorded, on the CPU accepted and ignored (no GPU flush to wait for); a bad word: the harness's line.
        settled = os.path.join(tmp, "settle.json")
        rc, out, err = harness(["bench", "--impl", probe + ":into", "--dps", "--suite", suite011, "--iterations", "2",
                                "--warmup", "0", "--rounds", "1", "--settle", "on", "--json", settled], tmp)
        with open(settled) if rc == 0 else io.StringIO("{}") as f:
            rec = json.load(f).get("settle")
        expect("output_probe.into --dps --settle on: passes (%s: settle %s)" % (BACKEND, rec),
               rc == 0 and "passed 2/2" in out and rec == ("on" if BACKEND == "cuda" else None), err + out)
        rc, out, err = harness(["bench", "--impl", probe + ":into", "--dps", "--suite", suite011, "--settle", "maybe"],
                               tmp)
        expect("--settle maybe: the harness's one line, exit 2", rc == 2 and "--settle: unknown 'maybe'" in err, err)
        rc, out, err = harness(["check", "--impl", mod + ":run_dps", "--dps"], tmp)
        expect("module function, --dps: passes", rc == 0 and "passed 2/2" in out, err + out)
        rc, out, err = harness(["check", "--impl", mod + ":run_dps"], tmp)
        expect("a DPS function called return-style fails its workloads with the TypeError",
               rc == 1 and "TypeError: run_dps() missing 1 required positional argument" in out, err + out)
        rc, out, err = harness(["check", "--impl", mod + ":nothing"], tmp)
        expect("returning nothing fails its workloads", rc == 1 and "returned NoneType" in out, err + out)
        rc, out, err = harness(["check", "--impl", mod + ":boom"], tmp)
        expect("an exception fails the workload with its one line",
               rc == 1 and "RuntimeError: kaboom" in out and "second line" not in out + err, err + out)
        rc, out, err = harness(["check", "--impl", mod + ":wrong_shape"], tmp)
        expect("a wrong shape returned fails the workload with one line",
               rc == 1 and "output grad_position_ids has shape [32, 257], the definition's is [32, 256]" in out,
               err + out)
        for fn in ("view_of_input", "answer_in_input"):
            rc, out, err = harness(["check", "--impl", mod + ":" + fn], tmp)
            expect("%s: REWARD_HACK, the output is (a view of) an input" % fn,
                   rc == 1 and "REWARD_HACK: round 0: output grad_position_ids is its input emb or a view of it" in out
                   and "passed 0/2" in out, err + out)
        for dps, entry in ((False, "kernel.py::run"), (True, "kernel.py::run_dps")):
            sol = solution(tmp, "sol_dps_%d" % dps, entry, dps)
            rc, out, err = harness(["check", "--solution", sol], tmp)
            expect("pytorch solution, destination_passing_style %s: passes" % dps,
                   rc == 0 and "passed 2/2" in out and "sol_dps_%d by tester" % dps in out, err + out)
        sol = solution(tmp, "other_op", "kernel.py::run", False, definition="011_rotary_position_embedding")
        rc, out, err = harness(["check", "--solution", sol], tmp)
        expect("another op's solution: one line, exit 2", rc == 2 and "it solves" in err and
               len(err.strip().splitlines()) == 1, err)
        sol = solution(tmp, "gpu_only", "kernel.cu::run", False, languages=("cuda_cpp",))
        rc, out, err = harness(["check", "--solution", sol], tmp)
        if BACKEND == "cpu":
            # Refused as GPU-only, or sooner, where the CUDA toolkit is missing too.
            expect("a cuda_cpp solution on the CPU: one line, exit 2", rc == 2 and len(err.strip().splitlines()) == 1
                   and ("GPU only" in err or "the CUDA toolkit" in err), err)

        # The supervised worker: an implementation that ends its process is a failed run, never a pass.
        db = os.path.join(tmp, "failed.db")
        exits = os.path.join(tmp, "exits.json")
        with open(exits, "w") as f:
            json.dump({"name": "exits", "definition": OP, "author": "tester",
                       "spec": {"languages": ["pytorch"], "target_hardware": ["LOCAL"], "entry_point": "k.py::run",
                                "dependencies": ["torch"], "destination_passing_style": False},
                       "sources": [{"path": "k.py", "content": "import sys\nprint('passed 2/2')\nsys.exit(0)\n"}]}, f)
        quitter = os.path.join(tmp, "quitter.py")
        with open(quitter, "w") as f:
            f.write("import os\n\ndef run(*args):\n    print('passed 2/2', flush=True)\n    os._exit(0)\n")
        for i, (what, args) in enumerate((("sys.exit(0) while the solution is imported", ["--solution", exits]),
                                          ("os._exit(0) inside a call", ["--impl", quitter + ":run"]))):
            rc, out, err = harness(["check"] + args + ["--record", "--db", db], tmp)
            ours = [line for line in err.splitlines() if line.startswith("ropegrad check:")]
            expect("%s: one line, exit 1, nothing of its own on stdout" % what,
                   rc == 1 and len(ours) == 1 and "before it sent a result" in ours[0] and "passed" not in out
                   and "recorded as run %d" % (i + 1) in out, err + out)
        sleeper = os.path.join(tmp, "sleeper.json")
        with open(sleeper, "w") as f:
            json.dump({"name": "sleeper", "definition": OP, "author": "tester",
                       "spec": {"languages": ["pytorch"], "target_hardware": ["LOCAL"], "entry_point": "k.py::run",
                                "dependencies": ["torch"]},
                       "sources": [{"path": "k.py", "content": "import time\ntime.sleep(600)\n"}]}, f)
        rc, out, err = harness(["check", "--solution", sleeper, "--timeout", "5"], tmp)
        ours = [line for line in err.splitlines() if line.startswith("ropegrad check:")]
        expect("a solution that sleeps while it is imported: killed after --timeout, one line, exit 1",
               rc == 1 and len(ours) == 1 and "did not finish loading within 5 s" in ours[0], err + out)
        con = sqlite3.connect(db)
        passed = [r[0] for r in con.execute("SELECT passed FROM runs ORDER BY id")]
        con.close()
        expect("both recorded as failed runs (nothing passed)", passed == [0, 0], repr(passed))

        # The implementation digest covers the source bytes.
        digests = []
        for i, body in enumerate((FORMULA, FORMULA + "\n# one more line\n")):
            with open(mod, "w") as f:
                f.write(body)
            man = os.path.join(tmp, "m%d.json" % i)
            rc, out, err = harness(["check", "--impl", mod + ":run", "--manifest", man], tmp)
            digests.append(manifest_impl(man) if rc == 0 else None)
        expect("the implementation digest follows the source bytes",
               None not in digests and digests[0] != digests[1], repr(digests))

        # Baselines are runs, in the registry beside the others.
        db = os.path.join(tmp, "runs.db")
        kinds = ["reference"] + (["reference-compile"] if hasattr(torch, "compile") else [])
        for kind in kinds:
            rc, out, err = harness(["bench", "--impl", kind, "--iterations", "3", "--warmup", "1", "--record",
                                    "--db", db], tmp)
            expect("--impl %s: recorded" % kind, rc == 0 and "recorded as run" in out, err + out)
        rc, out, err = harness(["bench", "--iterations", "3", "--warmup", "1", "--record", "--db", db], tmp)
        expect("ropegrad's own kernel through the same driver: recorded", rc == 0, err + out)
        con = sqlite3.connect(db)
        names = [r[0] for r in con.execute("SELECT kernel_name FROM runs ORDER BY id")]
        keys = {r[0] for r in con.execute("SELECT comparison_key FROM runs")}
        con.close()
        want = ["reference (torch eager) torch ", "reference (torch.compile) torch "][:len(kinds)] + \
            ["cpu-" if BACKEND == "cpu" else ""]
        expect("the runs are named %s" % want,
               len(names) == len(want) and all(n.startswith(w) for n, w in zip(names, want)), repr(names))
        expect("all in one comparison group", len(keys) == 1, repr(keys))
        if not hasattr(torch, "compile"):
            print("note: torch %s has no torch.compile: reference-compile not tried here" % torch.__version__)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
