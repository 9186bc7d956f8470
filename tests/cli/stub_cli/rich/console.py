# SPDX-License-Identifier: Apache-2.0
"""A stand-in for rich.console (tests/stub_cli/README.md)."""


class Console:
    def __init__(self, *args, **kwargs):
        pass

    def print(self, *args, **kwargs):
        pass
