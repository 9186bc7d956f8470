#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's suite command: install what is missing, build, and run
# `ropegrad bench` on the bundled SOL-ExecBench suite (CUDA when a GPU is
# usable, else the CPU path). Extra arguments go to `ropegrad bench`, e.g.
#   bash scripts/bench.sh --backend cpu --workloads 14 --json out.json
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
BUILD=${BUILD:-build}
# The build shows one line per step on stderr (ninja's "[12/132] Building
# C object ..."), nothing else, so stdout stays the bench's (--json -, --format csv).
# Everything cmake and the compiler said goes to $BUILD/bench-build.log, shown
# in full when a step fails.
mkdir -p "$BUILD"
LOG="$BUILD/bench-build.log"
say() { echo "bench.sh: $*" >&2; }
failed() {
  cat "$LOG" >&2
  say "$1 failed (the output above is in $LOG)"
  exit 1
}
say "configuring $BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >"$LOG" 2>&1 || failed "configuring"
say "building $BUILD ($(nproc) jobs; one line a step)"
cmake --build "$BUILD" -j"$(nproc)" 2>&1 | tee -a "$LOG" | awk '/^\[[0-9]+\/[0-9]+\] / { print; fflush() }' >&2 ||
  failed "building"
exec "$BUILD/ropegrad" bench "$@"
