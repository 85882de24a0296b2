"""What a case file's case is, whichever its format: :class:`Case` and its
:class:`Input` objects, and the operator they are cases of."""
import math
from dataclasses import dataclass

import numpy as np

from ._bits import number_json
from ._dtype_names import name_of

OPERATOR = "aclnnSigmoidBackward"
# What each input name is in sigmoid_backward(grad_output, output).
ROLES = {"gradOutput": "grad_output", "output": "output", "dy": "grad_output", "y": "output"}


@dataclass(frozen=True)
class Input:
    """One input of a case: ``range`` is ``(lo, hi)``, drawn uniformly (both
    parts for complex), or ``(v,)``, every value ``v`` (nan and inf too)."""
    name: str
    dtype: np.dtype
    shape: tuple
    range: tuple

    def as_json(self):
        values = [number_json(v) for v in self.range]
        return {"dtype": name_of(self.dtype), "shape": list(self.shape), "range": values}


@dataclass(frozen=True)
class Case:
    """A case: its inputs in the case file's order and names, the golden's
    dtype and shape, and the tolerance its file gives (None if none)."""
    name: str
    inputs: tuple
    dtype: np.dtype
    shape: tuple
    tolerance: dict | None = None
    standard: str | None = None

    def operand(self, role):
        """The index of the input playing ``role`` ("grad_output", "output")."""
        return next(i for i, inp in enumerate(self.inputs) if ROLES[inp.name] == role)

    @property
    def size(self):
        return math.prod(self.shape)
