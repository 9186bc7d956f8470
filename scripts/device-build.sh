#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds, on this (Debian, GPU-less) machine, the tree that scripts/device-run.sh
# runs on the GPU machine: build-device/, with the Debian libraries the GPU
# machine lacks copied into build-device/lib. Carry it with the device call:
#   run(command="bash scripts/device-run.sh", carry=["build-device"])
# It ends with scripts/device-slim.sh (under the 64 MiB a call carries; SLIM=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# sm_90 code only: the device machine is an H200, and the call carries at most
# 64 MiB (the three-architecture library is built and checked by CI).
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON \
  -DROPEGRAD_BUNDLE_RUNTIME=ON -DCMAKE_CUDA_ARCHITECTURES=90-real ${CMAKE_ARGS:-} >/dev/null
cmake --build build-device -j"$(nproc)"
# The developer tools of bench/ (nvcc only; CUPTI from the toolkit, found at run
# time under either of the toolkit's library folders).
# dev_tool NAME OUT [nvcc flags...]: bench/NAME.cu -> build-device/bench/OUT
dev_tool() {
  local name=$1 out=$2 extra=""
  shift 2
  [ "$name" = dev_kernels ] && extra=src/op/rope_backward/reference.c
  nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc/op "$@" "bench/$name.cu" src/op/common.c $extra \
    -lcupti -Xlinker -rpath=/usr/local/cuda/lib64:/usr/local/cuda/lib -o "build-device/bench/$out"
}
mkdir -p build-device/bench
# (dev/common/sincos_bound.cu is a CMake target, tests/gpu_sincos_bound.cmake: built above as build-device/tests/sincos_bound.)
for t in dev_kernels dev_forward dev_latency probe apply_floor; do dev_tool $t $t ${DEV_NVCC_FLAGS:-}; done
# Knob variants of dev_kernels, e.g. DEV_VARIANTS="spread1:-DRG_K12_SPREAD=1 spread8:-DRG_K12_SPREAD=8":
# each becomes build-device/bench/dev_kernels-NAME, run after dev_kernels by device-run.sh's dev step.
rm -f build-device/bench/dev_kernels-*
for v in ${DEV_VARIANTS:-}; do dev_tool dev_kernels "dev_kernels-${v%%:*}" ${v#*:}; done
# Every other shared library the binaries need beyond glibc, the C/C++ runtimes
# and the CUDA driver/toolkit (libmicrohttpd and libcurl with their
# dependencies, OpenSSL, SQLite, ...): the GPU machine's image has none of
# this machine's Debian libraries (glibc's own parts excepted). scripts/device-ops.sh
# runs ropegrad and ctest with build-device/lib on LD_LIBRARY_PATH, so the bundled
# libraries' own dependencies resolve there too.
rm -rf build-device/lib/*.so.* 2>/dev/null; cmake --build build-device --target bundle_runtime >/dev/null
mkdir -p build-device/lib
find build-device -maxdepth 2 -type f \( -perm -u+x -o -name '*.so*' \) ! -path 'build-device/lib/*' -print0 |
  xargs -0 -r ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|libutil|libnsl|libanl|libcrypt|ld-linux[^/]*|libgcc_s|libstdc\+\+|libgomp|libcuda|libcudart|libcupti|libnvidia[^/]*|libropegrad)\.so' |
  while read -r so; do cp -Ln "$so" build-device/lib/ 2>/dev/null || true; done
du -sh build-device | sed 's/^/device-build: /'
# Under the 64 MiB a device call carries (SLIM=0 keeps everything; DEV_TOOLS as scripts/device-slim.sh).
[ "${SLIM:-1}" = 0 ] || bash scripts/device-slim.sh
