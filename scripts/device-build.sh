#!/usr/bin/env bash
# Builds, on this (Debian, GPU-less) machine, the tree that scripts/device-run.sh
# runs on the GPU machine: build-device/, with the Debian libraries the GPU
# machine lacks copied into build-device/lib. Carry it with the device call:
#   run(command="bash scripts/device-run.sh", carry=["build-device"])
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON \
  -DROPEGRAD_BUNDLE_RUNTIME=ON ${CMAKE_ARGS:-} >/dev/null
cmake --build build-device -j"$(nproc)"
du -sh build-device | sed 's/^/device-build: /'
