#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: install what is missing, build with warnings as
# errors (CUDA too when nvcc is there), run every test through CTest.
# GPU tests skip (and say so) on a machine without a GPU.
# It reuses the build in $BUILD (default build/, the one scripts/bench.sh makes:
# same folder, same flags), so only what changed is rebuilt; CMAKE_ARGS adds
# configure options, extra arguments go to ctest (e.g. -R test_suite).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
say() { echo "test.sh: $*" >&2; }
say "checking the dependencies (scripts/deps.sh)"
bash scripts/deps.sh
say "configuring $BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON ${CMAKE_ARGS:-} >/dev/null
say "building $BUILD ($(nproc) jobs)"
cmake --build "$BUILD" -j"$(nproc)"
say "running the tests (ctest -j$(nproc))"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" "$@" | tee "$log"
# CTest shows a skipped test as "Skipped" without its output: repeat the
# skipped tests' own one-line reasons (no GPU, no nvcc, no Chromium, ...).
{ grep -oE 'Test +#[0-9]+: [a-z0-9_]+ [.]+\*+Skipped' "$log" || true; } | awk '{print $3}' | while read -r t; do
  ctest --test-dir "$BUILD" -R "^$t\$" -V 2>/dev/null | grep -m1 -E '^[0-9]+: (SKIP|.*skip)' | sed "s/^[0-9]*: /skipped: /" || true
done
say "tests done in $(($(date +%s) - start)) s; the slowest:"
{ grep -oE 'Test +#[0-9]+: [A-Za-z0-9_]+ [.]+ *(Passed|\*+Failed|\*+Skipped) +[0-9.]+ sec' "$log" || true; } |
  awk '{print $(NF-1), $3}' | sort -rn | head -n 5 | awk '{printf "  %6.1f s  %s\n", $1, $2}' >&2
