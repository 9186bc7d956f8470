#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/tools/bench_script.cmake: scripts/bench.sh against stand-ins. Usage: bench_script.sh REPO
set -euo pipefail
repo=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
# dpkg-query: every package installed (deps.sh then does nothing).
printf '#!/bin/sh\nprintf "install ok installed"\n' >"$tmp/bin/dpkg-query"
# cmake: configure noise on stdout; --build prints ninja-style steps and
# writes BUILD/ropegrad (a stand-in that prints its arguments), or fails
# when FAKE_BUILD_FAILS is set.
cat >"$tmp/bin/cmake" <<'STUB'
#!/bin/sh
if [ "$1" = "--build" ]; then
  mkdir -p "$2"
  echo "[1/3] Building C object src/op/CMakeFiles/ropegrad_op.dir/cpu.c.o"
  if [ -n "${FAKE_BUILD_FAILS:-}" ]; then echo "cpu.c:1:1: error: boom"; echo "ninja: build stopped"; exit 1; fi
  echo "cpu.c:9:2: note: a compiler remark"
  echo "[2/3] Building C object src/cli/CMakeFiles/ropegrad.dir/main.c.o"
  echo "[3/3] Linking C executable ropegrad"
  printf '#!/bin/sh\necho "ropegrad $*"\n' >"$2/ropegrad"
  chmod +x "$2/ropegrad"
  exit 0
fi
echo "-- The C compiler identification is GNU 12.2.0"
echo "-- Configuring done"
STUB
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/cmake"
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }

PATH="$tmp/bin:$PATH" BUILD="$tmp/build" bash "$repo/scripts/bench.sh" --backend cpu --json - >"$tmp/out" 2>"$tmp/err" ||
  fail "bench.sh exited $?"
for step in '[1/3] Building C object' '[2/3] Building C object' '[3/3] Linking C executable ropegrad'; do
  grep -qF "$step" "$tmp/err" || fail "no progress line '$step' on stderr"
done
grep -q 'Configuring done\|compiler identification\|a compiler remark' "$tmp/err" "$tmp/out" && fail "build noise shown"
[ "$(cat "$tmp/out")" = "ropegrad bench --progress --backend cpu --json -" ] || fail "stdout is not the bench's alone (with --progress)"
grep -q '^bench.sh: checking the dependencies' "$tmp/err" || fail "no first line before the dependency check"
grep -q '^bench.sh: the result: JSON on stdout' "$tmp/err" || fail "no closing line saying where the result is"
PATH="$tmp/bin:$PATH" BUILD="$tmp/build" bash "$repo/scripts/bench.sh" --quiet >"$tmp/out" 2>"$tmp/err" || fail "bench.sh --quiet exited $?"
[ "$(cat "$tmp/out")" = "ropegrad bench --json $tmp/build/bench-result.json --quiet" ] || fail "--quiet: no --progress, the default JSON file"
grep -q "^bench.sh: the result: $tmp/build/bench-result.json" "$tmp/err" || fail "--quiet: the default JSON file not named"
grep -q 'Configuring done' "$tmp/build/bench-build.log" || fail "no log kept"

if PATH="$tmp/bin:$PATH" BUILD="$tmp/build2" FAKE_BUILD_FAILS=1 bash "$repo/scripts/bench.sh" >"$tmp/out" 2>"$tmp/err"; then
  fail "a failed build exited 0"
fi
grep -q 'error: boom' "$tmp/err" || fail "the failed build's error not shown"
grep -q 'building failed' "$tmp/err" || fail "no closing line for the failure"
[ ! -s "$tmp/out" ] || fail "a failed build wrote to stdout"
echo "bench.sh: progress shown, noise kept in the log, failures shown, the result named"
