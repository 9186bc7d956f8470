#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The committed agreement table (agreement.md, agreement.json) from the two device calls of
# scripts/device-official.sh kept here: call-b (PROBLEMS="011 012 014") for 011, 012 and 014's
# ropegrad rows, call-a (the call before it, PROBLEMS="014 011 012") for the 014 peer row, whose
# both sides call-b's time budget did not admit. runs.db: call-b's registry plus call-a's 014 peer
# runs (`ropegrad runs import` of its manifest and of the official traces).
#   bash bench/results/official/agreement.sh
set -euo pipefail
cd "$(dirname "$0")"
A=call-a B=call-b
python3 ../../agreement_table.py \
  --native 011 $B/011-ropegrad.json --pair 011 ropegrad $B/official/011-ropegrad.traces.jsonl $B/011-ropegrad-solution.json \
  --pair 011 peer $B/official/011-peer.traces.jsonl $B/011-peer.json \
  --native 012 $B/012-ropegrad.json --pair 012 ropegrad $B/official/012-ropegrad.traces.jsonl $B/012-ropegrad-solution.json \
  --pair 012 peer $B/official/012-peer.traces.jsonl $B/012-peer.json \
  --native 014 $B/014-ropegrad.json --pair 014 ropegrad $B/official/014-ropegrad.traces.jsonl $B/014-ropegrad-solution.json \
  --pair 014 peer $A/official/014-peer.traces.jsonl $A/014-peer.json \
  --status $A/official/status-20261202T053258Z.json --status $B/official/status-20261202T054056Z.json --overlap \
  --meta "gpu=NVIDIA H200" --meta "torch=2.11.0+cu130" --meta "official timer=cupti" --meta "stand-ins=pydantic cupti" \
  --meta "ropegrad=the harness after the parity merge (the official protocol by default: 10 rounds, restage on, span all, sync iteration)" \
  --meta "calls=call-b: the 011, 012 and 014 ropegrad rows and the 011, 012 peer rows; call-a (the call before): the 014 peer row" \
  --out-md agreement.md --out-json agreement.json
