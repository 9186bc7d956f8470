#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a torch test script (its path is $1) with the first Python that can
# import torch: python3 on PATH, then Debian's /usr/bin/python3
# (apt-get install python3-torch). Without one: exit 77 (CTest: skipped) and
# say why. ROPEGRAD_LIB is passed on by CTest.
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch" >/dev/null 2>&1; then
    exec "$py" "$@"
  fi
done
echo "SKIP: no Python with torch here (apt-get install python3-torch gives Debian's torch for /usr/bin/python3)"
exit 77
