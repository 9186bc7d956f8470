#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with a GPU: ropegrad's harness against NVIDIA's official SOL-ExecBench evaluator,
# every op, side by side in one run, and where a difference comes from.
#   bash scripts/gpu-build.sh && bash scripts/gpu-official.sh --prepare
#   bash scripts/gpu-agreement.sh
# 1. scripts/gpu-official.sh STEPS=agreement: the official evaluator and ropegrad's harness
#    (`python3 -m ropegrad bench --solution`) on the same solution files: ropegrad's exported
#    solution for each op of the evaluator's problem set (011 012 014); for an op outside it, the
#    definition's reference code as the official scripts make it (tools/make_reference_solution.py)
#    on a problem folder made from its suite, where the definition has reference code (the bundled
#    088 and 068 have none: skipped.txt says so). `ropegrad bench` (the C path, libropegrad's
#    kernel) is measured beside ropegrad's own solutions.
# 2. The C path again, per op, with --settle on (the default: the call starts after the cold-L2
#    flush has finished) and --settle off (the call queued right behind the flush), ROUNDS times
#    (correctness: one round; the timing is the protocol's), with the flush gap each run records
#    (flush_gap_us: the GPU's idle time between the flush and the call).
# CPATH_PROBLEMS: the ops of step 2 (default PROBLEMS).
# $OUT (default results/official/agreement-new): official/ (gpu-official.sh's results), cpath/
# (step 2's JSON results) and agreement-summary.md (scripts/figures/agreement_summary.py), which
# is printed last.
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-results/official/agreement-new}
B=${BUILD:-build-gpu}
ROUNDS=${ROUNDS:-1}
PROBLEMS=${PROBLEMS:-"011 012 014 088 068"}
EV=dev/official-work/official-evaluator
[ -d "$EV/problems" ] || { echo "gpu-agreement: run bash scripts/gpu-official.sh --prepare first"; exit 2; }
mkdir -p "$OUT/official" "$OUT/cpath"
PAIRS=""
for p in $PROBLEMS; do
  suite=$(echo suites/"$p"-*)
  if [ -f "$EV/problems/$p/definition.json" ]; then
    PAIRS="$PAIRS $p:ropegrad"
    continue
  fi
  # The official evaluator's ground truth is the definition's reference code: a definition without
  # it (the bundled 088 and 068 carry none) cannot be evaluated there.
  if ! python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get('reference') else 1)" \
      "$suite/definition.json"; then
    echo "$p: not under the official evaluator: $suite/definition.json has no reference code" | tee -a "$OUT/skipped.txt"
    continue
  fi
  mkdir -p "$EV/problems/$p"
  cp "$suite/definition.json" "$suite/workload.jsonl" "$EV/problems/$p/"
  python3 "$EV/tools/make_reference_solution.py" "$EV/problems/$p/definition.json" \
    > "dev/official-work/$p-saved-reference.json" && PAIRS="$PAIRS $p:saved-reference"
done
OUT=$OUT/official BUDGET_S=${BUDGET_S:-420} PROBLEMS="$PROBLEMS" SOLUTIONS="ropegrad saved-reference" \
  PAIRS="$PAIRS" STEPS=agreement EST_PY_RG_S=${EST_PY_RG_S:-60} EST_PY_OFFICIAL_S=${EST_PY_OFFICIAL_S:-60} \
  bash scripts/gpu-official.sh > "$OUT/official-stdout.txt" 2>&1
echo "gpu-official.sh: exit $?" | tee -a "$OUT/official-stdout.txt"
tail -n 14 "$OUT/official-stdout.txt"
export LD_LIBRARY_PATH=$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for r in $(seq 1 "$ROUNDS"); do
  for p in ${CPATH_PROBLEMS:-$PROBLEMS}; do
    suite=$(echo suites/"$p"-*)
    for settle in on off; do
      "$B/ropegrad" bench --suite "$suite" --backend cuda --settle "$settle" --rounds 1 --quiet \
        --json "$OUT/cpath/$p-settle-$settle-r$r.json" > /dev/null 2>> "$OUT/cpath/errors.txt" ||
        echo "C path $p --settle $settle round $r: exit $?" | tee -a "$OUT/cpath/errors.txt"
    done
  done
done
python3 scripts/figures/agreement_summary.py "$OUT" > "$OUT/agreement-summary.md"
cat "$OUT/agreement-summary.md"
