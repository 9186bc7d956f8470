#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's packaging checks (issue 12), after scripts/test.sh:
#  1. the library alone (-DROPEGRAD_BUILD_CLI=OFF -DBUILD_TESTING=OFF, CUDA when
#     nvcc is there): configures without cJSON, SQLite, OpenSSL or cmocka
#     (none of them is even looked for), builds, installs;
#  2. every test in a build tree outside the source tree (CPU only: the CUDA
#     build is covered by scripts/test.sh, the out-of-tree property does not
#     depend on it, and CI's time stays short).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/ropegrad-ci.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cmake -S . -B "$tmp/libonly" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROPEGRAD_WERROR=ON \
  -DROPEGRAD_BUILD_CLI=OFF -DBUILD_TESTING=OFF >/dev/null
if grep -E '^(CJSON_|SQLite3_|OPENSSL_|CMOCKA_|MHD_|CURL_)[A-Z_]*:' "$tmp/libonly/CMakeCache.txt"; then
  echo "ci-packaging: the library-only build looked for a CLI or test dependency (above)" >&2
  exit 1
fi
cmake --build "$tmp/libonly" -j"$(nproc)"
cmake --install "$tmp/libonly" --prefix "$tmp/libonly-prefix" >/dev/null
test -f "$tmp/libonly-prefix/include/ropegrad.h"
test ! -e "$tmp/libonly-prefix/bin/ropegrad"
echo "ci-packaging: library-only build and install ok"

BUILD="$tmp/out-of-tree" CMAKE_ARGS="-DROPEGRAD_CUDA=OFF ${CMAKE_ARGS:-}" bash scripts/test.sh
echo "ci-packaging: every test passed in an out-of-tree build ($tmp/out-of-tree)"
