# SPDX-License-Identifier: Apache-2.0
"""A stand-in for rich (tests/stub_cli/README.md)."""
