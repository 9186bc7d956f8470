#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the traces.jsonl fixtures of `ropegrad runs import` with the official
evaluator's own code: its pydantic models (sol_execbench/core/data: Trace,
Evaluation, Environment, Correctness, Performance, Workload) and the line its
CLI writes for `-o FILE` (cli/main.py: json.dumps(t.model_dump(mode="json"))).

    python3 tests/data/official-traces/make_traces.py ../shared/official-evaluator/sol-execbench/src

The workloads are read from suites/sol-execbench-014/workload.jsonl with the
evaluator's Workload model, as its CLI does. The latencies are SYNTHETIC test
data (bytes at 3.2 TB/s plus 2 us; the reference 10x slower), not
measurements: these files test the reader and the import, nothing else. The
timestamps are fixed, in the evaluator's format (datetime.isoformat(), no offset).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "official-evaluator",
                                                                         "sol-execbench", "src"))
from sol_execbench.core.data import (Correctness, Environment, Evaluation, EvaluationStatus,  # noqa: E402
                                     Performance, Trace, Workload)

DEFINITION = "014_rotary_embedding_with_attention_scaling_backward"
SOLUTION = "ropegrad-014-cuda"
LIBS = {"torch": "2.9.1+cu130", "cuda": "13.0"}


def workloads():
    with open(os.path.join(ROOT, "suites", "sol-execbench-014", "workload.jsonl")) as f:
        return [Workload.model_validate_json(line) for line in f if line.strip()]


def synthetic_ms(w):
    b, s, d = w.axes["batch_size"], w.axes["seq_len"], 128
    nbytes = b * s * (2 * d * 2 + d / 2 * 4 + 4) + b * (d / 2) * 4
    return nbytes / 3.2e12 * 1e3 + 0.002


def trace(w, i, hardware, status):
    env = Environment(hardware=hardware, libs=LIBS)
    stamp = "2026-12-01T14:%02d:%02d.%06d" % (10 + i // 60, i % 60, 123456 + i)
    ms = synthetic_ms(w)
    if status == EvaluationStatus.PASSED:
        ev = Evaluation(status=status, environment=env, timestamp=stamp, log="",
                        correctness=Correctness(max_relative_error=3.1e-6, max_absolute_error=2.4e-7),
                        performance=Performance(latency_ms=ms, reference_latency_ms=10 * ms, speedup_factor=10 * ms / ms))
    elif status == EvaluationStatus.INCORRECT_NUMERICAL:
        ev = Evaluation(status=status, environment=env, timestamp=stamp, log="",
                        correctness=Correctness(max_relative_error=0.52, max_absolute_error=0.031))
    else:
        ev = Evaluation(status=status, environment=env, timestamp=stamp,
                        log="Reward hack detected: output is a view of an input tensor")
    return Trace(definition=DEFINITION, solution=SOLUTION, workload=w, evaluation=ev)


def write(name, hardware, odd=None):
    odd = odd or {}
    with open(os.path.join(HERE, name), "w") as f:
        for i, w in enumerate(workloads()):
            t = trace(w, i, hardware, odd.get(i, EvaluationStatus.PASSED))
            f.write(json.dumps(t.model_dump(mode="json")) + "\n")


write("traces-014-h200-passed.jsonl", "NVIDIA H200")
write("traces-014-b200-passed.jsonl", "NVIDIA B200")
write("traces-014-h200-failed.jsonl", "NVIDIA H200",
      {3: EvaluationStatus.INCORRECT_NUMERICAL, 7: EvaluationStatus.REWARD_HACK})
