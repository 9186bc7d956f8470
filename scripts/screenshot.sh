#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's screenshots of the index: a registry holding the public
# KernelIndex record and the committed H200 manifests (bench/results/), served
# by `ropegrad serve` on a free loopback port, photographed by headless
# Chromium (Debian's). Writes docs/index-run-page.png (the H200 014 run) and
# docs/index-problem-page.png.   bash scripts/screenshot.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$B/ropegrad" ] || { echo "screenshot: $B/ropegrad missing (bash scripts/test.sh builds it)" >&2; exit 2; }
[ -x "$CHROMIUM" ] || { echo "screenshot: $CHROMIUM missing (ROPEGRAD_WITH_CHROMIUM=1 bash scripts/deps.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
db=$tmp/runs.db
"$B/ropegrad" runs import ../shared/kernelindex/run-01a03529.manifest.json --db "$db" >/dev/null 2>&1 ||
  "$B/ropegrad" runs import tests/data/kernelindex/run-01a03529.manifest.json --db "$db" >/dev/null
for f in bench/results/h200-cuda.manifest.json bench/results/ops/h200-cuda-011.manifest.json \
         bench/results/ops/h200-cuda-012.manifest.json; do
  "$B/ropegrad" runs import "$f" --db "$db" >/dev/null
done
"$B/ropegrad" serve --db "$db" --listen 127.0.0.1:0 > "$tmp/serve.txt" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "http://" "$tmp/serve.txt" && break; sleep 0.1; done
url=$(grep -o "http://[0-9.:]*/" "$tmp/serve.txt" | head -1)
[ -n "$url" ] || { cat "$tmp/serve.txt" >&2; exit 1; }
shot() {   # shot PATH HEIGHT OUT
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$tmp/profile" \
    --window-size=1100,"$2" --screenshot="$3" "${url%/}$1" >/dev/null 2>&1
  echo "screenshot: ${url%/}$1 -> $3"
}
shot /runs/2 2600 docs/index-run-page.png
shot /problems/014_rotary_embedding_with_attention_scaling_backward 700 docs/index-problem-page.png
