#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's suite command: install what is missing, build, and run
# `ropegrad bench` on the bundled SOL-ExecBench suite (CUDA when a GPU is
# usable, else the CPU path). Extra arguments go to `ropegrad bench`, e.g.
#   bash scripts/bench.sh --backend cpu --workloads 14 --json out.json
# Progress goes to stderr from the first second: the dependency check, the
# configure step, one line per build step (ninja's "[12/132] Building C object
# ..."), then one line per workload as it runs (`ropegrad bench --progress`;
# --quiet turns it off). stdout stays the bench's (--json -, --format csv).
# The last line says where the result is. The build is the one scripts/test.sh
# uses (same folder, same flags: warnings are errors), so neither rebuilds the other's.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
say() { echo "bench.sh: $*" >&2; }
say "checking the dependencies (scripts/deps.sh)"
bash scripts/deps.sh
# Everything cmake and the compiler said goes to $BUILD/bench-build.log, shown
# in full when a step fails.
mkdir -p "$BUILD"
LOG="$BUILD/bench-build.log"
failed() {
  cat "$LOG" >&2
  say "$1 failed (the output above is in $LOG)"
  exit 1
}
say "configuring $BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON ${CMAKE_ARGS:-} >"$LOG" 2>&1 ||
  failed "configuring"
say "building $BUILD ($(nproc) jobs; one line a step)"
cmake --build "$BUILD" -j"$(nproc)" 2>&1 | tee -a "$LOG" | awk '/^\[[0-9]+\/[0-9]+\] / { print; fflush() }' >&2 ||
  failed "building"
# Where the result goes: the user's --json FILE, --manifest FILE and --record, else
# $BUILD/bench-result.json beside the table.
args=("$@") json="" manifest="" record="" quiet=""
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --json) json=${args[i + 1]:-} ;;
    --json=*) json=${args[i]#--json=} ;;
    --manifest) manifest=${args[i + 1]:-} ;;
    --manifest=*) manifest=${args[i]#--manifest=} ;;
    --record) record=1 ;;
    --quiet) quiet=1 ;;
  esac
done
extra=()
[ -n "$quiet" ] || extra+=(--progress)
if [ -z "$json" ]; then json="$BUILD/bench-result.json" && extra+=(--json "$json"); fi
say "running: ropegrad bench ${extra[*]} $*"
rc=0
"$BUILD/ropegrad" bench "${extra[@]}" "$@" || rc=$?
where=()
[ "$json" = - ] && where+=("JSON on stdout") || where+=("$json")
[ -n "$manifest" ] && where+=("manifest $manifest")
[ -n "$record" ] && where+=("the local registry (ropegrad runs list)")
if [ "$rc" -le 1 ]; then
  w=$(printf '%s, ' "${where[@]}")
  say "the result: ${w%, }$([ "$rc" = 1 ] && echo " (exit 1: a workload failed its check)")"
fi
exit "$rc"
