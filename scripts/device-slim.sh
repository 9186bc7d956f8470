#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shrinks build-device/ (scripts/device-build.sh) to fit the device call's
# 64 MiB carry limit: object files and static libraries go, ELF files are
# stripped of symbols (their CUDA fat binaries are allocated sections and
# stay), and the development tools a call does not need move aside to
# build-device-dev/ (DEV_TOOLS, default: the bench/ tools other than
# apply_floor). Prints the size left.
#   bash scripts/device-slim.sh            # then carry ["build-device", ...]
#   DEV_TOOLS="" bash scripts/device-slim.sh   # keep every development tool
#   TESTS=0 bash scripts/device-slim.sh        # tests/ aside too (scripts/device-official.sh needs none;
#                                              # with dev/official-carry and the tree a call is near 64 MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build-device}
[ -d "$B" ] || { echo "device-slim: no $B (run scripts/device-build.sh)"; exit 2; }
find "$B" \( -name '*.o' -o -name '*.a' \) -type f -delete
rm -rf "$B"/CMakeFiles/[0-9]*   # the compiler-identification programs of CMake's configure step
mkdir -p "$B-dev/bench"
for t in ${DEV_TOOLS-dev_kernels dev_forward dev_latency probe}; do
  for f in "$B"/bench/"$t" "$B"/bench/"$t"-*; do [ -f "$f" ] && mv -f "$f" "$B-dev/bench/"; done
done
if [ "${TESTS:-1}" = 0 ] && [ -d "$B/tests" ]; then rm -rf "$B-dev/tests" && mv "$B/tests" "$B-dev/tests"; fi
if [ "${TESTS:-1}" != 0 ] && [ -d "$B-dev/tests" ] && [ ! -d "$B/tests" ]; then mv "$B-dev/tests" "$B/tests"; fi
find "$B" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
  while IFS= read -r -d '' f; do
    if head -c 4 "$f" | grep -q $'\x7fELF'; then strip --strip-unneeded "$f" 2>/dev/null || true; fi
  done
du -sh "$B" | sed 's/^/device-slim: /'
