#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: install what is missing, build with warnings as
# errors (CUDA too when nvcc is there), run every test through CTest.
# GPU tests skip (and say so) on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" "$@" | tee "$log"
# CTest shows a skipped test as "Skipped" without its output: repeat the
# skipped tests' own one-line reasons (no GPU, no nvcc, no Chromium, ...).
{ grep -oE 'Test +#[0-9]+: [a-z0-9_]+ [.]+\*+Skipped' "$log" || true; } | awk '{print $3}' | while read -r t; do
  ctest --test-dir "$BUILD" -R "^$t\$" -V 2>/dev/null | grep -m1 -E '^[0-9]+: (SKIP|.*skip)' | sed "s/^[0-9]*: /skipped: /" || true
done
