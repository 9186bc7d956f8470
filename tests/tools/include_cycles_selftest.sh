#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/include_cycles.py on small trees it must judge: two .c files that
# call each other, two headers that include each other and a ring of three
# are cycles (exit 1, each named); a static helper of the same name, a call
# one way only and a header's prototype are not (exit 0).
#   bash tests/tools/include_cycles_selftest.sh REPO
set -euo pipefail
repo=${1:?usage: include_cycles_selftest.sh REPO}
check="python3 $repo/scripts/include_cycles.py"
work=$(mktemp -d /tmp/rg-cycles.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "include_cycles_selftest: $*" >&2; exit 1; }

mkdir -p "$work/calls" "$work/includes" "$work/ring" "$work/none"
printf 'int b_fn(void);\nint a_fn(void) { return b_fn(); }\n' >"$work/calls/a.c"
printf 'int a_fn(void);\nint b_fn(void) { return 1; }\nint b_two(void) { return a_fn(); }\n' >"$work/calls/b.c"
printf '#include "y.h"\n' >"$work/includes/x.h"
printf '#include "x.h"\n' >"$work/includes/y.h"
printf 'int q(void);\nint p(void) { return q(); }\n' >"$work/ring/p.c"
printf 'int r(void);\nint q(void) { return r(); }\n' >"$work/ring/q.c"
printf 'int p(void);\nint r(void) { return p(); }\n' >"$work/ring/r.c"
printf '#include "one.h"\nstatic int helper(void) { return 0; }\nint one(void) { return helper(); }\n' >"$work/none/one.c"
printf 'int one(void);\nint two(void);\n' >"$work/none/one.h"
printf '#include "one.h"\nstatic int helper(void) { return 1; }\nint two(void) { return one() + helper(); }\n' >"$work/none/two.c"

for tree in calls includes ring; do
    if out=$(cd "$work" && $check "$tree"); then fail "$tree: no cycle found: $out"; fi
    grep -q "^cycle: " <<<"$out" || fail "$tree: the cycle is not named: $out"
done
grep -q "calls/a.c <-> calls/b.c" <<<"$(cd "$work" && $check calls || true)" || fail "calls: a.c <-> b.c not named"
grep -q "ring/p.c <-> ring/q.c <-> ring/r.c" <<<"$(cd "$work" && $check ring || true)" || fail "ring: p, q, r not named"
out=$(cd "$work" && $check none) || fail "none: a cycle found where there is none: $out"
# An --allow line passes its cycle, and fails once the cycle is gone.
printf 'calls/b.c calls/a.c\n' >"$work/allow"
(cd "$work" && $check --allow allow calls >/dev/null) || fail "--allow: a listed cycle failed"
if (cd "$work" && $check --allow allow none >/dev/null); then fail "--allow: a listed cycle that is gone passed"; fi
echo "include_cycles_selftest: ok"
