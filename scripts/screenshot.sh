#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's screenshots of the index: a registry holding the public
# KernelIndex record and the committed H200 manifests (results/), served
# by `ropegrad serve` on a free loopback port, photographed by headless
# Chromium (Debian's). Writes docs/img/index-{front,problem,run,compare,history}-page.png
# and docs/img/screenshots.sha256, the digest of the sources the pages come from
# (scripts/page_sources.sh), which tests/tools/screenshots.cmake compares with the
# tree: a change to the renderer fails that test until this script has run.
#   bash scripts/screenshot.sh [BUILD_DIR]
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
for f in results/h200-cuda.manifest.json results/ops/h200-cuda-011.manifest.json \
         results/ops/h200-cuda-012.manifest.json; do
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
# Runs: 1 the public B200 record of 014, 2 the H200 run of 014, 3 and 4 of 011 and 012.
shot / 900 docs/img/index-front-page.png
shot /problems/014_rotary_embedding_with_attention_scaling_backward 900 docs/img/index-problem-page.png
shot /runs/2 2600 docs/img/index-run-page.png
shot /compare/1/2 1400 docs/img/index-compare-page.png
shot /history/2 1000 docs/img/index-history-page.png
serve_copy() {   # serve_copy DB: (re)start the server on a copy of DB, url= its address
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  cp "$1" "$tmp/copy.db"
  "$B/ropegrad" serve --db "$tmp/copy.db" --listen 127.0.0.1:0 > "$tmp/serve-copy.txt" 2>&1 &
  pid=$!
  for _ in $(seq 50); do grep -q "http://" "$tmp/serve-copy.txt" && break; sleep 0.1; done
  url=$(grep -o "http://[0-9.:]*/" "$tmp/serve-copy.txt" | head -1)
  [ -n "$url" ] || { cat "$tmp/serve-copy.txt" >&2; exit 1; }
}
# The H200 registries are not kept in the tree (results/README.md): PEERS_DB (the registry
# scripts/gpu-ops.sh's peers step makes, results/peers/runs.db: ropegrad, the plugins, the
# reference eager and torch.compile'd) and OFFICIAL_DB (scripts/gpu-official.sh's,
# results/official/runs.db: ropegrad's runs, the public peers, the reference, and the official
# traces imported with `ropegrad runs import`), each served from a copy; without one, its
# pages are not retaken and say so.
PEERS_DB=${PEERS_DB:-results/peers/runs.db}
OFFICIAL_DB=${OFFICIAL_DB:-results/official/runs.db}
if [ -f "$PEERS_DB" ]; then
  serve_copy "$PEERS_DB"
  shot /problems/014_rotary_embedding_with_attention_scaling_backward 1500 docs/img/field-014-h200.png
else
  echo "screenshot: no $PEERS_DB (bash scripts/gpu-ops.sh with STEPS=peers makes it): docs/img/field-014-h200.png kept"
fi
if [ -f "$OFFICIAL_DB" ]; then
  serve_copy "$OFFICIAL_DB"
  shot /problems/014_rotary_embedding_with_attention_scaling_backward 1700 docs/img/official-014-h200.png
  shot /problems/011_rotary_position_embedding 1900 docs/img/official-011-h200.png
  shot /problems/012_fused_cos_sin_embedding_generation 1900 docs/img/official-012-h200.png
else
  echo "screenshot: no $OFFICIAL_DB (bash scripts/gpu-official.sh makes it): docs/img/official-0NN-h200.png kept"
fi
bash scripts/page_sources.sh > docs/img/screenshots.sha256
echo "screenshot: docs/img/screenshots.sha256 $(cat docs/img/screenshots.sha256)"
