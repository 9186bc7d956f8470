#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Load benchmark of `ropegrad serve` (not a test): a registry of 10,000 runs,
# the server on loopback, wrk with 64 connections against a run page and a
# problem page while `ropegrad runs push` sends new runs, results in
# results/serve_load.md (p50, p99, pages/s, errors, pushes sent vs stored),
# plus random run pages (nearly all cache misses), and the problem page of the
# 10,000-run group right after a push (never cached: the push changed the registry).
#
#   bash bench/serve_load.sh [SECONDS per page, default 15]
#
# SERVE_THREADS=N passes --threads N to the server (default: the server's own).
# OUT=FILE writes the results there instead of results/serve_load.md (a
# development measurement on a shared machine is not the issue's figure).
# The table ends with the CPU time of an uncached run page and of the problem
# page without HTTP (bench/serve_page_cost): what a page costs, which other
# work on the machine moves far less than latencies and pages per second.
#
# Needs a build (bash scripts/test.sh, or cmake --build build) and wrk
# (Debian: apt-get install wrk, or ROPEGRAD_WITH_WRK=1 scripts/deps.sh).
# Only loopback traffic; bounded in time (3 x SECONDS of load) and in count
# (10,000 stored runs, at most 2,000 + 20 pushes).
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-15}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
RUNS=10000
PUSHES=2000
PROBES=20
command -v wrk >/dev/null || { echo "serve_load: wrk not installed (apt-get install wrk)" >&2; exit 2; }
cmake --build "$BUILD" --target ropegrad serve_fill serve_page_cost >/dev/null
RG=$BUILD/ropegrad
FILL=$BUILD/bench/serve_fill
COST=$BUILD/bench/serve_page_cost
work=$(mktemp -d)
server=""
pusher=""
cleanup() {
  [ -n "$pusher" ] && kill "$pusher" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# 1. One real run (the CPU path, small), then RUNS copies of it with varied
#    run digests, stored as imports; PUSHES more copies as files to push.
"$RG" bench --backend cpu --workloads 0,2 --iterations 3 --warmup 1 --manifest "$work/base.json" >/dev/null
t0=$(date +%s.%N)
"$FILL" store "$work/runs.db" "$work/base.json" "$RUNS" 1
mkdir "$work/push"
"$FILL" files "$work/push" "$work/base.json" "$PUSHES" $((RUNS + 1))
mkdir "$work/probe"
"$FILL" files "$work/probe" "$work/base.json" "$PROBES" $((RUNS + PUSHES + 1))
fill_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
(umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=\n' > "$work/token")

# 2. The server, on a free loopback port (every load client is 127.0.0.1: wrk's
# 64 connections and the pushes, above the default 64 per client address).
"$RG" serve --db "$work/runs.db" --listen 127.0.0.1:0 --write-token-file "$work/token" --max-per-client 256 \
  ${SERVE_THREADS:+--threads "$SERVE_THREADS"} > "$work/serve.out" &
server=$!
for _ in $(seq 100); do grep -q http "$work/serve.out" && break; sleep 0.1; done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.out")
def=$(grep -o '"definition": *"[^"]*"' "$work/base.json" | head -1 | sed 's/.*: *"//; s/"$//')
run_url="$base/runs/$((RUNS / 2))"
problem_url="$base/problems/$def"
count() { curl -s "$base/api/problems" | grep -o '"runs":[0-9]*' | head -1 | cut -d: -f2; }
before=$(count)

# 3. Pushes, one after another, for as long as the load runs.
(
  sent=0
  for f in "$work"/push/push-*.json; do
    [ -e "$work/stop" ] && break
    if "$RG" runs push "$base" "$f" --token-file "$work/token" > /dev/null 2>>"$work/push.err"; then sent=$((sent + 1)); fi
    echo "$sent" > "$work/sent"
  done
) &
pusher=$!

run_wrk() {
  wrk -t2 -c64 -d"${DUR}s" --timeout 5s --latency "$1" > "$2" 2>&1
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_wrk "$run_url" "$work/wrk-run.txt"
run_wrk "$problem_url" "$work/wrk-problem.txt"
# Every request a different run page, so nearly every one misses the cache
# and is rendered from the registry: the cost of a page nobody asked for yet.
cat > "$work/random.lua" <<LUA
math.randomseed(os.time())
request = function() return wrk.format(nil, "/runs/" .. math.random(1, $RUNS)) end
LUA
wrk -t2 -c64 -d"${DUR}s" --timeout 5s --latency -s "$work/random.lua" "$base" > "$work/wrk-random.txt" 2>&1
touch "$work/stop"   # the pusher finishes the push under way, then stops
wait "$pusher" 2>/dev/null || true
pusher=""
sleep 0.5
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
sent=$(cat "$work/sent" 2>/dev/null || echo 0)
after=$(count)
stored=$((after - before))

# 4. The problem page uncached: one push (a new generation: the page cache and
#    the rank tables start over), then one GET of the problem page, PROBES times.
: > "$work/probe.txt"
for f in "$work"/probe/push-*.json; do
  "$RG" runs push "$base" "$f" --token-file "$work/token" > /dev/null 2>>"$work/push.err" || continue
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$problem_url" >> "$work/probe.txt"
done
probe_ok=$(awk '$1 == 200' "$work/probe.txt" | wc -l)
probe_ms() {  # probe_ms QUANTILE(0..1): that quantile of the 200 answers' times, in ms
  awk '$1 == 200 {print $2 * 1000}' "$work/probe.txt" | sort -n |
    awk -v q="$1" '{v[NR] = $1} END {if (!NR) {print "-"; exit} i = int(q * (NR - 1) + 1.5); if (i > NR) i = NR; printf "%.2f", v[i]}'
}

ms() {  # ms FIGURE: a wrk latency (850.00us, 12.5ms, 1.02s) in ms
  awk -v x="$1" 'BEGIN {v = x + 0; if (x ~ /us$/) v /= 1000; else if (x ~ /ms$/) v += 0; else if (x ~ /s$/) v *= 1000; printf "%.2f", v}'
}
met() {  # met CONDITION(awk): "met" or "NOT met"
  awk "BEGIN {exit !($1)}" && echo met || echo "NOT met"
}
field() {  # field FILE: p50 p99 req/s errors
  local f=$1
  local p50 p99 rps non2xx sock
  p50=$(awk '$1=="50%"{print $2}' "$f")
  p99=$(awk '$1=="99%"{print $2}' "$f")
  rps=$(awk '/^Requests\/sec:/{print $2}' "$f")
  non2xx=$(awk '/Non-2xx/{print $NF}' "$f")
  sock=$(awk -F'[ ,]+' '/Socket errors/{print $4+$6+$8+$10}' "$f")
  echo "$p50 | $p99 | $rps | $(( ${non2xx:-0} + ${sock:-0} ))"
}

# 5. CPU per page without HTTP, on the registry as the load left it (nothing cached).
cost_run=$("$COST" "$work/runs.db" 2000)
cost_problem=$("$COST" "$work/runs.db" 50 "/problems/$def")
cpu_us() { sed -n 's/.*cpu \([0-9]*\) us\/page.*/\1/p' <<< "$1"; }

out=${OUT:-results/serve_load.md}
mkdir -p "$(dirname "$out")"
{
  echo "# ropegrad serve under load"
  echo
  echo "Made by \`bash bench/serve_load.sh $DUR\` on $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
  echo "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), shared with other work), commit $(git rev-parse --short HEAD)."
  echo "Registry: $RUNS runs in one comparison group (stored in ${fill_s%.*} s with their $PUSHES push files),"
  echo "server: \`ropegrad serve\` defaults (${SERVE_THREADS:-one per online CPU: $(nproc)} worker threads, writes on a writer thread), loopback. Load: \`wrk -t2 -c64 -d${DUR}s --latency\`,"
  echo "one page after the other, while \`ropegrad runs push\` sends new runs one after another. The server caches"
  echo "each answer until the registry changes (every push changes it), so the first two rows mostly measure the"
  echo "cache and its refresh; the third asks for a different run each time."
  echo
  echo "| page | p50 | p99 | pages/s | errors (non-2xx + socket) |"
  echo "|---|---|---|---|---|"
  echo "| run page \`/runs/$((RUNS / 2))\` | $(field "$work/wrk-run.txt") |"
  echo "| problem page \`/problems/$def\` | $(field "$work/wrk-problem.txt") |"
  echo "| run pages \`/runs/RANDOM\` (1..$RUNS, nearly all rendered, not cached) | $(field "$work/wrk-random.txt") |"
  echo
  echo "Pushes during the load: $sent sent and answered 201, $stored new runs stored (registry: $before runs before, $after after)."
  [ -s "$work/push.err" ] && { echo; echo "Push errors:"; echo '```'; head -5 "$work/push.err"; echo '```'; }
  echo
  echo "Problem page of the $after-run group, uncached (each GET right after a push), $probe_ok of $PROBES answered 200:"
  echo "median $(probe_ms 0.5) ms, slowest $(probe_ms 1) ms."
  echo
  echo "Load average (1, 5, 15 min) when the load began: $load_before; when it ended: $load_after ($(nproc) cores)."
  echo
  echo "CPU time per page without HTTP (\`serve_page_cost\`, one thread, nothing cached): uncached run pages"
  echo "$(cpu_us "$cost_run") µs ($cost_run); the problem page $(cpu_us "$cost_problem") µs ($cost_problem)."
  echo
  rp99=$(ms "$(awk '$1=="99%"{print $2}' "$work/wrk-random.txt")")
  rrps=$(awk '/^Requests\/sec:/{print $2}' "$work/wrk-random.txt")
  pmax=$(probe_ms 1)
  echo "Goals (issue 28), this run:"
  echo "- uncached random run pages p99 under 20 ms: $rp99 ms, $(met "$rp99 < 20");"
  echo "- uncached random run pages at least 5,000 pages/s: $rrps, $(met "${rrps:-0} >= 5000");"
  echo "- the problem page uncached under 50 ms: slowest of $probe_ok $pmax ms, $(met "$probe_ok > 0 && ${pmax/-/1e9} < 50");"
  echo "- no errors and no push lost (issue 11): $([ "$sent" = "$stored" ] && echo met || echo "NOT met")."
  echo
  echo "## wrk, run page"
  echo '```'
  cat "$work/wrk-run.txt"
  echo '```'
  echo "## wrk, problem page"
  echo '```'
  cat "$work/wrk-problem.txt"
  echo '```'
  echo "## wrk, random run pages"
  echo '```'
  cat "$work/wrk-random.txt"
  echo '```'
  echo "## The problem page after each push (HTTP status, seconds)"
  echo '```'
  cat "$work/probe.txt"
  echo '```'
} > "$out"
sed -n 1,32p "$out"
