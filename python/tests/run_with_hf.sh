#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a test script that needs torch >= 2 and transformers (its path is $1)
# with $ROPEGRAD_TORCH_PYTHON: the venv scripts/deps.sh makes with
# ROPEGRAD_WITH_HF=1 (.venv/bin/python), passed on by CTest from the CMake
# variable of that name. Without it: exit 77 (CTest: skipped) and say why,
# unless ROPEGRAD_REQUIRE_HF=1 (CI), where a missing venv is a failure.
py=${ROPEGRAD_TORCH_PYTHON:-}
why=""
if [ -z "$py" ]; then
  why="ROPEGRAD_TORCH_PYTHON is not set (ROPEGRAD_WITH_HF=1 bash scripts/deps.sh makes .venv, then reconfigure)"
elif ! "$py" -c "import torch, transformers" >/dev/null 2>&1; then
  why="$py cannot import torch and transformers"
fi
if [ -n "$why" ]; then
  if [ "${ROPEGRAD_REQUIRE_HF:-0}" = 1 ]; then
    echo "FAIL: $why (ROPEGRAD_REQUIRE_HF=1)"
    exit 1
  fi
  echo "SKIP: $why"
  exit 77
fi
exec "$py" "$@"
