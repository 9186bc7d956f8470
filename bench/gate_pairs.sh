#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The regression gate on this machine, as `runs check B --against A` sees it:
#
#   1. `ropegrad runs calibrate` (CALIBRATION runs back to back) into a fresh
#      scratch registry: the machine's run-to-run noise, stored per machine;
#   2. PAIRS pairs of runs of the same code (ropegrad's CPU kernel), each
#      recorded back to back and checked as `runs check B --against A`: the
#      gate must never say SLOW (UNCLEAR is an answer, busy or not);
#   3. the same pairs taken REPEATS at a time (pairs 1-4, 5-8, ...) and checked
#      as `runs check B1,B2,.. --against A1,A2,..` (the repeated pairwise rule:
#      the band narrows as sqrt(1/n + 1/m)): never SLOW either;
#   4. a copy 20% slower: the plugin tests/harness/plugins/slow_plugin.c built
#      as libgate_same.so (the work) and libgate_slow20.so (the same work plus
#      20%), recorded interleaved REPEATS times (same, slower, same, slower,
#      ...), after the same-code pairs so the machine's history gives the
#      noise: its first pair checked alone (what one pair can say here) and all
#      REPEATS pairs checked together, which must say SLOW. A try with a run
#      recorded on a busy machine is UNCLEAR (a busy run says nothing either
#      way); then another try, up to SLOW_TRIES or SLOW_SECONDS.
#
#   bash bench/gate_pairs.sh [BUILD_DIR] [PAIRS] [CALIBRATION] [SLOW_TRIES] [OUT_DIR] [SLOW_SECONDS] [REPEATS]
#
# Writes OUT_DIR (default results/gate/): gate-pairs.md (the table and the
# totals) and checks.jsonl (every `runs check --json` document and the
# calibration's). Exit 1 when a same-code check came back SLOW or the slower
# copy's repeated check was never SLOW on a quiet machine.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
pairs=${2:-20}
calibration=${3:-10}
slow_tries=${4:-6}
out=${5:-$src/results/gate}
slow_seconds=${6:-0}
repeats=${7:-4}
rg=$build/ropegrad
same_so=$build/tests/plugins/libgate_same.so
slow_so=$build/tests/plugins/libgate_slow20.so
for f in "$rg" "$same_so" "$slow_so"; do
  [ -e "$f" ] || { echo "gate_pairs: $f is missing: build $build first (ropegrad, gate_same, gate_slow20)" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "gate_pairs: jq is needed to read the checks' JSON" >&2; exit 2; }
work=$(mktemp -d /tmp/rg-gate-pairs.XXXXXX)
trap 'rm -rf "$work"' EXIT
db=$work/gate.db
opts=(--suite "$src/suites/014-rope_backward" --backend cpu --workloads 1-3 --iterations 30 --warmup 5 --rounds 1
      --threads 1)
bench() {   # bench [--impl SO]: records one run, prints its id
  "$rg" bench "${opts[@]}" "$@" --record --db "$db" --quiet 2>/dev/null | sed -n 's/.*recorded as run \([0-9]*\).*/\1/p'
}
check() {   # check RUN BASE: one JSON document on one line
  local rc=0
  "$rg" runs check "$1" --against "$2" --db "$db" --json >"$work/check.json" || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || [ "$rc" = 3 ] || { echo "gate_pairs: runs check exited $rc" >&2; exit 1; }
  jq -c --argjson rc "$rc" '. + {exit_status: $rc}' "$work/check.json"
}
row() {   # row LABEL JSON: a table row
  jq -r --arg l "$1" '[$l, (if .baselines then (.baselines|map(tostring)|join(",")) else (.baseline|tostring) end),
    (if .runs then (.runs|map(tostring)|join(",")) else (.run|tostring) end), (.busy_reason // "quiet"), .noise.source,
    ((.noise.sigma*1000|round)/10|tostring) + "%", (((.noise.band-1)*1000|round)/10|tostring) + "%",
    ((.primary.ratio*10000|round)/10000|tostring), .primary.verdict,
    ([.workloads[].verdict] | join(" ")), .verdict, (.exit_status|tostring)] | "| " + join(" | ") + " |"' <<<"$2"
}
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
jsonl=$work/checks.jsonl
: >"$jsonl"
cal_rc=0
"$rg" runs calibrate --runs "$calibration" --db "$db" --json -- "${opts[@]}" >"$work/cal.json" || cal_rc=$?
[ "$cal_rc" = 0 ] || [ "$cal_rc" = 3 ] || { echo "gate_pairs: runs calibrate exited $cal_rc" >&2; exit 1; }
jq -c '{calibration: .}' "$work/cal.json" >>"$jsonl"
rows=(); rep_rows=(); slow_rows=()
slow_same=0; unclear_same=0; same_same=0; slow_rep=0
caught=0; quiet_tries=0; tries=0
ids_a=(); ids_b=()
join() { local IFS=,; echo "$*"; }
slow_try() {   # REPEATS interleaved pairs of the slower copy and its baseline: one pair alone, then all
  tries=$((tries + 1))
  local a b j i as=() bs=()
  for i in $(seq "$repeats"); do
    a=$(bench --impl "$same_so"); b=$(bench --impl "$slow_so")
    [ -n "$a" ] && [ -n "$b" ] || { echo "gate_pairs: a plugin run recorded nothing" >&2; exit 1; }
    as+=("$a"); bs+=("$b")
  done
  j=$(check "${bs[0]}" "${as[0]}")
  echo "$j" >>"$jsonl"
  slow_rows+=("$(row "20% slower copy, try $tries, one pair" "$j")")
  j=$(check "$(join "${bs[@]}")" "$(join "${as[@]}")")
  echo "$j" >>"$jsonl"
  slow_rows+=("$(row "20% slower copy, try $tries, $repeats pairs" "$j")")
  if [ "$(jq -r .busy <<<"$j")" = false ]; then
    quiet_tries=$((quiet_tries + 1))
    if [ "$(jq -r .verdict <<<"$j")" = SLOW ]; then caught=$((caught + 1)); fi
  fi
}
for p in $(seq "$pairs"); do
  a=$(bench); b=$(bench)
  [ -n "$a" ] && [ -n "$b" ] || { echo "gate_pairs: a bench run recorded nothing" >&2; exit 1; }
  j=$(check "$b" "$a")
  echo "$j" >>"$jsonl"
  rows+=("$(row "same code $p" "$j")")
  case $(jq -r .verdict <<<"$j") in
    SLOW) slow_same=$((slow_same + 1)) ;;
    UNCLEAR) unclear_same=$((unclear_same + 1)) ;;
    *) same_same=$((same_same + 1)) ;;
  esac
  ids_a+=("$a"); ids_b+=("$b")
  if [ "${#ids_a[@]}" = "$repeats" ]; then
    j=$(check "$(join "${ids_b[@]}")" "$(join "${ids_a[@]}")")
    echo "$j" >>"$jsonl"
    rep_rows+=("$(row "same code $((p - repeats + 1))-$p" "$j")")
    if [ "$(jq -r .verdict <<<"$j")" = SLOW ]; then slow_rep=$((slow_rep + 1)); fi
    ids_a=(); ids_b=()
  fi
done
until_s=$(( $(date +%s) + slow_seconds ))
while [ "$caught" = 0 ] && [ "$tries" -lt "$slow_tries" ] && { [ "$tries" = 0 ] || [ "$slow_seconds" = 0 ] || [ "$(date +%s)" -lt "$until_s" ]; }; do
  slow_try
done
mkdir -p "$out"
tmp=$out/.gate-pairs.md.tmp
{
  echo "# The regression gate on back-to-back runs"
  echo
  echo "\`bash bench/gate_pairs.sh BUILD $pairs $calibration $slow_tries OUT $slow_seconds $repeats\`, started $started on $(nproc) CPUs"
  echo "($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), load average at the end $(cut -d' ' -f1-3 /proc/loadavg);"
  echo "ropegrad $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown). Each run: 014 workloads 1-3 on the"
  echo "CPU, one thread, 30 iterations, one correctness round. Calibration first (\`runs calibrate --runs $calibration\`, exit $cal_rc):"
  echo
  jq -r '"calibration of " + .machine + ": " + (.quiet_runs|tostring) + " quiet runs of " + (.runs|length|tostring) +
    (if .stored then ", sigma " + ((.sigma*10000|round)/100|tostring) + "% (primary), " +
       ((.sigma_workload*10000|round)/100|tostring) + "% (a workload)" else ", nothing stored (busy)" end)' "$work/cal.json"
  echo
  echo "Then each pair recorded back to back and checked as \`runs check B --against A\` (the pairwise rule:"
  echo "the primary figure's ratio against the machine's noise band, exp(k sqrt(2) sigma); per workload the"
  echo "Hodges-Lehmann ratio, SLOW only beyond the same noise; a run recorded on a busy machine is UNCLEAR)."
  echo "Noise source: history (10 or more same-code pairs of quiet runs on this machine stored before B), else the"
  echo "calibration, else the default 5%."
  echo
  echo "| pair | A | B | machine during B | noise from | sigma | band | B/A primary | primary | workloads | verdict | exit |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "The same pairs $repeats at a time, checked as \`runs check B1,..,B$repeats --against A1,..,A$repeats\` (the"
  echo "repeated pairwise rule: the geometric means' ratio against exp(k sqrt(1/$repeats + 1/$repeats) sigma)):"
  echo
  echo "| pairs | A | B | machine | noise from | sigma | band | B/A primary | primary | workloads | verdict | exit |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rep_rows[@]}"
  echo
  echo "The 20% slower copy after them ($repeats interleaved pairs a try: its first pair alone, then all $repeats):"
  echo
  echo "| try | A | B | machine | noise from | sigma | band | B/A primary | primary | workloads | verdict | exit |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${slow_rows[@]}"
  echo
  echo "- same code: $pairs pairs: $slow_same SLOW, $unclear_same UNCLEAR, $same_same SAME or FAST; ${#rep_rows[@]} checks of $repeats pairs: $slow_rep SLOW"
  echo "- the 20% slower copy: $tries tries of $repeats pairs, $quiet_tries recorded on a quiet machine, $caught SLOW (a try with a run recorded on a busy machine is UNCLEAR)"
} >"$tmp"
mv "$tmp" "$out/gate-pairs.md"
cp "$jsonl" "$out/checks.jsonl"
tail -2 "$out/gate-pairs.md"
[ "$slow_same" = 0 ] && [ "$slow_rep" = 0 ] && [ "$caught" -ge 1 ]
