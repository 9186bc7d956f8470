#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with a GPU: builds (scripts/gpu-build.sh, unless BUILD names a
# finished build), tests and benchmarks every op in one go, and prints a short
# table last: every test (the GPU tests of each op included), the suites on the
# CUDA backend (JSON + manifests + registry, real-position inputs for the forward
# ops), the floors of each op beside ropegrad's kernel (dev/common/probe.cu
# forward / backward, dev/rope_apply/apply_floor.cu), torch eager and
# torch.compile side by side (bench/vs_torch_ops.py, bench/vs_torch.py,
# bench/vs_torch_apply.py), the Hugging Face step (bench/hf_step.py), the
# exported SOL-ExecBench solutions (python/tests/test_solution_export.py),
# the sin/cos bound, the development tools and compute-sanitizer.
#
#   bash scripts/gpu-ops.sh
#   STEPS="bench probe" bash scripts/gpu-ops.sh        # a subset
#
# HFROPE_ARGS: options of bench/hf_rope.py for the hfrope step (e.g. --quick); HFSTEP_ARGS: of
# bench/hf_step.py for the hf step (e.g. --rounds 12). CTEST_ARGS: options of the tests step's
# ctest (e.g. -R 'gpu|plugin' for a subset).
# STEPS (default "tests python bench apply applypeers hf hfrope host probe bound dev posvar ddp sanitize";
# python first: its torch eager times are the benches' baselines; `peers` is not in the
# default list: STEPS=peers runs the field alone; ddp needs two GPUs and skips on one;
# STEPS=solutions runs only the python step's solution export).
# The result files go to $OUT (default results/ops/, the files the docs cite), every log to
# $W (a fresh folder under /tmp; W=DIR reuses an earlier run's work, its baselines).
# Liger-Kernel (applypeers, hfrope) comes from bench/wheels/liger_kernel-*.whl when there is one
# (pip download --no-deps liger-kernel -d bench/wheels), else from the python3 environment.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-results/ops}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
W=${W:-$(mktemp -d /tmp/rg-ops.XXXXXX)}   # W=DIR keeps the work of an earlier run (its baselines)
mkdir -p "$W"
mkdir -p "$OUT"
STEPS=${STEPS:-"tests python bench apply applypeers hf hfrope host probe bound dev posvar ddp sanitize"}
B=${BUILD:-build-gpu}
if [ -z "${BUILD:-}" ] || [ ! -x "$B/ropegrad" ]; then BUILD=$B bash scripts/gpu-build.sh || exit 2; fi
# $B/lib: the libraries a bundled build carries (ROPEGRAD_BUNDLE_RUNTIME), for ropegrad and the tests only.
RG_LIBS="$ROOT/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rgx() { LD_LIBRARY_PATH="$RG_LIBS" "$ROOT/$B/ropegrad" "$@"; }
export PYTHONUNBUFFERED=1 ROPEGRAD_LIB="$ROOT/$B/libropegrad.so" PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
declare -A status
log() { echo "== $*"; }
shapes() { python3 -c "import json,sys; print(' '.join('%dx%d' % (w['axes']['batch_size'], w['axes']['seq_len']) for w in map(json.loads, open(sys.argv[1])) ))" suites/"$1"-*/workload.jsonl; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$W/gpu.txt"

if [[ " $STEPS " == *" tests "* ]]; then
  log "ctest (all tests; the GPU tests of every op run here)"
  # shellcheck disable=SC2086
  (LD_LIBRARY_PATH="$RG_LIBS" ctest --test-dir "$B" --output-on-failure -j8 ${CTEST_ARGS:-} 2>&1) | tee "$W/ctest.txt" | tail -n 12
  status[ctest]=$(grep -E "tests passed" "$W/ctest.txt" | tail -1)
  for t in test_gpu_forward test_gpu_kernel test_gpu_rope_apply test_gpu_rope_apply_pos test_gpu_rope_apply_thd test_plugin_gpu test_gpu_reward_hack; do
    LD_LIBRARY_PATH="$RG_LIBS" "$B/tests/$t" > "$W/$t.txt" 2>&1
    status[$t]="exit $?: $(grep -E 'PASSED|FAILED' "$W/$t.txt" | tr '\n' ' ')"
  done
  grep -E "^cuda case (0|1) |kind" "$W/test_gpu_forward.txt"
  # The torch.library ops on the GPU (opcheck, torch.compile, positions = tables),
  # whatever Python ctest found: python3 here has torch.
  timeout 600 python3 python/tests/test_torch_library.py > "$W/test_torch_library.txt" 2>&1
  status[test_torch_library]="exit $?: $(tail -n 1 "$W/test_torch_library.txt")"
  grep -E "^ok|^FAIL" "$W/test_torch_library.txt"
  # The Hugging Face real client on the GPU: Llama and Qwen3 switched to ropegrad from positions and
  # with tables, eager and torch.compile(fullgraph=True) on the attention blocks, against stock and
  # float64 (python/tests/test_hf_real_client.py). Its CUDA cases only (CI runs the CPU ones);
  # ROPEGRAD_HF_DEVICES=cuda makes a missing GPU a failure, not a skip.
  ROPEGRAD_HF_DEVICES=cuda timeout 420 python3 python/tests/test_hf_real_client.py > "$W/test_hf_real_client.txt" 2>&1
  status[test_hf_real_client]="exit $?: $(grep -E '^cuda cases' "$W/test_hf_real_client.txt" | head -n 1); $(tail -n 1 "$W/test_hf_real_client.txt")"
  grep -E "^ok|^FAIL|^cuda" "$W/test_hf_real_client.txt"
fi

if [[ " $STEPS " == *" python "* ]]; then
  # First: torch eager / compile beside ropegrad for every op.
  # The eager times are also each op's baseline (T_b) for the bench step below,
  # so its manifests carry SOL score, avg_speedup and fast_1_count/total.
  log "python: the torch module, the ops beside torch eager / compile (eager = the bench baselines)"
  python3 python/tests/test_forward_torch.py > "$W/test_forward_torch.txt" 2>&1
  status[test_forward_torch]="exit $?: $(tail -n 1 "$W/test_forward_torch.txt")"
  grep -E "FAIL|max err|backward" "$W/test_forward_torch.txt" | head -20
  timeout 300 python3 bench/vs_torch_ops.py --out "$W/h200-vs-torch-ops.json" --baseline-dir "$W" > "$W/vs_torch_ops.txt" 2>&1
  status[vs_torch_ops]="exit $?"
  grep -E "^op|geomean|^\| [0-9]" "$W/vs_torch_ops.txt" | grep -v "^op .* workload [1-9]"
  timeout 240 python3 bench/vs_torch.py --out "$W/h200-vs-torch.json" --baseline-out "$W/h200-torch-eager-014.baseline.json" \
    > "$W/vs_torch.txt" 2>&1
  status[vs_torch]="exit $?"
  grep -E "geomean" "$W/vs_torch.txt"
fi

# Part of the python step; STEPS=solutions runs it alone (it builds three torch
# extensions: minutes).
if [[ " $STEPS " == *" python "* || " $STEPS " == *" solutions "* ]]; then
  log "python: the exported SOL-ExecBench solutions (python/tests/test_solution_export.py)"
  # The SOL-ExecBench solutions of the three ops (ropegrad export-solution --suite ...),
  # built with torch's cpp_extension and run on each suite's workloads. ropegrad
  # needs the bundled libraries, python its own: a wrapper sets them for ropegrad only.
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$RG_LIBS" "$ROOT/$B/ropegrad" > "$W/ropegrad-cli.sh"
  chmod +x "$W/ropegrad-cli.sh"
  timeout 400 python3 python/tests/test_solution_export.py --ropegrad "$W/ropegrad-cli.sh" --out-dir "$W" \
    > "$W/test_solution_export.txt" 2>&1
  status[test_solution_export]="exit $?: $(tail -n 1 "$W/test_solution_export.txt")"
  grep -E "^\| geomean|FAIL|real positions|not compared|^solutions" "$W/test_solution_export.txt"
fi

if [[ " $STEPS " == *" bench "* ]]; then
  rm -f "$W/runs.db"
  for op in 011 012 014; do
    log "ropegrad bench --suite $(echo suites/"$op"-*) --backend cuda"
    base=()
    [ -s "$W/h200-torch-eager-$op.baseline.json" ] && base=(--baseline "$W/h200-torch-eager-$op.baseline.json")
    rgx bench --suite suites/"$op"-* --backend cuda --json "$W/h200-cuda-$op.json" \
      --record --db "$W/runs.db" --manifest "$W/h200-cuda-$op.manifest.json" "${base[@]}" > "$W/bench-$op.txt" 2>&1
    status[bench-$op]="exit $?: $(grep -E '^passed|geometric' "$W/bench-$op.txt" | tr '\n' ' ')"
    tail -n 22 "$W/bench-$op.txt"
    rgx verify "$W/h200-cuda-$op.manifest.json" >> "$W/bench-$op.txt" 2>&1 || status[verify-$op]="FAILED"
  done
  for op in 011 012; do
    rgx check --suite suites/"$op"-* --backend cuda --inputs positions \
      --json "$W/h200-cuda-$op-positions.json" > "$W/positions-$op.txt" 2>&1
    status[positions-$op]="exit $?: $(grep -E '^passed' "$W/positions-$op.txt")"
  done
  rgx runs rank --db "$W/runs.db" > "$W/rank.txt" 2>&1; status[runs-rank]="exit $?"
fi

if [[ " $STEPS " == *" peers "* ]]; then
  # The field under one protocol, one registry (scripts/peers.sh): per op
  # ropegrad, the example plugin and ropegrad's kernel as a plugin (014: the 2%
  # check printed), the reference eager and torch.compile'd, the public peers
  # of ../shared/official-evaluator/peers; exports and the problem pages
  # (site/) under $W/peers, archived as peers.tar.gz.
  log "python implementations on the GPU (python/tests/test_impl_cpu.py, ROPEGRAD_IMPL_BACKEND=cuda)"
  # PEERS_OPS (default "011 012 014"), PEERS_TIMEOUT (580 s) and IMPL_TIMEOUT (300 s) fit the step
  # (one op with its reference, torch.compile and peers takes minutes).
  ROPEGRAD_IMPL_BACKEND=cuda ROPEGRAD_CLI_LIB="$ROOT/$B/libropegrad_cli.so" timeout "${IMPL_TIMEOUT:-300}" \
    python3 python/tests/test_impl_cpu.py > "$W/test_impl_cuda.txt" 2>&1
  status[test_impl_cuda]="exit $?: $(tail -n 1 "$W/test_impl_cuda.txt")"
  grep -E "^FAIL" "$W/test_impl_cuda.txt"
  log "peers: ropegrad, plugins, reference, torch.compile and the public peers (scripts/peers.sh)"
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$RG_LIBS" "$ROOT/$B/ropegrad" > "$W/ropegrad-peers.sh"
  chmod +x "$W/ropegrad-peers.sh"
  OPS="${PEERS_OPS:-011 012 014}" BACKEND=cuda BUILD="$B" RESULTS="$W/peers" RG="$W/ropegrad-peers.sh" \
    timeout "${PEERS_TIMEOUT:-580}" bash scripts/peers.sh \
    > "$W/peers.txt" 2>&1
  status[peers]="exit $?: $(grep -E '^plugin path' "$W/peers.txt")"
  grep -E "^peers:|^\| [0-9]|^plugin path" "$W/peers.txt"
  mkdir -p "$ROOT/results/peers" && cp -f "$W/peers/field.md" "$ROOT/results/peers/" 2>/dev/null
fi

if [[ " $STEPS " == *" probe "* ]]; then
  log "floors beside ropegrad (dev/common/probe.cu)"
  { "$B/dev/probe" forward 011 $(shapes 011) && "$B/dev/probe" forward 012 $(shapes 012) &&
    "$B/dev/probe" backward $(shapes 014); } > "$W/probe-ops.txt" 2>&1
  status[probe]="exit $?"
  cat "$W/probe-ops.txt"
fi

if [[ " $STEPS " == *" apply "* ]]; then
  # The apply ops (088 forward, 068 backward): their suites on CUDA under the
  # protocol, then beside floor kernels that move exactly their bytes
  # (dev/rope_apply/apply_floor.cu, same build).
  for op in 088 068; do
    log "ropegrad bench --suite $(echo suites/"$op"-*) --backend cuda"
    # APPLY_ROUNDS (default 3) correctness rounds, not the protocol's 10: each round's float64
    # reference of these ~1 GB tensors is computed on the host (as scripts/gpu-parity.sh).
    rgx bench --suite suites/"$op"-* --backend cuda --rounds "${APPLY_ROUNDS:-3}" --json "$W/h200-cuda-$op.json" \
      --record --db "$W/runs.db" --manifest "$W/h200-cuda-$op.manifest.json" > "$W/bench-$op.txt" 2>&1
    status[bench-$op]="exit $?: $(grep -E '^passed|geometric' "$W/bench-$op.txt" | tr '\n' ' ')"
    tail -n 22 "$W/bench-$op.txt"
    "$B/dev/apply_floor" "$op" > "$W/apply-floor-$op.txt" 2>&1
    status[apply_floor-$op]="exit $?: $(grep -iE 'geomean' "$W/apply-floor-$op.txt" | tr '\n' ' ')"
    cat "$W/apply-floor-$op.txt"
  done
fi

liger_path=""
if [[ " $STEPS " == *" applypeers "* || " $STEPS " == *" hfrope "* || " $STEPS " == *" hf "* ]]; then
  if ls bench/wheels/liger_kernel-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-deps --no-index --target "$W/liger" bench/wheels/liger_kernel-*.whl \
      > "$W/liger-install.txt" 2>&1 && liger_path="$W/liger"
  else
    echo "no bench/wheels/liger_kernel-*.whl: Liger from the python3 environment, if it has it" | tee "$W/liger-install.txt"
  fi
fi

if [[ " $STEPS " == *" applypeers "* ]]; then
  # 088 and 068 beside torch eager, torch.compile of the definitions' formulas and
  # Liger-Kernel's Triton RoPE (bench/wheels/ or the environment) on every workload (bench/vs_torch_apply.py).
  log "applypeers: 088/068 vs eager, torch.compile, Liger (bench/vs_torch_apply.py)"
  PYTHONPATH="$ROOT/python${liger_path:+:$liger_path}" timeout 500 python3 bench/vs_torch_apply.py \
    --out "$W/h200-vs-torch-apply.json" > "$W/vs_torch_apply.txt" 2>&1
  status[vs_torch_apply]="exit $?: $(grep -E '^\| geomean|^liger' "$W/vs_torch_apply.txt" | tr '\n' ' ')"
  grep -E "^op|^\| [0-9g]|^liger" "$W/vs_torch_apply.txt"
  # Real RoPE tables (positions to ~3e5, packed): where Liger's reading of half of each row is valid.
  PYTHONPATH="$ROOT/python${liger_path:+:$liger_path}" timeout 300 python3 bench/vs_torch_apply.py --tables rope \
    --no-compile --out "$W/h200-vs-torch-apply-rope.json" > "$W/vs_torch_apply_rope.txt" 2>&1
  status[vs_torch_apply_rope]="exit $?: $(grep -E '^\| geomean|^liger' "$W/vs_torch_apply_rope.txt" | tr '\n' ' ')"
  grep -E "^op|^\| [0-9g]|^liger" "$W/vs_torch_apply_rope.txt"
fi

if [[ " $STEPS " == *" hf "* ]]; then
  # The training step of Llama-3-8B-shaped and Qwen3-8B-shaped models (4 layers, bf16, B=4,
  # S=4096): stock, ropegrad (from positions) and Liger-Kernel's rope patch (bench/wheels or the
  # environment), interleaved rounds, the ratios' medians with their intervals (bench/hf_step.py).
  # The real-client test runs in the tests step.
  log "hf: bench/hf_step.py (stock, ropegrad, Liger)"
  # shellcheck disable=SC2086  # the options, split
  PYTHONPATH="$ROOT/python${liger_path:+:$liger_path}" timeout 400 python3 bench/hf_step.py ${HFSTEP_ARGS:-} \
    --out "$W/h200-hf-step.json" > "$W/hf_step.txt" 2>&1
  status[hf_step]="exit $?: $(grep -E 'step ropegrad/(liger|stock)' "$W/hf_step.txt" | sed 's/ (median of.*)//' | tr '\n' ' ')"
  grep -E "^\||step|^device|FAIL" "$W/hf_step.txt"
fi

if [[ " $STEPS " == *" hfrope "* ]]; then
  # The RoPE layer as training spends it (cos/sin + apply, forward + backward, bf16, Qwen3-4B and
  # Llama-3.1-8B heads, B x S 1x4096..8x8192 and packed batches): stock HF, torch.compile, Liger,
  # FlashInfer and TransformerEngine where installed, ropegrad with tables and from positions.
  # Per row: bytes an ideal apply moves, GB/s, % of the copy floor; the device's copy bandwidth;
  # the profile (kernel time against total) at 4 x 4096.
  log "hfrope: bench/hf_rope.py"
  # shellcheck disable=SC2086  # the options, split
  PYTHONPATH="$ROOT/python${liger_path:+:$liger_path}" timeout 400 python3 bench/hf_rope.py ${HFROPE_ARGS:-} \
    --out "$W/hf-rope.json" > "$W/hf-rope.txt" 2>&1
  status[hf_rope]="exit $?: $(grep -E '^copy bandwidth' "$W/hf-rope.txt" | cut -d'(' -f1)"
  grep -E "one forward \+ backward|^copy bandwidth|^attention backward|^peers" "$W/hf-rope.txt"
  tail -n 60 "$W/hf-rope.txt" | grep -E "^\|"
fi

if [[ " $STEPS " == *" bound "* ]]; then
  # Every float argument below 4e6 through the forward ops' device math (dev/common/sincos_bound.cu):
  # the float error bound the rounding test assumes, and every certified or refined bf16. The
  # same binary is the CTest test gpu_sincos_bound (the tests step runs it too); this step keeps its report.
  log "sin/cos over every float argument (dev/common/sincos_bound.cu)"
  "$B/tests/sincos_bound" > "$W/sincos-bound.txt" 2>&1
  status[sincos_bound]="exit $?: $(tail -n 1 "$W/sincos-bound.txt")"
  head -n 10 "$W/sincos-bound.txt"
fi

if [[ " $STEPS " == *" dev "* ]]; then
  # The kernel-development tools (dev/): the forward
  # ops' versions (dev/rope_forward/forward_dev_kernels.cuh) checked bit for bit against
  # the shipped kernels and timed beside a floor; 014's versions 12, 14, 15.
  log "dev tools: dev_forward 011/012, dev_kernels 12 14 15, dev_latency"
  { "$B/dev/dev_forward" 011 && "$B/dev/dev_forward" 012; } > "$W/dev-forward.txt" 2>&1
  status[dev_forward]="exit $?: $(grep -c 'same' "$W/dev-forward.txt") checks same, $(grep -c DIFFERS "$W/dev-forward.txt") lines with DIFFERS"
  "$B/dev/dev_kernels" 12 14 15 > "$W/dev-kernels.txt" 2>&1
  status[dev_kernels]="exit $?"
  "$B/dev/dev_latency" > "$W/dev-latency.txt" 2>&1   # the forward chain's pieces, in cycles
  status[dev_latency]="exit $?"
  grep -E "^\| (geomean|/ floor)" "$W/dev-forward.txt"
fi

if [[ " $STEPS " == *" host "* ]]; then
  # Host time per call of the torch ops at a tiny shape (bench/host_overhead.py); HOST_BASE: another
  # ropegrad checkout whose python/ is timed the same way first, with this script and this library.
  log "host: bench/host_overhead.py"
  if [ -n "${HOST_BASE:-}" ]; then
    mkdir -p "$HOST_BASE/bench" && cp bench/host_overhead.py bench/hf_rope.py bench/hf_step.py "$HOST_BASE/bench/"
    python3 "$HOST_BASE/bench/host_overhead.py" --out "$W/host-overhead-base.json" > "$W/host-overhead-base.txt" 2>&1
    status[host_overhead_base]="exit $?"
    grep -E "^\|" "$W/host-overhead-base.txt"
  fi
  python3 bench/host_overhead.py --out "$W/host-overhead.json" > "$W/host-overhead.txt" 2>&1
  status[host_overhead]="exit $?"
  grep -E "^\||^device" "$W/host-overhead.txt"
fi

if [[ " $STEPS " == *" posvar "* ]]; then
  # The apply from positions' and the packed table ops' kernels under their launch knobs at training
  # shapes, checked bit for bit against the shipped launchers, beside a copy (dev/rope_apply_pos/).
  log "posvar: dev/pos_variants"
  "$B/dev/pos_variants" > "$W/pos-variants.txt" 2>&1
  status[pos_variants]="exit $?: $(grep -c 'same bits' "$W/pos-variants.txt") variants same bits"
  grep -E "^B |^ |shipped" "$W/pos-variants.txt" | grep -E "^B|shipped|warp|thd" | cut -c1-150
fi

if [[ " $STEPS " == *" ddp "* ]]; then
  # Two GPUs of one host: the DDP job through the Qwen3 rotary
  # module and through RopeForward (011 forward, 014 backward). Skips, saying
  # why, on one GPU.
  log "DDP on $(nvidia-smi -L | wc -l) GPU(s): python/tests/test_ddp.py (qwen3, then ROPEGRAD_DDP_FORWARD=011)"
  timeout 300 python3 python/tests/test_ddp.py > "$W/test_ddp.txt" 2>&1
  status[test_ddp-qwen3]="exit $?: $(tail -n 1 "$W/test_ddp.txt")"
  ROPEGRAD_DDP_FORWARD=011 timeout 300 python3 python/tests/test_ddp.py > "$W/test_ddp_011.txt" 2>&1
  status[test_ddp-011]="exit $?: $(tail -n 1 "$W/test_ddp_011.txt")"
  tail -n 3 "$W/test_ddp.txt" "$W/test_ddp_011.txt"
fi

if [[ " $STEPS " == *" sanitize "* ]]; then
  for tool in memcheck racecheck; do
    log "compute-sanitizer --tool $tool (GPU tests of every op, small cases; the apply from positions and thd whole)"
    { ROPEGRAD_TEST_QUICK=1 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_gpu_kernel" &&
      ROPEGRAD_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_gpu_forward" &&
      timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_gpu_rope_apply_pos" &&
      timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_gpu_rope_apply_thd"; } \
      > "$W/sanitizer-$tool.txt" 2>&1
    rc=$?
    status[sanitizer-$tool]="exit $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/sanitizer-$tool.txt" | tr '\n' ' ')"
  done
fi

# The result files the docs cite into $OUT (default results/ops/); every log stays in $W.
(cd "$W" && cp -f h200-*.json probe-ops.txt bench-*.txt positions-*.txt rank.txt dev-*.txt sincos-bound.txt \
  apply-floor-*.txt pos-variants.txt host-overhead*.json host-overhead*.txt hf_step.txt hf-rope.json hf-rope.txt test_hf_real_client.txt "$OUT/" 2>/dev/null)
echo "gpu-ops: result files in $OUT, logs in $W"
echo
echo "| step | result |"
echo "|---|---|"
for k in "${!status[@]}"; do echo "| $k | ${status[$k]} |"; done | sort
grep -E "^\| geomean" "$W/probe-ops.txt" 2>/dev/null
# Exit 1 when a step's status says it failed (the table above says which).
bad=0
for k in "${!status[@]}"; do
  case ${status[$k]} in "exit 0"* | "") ;; exit* | FAILED*) bad=1 ;; esac
done
exit "$bad"
