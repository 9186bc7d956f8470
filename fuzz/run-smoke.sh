#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (clang, ASan + UBSan, CPU only) in build-fuzz,
# replays every regression input and seed, then fuzzes each target for a
# bounded time and prints its exec count. Any crash, sanitizer report or
# broken invariant fails the script and leaves the input in
# build-fuzz/fuzz-findings/<target>/ (turn it into a regression: copy it to
# fuzz/regressions/<target>/ and fix the bug).
#
#   bash fuzz/run-smoke.sh [SECONDS] [TARGET...]   # default 30 s, all targets
#   FUZZ_TOTAL_SECONDS=60 bash fuzz/run-smoke.sh    # 60 s split over the targets (CI)
#
# New inputs libFuzzer finds go to build-fuzz/fuzz-corpus/<target>/ (a copy
# of the seeds), never into fuzz/corpus/: the repo's seeds stay small and
# reviewed. Long runs: FUZZ_JOBS=2 bash fuzz/run-smoke.sh 600 fuzz_workload
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
shift || true
BUILD=${BUILD:-build-fuzz}
bash scripts/deps.sh
CC=${CC:-clang} cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DROPEGRAD_CUDA=OFF -DROPEGRAD_SANITIZE=ON -DROPEGRAD_FUZZ=ON -DROPEGRAD_WERROR=ON >/dev/null
ALL=$(cat "$BUILD/fuzz/targets.txt")   # written by fuzz/CMakeLists.txt
TARGETS=${*:-$ALL}
# shellcheck disable=SC2086
cmake --build "$BUILD" -j"$(nproc)" --target $TARGETS
if [ -n "${FUZZ_TOTAL_SECONDS:-}" ]; then   # one budget split evenly, at least 2 s a target
  n=$(echo $TARGETS | wc -w)
  SECS=$(( FUZZ_TOTAL_SECONDS / n ))
  [ "$SECS" -ge 2 ] || SECS=2
fi

SUPP="$PWD/scripts/lsan.supp"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$SUPP:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export OMP_NUM_THREADS=1

status=0
summary=()
for t in $TARGETS; do
  bin="$BUILD/fuzz/$t"
  # 1. Every past crash stays fixed; every seed still runs clean.
  replay=()
  [ -d "fuzz/regressions/$t" ] && replay+=(fuzz/regressions/"$t"/*)
  [ -d "fuzz/corpus/$t" ] && replay+=(fuzz/corpus/"$t"/*)
  if [ ${#replay[@]} -gt 0 ]; then
    if ! "$bin" -runs=1 "${replay[@]}" >"$BUILD/$t.replay.log" 2>&1; then
      echo "FAIL $t: a regression input or seed crashes (see $BUILD/$t.replay.log)"
      tail -30 "$BUILD/$t.replay.log"
      status=1
      continue
    fi
  fi
  # 2. Bounded fuzzing from a scratch copy of the seeds.
  work="$BUILD/fuzz-corpus/$t"
  findings="$BUILD/fuzz-findings/$t"
  mkdir -p "$work" "$findings"
  [ -d "fuzz/corpus/$t" ] && cp -n fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  log="$BUILD/$t.fuzz.log"
  extra=()
  [ -f fuzz/json.dict ] && extra+=(-dict=fuzz/json.dict)
  # -jobs (even -jobs=1) switches libFuzzer to child processes logging to
  # ./fuzz-N.log: only for parallel runs (the logs are collected below).
  [ "${FUZZ_JOBS:-1}" -gt 1 ] && extra+=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS")
  if "$bin" "$work" "${extra[@]}" -max_total_time="$SECS" -max_len=65536 -rss_limit_mb=2048 -timeout=25 \
       -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1; then
    res=ok
  else
    res=FAIL
    status=1
  fi
  if [ "${FUZZ_JOBS:-1}" -gt 1 ]; then cat fuzz-*.log >>"$log" 2>/dev/null; rm -f fuzz-*.log; fi
  execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s+=$2} END {print s+0}')
  rate=$(grep -h 'stat::average_exec_per_sec' "$log" | awk '{s+=$2} END {print s+0}')
  cov=$(grep -ho 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  line=$(printf '%-22s %-4s %4ss  %10s execs  %6s exec/s  cov %s' "$t" "$res" "$SECS" "$execs" "$rate" "${cov:-?}")
  echo "$line"
  summary+=("$line")
  if [ "$res" = FAIL ]; then
    grep -h -m5 -E 'ERROR|runtime error|invariant|Test unit written' "$log" || tail -30 "$log"
  fi
done
echo "---- fuzz smoke summary ($(date -u +%Y-%m-%dT%H:%M:%SZ)) ----"
printf '%s\n' "${summary[@]}"
exit $status
