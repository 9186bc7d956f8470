#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ropegrad serve --listen` from the command line (tests/index/serve_listen_cli.cmake):
# a name that does not resolve is one line on stderr and exit 2; localhost:0
# prints the loopback URL it listens on and answers there; [::1]:0 prints the
# bracketed URL and answers there (skipped, with the reason, without IPv6
# loopback). Loopback only.
#   bash tests/index/serve_listen_cli.sh ROPEGRAD
set -euo pipefail
RG=$1
work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rc=0
"$RG" serve --db "$work/none.db" --listen no-such-host.invalid:0 > "$work/out" 2> "$work/err" || rc=$?
[ "$rc" = 2 ] || fail "a name that does not resolve: exit $rc, wanted 2"
[ "$(wc -l < "$work/err")" = 1 ] || fail "a name that does not resolve: not one line: $(cat "$work/err")"
grep -q "does not resolve" "$work/err" || fail "no reason: $(cat "$work/err")"

"$RG" bench --backend cpu --workloads 0 --iterations 2 --warmup 1 --record --db "$work/runs.db" > /dev/null 2>&1 ||
  fail "bench --record"

# serve_on LISTEN URL_PATTERN: starts serve, waits for its URL, GETs /.
serve_on() {
  "$RG" serve --db "$work/runs.db" --listen "$1" > "$work/serve.out" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q http "$work/serve.out" && break; sleep 0.1; done
  url=$(grep -o "http://[^ ]*/" "$work/serve.out" || true)
  [[ "$url" =~ $2 ]] || fail "--listen $1 printed '$(cat "$work/serve.out")'"
  # The system's curl with the system's libcurl (the GPU machine's runs put
  # ropegrad's bundled libraries on LD_LIBRARY_PATH).
  code=$(env -u LD_LIBRARY_PATH curl -s -o /dev/null -w '%{http_code}' "$url")
  [ "$code" = 200 ] || fail "--listen $1: GET $url answered $code"
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
}
serve_on localhost:0 '^http://127\.0\.0\.1:[0-9]+/$'
if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
  serve_on '[::1]:0' '^http://\[::1\]:[0-9]+/$'
else
  echo "[::1]:0 skipped: this machine cannot bind ::1 (no IPv6 loopback)"
fi
echo "serve --listen: ok"
