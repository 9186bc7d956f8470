#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with a GPU: issue 26's protocol points, each switched against the
# official evaluator's way (build-gpu/ from scripts/gpu-build.sh, made first if missing):
#   bash scripts/gpu-parity.sh
# Steps (STEPS, default "tests bench dev python"), each under its own time limit:
#   tests   the GPU tests of the parity points and the reward-hack checks
#           (test_gpu_reward_hack: every cheating plugin caught, the side-stream
#           span), the plugin fault/hang tests and each op's GPU tests;
#   bench   ropegrad bench of each op in OPS under the default protocol (the
#           official one) and with points switched back (POINTS: restage-off,
#           span-kernels, sync-end, old = all of them and one round), one JSON
#           each (bench-OP-PROTO.json); 088/068 with APPLY_ROUNDS rounds and only
#           the old protocol beside (their float64 references of ~1 GB tensors are
#           computed on the host per round);
#   dev     the development kernels' timings (dev/apply_floor 068, dev/dev_forward 012);
#   python  python/tests/test_impl_cpu.py on CUDA (the Python path, each case a process);
#   probe   011 through the Python driver with libropegrad's kernel writing a new torch tensor or the
#           harness's own output buffer (dev/official/output_probe.py), beside `ropegrad bench`:
#           where 011's Python-path difference from the official evaluator comes from (issue 26); then
#           both again with --settle on (the host waits for the cold-L2 flush before every call:
#           bench-011-settle.json, bench-011-probe-into-settle.json) and the flush gaps of every run
#           (flush_gap_us, the GPU idle time between the flush and the call) at the end of parity-table.md.
# $OUT (default results/parity/): parity-table.md, printed last; every JSON and log in parity-results.tar.gz
# beside it (not kept in the tree: results/README.md).
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-results/parity}
W=$(mktemp -d /tmp/rg-parity.XXXXXX)
mkdir -p "$OUT"
B=${BUILD:-build-gpu}
STEPS=${STEPS:-"tests bench dev python"}
OPS=${OPS:-"014 011 012 088 068"}
POINTS=${POINTS:-"restage-off span-kernels sync-end old"}
APPLY_ROUNDS=${APPLY_ROUNDS:-3}
[ -x "$B/ropegrad" ] || BUILD=$B bash scripts/gpu-build.sh || exit 2
RGL="$PWD/$B/lib"
log() { echo "== [$(date -u +%H:%M:%S)] $*"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }
point_args() {
  case $1 in
    parity) echo "" ;;
    restage-off) echo "--restage off" ;;
    span-kernels) echo "--span kernels" ;;
    sync-end) echo "--sync end" ;;
    old) echo "--restage off --span kernels --sync end --rounds 1" ;;
  esac
}
if has tests; then
  log "tests: parity, reward hacks, plugins, each op's GPU tests"
  LD_LIBRARY_PATH="$RGL" timeout 240 ctest --test-dir "$B" --timeout 120 --output-on-failure \
    -R 'test_gpu_reward_hack|test_plugin_gpu|test_gpu_kernel|test_gpu_forward|test_gpu_rope_apply|reward_hack|protocol_parity' \
    > "$W/ctest-parity.txt" 2>&1
  echo "ctest exit $?"; grep -E "tests passed|Failed|\*\*\*|Passed|Skipped" "$W/ctest-parity.txt" | tail -14
  grep -E "span|µs|us " "$W/ctest-parity.txt" | grep -i "span" | head -6
fi
if has bench; then
  for op in $OPS; do
    rounds="" points=$POINTS
    case $op in 088|068) rounds="--rounds $APPLY_ROUNDS" points=old ;; esac   # their host references are slow
    for p in parity $points; do
      a=$(point_args "$p"); [ "$p" = old ] || a="$a $rounds"
      log "bench $op $p: ropegrad bench --backend cuda $a"
      timeout 150 bash -c "LD_LIBRARY_PATH='$RGL' '$B/ropegrad' bench --suite suites/$op-* --backend cuda $a --json '$W/bench-$op-$p.json'" \
        > "$W/bench-$op-$p.txt" 2>&1
      echo "exit $?: $(grep -E '^passed|geometric' "$W/bench-$op-$p.txt" | tr '\n' ' ')"
    done
  done
fi
if has dev; then
  log "dev: dev/apply_floor 068"
  [ -x "$B/dev/apply_floor" ] && timeout 120 "$B/dev/apply_floor" 068 > "$W/apply-floor-068.txt" 2>&1
  grep -E "^geomean|^best|oracle" "$W/apply-floor-068.txt" 2>/dev/null
  log "dev: dev/dev_forward 012"
  [ -x "$B/dev/dev_forward" ] && DEV_FORWARD_ONLY=${DEV_FORWARD_ONLY:-6-plain/2,27-mufu/2,27-mufu/4,28-mufu-guard/2,28-mufu-guard/4,29-lib/2,5-ref/4} \
    timeout 120 "$B/dev/dev_forward" 012 > "$W/dev-forward-012.txt" 2>&1
  grep -E "^\| (geomean|/ floor)|^geomean|ulp|same" "$W/dev-forward-012.txt" 2>/dev/null | head -30
fi
if has python; then
  log "python: test_impl_cpu.py on CUDA"
  ROPEGRAD_IMPL_BACKEND=cuda ROPEGRAD_LIB="$PWD/$B/libropegrad.so" PYTHONPATH="$PWD/python" PYTHONUNBUFFERED=1 \
    timeout 200 python3 python/tests/test_impl_cpu.py > "$W/test_impl_cuda.txt" 2>&1
  echo "exit $?"; tail -5 "$W/test_impl_cuda.txt"
fi
# 011 through the C path: TAG (bench-011-TAG.json), then harness options.
c_011() {
  local tag=$1; shift
  timeout 150 bash -c "LD_LIBRARY_PATH='$RGL' '$B/ropegrad' bench --suite suites/011-rope_forward --backend cuda $* --json '$W/bench-011-$tag.json'" \
    > "$W/bench-011-$tag.txt" 2>&1
}
# 011 through the Python driver with output_probe.py's function F: TAG, F, then options.
probe_011() {
  local tag=$1 f=$2; shift 2
  ROPEGRAD_LIB="$PWD/$B/libropegrad.so" ROPEGRAD_CLI_LIB="$PWD/$B/libropegrad_cli.so" PYTHONPATH="$PWD/python" \
    timeout 150 python3 -m ropegrad bench --impl dev/official/output_probe.py:$f "$@" --suite suites/011-rope_forward \
    --backend cuda --json "$W/bench-011-$tag.json" > "$W/bench-011-$tag.txt" 2>&1
}
said() { echo "$1 exit $2: $(grep -E '^passed|geometric|^flush gap' "$W/bench-011-$3.txt" | tr '\n' ' ')"; }
if has probe; then
  log "probe: 011's output placement through the Python driver (dev/official/output_probe.py)"
  [ -f "$W/bench-011-parity.json" ] || c_011 parity
  for f in returning into; do
    dps=""; [ "$f" = into ] && dps=--dps
    probe_011 "probe-$f" $f $dps; said "probe $f" $? "probe-$f"
  done
  log "probe: --settle on (the host waits for the flush before every call), the C path and the into probe"
  c_011 settle --settle on; said "C path --settle on" $? settle
  probe_011 probe-into-settle into --dps --settle on; said "probe into --settle on" $? probe-into-settle
fi
python3 dev/official/parity_table.py "$W" > "$W/parity-table.md" 2>&1
cp "$W/parity-table.md" "$OUT/"
tar -C "$W" -czf "$OUT/parity-results.tar.gz" .
echo; cat "$W/parity-table.md"
