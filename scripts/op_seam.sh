#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# op_seam.sh -- the op seam: which files outside an op's folder name the op.
#
#   bash scripts/op_seam.sh OP[,OP...] [MAX]   OP = a folder under src/op/ (e.g. rope_apply);
#                                              several: ops that share their code, counted as one
#   bash scripts/op_seam.sh --switches   the development switches left in src/ or include/
#
# The op is named by its folder name (its function prefix: ropegrad_OP_*,
# rg_op_OP*) and by the definition name of its row (src/harness/ops/OP.c,
# `.definition = "..."`; an op without a suite has no row). Searched: the files git tracks under src/,
# include/, tests/, cmake/ and the top CMakeLists.txt -- what the build and
# the tests need -- minus the op's own files: its folder src/op/OP/, its row
# (with the headers beside it that it includes) and its tests tests/op/OP/ (its suite folder, suites/, is outside the
# searched tree). Benchmarks, device scripts, docs
# and results (bench/, scripts/, python/, README.md) may name an op without
# counting. Prints each file, then "outside files: N"; with MAX, exits 1 when
# N > MAX. The public header and the op table line count like any file;
# tests/tools/op_seam.cmake, which names the ops this check is held to, does not.
set -euo pipefail
cd "$(dirname "$0")/.."

# --switches: what ships (src/, include/: the library, its headers, the
# exported solutions' .cuh files) holds no development switch; those live in
# dev/<op>/ (llm.c's split). Exit 1 listing each line that names one.
if [ "${1:-}" = --switches ]; then
  switches='RG_EVICT_FIRST|RG_K5_WAVES|RG_KERNELS_HEADER|RG_KERNELS_DEV|RG_DEV_NOCOMPUTE|rg_kernel_names|bool TEST|VPT == 8|RG_K3_STREAM|RG_K3_BLOCK|RG_K12_SPREAD|bool EF|bool FAST|bool STAGED|bool STREAM'
  if git ls-files -- src include | xargs grep -nE "$switches"; then
    echo "op_seam.sh: development switches in the shipped tree (above); move them to dev/<op>/" >&2
    exit 1
  fi
  echo "no development switch in src/ or include/"
  exit 0
fi
op=${1:?usage: op_seam.sh OP[,OP...] [MAX]}
max=${2:-}
IFS=, read -r -a ops <<< "$op"
names=()
own=(-e "^tests/tools/op_seam.cmake$")
for o in "${ops[@]}"; do
  case "$o" in *[!a-z0-9_]*|'') echo "op_seam.sh: bad op folder name '$o'" >&2; exit 2 ;; esac
  row="src/harness/ops/$o.c"
  [ -d "src/op/$o" ] || { echo "op_seam.sh: src/op/$o/ not found" >&2; exit 2; }
  names+=("$o")
  own+=(-e "^src/op/$o/" -e "^tests/op/$o/")
  # An op without a suite has no row: its folder name alone names it.
  [ -f "$row" ] || continue
  own+=(-e "^$row$")
  n0=${#names[@]}
  while IFS= read -r d; do names+=("$d"); done < <(sed -n 's/^ *\.definition *= *"\([^"]*\)".*/\1/p' "$row")
  [ "${#names[@]}" -gt "$n0" ] || { echo "op_seam.sh: no .definition in $row" >&2; exit 2; }
  while IFS= read -r h; do   # a header beside the row that the row includes is the row's
    [ -f "src/harness/ops/$h" ] && own+=(-e "^src/harness/ops/$h$")
  done < <(sed -n 's/^#include "\([^"/]*\)".*/\1/p' "$row")
done
pattern=$(printf '%s\n' "${names[@]}" | paste -sd'|')
mapfile -t files < <(git ls-files -- src include tests cmake CMakeLists.txt | grep -v "${own[@]}")
n=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if grep -Eq "$pattern" "$f"; then
    echo "$f"
    n=$((n + 1))
  fi
done
echo "outside files: $n (op $op, named as: ${names[*]})"
if [ -n "$max" ] && [ "$n" -gt "$max" ]; then
  echo "op_seam.sh: op $op needs $n files outside its folder, more than $max" >&2
  exit 1
fi
