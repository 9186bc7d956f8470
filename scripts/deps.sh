#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages ropegrad builds against, when any is missing.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
pkgs=(cmake ninja-build gcc clang pkg-config libsleef-dev libcjson-dev libcmocka-dev libssl-dev
      libsqlite3-dev libclang-rt-14-dev libmicrohttpd-dev libcurl4-openssl-dev curl)
# The browser test of the index (tests/index/index_browser.py) and the load benchmark's client.
[ "${ROPEGRAD_WITH_CHROMIUM:-0}" = 1 ] && pkgs+=(chromium chromium-driver python3-selenium)
[ "${ROPEGRAD_WITH_WRK:-0}" = 1 ] && pkgs+=(wrk)
# Debian's torch for /usr/bin/python3: the python_torch_binding test runs with
# it (CPU cases), else it is skipped. About 35 s and 750 MB (162 packages).
[ "${ROPEGRAD_WITH_TORCH:-0}" = 1 ] && pkgs+=(python3-torch)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Hugging Face real-client test (python/tests/test_hf_real_client.py) needs
# torch >= 2 and transformers, newer than Debian's: a venv at .venv-hf (ignored)
# with the versions it was written against, from PyPI (about 1 min, 5.6 GB: the
# torch wheel carries its CUDA libraries and also runs on the CPU). CMake finds
# .venv-hf/bin/python as ROPEGRAD_TORCH_PYTHON.
if [ "${ROPEGRAD_WITH_HF:-0}" = 1 ]; then
  venv=$(cd "$(dirname "$0")/.." && pwd)/.venv-hf
  if ! "$venv/bin/python" -c "import torch, transformers" >/dev/null 2>&1; then
    if ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed"; then
      SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
      $SUDO apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    fi
    echo "deps: making $venv (torch, transformers from PyPI)"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q "torch==${ROPEGRAD_HF_TORCH:-2.15.0}" "transformers==${ROPEGRAD_HF_TRANSFORMERS:-5.24.0}"
  fi
fi
