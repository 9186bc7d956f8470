#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages ropegrad builds against, when any is missing,
# and (ROPEGRAD_WITH_TORCH=1, ROPEGRAD_WITH_HF=1) the Python venv .venv.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
pkgs=(cmake ninja-build gcc clang pkg-config libsleef-dev libcjson-dev libcmocka-dev libssl-dev libzstd-dev
      libsqlite3-dev libclang-rt-14-dev libmicrohttpd-dev libcurl4-openssl-dev curl)
# venv for Debian's python3: `pip install ./python` into a fresh venv
# (python/tests/test_pip_install.py) and the torch venv below.
pkgs+=(python3-venv)
# The browser test of the index (tests/index/index_browser.py) and the load benchmark's client.
[ "${ROPEGRAD_WITH_CHROMIUM:-0}" = 1 ] && pkgs+=(chromium chromium-driver python3-selenium)
[ "${ROPEGRAD_WITH_WRK:-0}" = 1 ] && pkgs+=(wrk)
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
# ROPEGRAD_WITH_TORCH=1: a virtual environment at .venv (ignored) made by the
# python3 on PATH, with torch from PyPI; ROPEGRAD_WITH_HF=1 adds transformers
# (and implies torch). The versions the tests were written against, unless
# ROPEGRAD_TORCH_VERSION / ROPEGRAD_TRANSFORMERS_VERSION say otherwise. About
# 1-2 min and 5.6 GB (the PyPI torch wheel carries its CUDA libraries and also
# runs on the CPU). CMake finds .venv/bin/python as ROPEGRAD_TORCH_PYTHON; the
# torch, Python-implementation and Hugging Face tests run with it.
if [ "${ROPEGRAD_WITH_TORCH:-0}" = 1 ] || [ "${ROPEGRAD_WITH_HF:-0}" = 1 ]; then
  venv=$(cd "$(dirname "$0")/.." && pwd)/.venv
  want=(torch); probe="import torch"
  reqs=("torch==${ROPEGRAD_TORCH_VERSION:-2.15.0}")
  if [ "${ROPEGRAD_WITH_HF:-0}" = 1 ]; then
    want+=(transformers); probe="import torch, transformers"
    reqs+=("transformers==${ROPEGRAD_TRANSFORMERS_VERSION:-5.24.0}")
  fi
  if ! "$venv/bin/python" -c "$probe" >/dev/null 2>&1; then
    py=$(command -v python3) || { echo "deps: no python3 on PATH for the venv" >&2; exit 1; }
    echo "deps: making $venv with $py ($("$py" --version 2>&1)): ${want[*]} from PyPI"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q "${reqs[@]}"
  fi
fi
