#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A long fuzzing run of one target (for fuzz/RESULTS.md): keeps fuzzing until
# SECONDS of wall time are used, restarting after a crash (the crashing input
# is kept in build-fuzz/fuzz-findings/<target>/), then prints the total exec
# count summed over the restarts. Build first with fuzz/run-smoke.sh.
#
#   bash fuzz/run-long.sh TARGET [SECONDS]     # default 600
set -uo pipefail
cd "$(dirname "$0")/.."
t=$1
total=${2:-600}
BUILD=${BUILD:-build-fuzz}
bin="$BUILD/fuzz/$t"
work="$BUILD/fuzz-corpus/$t"
findings="$BUILD/fuzz-findings/$t"
log="$BUILD/$t.long.log"
mkdir -p "$work" "$findings"
cp -n fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export OMP_NUM_THREADS=1
: >"$log"
start=$(date +%s)
execs=0 crashes=0
while :; do
  left=$((total - ($(date +%s) - start)))
  [ "$left" -le 0 ] && break
  "$bin" "$work" -dict=fuzz/json.dict -max_total_time="$left" -max_len=65536 -rss_limit_mb=2048 -timeout=25 \
    -artifact_prefix="$findings/" -print_final_stats=1 >"$log.part" 2>&1
  rc=$?
  cat "$log.part" >>"$log"
  n=$(grep -h 'stat::number_of_executed_units' "$log.part" | awk '{print $2}')
  # A crash exits before the final stats: take the last progress line.
  [ -z "$n" ] && n=$(grep -ho '^#[0-9]*' "$log.part" | tail -1 | tr -d '#')
  execs=$((execs + ${n:-0}))
  [ $rc -ne 0 ] && crashes=$((crashes + 1))
done
rm -f "$log.part"
cov=$(grep -ho 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
echo "$t $(date -u +%Y-%m-%d) ${total}s execs=$execs crashes=$crashes cov=${cov:-?} corpus=$(ls "$work" | wc -l)"
