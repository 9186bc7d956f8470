#!/usr/bin/env bash
# The README's test command: install what is missing, build with warnings as
# errors (CUDA too when nvcc is there), run every test through CTest.
# GPU tests skip (and say so) on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" "$@"
