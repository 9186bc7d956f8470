#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file names its licence in an SPDX line near its top (issue 12).
#   bash scripts/spdx.sh          list the files without one; exit 1 if any
#   bash scripts/spdx.sh --fix    add the line where it is missing (after a #! line)
# Source files: C/CUDA (.c .h .cu .cuh), Python, shell, CMake, the linker map,
# and .ci/run. Build trees and fuzz corpora are not sources.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = --fix ] && fix=1
LINE="SPDX-License-Identifier: Apache-2.0"
list() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard
  else
    find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||'
  fi | grep -E '(\.(c|h|cu|cuh|py|sh|cmake|map|in)|CMakeLists\.txt|^\.ci/run)$' | grep -v '^fuzz/corpus' || true
}
missing=0
while IFS= read -r f; do
  [ -f "$f" ] || continue
  head -n 5 "$f" | grep -q "$LINE" && continue
  if [ $fix = 0 ]; then
    echo "no SPDX line: $f"
    missing=1
    continue
  fi
  case "$f" in
    *.c|*.h|*.cu|*.cuh|*.map) comment="/* $LINE */" ;;
    *.pc.in) comment="# $LINE" ;;
    *) comment="# $LINE" ;;
  esac
  if head -n 1 "$f" | grep -q '^#!'; then
    { head -n 1 "$f"; echo "$comment"; tail -n +2 "$f"; } > "$f.spdx.tmp"
  else
    { echo "$comment"; cat "$f"; } > "$f.spdx.tmp"
  fi
  chmod --reference="$f" "$f.spdx.tmp"
  mv "$f.spdx.tmp" "$f"
  echo "added: $f"
done < <(list)
exit $missing
