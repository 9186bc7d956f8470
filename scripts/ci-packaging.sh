#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's packaging checks (issue 12):
#  1. the library alone (-DROPEGRAD_BUILD_CLI=OFF -DBUILD_TESTING=OFF, CUDA when
#     nvcc is there, for one architecture, LIBONLY_CUDA_ARCHS, default 90-real:
#     the kernels of every architecture are built and tested by scripts/test.sh):
#     configures without cJSON, SQLite, OpenSSL or cmocka (none of them is even
#     looked for), builds, installs;
#  2. with OUT_OF_TREE=1, every test in a build tree outside the source tree (CPU
#     only). .ci/run does not need it: it runs scripts/test.sh itself in a build
#     tree outside the source tree, which covers the same property in one test run.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/ropegrad-ci.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cmake -S . -B "$tmp/libonly" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON \
  -DROPEGRAD_BUILD_CLI=OFF -DBUILD_TESTING=OFF -DCMAKE_CUDA_ARCHITECTURES="${LIBONLY_CUDA_ARCHS:-90-real}" >/dev/null
if grep -E '^(CJSON_|SQLite3_|OPENSSL_|CMOCKA_|MHD_|CURL_)[A-Z_]*:' "$tmp/libonly/CMakeCache.txt"; then
  echo "ci-packaging: the library-only build looked for a CLI or test dependency (above)" >&2
  exit 1
fi
cmake --build "$tmp/libonly" -j"$(nproc)"
cmake --install "$tmp/libonly" --prefix "$tmp/libonly-prefix" >/dev/null
test -f "$tmp/libonly-prefix/include/ropegrad.h"
test ! -e "$tmp/libonly-prefix/bin/ropegrad"
echo "ci-packaging: library-only build and install ok"

if [ "${OUT_OF_TREE:-0}" = 1 ]; then
  BUILD="$tmp/out-of-tree" CMAKE_ARGS="-DROPEGRAD_CUDA=OFF ${CMAKE_ARGS:-}" bash scripts/test.sh
  echo "ci-packaging: every test passed in an out-of-tree build ($tmp/out-of-tree)"
fi
