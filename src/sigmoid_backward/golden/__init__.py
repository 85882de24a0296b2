"""Golden data for NPU operator tests, and the comparison of a device's
output with it.

- :func:`cases` reads CANN's case files (ATK json, TTK kernel and aclnn csv);
- :func:`generate` writes each case's inputs and golden, and a manifest;
- :func:`compare` judges an output under one of the precision standards NPU
  tests use (:data:`STANDARDS`), and reports the metrics;
- :func:`sigmoid_grad_golden`, :func:`aclnn_sigmoid_backward_golden` and
  :data:`__golden__` are golden functions as TTK calls them.

The command lines are ``python -m sigmoid_backward golden`` and
``python -m sigmoid_backward compare`` (docs/golden.md).
"""
from ._case_types import Case, Input
from ._casefile import cases
from ._compare import CompareResult, compare
from ._errors import CaseFileError, GoldenError
from ._generate import generate
from ._standards import STANDARDS
from ._ttk import __golden__, aclnn_sigmoid_backward_golden, sigmoid_grad_golden

__all__ = [
    "Case",
    "CaseFileError",
    "CompareResult",
    "GoldenError",
    "Input",
    "STANDARDS",
    "__golden__",
    "aclnn_sigmoid_backward_golden",
    "cases",
    "compare",
    "generate",
    "sigmoid_grad_golden",
]
