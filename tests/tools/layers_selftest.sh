#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/tools/layers.py on small trees and archives it must judge: a library
# file that includes a harness header (by path or by name), a record file
# that includes one, a record archive that calls a harness function and a
# record linked with the harness are violations (exit 1, each named); the
# same trees without them, an op folder's own header named like a harness
# header, and an op's test_*.c pass (exit 0).
#   bash tests/tools/layers_selftest.sh REPO
set -euo pipefail
repo=${1:?usage: layers_selftest.sh REPO}
command -v python3 >/dev/null || { echo "skip: python3 not found, tests/tools/layers.py needs it"; exit 77; }
check="python3 $repo/tests/tools/layers.py"
work=$(mktemp -d /tmp/rg-layers.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "layers_selftest: $*" >&2; exit 1; }

# A clean tree: each layer includes only what it may.
clean=$work/clean
mkdir -p "$clean"/src/{op/x,harness/ops,record/stats,index,result,util,cli}
printf 'int h(void);\n' >"$clean/src/harness/harness.h"
printf 'int o(void);\n' >"$clean/src/harness/op.h"
printf '#include "op.h"\n' >"$clean/src/harness/ops/x.c"
printf 'int x_own(void);\n' >"$clean/src/op/x/op.h"           # the op's own header, named like the harness's
printf '#include "op.h"\nint x(void) { return x_own(); }\n' >"$clean/src/op/x/x.c"
printf '#include "harness.h"\n' >"$clean/src/op/x/test_x.c"    # an op's test may use the harness
printf 'int r(void);\n' >"$clean/src/record/record.h"
printf '#include "record.h"\n#include "result.h"\n#include "util.h"\n' >"$clean/src/record/stats/rank.c"
printf 'int u(void);\n' >"$clean/src/result/result.h"
printf 'int v(void);\n' >"$clean/src/util/util.h"
printf '#include "record.h"\n' >"$clean/src/index/page.c"
printf '#include "harness.h"\n#include "record.h"\n' >"$clean/src/cli/main.c"
out=$($check --root "$clean") || fail "clean tree: a violation found where there is none: $out"

# Each violation alone, in a copy of the clean tree.
plant() {   # NAME FILE TEXT EXPECTED
    rm -rf "$work/$1"; cp -r "$clean" "$work/$1"
    printf '%b' "$3" >"$work/$1/$2"
    if out=$($check --root "$work/$1"); then fail "$1: not found: $out"; fi
    grep -q "$4" <<<"$out" || fail "$1: not named as '$4': $out"
}
plant op_by_name src/op/x/y.c '#include "harness.h"\n' 'src/op/x/y.c:1: src/op/ includes "harness.h", a header of src/harness/'
plant op_by_path src/op/x/y.c '#include "../../harness/op.h"\n' 'src/op/x/y.c:1: src/op/ includes "../../harness/op.h"'
plant record_by_name src/record/stats/gate.c '\n#include "harness.h"\n' 'src/record/stats/gate.c:2: src/record/ includes "harness.h"'
printf 'int m(void);\n' >"$clean/src/cli/cli.h"
plant index_by_name src/index/page.c '#include "cli.h"\n' 'src/index/ includes "cli.h", a header of src/cli/'
plant util_result src/util/util.c '#include "result.h"\n' 'src/util/ includes "result.h", a header of src/result/'

# Link lines: the record through the result to the harness, and CUDA.
printf 'rg_record: rg_result;rg_util;OpenSSL::Crypto\nrg_result: m\nrg_util: cjson\n' >"$work/links-ok"
$check --links "$work/links-ok" --lib rg_record >/dev/null || fail "links: a clean link line failed"
printf 'rg_record: rg_result;rg_util\nrg_result: rg_harness\nrg_util: CUDA::cudart_static\n' >"$work/links-bad"
if out=$($check --links "$work/links-bad" --lib rg_record); then fail "links: rg_harness and cudart not found: $out"; fi
grep -q "rg_record links rg_harness (through rg_record -> rg_result -> rg_harness)" <<<"$out" || fail "links: $out"
grep -q "rg_record links CUDA::cudart_static" <<<"$out" || fail "links: cudart not named: $out"

# Symbols: an archive that calls what only the harness's archive defines.
cc=${CC:-cc}
printf 'int rg_run_suite(void) { return 0; }\n' >"$work/h.c"
printf 'int rg_run_suite(void);\nint rg_store(void) { return rg_run_suite(); }\n' >"$work/bad.c"
printf 'int rg_store(void) { return 1; }\n' >"$work/good.c"
for f in h bad good; do $cc -c "$work/$f.c" -o "$work/$f.o" && ar rcs "$work/lib$f.a" "$work/$f.o"; done
$check --check good="$work/libgood.a" --forbid rg_harness="$work/libh.a" >/dev/null || fail "symbols: a clean archive failed"
if out=$($check --check bad="$work/libbad.a" --forbid rg_harness="$work/libh.a"); then fail "symbols: not found: $out"; fi
grep -q "bad (libbad.a) uses rg_run_suite, which only rg_harness defines" <<<"$out" || fail "symbols: $out"
echo "layers_selftest: ok"
