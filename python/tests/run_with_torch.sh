#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a torch test script (its path is $1) with the first Python that can
# import torch: $ROPEGRAD_TORCH_PYTHON, the checkout's .venv (made by
# ROPEGRAD_WITH_TORCH=1 bash scripts/deps.sh), python3 on PATH, then
# /usr/bin/python3. Without one: exit 77 (CTest: skipped) and say why.
# ROPEGRAD_LIB is passed on by CTest.
venv=$(cd "$(dirname "$0")/../.." && pwd)/.venv/bin/python
for py in "${ROPEGRAD_TORCH_PYTHON:-}" "$venv" python3 /usr/bin/python3; do
  if [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch" >/dev/null 2>&1; then
    exec "$py" "$@"
  fi
done
echo "SKIP: no Python with torch here (ROPEGRAD_WITH_TORCH=1 bash scripts/deps.sh makes .venv with torch from PyPI)"
exit 77
