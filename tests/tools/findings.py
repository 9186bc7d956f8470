# SPDX-License-Identifier: Apache-2.0
"""What the tree checkers of tests/tools/ share: `finish(name, findings, what)`
prints each finding and a count line and exits 1 when there is one;
`repo_arg(usage)` is the one argument, the source tree."""
import sys


def repo_arg(usage):
    if len(sys.argv) != 2:
        print(f"usage: {usage}", file=sys.stderr)
        sys.exit(2)
    return sys.argv[1]


def finish(name, findings, what):
    for f in findings:
        print(f)
    print(f"{name}: {len(findings)} {what}")
    sys.exit(1 if findings else 0)
