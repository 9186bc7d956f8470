#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with a GPU: issue 26's agreement with NVIDIA's official SOL-ExecBench
# evaluator and issue 25's field, for the problems in PROBLEMS (011 012 014).
#
#   bash scripts/gpu-build.sh                 # build-gpu/ (sm_90)
#   bash scripts/gpu-official.sh --prepare    # copies the official evaluator (OFFICIAL_EVALUATOR,
#                                             # default ../shared/official-evaluator) into dev/official-work/ (ignored)
#   bash scripts/gpu-official.sh
#
# What a run does, against one time budget (BUDGET_S, default 560 s; every
# step checks the time left and skips what would not finish, saying so in the
# log and in the tables):
#   1. the environment as the evaluator's run.sh makes it, with its own tools
#      (dev/official-work/official-evaluator/tools): probe_env.py, the
#      pydantic and cupti stand-ins where the machine lacks them (the cupti one
#      built by tools/build_cupti_shim.sh), the CUPTI timing self-test
#      (timing_selftest.py; if it fails, the evaluations time with CUDA events
#      in a patched copy, as run.sh does, and the tables say so);
#   2. the solutions: ropegrad's (`ropegrad export-solution --suite
#      suites/P-OP`, target_hardware ["LOCAL"] as run.sh's
#      SOLX_LOCAL_ONLY=1) and the public peer (peers/P-peer.json), validated
#      with the official data models (dev/official/two_phase.py --validate-only);
#   3. in the background from here on: the official compiles (phase 1 of
#      dev/official/two_phase.py, all at once, the GPU hidden from them) and
#      ropegrad's own builds of the cuda_cpp solutions (`python3 -m ropegrad ...
#      --build-only` into one cache folder);
#   4. meanwhile, on the GPU (scripts/peers.sh, one registry): `ropegrad bench`
#      (ropegrad's kernel, the C path) and ropegrad's harness on the SAME
#      solution files (`python3 -m ropegrad bench --solution F`: P-ropegrad-solution
#      and P-peer), the ones needing no build first; then the rest of the field
#      (the example plugin, ropegrad as a plugin, the reference eager and
#      torch.compile'd, the other solution files), leaving the time the
#      official evaluations need;
#   5. phase 2: the official evaluations, one after another, the GPU otherwise idle;
#   6. `ropegrad runs import` of every trace file into the same registry, its
#      exports (runs list, rank, `ropegrad site` pages, field.md) and the
#      agreement table (dev/official/agreement_table.py: agreement.md, agreement.json).
#
# $OUT gets: official-results.tar.gz (the registry, every run's result,
# manifest and log, the official traces, logs and status, the solutions used,
# the environment probe and self-test, the pages), official-log.txt,
# agreement.md, agreement.json, field.md.
#
# Environment: OUT (default results/official/new), BUDGET_S (560), PROBLEMS
# ("011 012 014"), SOLUTIONS ("ropegrad peer"; also ropegrad-fast: `export-solution --kernel 1`,
# 012's fast kernel; saved-NAME: a file saved here after --prepare as dev/official-work/P-saved-NAME.json,
# e.g. the export of the build before a kernel change, for an A/B in one run), STEPS ("agreement field":
# agreement = both sides on the solution files, field = the rest of issue 25's
# field), RG_BENCH_ARGS (extra options for every ropegrad bench run, e.g. a
# protocol option the harness has), OVERLAP (1: ropegrad measures while the
# official compiles run; 0: the compiles first, then the GPU work),
# HIDE_GPU_IN_COMPILE (1: the official compiles run with CUDA_VISIBLE_DEVICES="", which checks
# that they touch no GPU, two_phase.py's header; 0: exactly the CLI's environment),
# PAIRS ("P:S ...": only these problem:solution pairs of PROBLEMS x SOLUTIONS), FIELD_SKIP ("P:WHO
# ...": field runs left out, e.g. measured by an earlier run kept with KEEP_FROM), SHARE_AUTOTUNE=1
# (Triton's autotune results kept on disk, TRITON_CACHE_AUTOTUNING=1 in one fresh TRITON_CACHE_DIR, and
# printed, TRITON_PRINT_AUTOTUNING=1: both sides then time the configs the first one chose),
# OFFICIAL_REPEAT (1; N: the official evaluations N times, round by round, LABEL@rK the later ones),
# SWITCHED ("P:WHO ...": ropegrad's side of those agreement pairs measured again with SWITCH_ARGS
# added, as P-WHO-switched.*, and shown beside its row: a protocol point measured switched),
# BUILD (build-gpu), PY (python3), COMPILE_TIMEOUT (600) and EVAL_TIMEOUT
# (540) (the CLI's), the estimates that decide which pairs (a problem and a
# solution: both sides or neither) fit the budget, admitted in order:
# EST_NATIVE_S (20: `ropegrad bench`), EST_CPP_RG_S (40) and EST_CPP_OFFICIAL_S
# (60) for a cuda_cpp solution (ropegrad's harness, the official evaluation),
# EST_PY_RG_S (120) and EST_PY_OFFICIAL_S (150) for a pytorch/triton one (JIT
# and autotuning inside the run); the log has each step's real seconds to
# set them from; POST_S (45: kept for the imports, exports and tables), DRY_RUN=1 (this
# machine: set up, export, validate, print the plan; nothing measured).
# dev/official-work/keep/ (--prepare with KEEP_FROM=DIR, DIR an unpacked
# official-results.tar.gz of an earlier run) starts the results folder from
# that run's: one registry, one table over several runs.
#
# Exit 0 when every step ran (a failed workload or a differing row is a
# result), 1 when one did not (skipped steps included), 2 on a setup error.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
WORKDIR=dev/official-work
EV=$ROOT/$WORKDIR/official-evaluator

# ---- --prepare ----------------------------------------------------------------------------------
prepare() {
  local src=${OFFICIAL_EVALUATOR:-$ROOT/../shared/official-evaluator}
  if [ ! -f "$src/run.sh" ] || [ ! -d "$src/sol-execbench/src/sol_execbench" ]; then
    echo "gpu-official: no official evaluator at $src (OFFICIAL_EVALUATOR=DIR)"
    return 2
  fi
  rm -rf "$WORKDIR"
  mkdir -p "$WORKDIR"
  cp -r "$src" "$WORKDIR/official-evaluator" && chmod -R u+w "$WORKDIR"
  if [ -n "${KEEP_FROM:-}" ]; then
    [ -f "$KEEP_FROM/runs.db" ] || { echo "gpu-official: KEEP_FROM=$KEEP_FROM has no runs.db"; return 2; }
    cp -r "$KEEP_FROM" "$WORKDIR/keep" && chmod -R u+w "$WORKDIR/keep"
    echo "gpu-official: the run starts from $KEEP_FROM's results ($WORKDIR/keep)"
  fi
  git check-ignore -q "$WORKDIR" || echo "gpu-official: WARNING: $WORKDIR is not ignored by git (.gitignore)"
  local bd=${BUILD:-build-gpu}
  [ -x "$bd/ropegrad" ] || echo "gpu-official: $bd/ropegrad missing: run bash scripts/gpu-build.sh first"
  cat <<EOF

Then: bash scripts/gpu-official.sh (BUDGET_S=560 s: what does not fit is skipped and said so, in the log
and the tables), or narrower, e.g. 014 first, then the others starting from its results:

  PROBLEMS=014 OUT=/tmp/run1 bash scripts/gpu-official.sh
  mkdir -p /tmp/run1/res && tar -C /tmp/run1/res -xzf /tmp/run1/official-results.tar.gz
  KEEP_FROM=/tmp/run1/res bash scripts/gpu-official.sh --prepare
  PROBLEMS='011 012' bash scripts/gpu-official.sh

Results: \$OUT/official-results.tar.gz, agreement.md, agreement.json, field.md, official-log.txt.
EOF
}

if [ "${1:-}" = --prepare ]; then
  prepare
  exit $?
fi
[ $# -eq 0 ] || { echo "usage: bash scripts/gpu-official.sh [--prepare]"; exit 2; }
[ -d "$EV/sol-execbench/src/sol_execbench" ] || {
  echo "gpu-official: $EV missing: run bash scripts/gpu-official.sh --prepare first"; exit 2; }

OUT=${OUT:-results/official/new}
BUDGET_S=${BUDGET_S:-560}
PROBLEMS=${PROBLEMS:-"011 012 014"}
SOLUTIONS=${SOLUTIONS:-"ropegrad peer"}
STEPS=${STEPS:-"agreement field"}
OVERLAP=${OVERLAP:-1}
B=${BUILD:-build-gpu}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
PY=${PY:-python3}
COMPILE_TIMEOUT=${COMPILE_TIMEOUT:-600}
EVAL_TIMEOUT=${EVAL_TIMEOUT:-540}
POST_S=${POST_S:-45}
DRY_RUN=${DRY_RUN:-0}
T0=$(date +%s)
DEADLINE=$((T0 + BUDGET_S))
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
W=$(mktemp -d /tmp/rg-official.XXXXXX)
RES=$W/results
mkdir -p "$RES/official" "$RES/solutions" "$RES/env" "$W/sol" "$W/official"
exec 3>&1 4>&2
exec > >(tee -a "$W/log.txt") 2>&1
FAILED=0
BG_GROUPS=()
left() { echo $((DEADLINE - $(date +%s))); }
log() { echo "== official [+$(($(date +%s) - T0))s, $(left)s left] $*"; }
has_step() { [[ " $STEPS " == *" $1 "* ]]; }
# Background work runs in a process group of its own (setsid: its id is the process's, $!), so that
# the end can stop it and whatever it started by that group's id; without setsid, as it is.
SETSID=()
command -v setsid > /dev/null && SETSID=(setsid -w)
: > "$W/skipped.txt"
skipped() { echo "official: SKIPPED: $*" | tee -a "$W/skipped.txt"; FAILED=1; }

# ---- the end, whatever happens: no background work left, the results packed ------------------------
PACKED=0
# shellcheck disable=SC2317 # pack and finish run from the EXIT trap
pack() {
  [ "$PACKED" = 1 ] && return
  PACKED=1
  cp "$W/log.txt" "$RES/official-log.txt" 2>/dev/null
  tar -C "$RES" -czf "$OUT/official-results.tar.gz" . 2>/dev/null || echo "official: the tarball failed"
  for f in agreement.md agreement.json field.md; do [ -f "$RES/$f" ] && cp "$RES/$f" "$OUT/$f"; done
  cp "$W/log.txt" "$OUT/official-log.txt"
}
# shellcheck disable=SC2317
finish() {
  : > "$W/go" 2>/dev/null   # phase 2 never waits for a caller that is gone
  local g
  for g in "${BG_GROUPS[@]}"; do kill -- "-$g" 2>/dev/null || kill "$g" 2>/dev/null; done
  pack
  exec 1>&3 2>&4
  sleep 1
  cp "$W/log.txt" "$OUT/official-log.txt"   # the whole log, tee done
}
trap finish EXIT
trap 'echo "official: stopped by a signal"; exit 143' TERM INT

# ---- 1. the environment, as the evaluator's run.sh makes it -------------------------------------
log "environment (the evaluator's tools: probe_env.py, shims, build_cupti_shim.sh, timing_selftest.py)"
PYABS=$("$PY" -c 'import sys; print(sys.executable)' 2>/dev/null) || { echo "official: $PY does not run"; exit 2; }
# The CLI starts `python build_ext.py` and `python eval_driver.py`: make `python` this one.
mkdir -p "$W/bin"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$PYABS" > "$W/bin/python"
chmod +x "$W/bin/python"
PYDIR=$(dirname "$PYABS")
export PATH="$W/bin:$PYDIR:$PATH" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
CUDA_PROBE=--cuda
[ "$DRY_RUN" = 1 ] && CUDA_PROBE=""
timeout 180 "$PYABS" "$EV/tools/probe_env.py" $CUDA_PROBE > "$RES/env/probe.json" 2> "$W/probe.err" ||
  { cat "$W/probe.err"; exit 2; }
pq() { "$PYABS" -c "import json,sys; d=json.load(open('$RES/env/probe.json')); v=eval(sys.argv[1]); print('' if v is None else v)" "$1"; }
GPU=$(pq 'd.get("gpu",{}).get("name")')
CAP=$(pq 'd.get("gpu",{}).get("capability")')
TORCH_V=$(pq 'd["modules"]["torch"]["version"]')
echo "python $(pq 'd["python"]'), torch $TORCH_V, triton $(pq 'd["modules"]["triton"]["version"]'), gpu ${GPU:-none} (${CAP:-?})"
PP=("$EV/sol-execbench/src")
SHIMS=()
[ "$(pq 'd["modules"]["pydantic"]["is_v2"]')" = True ] || { PP+=("$EV/shims/pydantic"); SHIMS+=(pydantic); }
NEED_CUPTI_SHIM=0
if [ -z "$(pq 'd["modules"]["cupti"]["version"]')" ]; then PP+=("$EV/shims/cupti"); SHIMS+=(cupti); NEED_CUPTI_SHIM=1; fi
if [ -z "$(pq 'd["modules"]["click"]["version"]')" ] || [ -z "$(pq 'd["modules"]["rich"]["version"]')" ]; then
  # The CLI module imports them at its top; two_phase.py uses only its loaders.
  PP+=("$ROOT/tests/cli/stub_cli"); SHIMS+=("click/rich stand-ins (tests/cli/stub_cli)")
fi
METHOD=cupti
if [ "$NEED_CUPTI_SHIM" = 1 ] && [ "$DRY_RUN" != 1 ]; then
  mapfile -t LIBS < <(pq '"\n".join(d.get("libcupti_mapped_after_torch", []) + d["libcupti_candidates"])')
  LIBCUPTI=""
  for l in "${LIBS[@]}"; do [ -n "$l" ] && [ -f "$l" ] && { LIBCUPTI=$l; break; }; done
  INCS="$(pq '" ".join(d["cupti_include_candidates"])') $(pq 'd.get("cuda_include") or ""')"
  if [ -n "$LIBCUPTI" ] && [ -f "$(dirname "$LIBCUPTI")/../include/cupti.h" ]; then
    INCS="$(cd "$(dirname "$LIBCUPTI")/../include" && pwd) $INCS"
  fi
  if [ -n "$LIBCUPTI" ] && bash "$EV/tools/build_cupti_shim.sh" "$W/build/libsolx_cupti.so" "$LIBCUPTI" "$INCS" \
      > "$RES/env/build-cupti.txt" 2>&1; then
    export SOLX_CUPTI_LIB=$W/build/libsolx_cupti.so
  else
    echo "official: the cupti stand-in did not build (libcupti: ${LIBCUPTI:-none}); CUPTI timing is unavailable"
  fi
  tail -n 2 "$RES/env/build-cupti.txt" 2>/dev/null
fi
OFFICIAL_PP=$(IFS=:; echo "${PP[*]}")
if [ "$DRY_RUN" != 1 ]; then
  PYTHONPATH=$OFFICIAL_PP timeout 180 "$PYABS" "$EV/tools/timing_selftest.py" > "$RES/env/selftest.json" \
    2> "$W/selftest.err"
  ST_RC=$?
  grep -E '"(ok|cupti_median_ms|cuda_events_median_ms|gpu)"' "$RES/env/selftest.json"
  if [ "$ST_RC" != 0 ]; then
    # As run.sh: a copy whose timer defaults to CUDA events (the one change), labelled in the tables.
    METHOD=cuda_events
    mkdir -p "$W/events/src" && cp -r "$EV/sol-execbench/src/sol_execbench" "$W/events/src/"
    sed -i 's/methodology: Literal\["cuda_events", "cupti"\] = "cupti",/methodology: Literal["cuda_events", "cupti"] = "cuda_events",/' \
      "$W/events/src/sol_execbench/core/bench/timing.py"
    if grep -q '= "cuda_events",' "$W/events/src/sol_execbench/core/bench/timing.py"; then
      OFFICIAL_PP=$W/events/src${OFFICIAL_PP#"$EV/sol-execbench/src"}
      echo "official: WARNING: the CUPTI self-test failed: the evaluations time with CUDA events (patched copy)"
    else
      echo "official: the CUDA-events patch did not apply; evaluating with the unpatched (CUPTI) timer"
      METHOD=cupti-selftest-failed
    fi
  fi
fi
CUDA_HOME_P=$(pq 'd.get("cuda_home")')
[ -n "$CUDA_HOME_P" ] && [ -d "$CUDA_HOME_P/lib64/stubs" ] && export LIBRARY_PATH="${LIBRARY_PATH:+$LIBRARY_PATH:}$CUDA_HOME_P/lib64/stubs"
NINJA_BIN=$(pq 'd["tools"].get("ninja_module_bin")')
command -v ninja > /dev/null || { [ -n "$NINJA_BIN" ] && export PATH="$PATH:$NINJA_BIN"; }
echo "methodology $METHOD; stand-ins: ${SHIMS[*]:-none}; official PYTHONPATH=$OFFICIAL_PP"

# ropegrad: the build's libraries for ropegrad only (python keeps the image's own).
if [ ! -x "$B/ropegrad" ]; then echo "official: $B/ropegrad missing (bash scripts/gpu-build.sh first)"; exit 2; fi
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$B/ropegrad" > "$W/ropegrad"
chmod +x "$W/ropegrad"
RG=$W/ropegrad
export ROPEGRAD_LIB=$B/libropegrad.so ROPEGRAD_CLI_LIB=$B/libropegrad_cli.so
export ROPEGRAD_SOLUTION_CACHE=$W/rg-solutions ROPEGRAD_VERBOSE=1
# ropegrad's own builds (not the official ones, whose environment stays the CLI's): the local
# architecture named, so neither ropegrad's -gencode nor torch (TORCH_CUDA_ARCH_LIST: an older torch
# asks the GPU even when a flag names the arch) needs the GPU to build.
RG_ARCH_ENV=()
[ -n "$CAP" ] && export ROPEGRAD_CUDA_ARCH=sm_${CAP/./} && RG_ARCH_ENV=(TORCH_CUDA_ARCH_LIST="$CAP")
RG_VERSION=$("$RG" --version 2>&1 | head -n 1)
echo "ropegrad: $RG_VERSION ($B)"
if [ -d "$WORKDIR/keep" ]; then
  cp -r "$WORKDIR/keep/." "$RES/"
  kept=("$RES/official/"*.traces.jsonl)
  [ -e "${kept[0]}" ] || kept=()
  echo "official: the results folder starts from $WORKDIR/keep (${#kept[@]} official trace files)"
fi
touch "$RES/runs.tsv"
if [ "${SHARE_AUTOTUNE:-0}" = 1 ]; then
  export TRITON_CACHE_AUTOTUNING=1 TRITON_PRINT_AUTOTUNING=1 TRITON_CACHE_DIR=$W/triton-cache
  mkdir -p "$TRITON_CACHE_DIR"
  echo "official: SHARE_AUTOTUNE=1: Triton's autotune choices kept in $TRITON_CACHE_DIR for both sides"
fi

# ---- 2. the solutions, and which pairs fit the budget -----------------------------------------------
log "solutions (ropegrad export-solution, LOCAL only; the public peers), validated with the official models"
CAND=()         # problem, label, file, who, kind (cpp|py): five words a pair
in_pairs() { [ -z "${PAIRS:-}" ] || [[ " $PAIRS " == *" $1:$2 "* ]]; }
languages() { "$PYABS" -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['spec']['languages']))" "$1"; }
for p in $PROBLEMS; do
  [ -f "$EV/problems/$p/definition.json" ] || { skipped "problem $p: not in $EV/problems"; continue; }
  for s in $SOLUTIONS; do
    in_pairs "$p" "$s" || continue
    case $s in
      ropegrad)
        f=$W/sol/$p-ropegrad-solution.json who=ropegrad-solution
        if ! "$RG" export-solution --suite suites/"$p"-* --out "$f" > "$W/export-$p.txt" 2>&1; then
          cat "$W/export-$p.txt"; skipped "$p ropegrad: export-solution failed"; continue
        fi
        "$PYABS" -c "import json,sys; d=json.load(open(sys.argv[1])); d['spec']['target_hardware']=['LOCAL']; json.dump(d,open(sys.argv[1],'w'),indent=1)" "$f" ;;
      ropegrad-fast)   # the op's fast kernel (export-solution --kernel 1; 012 only)
        f=$W/sol/$p-ropegrad-fast.json who=ropegrad-fast
        if ! "$RG" export-solution --suite suites/"$p"-* --kernel 1 --out "$f" > "$W/export-$p-fast.txt" 2>&1; then
          cat "$W/export-$p-fast.txt"; skipped "$p ropegrad-fast: export-solution --kernel 1 failed"; continue
        fi
        "$PYABS" -c "import json,sys; d=json.load(open(sys.argv[1])); d['spec']['target_hardware']=['LOCAL']; json.dump(d,open(sys.argv[1],'w'),indent=1)" "$f" ;;
      peer)
        f=$W/sol/$p-peer.json who=peer
        [ -f "$EV/peers/$p-peer.json" ] || { skipped "$p peer: no peers/$p-peer.json"; continue; }
        cp "$EV/peers/$p-peer.json" "$f" ;;
      saved-*)   # a solution file saved beforehand as dev/official-work/P-saved-NAME.json (an A/B of a change)
        f=$W/sol/$p-$s.json who=$s
        [ -f "$ROOT/$WORKDIR/$p-$s.json" ] || { skipped "$p $s: no $WORKDIR/$p-$s.json"; continue; }
        cp "$ROOT/$WORKDIR/$p-$s.json" "$f" ;;
      *) skipped "solution '$s': ropegrad, ropegrad-fast, peer or saved-NAME"; continue ;;
    esac
    cp "$f" "$RES/solutions/"
    kind=py
    [[ " $(languages "$f") " == *" cuda_cpp "* ]] && kind=cpp
    CAND+=("$p" "$s" "$f" "$who" "$kind")
  done
done
VALIDATE=()
for ((i = 0; i < ${#CAND[@]}; i += 5)); do VALIDATE+=(--item "$EV/problems/${CAND[i]}" "${CAND[i + 2]}" "${CAND[i]}-${CAND[i + 1]}"); done
if [ ${#VALIDATE[@]} -gt 0 ]; then
  PYTHONPATH=$OFFICIAL_PP "$PYABS" dev/official/two_phase.py --out "$W/official" --validate-only "${VALIDATE[@]}" ||
    { echo "official: a solution is not valid for the official models"; FAILED=1; }
fi
# A pair is both sides or neither: admitted in order while its estimate (ropegrad's runs + the
# official evaluation) fits what is left of the budget; the rest are skipped now, saying so.
est() { local v="EST_${1^^}_${2^^}_S"; echo "${!v}"; }
EST_NATIVE_S=${EST_NATIVE_S:-20}
EST_CPP_RG_S=${EST_CPP_RG_S:-40} EST_CPP_OFFICIAL_S=${EST_CPP_OFFICIAL_S:-60}
EST_PY_RG_S=${EST_PY_RG_S:-120} EST_PY_OFFICIAL_S=${EST_PY_OFFICIAL_S:-150}
ITEMS=()        # two_phase.py --item triples of the admitted pairs
NATIVE=()       # OP:ropegrad (`ropegrad bench`) beside each admitted ropegrad pair
CPP_WHO=()      # OP:WHO of ropegrad-side solution runs that need a cuda_cpp build
PY_WHO=()       # OP:WHO of those that need none
RESERVE=0       # seconds kept for the official evaluations
NOT_ADMITTED=() # agreement_table.py --skipped triples
if has_step agreement; then
  avail=$(( $(left) - POST_S ))
  for ((i = 0; i < ${#CAND[@]}; i += 5)); do
    p=${CAND[i]} s=${CAND[i + 1]} f=${CAND[i + 2]} who=${CAND[i + 3]} kind=${CAND[i + 4]}
    cost=$(( $(est "$kind" rg) + $(est "$kind" official) ))
    [ "$s" = ropegrad ] && cost=$((cost + EST_NATIVE_S))
    if [ "$cost" -gt "$avail" ]; then
      why="not admitted to the agreement: the pair needs about ${cost}s (both sides), ${avail}s of the budget was left for it"
      skipped "$p-$s: $why"
      NOT_ADMITTED+=(--skipped "$p" "$s" "$why")
      continue
    fi
    avail=$((avail - cost))
    RESERVE=$((RESERVE + $(est "$kind" official)))
    ITEMS+=(--item "$EV/problems/$p" "$f" "$p-$s")
    [ "$s" = ropegrad ] && NATIVE+=("$p:ropegrad")
    if [ "$kind" = cpp ]; then CPP_WHO+=("$p:$who"); else PY_WHO+=("$p:$who"); fi
    echo "pair $p-$s ($kind): admitted, about ${cost}s"
  done
fi
# OFFICIAL_REPEAT=N: the official evaluations N times, interleaved round by round (every admitted
# solution once, then again as LABEL@r2, ...: each a compile and an evaluation of its own, as the CLI
# would run them), so that one run gives each solution N official figures taken alternately.
# The agreement table uses round 1; the later rounds' traces are kept and imported beside it.
OFFICIAL_REPEAT=${OFFICIAL_REPEAT:-1}
if [ "$OFFICIAL_REPEAT" -gt 1 ] && [ ${#ITEMS[@]} -gt 0 ]; then
  ROUND1=("${ITEMS[@]}")
  for ((r = 2; r <= OFFICIAL_REPEAT; r++)); do
    for ((i = 0; i < ${#ROUND1[@]}; i += 4)); do
      ITEMS+=(--item "${ROUND1[i + 1]}" "${ROUND1[i + 2]}" "${ROUND1[i + 3]}@r$r")
      RESERVE=$((RESERVE + ${EST_REPEAT_S:-20}))
    done
  done
  echo "official: OFFICIAL_REPEAT=$OFFICIAL_REPEAT: $(( ${#ITEMS[@]} / 4 )) evaluations, round by round"
fi
echo "kept for the official evaluations: ${RESERVE}s (+${POST_S}s for the imports and tables)"

# ---- the plan (DRY_RUN=1) ------------------------------------------------------------------------
if [ "$DRY_RUN" = 1 ]; then
  log "DRY_RUN=1: the plan (nothing below runs here)"
  echo "background: PYTHONPATH=$OFFICIAL_PP python3 dev/official/two_phase.py --out W/official --jobs $(nproc)" \
       "--hide-gpu-in-compile --go-file W/go --deadline T ${ITEMS[*]}"
  for w in "${CPP_WHO[@]}"; do echo "background: python3 -m ropegrad bench --solution W/sol/${w%%:*}-${w#*:}.json --suite $(echo suites/"${w%%:*}"-*) --backend cuda --build-only"; done
  echo "GPU, no build needed: scripts/peers.sh ONLY=\"${NATIVE[*]} ${PY_WHO[*]}\""
  echo "GPU, after the builds: scripts/peers.sh ONLY=\"${CPP_WHO[*]}\""
  has_step field && echo "GPU, the field (until ${RESERVE}s + ${POST_S}s before the end): scripts/peers.sh OPS=\"$PROBLEMS\" PEERS=$EV/peers"
  echo "then: phase 2 (the official evaluations), ropegrad runs import, site, field.md, agreement table"
  exit $FAILED
fi

# ---- 3. in the background: the official compiles and ropegrad's builds ------------------------------
TWO_PID=""
HIDE=(--hide-gpu-in-compile)
[ "${HIDE_GPU_IN_COMPILE:-1}" = 1 ] || HIDE=()
if has_step agreement && [ ${#ITEMS[@]} -gt 0 ]; then
  log "phase 1 in the background: the official compiles (dev/official/two_phase.py)"
  PYTHONPATH=$OFFICIAL_PP "${SETSID[@]}" "$PYABS" dev/official/two_phase.py --out "$W/official" --jobs "$(nproc)" \
    --compile-timeout "$COMPILE_TIMEOUT" --timeout "$EVAL_TIMEOUT" --deadline $((DEADLINE - POST_S)) \
    --go-file "$W/go" "${HIDE[@]}" "${ITEMS[@]}" > "$W/two_phase.txt" 2>&1 &
  TWO_PID=$!
  BG_GROUPS+=("$TWO_PID")
fi
PREBUILD_PIDS=()
if has_step agreement; then
  for w in "${CPP_WHO[@]}"; do
    p=${w%%:*} who=${w#*:}
    env "${RG_ARCH_ENV[@]}" CUDA_VISIBLE_DEVICES="" PYTHONPATH="$ROOT/python" "${SETSID[@]}" "$PYABS" -m ropegrad bench \
      --solution "$W/sol/$p-$who.json" --suite suites/"$p"-* --backend cuda --build-only \
      > "$RES/prebuild-$p-$who.txt" 2>&1 &
    PREBUILD_PIDS+=($!)
    BG_GROUPS+=($!)
  done
  [ ${#PREBUILD_PIDS[@]} -gt 0 ] && log "ropegrad's builds of ${CPP_WHO[*]} in the background (--build-only)"
fi
if [ "$OVERLAP" != 1 ] && [ -n "$TWO_PID" ]; then
  log "OVERLAP=0: waiting for the compiles before any GPU work"
  while kill -0 "$TWO_PID" 2>/dev/null && ! grep -q '"phase": "waiting' "$W/official/status.json" 2>/dev/null; do
    [ "$(left)" -lt $((RESERVE + POST_S)) ] && break
    sleep 1
  done
  for pid in "${PREBUILD_PIDS[@]}"; do wait "$pid"; done
fi

# ---- 4. the GPU meanwhile: ropegrad's side of the agreement, then the field -------------------------------
peers() {  # PASS_NAME PEERS_DIR ONLY SKIP [EST_SOLUTION]
  local name=$1 dir=$2 only=$3 skip=$4 est=${5:-${EST_SOLUTION:-120}}
  log "ropegrad on the GPU: $name"
  env "${RG_ARCH_ENV[@]}" ONLY="$only" SKIP="$skip" OPS="$PROBLEMS" BACKEND="${BACKEND:-cuda}" BUILD="$B" RESULTS="$RES" \
    RG="$RG" PEERS="$dir" KEEP=1 EXPORTS=0 PYTHON="$PYABS" BENCH_ARGS="--progress ${RG_BENCH_ARGS:-}" PYTHONPATH="" EST_SOLUTION="$est" \
    EST_NATIVE="$EST_NATIVE_S" DEADLINE=$((DEADLINE - POST_S - RESERVE)) bash scripts/peers.sh || FAILED=1
}
MEASURED=()
if has_step agreement; then
  peers "ropegrad bench, and the solution files needing no build" "$W/sol" "${NATIVE[*]} ${PY_WHO[*]}" "" "$EST_PY_RG_S"
  MEASURED+=("${NATIVE[@]}" "${PY_WHO[@]}")
  if [ ${#CPP_WHO[@]} -gt 0 ]; then
    for pid in "${PREBUILD_PIDS[@]}"; do
      while kill -0 "$pid" 2>/dev/null && [ "$(left)" -gt $((RESERVE + POST_S)) ]; do sleep 1; done
    done
    for w in "${CPP_WHO[@]}"; do
      f=$RES/prebuild-${w%%:*}-${w#*:}.txt
      if grep -q "not measured (--build-only)" "$f"; then
        grep -E "cuda_cpp build and load" "$f" | sed "s/^.*: /    $w built beforehand: /"
      else
        echo "    $w: the build beforehand failed or is not done (its timed run builds it):"; tail -n 3 "$f"
      fi
    done
    peers "the cuda_cpp solution files (built above)" "$W/sol" "${CPP_WHO[*]}" "" "$EST_CPP_RG_S"
    MEASURED+=("${CPP_WHO[@]}")
  fi
fi
SWITCHED_DONE=()
if has_step agreement && [ -n "${SWITCHED:-}" ]; then
  read -r -a SW_ARGS <<< "${SWITCH_ARGS:-}"
  read -r -a RG_EXTRA <<< "${RG_BENCH_ARGS:-}"
  for w in $SWITCHED; do
    p=${w%%:*} who=${w#*:}
    f=$W/sol/$p-$who.json
    [ "$who" = ropegrad-solution ] && f=$W/sol/$p-ropegrad-solution.json
    if [ ! -f "$f" ]; then skipped "switched $w: no solution file of this run"; continue; fi
    if [ "$(left)" -lt $((RESERVE + POST_S + EST_CPP_RG_S)) ]; then skipped "switched $w: no time left"; continue; fi
    log "ropegrad on the GPU: $p $who again with ${SWITCH_ARGS:-nothing} (SWITCHED)"
    base=$RES/$p-$who-switched
    env "${RG_ARCH_ENV[@]}" PYTHONPATH="$ROOT/python" "$PYABS" -m ropegrad bench --solution "$f" \
      --suite suites/"$p"-* --backend cuda --progress "${RG_EXTRA[@]}" "${SW_ARGS[@]}" --record \
      --db "$RES/runs.db" --manifest "$base.manifest.json" --json "$base.json" > "$base.txt" 2>&1 || FAILED=1
    tail -n 3 "$base.txt"
    SWITCHED_DONE+=("$p" "$who" "$base.json")
  done
fi
if has_step field; then
  peers "the rest of the field" "$EV/peers" "" "${MEASURED[*]} ${FIELD_SKIP:-}"
fi

# ---- 5. phase 2: the official evaluations, alone on the GPU --------------------------------------------
if [ -n "$TWO_PID" ]; then
  log "phase 2: the official evaluations, one after another"
  : > "$W/go"
  while kill -0 "$TWO_PID" 2>/dev/null; do
    if [ "$(left)" -lt $((POST_S - 15)) ]; then
      echo "official: two_phase.py still running $((POST_S - 15))s before the end: stopped"
      kill -- "-$TWO_PID" 2>/dev/null || kill "$TWO_PID" 2>/dev/null
      FAILED=1
      break
    fi
    sleep 1
  done
  wait "$TWO_PID" 2>/dev/null || FAILED=1
  cat "$W/two_phase.txt"
  cp "$W/official/status.json" "$RES/official/status-$STAMP.json" 2>/dev/null
  cp "$W/official/"*.log "$RES/official/" 2>/dev/null
  for f in "$W/official/"*.traces.jsonl; do [ -f "$f" ] && cp "$f" "$RES/official/"; done
  [ -f "$W/official/status.json" ] && "$PYABS" - "$W/official/status.json" <<'PYEOF' | tee -a "$W/skipped.txt"
import json, sys
for s in json.load(open(sys.argv[1]))["solutions"]:
    c, e = s["compile"], s["evaluation"]
    if e.get("status") != "ok":
        print("official: SKIPPED: %s: compile %s, evaluation %s%s" % (s["label"], c.get("status"), e.get("status"),
              ": " + e["note"] if e.get("note") else ""))
PYEOF
fi

# ---- 6. the official traces in the registry; exports; the tables ------------------------------------
log "imports, exports, tables"
for f in "$W/official/"*.traces.jsonl; do
  [ -f "$f" ] || continue
  label=$(basename "$f" .traces.jsonl) p=${label%%-*}
  line=$("$RG" runs import "$f" --suite suites/"$p"-* --db "$RES/runs.db" 2>&1)
  rc=$?
  echo "$line"
  id=$(echo "$line" | sed -n 's/.*run #\([0-9]*\).*/\1/p' | tail -n 1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "official-${label#*-}" "${id:--}" "$rc" \
    "the official evaluator's traces ($METHOD), imported" "$( [ -z "$id" ] && echo "$line")" >> "$RES/runs.tsv"
done
"$RG" runs list --json --db "$RES/runs.db" > "$RES/runs-list.json" 2> "$RES/runs-list.err" || FAILED=1
"$RG" runs rank --db "$RES/runs.db" > "$RES/rank.txt" 2>&1 || FAILED=1
"$RG" site --out "$RES/site" --db "$RES/runs.db" > "$RES/site.txt" 2>&1 || FAILED=1
"$PYABS" scripts/figures/peers_table.py "$RES" > "$RES/field.md" || FAILED=1
cat "$RES/field.md"
AGREE=()
for t in "$RES/official/"*.traces.jsonl; do
  [ -f "$t" ] || continue
  label=$(basename "$t" .traces.jsonl)
  [[ "$label" == *@r* ]] && continue   # a later round (OFFICIAL_REPEAT): not a pair of its own
  AGREE+=("${label%%-*}" "${label#*-}")
done
if has_step agreement; then
  for p in $PROBLEMS; do for s in $SOLUTIONS; do AGREE+=("$p" "$s"); done; done
fi
ARGS=()
SEEN=" "
for ((i = 0; i < ${#AGREE[@]}; i += 2)); do
  p=${AGREE[i]} s=${AGREE[i + 1]}
  [[ "$SEEN" == *" $p-$s "* ]] && continue
  SEEN="$SEEN$p-$s "
  rgf=$RES/$p-$s.json
  [ "$s" = ropegrad ] && rgf=$RES/$p-ropegrad-solution.json && ARGS+=(--native "$p" "$RES/$p-ropegrad.json")
  ARGS+=(--pair "$p" "$s" "$RES/official/$p-$s.traces.jsonl" "$rgf")
done
for st in "$RES/official/"status-*.json; do [ -f "$st" ] && ARGS+=(--status "$st"); done
ARGS+=("${NOT_ADMITTED[@]}")
for ((i = 0; i < ${#SWITCHED_DONE[@]}; i += 3)); do
  p=${SWITCHED_DONE[i]} who=${SWITCHED_DONE[i + 1]} f=${SWITCHED_DONE[i + 2]}
  [ -f "$f" ] && ARGS+=(--also "$p" "${who%-solution}" ropegrad "$f" "ropegrad with ${SWITCH_ARGS:-nothing} (SWITCHED)")
done
[ "$OVERLAP" = 1 ] && ARGS+=(--overlap)
if [ ${#AGREE[@]} -gt 0 ]; then
  "$PYABS" dev/official/agreement_table.py "${ARGS[@]}" --runs-tsv "$RES/runs.tsv" \
    --meta "gpu=${GPU:-unknown}" --meta "torch=$TORCH_V" --meta "official timer=$METHOD" \
    --meta "stand-ins=${SHIMS[*]:-none}" --meta "ropegrad=$RG_VERSION" --meta "RG_BENCH_ARGS=${RG_BENCH_ARGS:-none}" \
    --meta "Triton autotune=$( [ "${SHARE_AUTOTUNE:-0}" = 1 ] && echo "shared by both sides (SHARE_AUTOTUNE=1)" || echo "each process its own")" \
    --meta "made=$STAMP by scripts/gpu-official.sh" \
    --out-md "$RES/agreement.md" --out-json "$RES/agreement.json" || FAILED=1
fi
if [ -s "$W/skipped.txt" ]; then
  echo "== what this run did not do:"
  cat "$W/skipped.txt"
fi
log "done: \$OUT/official-results.tar.gz, agreement.md, field.md, official-log.txt"
exit $FAILED
