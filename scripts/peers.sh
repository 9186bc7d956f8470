#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The field, measured under one protocol into one registry: for each op (011,
# 012, 014) ropegrad's own kernel, the example plugin and ropegrad's kernel as a
# plugin (014), the definition's reference in eager torch and through
# torch.compile, and every public peer solution in $PEERS
# (../shared/official-evaluator/peers/*.json of that op); then the exports into
# $RESULTS: a manifest and a JSON result per run, the registry itself and its
# `runs list --json` / `runs rank`, a markdown table (field.md), and the
# problem pages rendered from the registry (site/, `ropegrad site`).
#
# The same script runs on the GPU (scripts/gpu-ops.sh, step peers: BACKEND=cuda)
# and on this machine's CPU (BACKEND=cpu): only the backend differs. On the
# CPU, GPU-only solutions (triton, cuda_cpp) are refused by the driver before
# anything runs, and the table says so.
#
#   BACKEND=cpu BUILD=build RESULTS=/tmp/peers BENCH_ARGS="--workloads 0-1 --iterations 5 --warmup 1" \
#     bash scripts/peers.sh
#
# Environment: BUILD (build folder, default build), BACKEND (cuda|cpu, default
# cuda), OPS (default "011 012 014"), PEERS (solution folder), RESULTS (output
# folder), PYTHON (a Python with torch; torch >= 2 for reference-compile),
# BENCH_ARGS (extra bench options for every run), RG (the ropegrad command,
# default $BUILD/ropegrad), KEEP=1 (add to the registry of an earlier run). Exit 0 when every step ran (a failed workload is a
# result, not an error), 1 when a step could not run at all.
#
# For a caller that splits the field over passes (scripts/gpu-official.sh):
# ONLY="OP:WHO ..." measures only those runs, SKIP="OP:WHO ..." leaves those out
# (measured elsewhere in the same run; said in the log), WHO being ropegrad,
# plain014, ropegrad-as-plugin, reference, reference-compile or a solution
# file's name without "OP-" (peer, peer-runs12, ropegrad-solution; one named
# like a run above gets "-solution": OP-reference.json is reference-solution).
# DEADLINE (epoch seconds) starts no run that would not end before it, by the
# estimates EST_NATIVE (20 s: ropegrad and the plugins), EST_REFERENCE (40),
# EST_COMPILE (180: torch.compile, one graph per shape) and EST_SOLUTION (120),
# and stops a run at it: a skipped or stopped run is a row of the table
# ("skipped: ..."), never left out silently. EXPORTS=0 leaves the exports (runs
# list, rank, site, field.md) to the caller. Each run's start and end are
# printed with the seconds since the script began.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
B=${BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
BACKEND=${BACKEND:-cuda}
OPS=${OPS:-"011 012 014"}
PEERS=${PEERS:-../shared/official-evaluator/peers}
R=${RESULTS:-results/peers}
PY=${PYTHON:-python3}
read -r -a EXTRA <<< "${BENCH_ARGS:-}"
RG=${RG:-$B/ropegrad}
DB="$R/runs.db"
export ROPEGRAD_LIB="$B/libropegrad.so" ROPEGRAD_CLI_LIB="$B/libropegrad_cli.so"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
[ -x "${RG%% *}" ] || { echo "peers: $RG missing (build first)"; exit 1; }
mkdir -p "$R/site"
failed=0
# op who run exit note refusal: one line per measured run, for the table
# (runs.tsv). KEEP=1 adds to the registry and table of an earlier run (the
# ops measured in several calls, on one machine), else both start empty.
if [ "${KEEP:-0}" != 1 ]; then rm -f "$DB"; : > "$R/runs.tsv"; fi

T_START=$(date +%s)
since() { echo "+$(( $(date +%s) - T_START ))s"; }
listed() { [[ " $1 " == *" $2 "* ]]; }

# estimate WHO COMMAND: the seconds a run is given before DEADLINE.
estimate() {
  case $1 in
    reference) echo "${EST_REFERENCE:-40}" ;;
    reference-compile) echo "${EST_COMPILE:-180}" ;;
    ropegrad|plain014|ropegrad-as-plugin) echo "${EST_NATIVE:-20}" ;;
    *) echo "${EST_SOLUTION:-120}" ;;
  esac
}

# wanted OP WHO: 0 when this pass measures it (ONLY, SKIP), else 1 (SKIP said so).
wanted() {
  if [ -n "${ONLY:-}" ] && ! listed "$ONLY" "$1:$2"; then return 1; fi
  if [ -n "${SKIP:-}" ] && listed "$SKIP" "$1:$2"; then
    echo "peers: [$(since)] $1 $2: not here (SKIP: measured elsewhere in this run)"
    return 1
  fi
  return 0
}

# measure OP WHO NOTE "COMMAND" OPTIONS...: one run of `COMMAND bench`,
# recorded, its manifest and JSON kept as $R/OP-WHO.*, its log as $R/OP-WHO.txt.
measure() {
  local op=$1 who=$2 note=$3 cmd=$4
  shift 4
  wanted "$op" "$who" || return 0
  local base="$R/$op-$who" lim=0 need
  if [ -n "${DEADLINE:-}" ]; then
    lim=$(( DEADLINE - $(date +%s) ))
    need=$(estimate "$who")
    if [ "$lim" -lt "$need" ]; then
      echo "peers: [$(since)] $op $who: skipped: ${lim}s left before the deadline, a run is given ${need}s"
      printf '%s\t%s\t-\tskipped\t%s\t%s\n' "$op" "$who" "$note" \
        "skipped: ${lim}s left before the deadline (needs about ${need}s)" >> "$R/runs.tsv"
      return 0
    fi
  fi
  echo "peers: [$(since)] $op $who: started"
  local t0=$SECONDS
  # shellcheck disable=SC2086 # cmd is a command and its leading words
  if [ "$lim" -gt 0 ]; then
    timeout -k 5 "$lim" $cmd bench --suite suites/"$op"-* --backend "$BACKEND" "${EXTRA[@]}" "$@" \
      --record --db "$DB" --manifest "$base.manifest.json" --json "$base.json" > "$base.txt" 2>&1
  else
    $cmd bench --suite suites/"$op"-* --backend "$BACKEND" "${EXTRA[@]}" "$@" --record --db "$DB" \
      --manifest "$base.manifest.json" --json "$base.json" > "$base.txt" 2>&1
  fi
  local rc=$?
  local id
  id=$(sed -n 's/^recorded as run \([0-9]*\)$/\1/p' "$base.txt" | tail -n 1)
  if [ -n "$id" ] && [ -n "$note" ]; then $RG runs note "$id" "$note" --db "$DB" >/dev/null 2>&1; fi
  local line
  line=$(grep -E "^python3 -m ropegrad|^ropegrad bench" "$base.txt" | head -n 1)
  if [ "$lim" -gt 0 ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; }; then
    line="stopped at the deadline after $(( SECONDS - t0 ))s"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$op" "$who" "${id:--}" "$rc" "$note" "$line" >> "$R/runs.tsv"
  echo "peers: [$(since)] $op $who: exit $rc${id:+, run $id}, $(( SECONDS - t0 ))s$( [ -z "$id" ] && [ -n "$line" ] && echo ": $line")"
  # where the time went (python3 -m ropegrad's progress lines, ROPEGRAD_VERBOSE=1)
  grep -E "ropegrad \[\+[0-9.]+s\]: (torch .* imported|cuda_cpp build and load|.* imported in|the C harness finished)" \
    "$base.txt" | sed 's/^/    /'
}

for op in $OPS; do
  measure "$op" ropegrad "" "$RG"
  if [ "$op" = 014 ]; then
    measure "$op" plain014 "" "$RG" --impl "$B/examples/plugin-014/libplain014.so" \
      --impl-source examples/plugin-014/plugin.c --impl-source examples/plugin-014/kernel.cu
    measure "$op" ropegrad-as-plugin "" "$RG" --impl "$B/dev/plugin-self/libropegrad_self014.so" \
      --impl-source dev/rope_backward/plugin-self/plugin.c
  fi
  measure "$op" reference "" "$PY -m ropegrad" --impl reference
  measure "$op" reference-compile "" "$PY -m ropegrad" --impl reference-compile
  ls "$PEERS/$op"-*.json > /dev/null 2>&1 || [ -n "${ONLY:-}" ] || { echo "peers: no $op solution files under $PEERS"; failed=1; }
  for sol in "$PEERS/$op"-*.json; do
    [ -f "$sol" ] || continue
    who=$(basename "$sol" .json)
    note=""
    # The public 011 peer returns a batch-stride-0 view of batch 0's rows:
    # correct only when every batch holds the same positions (as the dataset's
    # inputs do), wrong on packed sequences (`check --inputs positions`).
    [ "$who" = 011-peer ] && note="returns a view of batch 0 (batch stride 0): right only when every batch holds the same positions"
    who=${who#"$op"-}
    # A solution file named like a run above (OP-reference.json: the definition's
    # reference as a solution) gets its own result files.
    case $who in ropegrad|plain014|ropegrad-as-plugin|reference|reference-compile) who=$who-solution ;; esac
    measure "$op" "$who" "$note" "$PY -m ropegrad" --solution "$sol"
  done
done

# The exports: the registry, its list and ranking, the pages.
[ "${EXPORTS:-1}" = 0 ] && exit $failed
$RG runs list --json --db "$DB" > "$R/runs-list.json" 2> "$R/runs-list.err" || failed=1
$RG runs rank --db "$DB" > "$R/rank.txt" 2>&1 || failed=1
$RG site --out "$R/site" --db "$DB" > "$R/site.txt" 2>&1 || failed=1
"$PY" scripts/figures/peers_table.py "$R" > "$R/field.md" || failed=1
cat "$R/field.md"
exit $failed
