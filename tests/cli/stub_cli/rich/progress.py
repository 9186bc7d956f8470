# SPDX-License-Identifier: Apache-2.0
"""A stand-in for rich.progress (tests/stub_cli/README.md)."""


class Progress:
    def __init__(self, *args, **kwargs):
        pass


class SpinnerColumn:
    pass


class TextColumn:
    def __init__(self, *args, **kwargs):
        pass
