#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a test script (its path is $1) with $ROPEGRAD_TORCH_PYTHON, the Python
# with torch >= 2 the build was configured with or the environment names.
# Unset, absent or without torch: exit 77 (CTest: skipped) and say why.
py=${ROPEGRAD_TORCH_PYTHON:-}
if [ -z "$py" ]; then
  echo "SKIP: ROPEGRAD_TORCH_PYTHON is not set (a Python with torch >= 2: cmake -DROPEGRAD_TORCH_PYTHON=... or the environment)"
  exit 77
fi
if ! "$py" -c "import torch" >/dev/null 2>&1; then
  echo "SKIP: ROPEGRAD_TORCH_PYTHON=$py cannot import torch"
  exit 77
fi
exec "$py" "$@"
