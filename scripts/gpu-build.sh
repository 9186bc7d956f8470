#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with a GPU (and nvcc): the build the GPU scripts use, build-gpu/
# (BUILD=DIR for another folder), with the CUDA backend for CUDA_ARCHS (default
# 90-real: H100, H200) and the development tools of dev/ (the `dev` target:
# build-gpu/dev/probe, dev_forward, dev_kernels, dev_latency, apply_floor).
#   bash scripts/gpu-build.sh
#   DEV_VARIANTS="spread1:-DRG_K12_SPREAD=1 spread8:-DRG_K12_SPREAD=8" bash scripts/gpu-build.sh
# DEV_VARIANTS: knob variants of dev_kernels (dev/rope_backward/dev_kernels.cu), each built as
# build-gpu/dev/dev_kernels-NAME with its nvcc flags; scripts/gpu-run.sh's dev step runs them after dev_kernels.
# ROPEGRAD_BUNDLE_RUNTIME=ON in CMAKE_ARGS copies the non-system libraries into build-gpu/lib, for
# running the build on another machine (cmake/bundle.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build-gpu}
ARCHS=${CUDA_ARCHS:-90-real}
echo "gpu-build: configuring $B (CUDA architectures $ARCHS)"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON -DROPEGRAD_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DROPEGRAD_DEV_CUDA_ARCHITECTURES="$ARCHS" ${CMAKE_ARGS:-} >/dev/null
echo "gpu-build: building $B and the development tools (cmake --build $B --target all dev)"
cmake --build "$B" -j"$(nproc)" --target all dev
rm -f "$B"/dev/dev_kernels-*
for v in ${DEV_VARIANTS:-}; do
  name=${v%%:*} flags=${v#*:}
  echo "gpu-build: dev_kernels-$name ($flags)"
  # shellcheck disable=SC2086
  nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op -Idev/common -Idev/rope_backward $flags \
    dev/rope_backward/dev_kernels.cu src/op/common.c src/op/rope_backward/reference.c \
    -lcupti -Xlinker -rpath=/usr/local/cuda/lib64:/usr/local/cuda/lib -o "$B/dev/dev_kernels-$name"
done
echo "gpu-build: done ($B/ropegrad, $B/tests/, $B/dev/)"
