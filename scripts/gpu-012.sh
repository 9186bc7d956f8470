#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with a GPU: 012 against its public CUDA peer (issue 27), in one run.
#   bash scripts/gpu-build.sh && bash scripts/gpu-official.sh --prepare   # the build, the evaluator's copy
#   bash scripts/gpu-012.sh
# 1. scripts/gpu-official.sh with PROBLEMS=012 SOLUTIONS="ropegrad ropegrad-fast peer"
#    STEPS=agreement OFFICIAL_REPEAT=3: NVIDIA's official evaluator (three rounds, the three files
#    alternately) and ropegrad's harness on the same three solution files (ropegrad's default
#    kernel, its fast kernel: `export-solution --kernel 1`, and the public peer,
#    peers/012-peer.json), and `ropegrad bench` (the C path, kernel 0), on the dataset's inputs.
# 2. ropegrad's harness on real long-context inputs (`--inputs positions`: positions to 262143 with
#    theta 1e6, different per batch, so arguments to ~2.6e5 rad) for the same three files (step 1's
#    builds reused: the same files, the same solution cache) and the C path's kernels 0 and 1, and
#    the C path's kernel 1 on the dataset's inputs.
# 3. dev/official/table_012.py: each figure and its ratio to the peer's in the same column.
# ROUNDS_ONLY=1: step 1 alone, for the fast kernel's solution file and the peer's (OFFICIAL_REPEAT
#    rounds, default 3: about 9 s a file a round), then step 3: the official figures with more rounds
#    in one run, nothing else. ROUNDS_SOLUTIONS: other files for it, e.g. "ropegrad-fast
#    saved-NAME peer" (gpu-official.sh's saved-NAME: an A/B of a kernel change).
# $OUT (default results/official/012-new): table-012.md, and gpu-012.tar.gz with official/ (gpu-official.sh's
# results: official-results.tar.gz, agreement.md, ...), official-stdout.txt and runs/ (step 2).
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-results/official/012-new}
mkdir -p "$OUT/official" "$OUT/runs"
SOLS="ropegrad ropegrad-fast peer"
[ -n "${ROUNDS_ONLY:-}" ] && SOLS=${ROUNDS_SOLUTIONS:-"ropegrad-fast peer"}
# The budget and estimates fit step 1 and its agreement runs (ropegrad's harness on the three files) into
# one run: an official evaluation after its compile takes 6-9 s (results/official/012-full/); with
# gpu-official.sh's own defaults (60 s an evaluation, 20 s a later round) it kept 300 s for them
# and skipped the agreement runs.
OUT=$OUT/official BUDGET_S=${BUDGET_S:-460} EST_CPP_OFFICIAL_S=${EST_CPP_OFFICIAL_S:-20} EST_REPEAT_S=${EST_REPEAT_S:-10} \
  PROBLEMS=012 SOLUTIONS="$SOLS" STEPS=agreement \
  OFFICIAL_REPEAT=${OFFICIAL_REPEAT:-3} bash scripts/gpu-official.sh > "$OUT/official-stdout.txt" 2>&1
echo "gpu-official.sh: exit $?" | tee -a "$OUT/official-stdout.txt"
tail -n 25 "$OUT/official-stdout.txt"
RES=$(mktemp -d /tmp/gpu-012-results.XXXXXX)   # unpacked here, not under $OUT (the tarball keeps them)
tar -xzf "$OUT/official/official-results.tar.gz" -C "$RES" 2>/dev/null || echo "gpu-012: no official-results.tar.gz"
B=${BUILD:-build-gpu}
RG=$PWD/$B/ropegrad
export LD_LIBRARY_PATH=$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The solution cache's folder names the GPU architecture: the one step 1's builds used.
CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ')
[ -n "$CAP" ] && export ROPEGRAD_CUDA_ARCH=sm_${CAP/./} TORCH_CUDA_ARCH_LIST=$CAP
run() {  # NAME, then the options after `bench`: ropegrad bench (RUN_PY unset) or python3 -m ropegrad bench
  local name=$1 cmd=("$RG")
  shift
  # Python: torch must not see the bundled libraries (build-gpu/lib); the harness's libraries
  # find theirs by their RUNPATH.
  [ -n "${RUN_PY:-}" ] && cmd=(env -u LD_LIBRARY_PATH PYTHONPATH="$PWD/python" ROPEGRAD_LIB="$PWD/$B/libropegrad.so"
                               ROPEGRAD_CLI_LIB="$PWD/$B/libropegrad_cli.so" python3 -m ropegrad)
  timeout -k 5 "${RUN_TIMEOUT:-150}" "${cmd[@]}" bench --suite suites/012-cos_sin --backend cuda "$@" \
    --json "$OUT/runs/$name.json" > "$OUT/runs/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc ($(grep -E 'geometric mean|passed' "$OUT/runs/$name.txt" | tail -n 1))"
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || tail -n 3 "$OUT/runs/$name.txt"
}
if [ -z "${ROUNDS_ONLY:-}" ]; then   # step 2 (ROUNDS_ONLY: step 3 on step 1's results alone)
  run native-k1-normal --kernel 1
  run native-k0-positions --inputs positions
  run native-k1-positions --kernel 1 --inputs positions
  for who in peer ropegrad-solution ropegrad-fast; do
    f=$RES/solutions/012-$who.json
    [ -f "$f" ] || { echo "$who: no solution file from step 1 ($f)"; continue; }
    RUN_PY=1 run "$who-positions" --solution "$f" --inputs positions
  done
fi
python3 dev/official/table_012.py --official "$RES" --runs "$OUT/runs" > "$OUT/table-012.md"
# Everything but the table goes into one tarball (not kept in the tree: results/README.md).
tar -C "$OUT" -czf "$OUT/gpu-012.tar.gz" official official-stdout.txt runs && rm -rf "$OUT/official" "$OUT/runs" "$OUT/official-stdout.txt"
cat "$OUT/table-012.md"
