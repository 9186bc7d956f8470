#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bundle_libs.sh DIR FILE...: copies into DIR every shared library that ldd
# resolves for FILE..., less the C and C++ runtimes, libgomp and CUDA's
# libraries (every GPU machine has them), and the libraries already in DIR.
set -eu
dir=$1; shift
mkdir -p "$dir"
for f in "$@"; do ldd "$f"; done |
  awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s|libgomp|libcupti|libcuda|libcudart|libropegrad[^/]*)\.so' |
  grep -v "^$dir/" | sort -u |
  while read -r so; do cp -L "$so" "$dir/"; done
