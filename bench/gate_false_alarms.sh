#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The regression gate's false-alarm rate on this machine: runs of the same
# code recorded one after another into a scratch registry -- HISTORY quiet
# runs first, then TRIALS more, another process (a busy loop on one core)
# running during every second one (started 2 s before the run, stopped after
# it) -- each checked as `runs check ID` would (bench/gate_rate.c), with the
# CPU share other processes and steal took over the run (what the gate's busy
# rule reads) and the verdict the same rule gives a copy 10% slower.
#
#   bash bench/gate_false_alarms.sh [BUILD_DIR] [TRIALS] [HISTORY]
#
# Writes results/gate-false-alarms.md (the table and the totals).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
trials=${2:-20}
history=${3:-5}
out=$src/results/gate-false-alarms.md
[ -x "$build/ropegrad" ] && [ -x "$build/bench/gate_rate" ] || { echo "gate_false_alarms: build $build first (ropegrad, bench/gate_rate)" >&2; exit 2; }
work=$(mktemp -d /tmp/rg-gate.XXXXXX)
busy_pid=
trap '[ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; rm -rf "$work"' EXIT
db=$work/gate.db
bench() {
  "$build/ropegrad" bench --suite "$src/suites/014-rope_backward" --backend cpu --workloads 1-3 \
    --iterations 30 --warmup 5 --record --db "$db" --quiet 2>&1 | sed -n 's/.*recorded as run \([0-9]*\).*/\1/p'
}
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for i in $(seq "$history"); do bench >/dev/null; done
ids=()
for t in $(seq "$trials"); do
  if [ $((t % 2)) = 0 ]; then
    ( while :; do :; done ) &
    busy_pid=$!
    sleep 2                     # running before the run starts, through to its end
  fi
  id=$(bench)
  [ -n "$id" ] || { echo "gate_false_alarms: a bench run recorded nothing" >&2; exit 1; }
  if [ -n "$busy_pid" ]; then
    kill "$busy_pid"; wait "$busy_pid" 2>/dev/null || true; busy_pid=
    ids+=("$id+")
  else
    ids+=("$id")
  fi
done
tmp=$work/out.md
{
  echo "# The regression gate on same-code runs"
  echo
  echo "\`bash bench/gate_false_alarms.sh $build $trials $history\`, started $started on $(nproc) CPUs"
  echo "($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')); ropegrad $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo "$history history runs, then $trials checked runs of 014 workloads 1-3 on the CPU (30 iterations each);"
  echo "a busy loop on one core during every second one, started 2 s before it. Each checked as \`runs check ID\`"
  echo "(the history rule; a run the gate calls busy is UNCLEAR), and a copy 10% slower checked by the same rule"
  echo "against the same history; the robust columns: the same with the history's median and MAD. Other CPUs,"
  echo "steal CPUs: what other processes and steal took over the run, of $(nproc) (the manifest's otherCpus, stealCpus)."
  awk -v up="$(cut -d' ' -f1 /proc/uptime)" -v hz="$(getconf CLK_TCK)" '/^cpu /{printf "Steal since boot: %.4f CPUs on average (%d ticks over %.0f s).\n", $9 / hz / up, $9, up}' /proc/stat
  echo
  "$build/bench/gate_rate" "$db" "${ids[@]}"
} >"$tmp"
mkdir -p "$(dirname "$out")"
mv "$tmp" "$out"
tail -4 "$out"
