# SPDX-License-Identifier: Apache-2.0
"""A stand-in for click (tests/stub_cli/README.md): decorators that change nothing."""


class ClickException(Exception):
    pass


def _keep(*_args, **_kwargs):
    return lambda f: f


command = argument = option = _keep


class Path:
    def __init__(self, *args, **kwargs):
        pass
