#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One sha256 over the sources the index's pages are made from (the index and
# the record's figures they show), names and bytes, in a fixed order. The
# screenshots under docs/img/ carry the value they were taken at
# (docs/img/screenshots.sha256, written by scripts/screenshot.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
for f in $(ls src/index/*.[ch] src/record/stats/rank.[ch] src/record/stats/sol.c | LC_ALL=C sort); do
  printf '%s\n' "$f"
  sha256sum <"$f"
done | sha256sum | cut -d' ' -f1
