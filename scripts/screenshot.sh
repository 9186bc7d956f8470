#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The screenshots of the index: a registry holding the public KernelIndex
# field (the catalog's RoPE runs where `ropegrad runs import-catalog` is
# built, else the one public record) and the committed H200 manifests
# (results/, with the 014 run made before the timing switches), served by
# `ropegrad serve` on a free loopback port, photographed by headless
# Chromium (Debian's) at 1,100 px wide. Writes docs/img/index-{front,problem,
# run,compare,history,records}-page.png and docs/img/screenshots.sha256, the
# digest of the sources the pages come from (scripts/page_sources.sh), which
# tests/tools/screenshots.cmake compares with the tree: a change to the
# renderer fails that test until this script has run.
#   bash scripts/screenshot.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
DEF=014_rotary_embedding_with_attention_scaling_backward
CATALOG=${CATALOG:-../shared/kernelindex/catalog-2026-08-16-rope.jsonl}
[ -x "$B/ropegrad" ] || { echo "screenshot: $B/ropegrad missing (bash scripts/test.sh builds it)" >&2; exit 2; }
[ -x "$CHROMIUM" ] || { echo "screenshot: $CHROMIUM missing (ROPEGRAD_WITH_CHROMIUM=1 bash scripts/deps.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# import DB FILE: the run's number ("imported as run #N"), or the run it is a copy of.
import() {
  "$B/ropegrad" runs import "$2" --db "$1" 2>&1 | grep -o 'run #[0-9]*' | head -1 | tr -dc 0-9
}
# public DB: the public field -- the catalog's RoPE runs (with `runs import-catalog`, else each
# benchmark run's manifest envelope by `runs import`), and the public record 01a03529 (stack v1.0).
public() {
  if [ -f "$CATALOG" ] && "$B/ropegrad" runs import-catalog "$CATALOG" --db "$1" >/dev/null 2>&1; then
    echo "screenshot: the public catalog's RoPE runs imported ($CATALOG)"
  elif [ -f "$CATALOG" ]; then
    mkdir -p "$tmp/catalog"
    python3 -c 'import json, sys
for i, line in enumerate(open(sys.argv[1])):
    r = json.loads(line)
    if r["table"] == "benchmark_runs":
        json.dump(r["row"]["manifest"], open(f"{sys.argv[2]}/run-{i:05d}.json", "w"))' "$CATALOG" "$tmp/catalog"
    for f in "$tmp"/catalog/run-*.json; do import "$1" "$f" >/dev/null; done
    echo "screenshot: the public catalog's RoPE runs imported by their manifests ($CATALOG)"
  fi
  import "$1" ../shared/kernelindex/run-01a03529.manifest.json >/dev/null ||
    import "$1" tests/data/kernelindex/run-01a03529.manifest.json >/dev/null
}
db=$tmp/runs.db
public "$db"
h200=$(import "$db" results/ops/h200-cuda-014.manifest.json)
old=$(import "$db" tests/data/old-format/h200-cuda-014-before-switches.manifest.json)
for f in results/h200-cuda.manifest.json results/ops/h200-cuda-011.manifest.json \
         results/ops/h200-cuda-012.manifest.json; do
  import "$db" "$f" >/dev/null
done
[ -n "$h200" ] && [ -n "$old" ] || { echo "screenshot: the H200 manifests did not import" >&2; exit 1; }

serve() {   # serve DB: (re)start the server on DB, url= its address
  [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
  "$B/ropegrad" serve --db "$1" --listen 127.0.0.1:0 > "$tmp/serve.txt" 2>&1 &
  pid=$!
  for _ in $(seq 50); do grep -q "http://" "$tmp/serve.txt" && break; sleep 0.1; done
  url=$(grep -o "http://[0-9.:]*/" "$tmp/serve.txt" | head -1)
  [ -n "$url" ] || { cat "$tmp/serve.txt" >&2; exit 1; }
}
shot() {   # shot PATH HEIGHT OUT
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$tmp/profile" \
    --window-size=1100,"$2" --screenshot="$3" "${url%/}$1" >/dev/null 2>&1
  echo "screenshot: ${url%/}$1 -> $3"
}
serve "$db"
shot / 1000 docs/img/index-front-page.png
shot /problems/$DEF 1500 docs/img/index-problem-page.png
shot /runs/"$h200" 2600 docs/img/index-run-page.png
shot /compare/"$old"/"$h200" 1500 docs/img/index-compare-page.png
shot /history/"$h200" 1000 docs/img/index-history-page.png
shot /records/$DEF 1300 docs/img/index-records-page.png
# The H200 registries are not kept in the tree (results/README.md): PEERS_DB (the registry
# scripts/gpu-ops.sh's peers step makes, results/peers/runs.db: ropegrad, the plugins, the
# reference eager and torch.compile'd) and OFFICIAL_DB (scripts/gpu-official.sh's,
# results/official/runs.db: ropegrad's runs, the public peers, the reference, and the official
# traces imported with `ropegrad runs import`), each served from a copy -- the peers' with the
# public field imported beside it, so 014's page shows both; without one, its pages are not
# retaken and say so.
PEERS_DB=${PEERS_DB:-results/peers/runs.db}
OFFICIAL_DB=${OFFICIAL_DB:-results/official/runs.db}
if [ -f "$PEERS_DB" ]; then
  cp "$PEERS_DB" "$tmp/peers.db"
  public "$tmp/peers.db"
  serve "$tmp/peers.db"
  shot /problems/$DEF 2000 docs/img/field-014-h200.png
else
  echo "screenshot: no $PEERS_DB (bash scripts/gpu-ops.sh with STEPS=peers makes it): docs/img/field-014-h200.png kept"
fi
if [ -f "$OFFICIAL_DB" ]; then
  cp "$OFFICIAL_DB" "$tmp/official.db"
  serve "$tmp/official.db"
  shot /problems/$DEF 1700 docs/img/official-014-h200.png
  shot /problems/011_rotary_position_embedding 1900 docs/img/official-011-h200.png
  shot /problems/012_fused_cos_sin_embedding_generation 1900 docs/img/official-012-h200.png
else
  echo "screenshot: no $OFFICIAL_DB (bash scripts/gpu-official.sh makes it): docs/img/official-0NN-h200.png kept"
fi
bash scripts/page_sources.sh > docs/img/screenshots.sha256
echo "screenshot: docs/img/screenshots.sha256 $(cat docs/img/screenshots.sha256)"
