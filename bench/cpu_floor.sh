#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CPU memory floor of each op beside its CPU path (bench/cpu_floor.c),
# 2 threads, like the CI machine: writes results/cpu-floor-0NN.md for
# 011, 012 and 014 (the files README's cpu-ops block is made from:
# python3 scripts/figures.py --write).
#
#   bash bench/cpu_floor.sh [OP...]     # default: 011 012 014
#
# Run it when nothing else heavy runs on the machine: each file records the
# 1-minute load average before and after, and says when it was busy.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$BUILD" --target cpu_floor >/dev/null
ops=("$@")
[ ${#ops[@]} -gt 0 ] || ops=(011 012 014)
# Waits (up to WAIT_S seconds, default 240) for the 1-minute load average to fall under half the CPUs
# before each op, so a previous op's own threads have left it; the file says what it was.
quiet() {
  local cpus waited=0
  cpus=$(nproc)
  while awk -v c="$cpus" '{exit !($1 >= c / 2)}' /proc/loadavg && [ "$waited" -lt "${WAIT_S:-240}" ]; do
    sleep 10
    waited=$((waited + 10))
  done
}
for op in "${ops[@]}"; do
  quiet
  "$BUILD/bench/cpu_floor" --suite suites/"$op"-* --threads 2 --iterations 20 --warmup 3 \
    --output "results/cpu-floor-$op.md"
done
