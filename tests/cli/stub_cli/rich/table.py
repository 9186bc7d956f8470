# SPDX-License-Identifier: Apache-2.0
"""A stand-in for rich.table (tests/stub_cli/README.md)."""


class Table:
    def __init__(self, *args, **kwargs):
        pass
