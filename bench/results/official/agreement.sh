#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The committed agreement table (agreement.md, agreement.json) from the device calls of
# scripts/device-official.sh kept here, each row from the latest call that measured both sides:
#   call-b (PROBLEMS="011 012 014"): 011 peer, 012 ropegrad and peer, 014 ropegrad;
#   call-d (PAIRS="011:ropegrad 014:peer" SHARE_AUTOTUNE=1 SWITCHED="011:ropegrad-solution"
#           SWITCH_ARGS="--tensors in-call"): 011 ropegrad (the Python driver's timed calls staged,
#           and again with --tensors in-call), 014 peer (both sides timing the Triton configs the
#           first one's autotuning chose);
#   the settle call (bench/results/parity/settle/, scripts/device-parity.sh STEPS=probe): 011's C
#           path with --settle off and on and the Python driver's probe beside the 011 ropegrad row;
#   call-a and call-c (014 peer, each process its own autotuning: call-a while the official
#           compiles ran, call-c alone on the machine) beside the 014 peer row (--also).
# runs.db: the registry of these calls (call-b's plus call-a's 014 peer runs, then call-c, call-d
# and call-e, the 011/012 field, each starting from the one before: KEEP_FROM).
#   bash bench/results/official/agreement.sh
set -euo pipefail
cd "$(dirname "$0")"
A=call-a B=call-b C=call-c D=call-d
python3 ../../agreement_table.py \
  --native 011 $D/011-ropegrad.json --pair 011 ropegrad $D/official/011-ropegrad.traces.jsonl $D/011-ropegrad-solution.json \
  --also 011 ropegrad ropegrad $D/011-ropegrad-solution-switched.json "ropegrad with --tensors in-call (tensors made inside the timed call)" \
  --also 011 ropegrad ropegrad $B/011-ropegrad-solution.json "call-b: ropegrad before the staged calls (tensors made inside the call)" \
  --also 011 ropegrad ropegrad ../parity/settle/bench-011-parity.json "settle call: ropegrad bench, the C path, --settle off (its call queued behind the flush)" \
  --also 011 ropegrad ropegrad ../parity/settle/bench-011-settle.json "settle call: ropegrad bench, the C path, --settle on (its call after the flush has finished)" \
  --also 011 ropegrad ropegrad ../parity/settle/bench-011-probe-into.json "settle call: the same library kernel through the Python driver, --settle off" \
  --pair 011 peer $B/official/011-peer.traces.jsonl $B/011-peer.json \
  --native 012 $B/012-ropegrad.json --pair 012 ropegrad $B/official/012-ropegrad.traces.jsonl $B/012-ropegrad-solution.json \
  --pair 012 peer $B/official/012-peer.traces.jsonl $B/012-peer.json \
  --native 014 $B/014-ropegrad.json --pair 014 ropegrad $B/official/014-ropegrad.traces.jsonl $B/014-ropegrad-solution.json \
  --pair 014 peer $D/official/014-peer.traces.jsonl $D/014-peer.json \
  --also 014 peer official $A/official/014-peer.traces.jsonl "call-a: the official evaluator, its own autotuning" \
  --also 014 peer official $C/official/014-peer.traces.jsonl "call-c: the official evaluator, its own autotuning" \
  --also 014 peer ropegrad $A/014-peer.json "call-a: ropegrad, its own autotuning, while the official compiles ran" \
  --also 014 peer ropegrad $C/014-peer.json "call-c: ropegrad, its own autotuning, alone on the machine" \
  --status $A/official/status-20261202T053258Z.json --status $B/official/status-20261202T054056Z.json \
  --status $C/official/status-20261202T074618Z.json --status "$(ls $D/official/status-*.json)" \
  --meta "gpu=NVIDIA H200" --meta "torch=2.11.0+cu130" --meta "official timer=cupti" --meta "stand-ins=pydantic cupti" \
  --meta "ropegrad=the harness after the parity merge (the official protocol by default: 10 rounds, restage on, span all, sync iteration)" \
  --meta "calls=call-d: the 011 ropegrad and 014 peer rows (Triton autotune shared by both sides); call-b: the others" \
  --out-md agreement.md --out-json agreement.json
