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
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
exec "$BUILD/ropegrad" bench "$@"
