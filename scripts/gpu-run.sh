#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with a GPU: 014's development loop and its record run: GPU tests,
# the suite on the CUDA backend (JSON + manifest + registry), the suite on
# real-position inputs, the Python/torch checks, compute-sanitizer, the floor
# probe (dev/common/probe.cu), the development kernels side by side
# (dev/rope_backward/dev_kernels.cu) and their SASS; a short table last. Builds
# with scripts/gpu-build.sh unless BUILD names a finished build.
#
#   bash scripts/gpu-run.sh
#   STEPS="tests bench" bash scripts/gpu-run.sh                       # a subset
#   STEPS="gputest probe dev" DEV_KERNELS="3 10" bash scripts/gpu-run.sh   # kernel work
#
# The result files go to $OUT (default results/), every log to a fresh folder under /tmp.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-results}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
W=$(mktemp -d /tmp/rg-work.XXXXXX)
mkdir -p "$OUT"
STEPS=${STEPS:-"tests bench positions python sanitize probe"}
B=${BUILD:-build-gpu}
if [ -z "${BUILD:-}" ] || [ ! -x "$B/ropegrad" ]; then BUILD=$B bash scripts/gpu-build.sh || exit 2; fi
# $B/lib: the libraries a bundled build carries (ROPEGRAD_BUNDLE_RUNTIME), for ropegrad and the tests only.
RG_LIBS="$ROOT/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rgx() { LD_LIBRARY_PATH="$RG_LIBS" "$ROOT/$B/ropegrad" "$@"; }
export PYTHONUNBUFFERED=1 ROPEGRAD_LIB="$ROOT/$B/libropegrad.so" PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
declare -A status
log() { echo "== $*"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$W/gpu.txt"

if [[ " $STEPS " == *" tests "* ]]; then
  log "ctest (all tests; GPU tests run here)"
  (LD_LIBRARY_PATH="$RG_LIBS" ctest --test-dir "$B" --output-on-failure -j8 2>&1) | tee "$W/ctest.txt"
  status[tests]=$(tail -n 30 "$W/ctest.txt" | grep -E "tests passed" | tail -1)
fi

if [[ " $STEPS " == *" tests "* || " $STEPS " == *" gputest "* ]]; then
  log "test_gpu_kernel (its own output, for the record: case counts, real-position errors)"
  "$B/tests/test_gpu_kernel" > "$W/test_gpu_kernel.txt" 2>&1
  status[test_gpu_kernel]="exit $?: $(grep -E 'PASSED|FAILED' "$W/test_gpu_kernel.txt" | tr '\n' ' ')"
  grep -E "real positions|FAIL|large arg" "$W/test_gpu_kernel.txt" | tail -n 40
fi

if [[ " $STEPS " == *" probe "* ]]; then
  log "dev/common/probe.cu: floors and sin/cos accuracy"
  { "$B/dev/probe" floor && "$B/dev/probe" sincos; } > "$W/probe.txt" 2>&1
  status[probe]="exit $?"
  cat "$W/probe.txt"
fi

if [[ " $STEPS " == *" dev "* ]]; then
  log "dev/rope_backward/dev_kernels.cu ${DEV_KERNELS:-3 6 10 11}"
  "$B/dev/dev_kernels" ${DEV_KERNELS:-3 6 10 11} > "$W/dev_kernels.txt" 2>&1
  status[dev_kernels]="exit $?"
  cat "$W/dev_kernels.txt"
  for v in "$B"/dev/dev_kernels-*; do   # knob variants (scripts/gpu-build.sh DEV_VARIANTS)
    [ -x "$v" ] || continue
    echo "-- variant ${v##*/dev_kernels-}" | tee -a "$W/dev_kernels.txt"
    "$v" ${DEV_KERNELS:-3 6 10 11} 2>&1 | tee -a "$W/dev_kernels.txt" | grep -E "^(geomean|0 |2 |8 |12 |14 )"
  done
fi

if [[ " $STEPS " == *" sass "* ]]; then
  # Instruction mix of the hot kernels (cuobjdump).
  log "SASS of ${SASS_FUNS:=_Z9rg_k14_2dILi2ELi16ELi0EEv30ropegrad_rope_backward_problem _Z9rg_k12_2dILi2ELi8ELi0EEv30ropegrad_rope_backward_problem}"
  for f in $SASS_FUNS; do
    cuobjdump -sass -arch sm_90 -fun "$f" "$B/libropegrad.so" > "$W/sass-$f.txt" 2>&1
    echo "$f: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$W/sass-$f.txt") instructions"
    grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_]+' "$W/sass-$f.txt" | awk '{print $NF}' | sort | uniq -c | sort -rn | head -14 | tr '\n' ' '; echo
  done
fi

if [[ " $STEPS " == *" bench "* ]]; then
  # T_b first: the PyTorch eager reference measured on this device in this
  # run (bench/vs_torch.py), given to the bench as its baseline so the
  # manifest carries SOL score, avg_speedup and fast_1_count/fast_1_total.
  log "PyTorch eager reference (bench/vs_torch.py --baseline-out)"
  BASE="$W/h200-torch-eager.baseline.json"
  rm -f "$BASE"
  python3 bench/vs_torch.py --no-compile --out "$W/h200-vs-torch-eager.json" --baseline-out "$BASE" \
    > "$W/vs_torch_eager.txt" 2>&1
  status[reference]="exit $?"
  BASELINE_ARGS=()
  if [ -s "$BASE" ]; then BASELINE_ARGS=(--baseline "$BASE"); else
    echo "no eager reference measured (see $W/vs_torch_eager.txt): the manifest will have no SOL score"; fi
  log "ropegrad bench --backend cuda (whole suite, protocol timing)"
  rm -f "$W/runs.db"
  rgx bench --backend cuda --json "$W/h200-cuda.json" --record --db "$W/runs.db" \
     --manifest "$W/h200-cuda.manifest.json" "${BASELINE_ARGS[@]}" ${BENCH_ARGS:-} 2>&1 | tee "$W/bench.txt"
  status[bench]="exit ${PIPESTATUS[0]}"
  [ -f "$W/h200-cuda.manifest.json" ] && rgx verify "$W/h200-cuda.manifest.json" 2>&1 | tee -a "$W/bench.txt"
  for k in ${KERNELS:-}; do
    log "kernel $k"
    rgx bench --backend cuda --kernel "$k" --json "$W/h200-cuda-k$k.json" 2>&1 | tail -n 4
  done
fi

if [[ " $STEPS " == *" positions "* ]]; then
  # Real training inputs (emb = position * inv_freq up to position 262143, theta 1e6,
  # the workloads' own scale) through the whole suite: max |err| per workload.
  log "ropegrad bench --backend cuda --inputs positions"
  rgx bench --backend cuda --inputs positions --json "$W/h200-cuda-positions.json" > "$W/positions.txt" 2>&1
  status[positions]="exit $?"
  tail -n 22 "$W/positions.txt"
fi

if [[ " $STEPS " == *" python "* ]]; then
  for t in ${PY_SCRIPTS:-python/tests/test_torch_binding.py python/tests/test_solution_export.py bench/vs_torch.py}; do
    [ -f "$t" ] || continue
    log "python3 $t"
    case $t in
      *solution_export*)   # python needs a program, not rgx (a shell function): a wrapper with the bundled libraries
        printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$RG_LIBS" "$ROOT/$B/ropegrad" > "$W/ropegrad-cli.sh"
        chmod +x "$W/ropegrad-cli.sh"
        python3 "$t" --ropegrad "$W/ropegrad-cli.sh" --ops 014 --out-dir "$W" > "$W/$(basename "$t" .py).txt" 2>&1 ;;
      *vs_torch*) python3 "$t" --out "$W/h200-vs-torch.json" > "$W/$(basename "$t" .py).txt" 2>&1 ;;
      *) python3 "$t" > "$W/$(basename "$t" .py).txt" 2>&1 ;;
    esac
    rc=$?
    tail -n 25 "$W/$(basename "$t" .py).txt"
    status[$(basename "$t" .py)]="exit $rc"
  done
fi

if [[ " $STEPS " == *" sanitize "* ]]; then
  for tool in memcheck racecheck; do
    log "compute-sanitizer --tool $tool (GPU tests, small cases)"
    ROPEGRAD_TEST_QUICK=1 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_gpu_kernel" \
      > "$W/sanitizer-$tool.txt" 2>&1
    rc=$?
    tail -n 4 "$W/sanitizer-$tool.txt"
    status[sanitizer-$tool]="exit $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/sanitizer-$tool.txt" | tail -1)"
  done
fi

for f in h200-cuda.json h200-cuda.manifest.json h200-torch-eager.baseline.json h200-cuda-positions.json h200-vs-torch.json h200-solution-export.json; do
  [ -f "$W/$f" ] && cp "$W/$f" "$OUT/"
done
[ -f "$W/probe.txt" ] && cp "$W/probe.txt" "$OUT/h200-probe.txt"
echo "gpu-run: result files in $OUT, logs in $W"
echo
echo "| step | result |"
echo "|---|---|"
for k in "${!status[@]}"; do echo "| $k | ${status[$k]} |"; done | sort
if [ -f "$W/bench.txt" ]; then grep -E "^(passed|mean|geomean|suite|timer)" "$W/bench.txt" | head -6; fi
