"""Golden data for NPU operator tests.

- :func:`cases` reads CANN's case files (ATK json, TTK kernel and aclnn csv);
- :func:`generate` writes each case's inputs and golden, and a manifest.

The command line is ``python -m sigmoid_backward golden`` (docs/golden.md).
"""
from ._casefile import Case, Input, cases
from ._errors import CaseFileError, GoldenError
from ._generate import generate

__all__ = [
    "Case",
    "CaseFileError",
    "GoldenError",
    "Input",
    "cases",
    "generate",
]
