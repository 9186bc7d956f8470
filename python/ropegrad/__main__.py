# SPDX-License-Identifier: Apache-2.0
"""python3 -m ropegrad bench|check ... (cli.py)."""
import sys

from .cli import main

sys.exit(main())
