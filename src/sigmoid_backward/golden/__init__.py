"""Golden data for NPU operator tests.

The command line is ``python -m sigmoid_backward golden`` (docs/golden.md),
in ``_cli_golden``.
"""
