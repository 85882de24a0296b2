"""The dtypes the kernels compute, as NumPy dtypes: ``_dtype_spec.py``'s table.

The ufunc registers a loop for every pair of them (_ufunc.pyx); the
function, the bench and the tests walk them; the torch and JAX adapters map
their names to their own types.  ``_kernels.DTYPE_TABLE`` shows the C side,
generated from the same spec, and a test holds the two together.

``narrow`` dtypes are stored in 16 bits or fewer and computed in float32,
rounded once; ml_dtypes' (bfloat16, the float8 formats) are user dtypes to
NumPy.  The NPU operator's dtypes are not this list: aclnn and golden keep
their own (``aclnn._constants``, ``golden._dtype_names``).
"""
from typing import NamedTuple

import ml_dtypes
import numpy as np

from ._dtype_spec import DTYPES


class DType(NamedTuple):
    name: str          # NumPy's name, which files and options use
    dtype: np.dtype
    narrow: bool       # computed in float32 and rounded once
    foreign: bool      # ml_dtypes' type: NumPy has no scalar type of its own


def _entry(spec):
    module = ml_dtypes if spec["module"] == "ml_dtypes" else np
    return DType(spec["name"], np.dtype(getattr(module, spec["name"])), "format" in spec,
                 module is ml_dtypes)


TABLE = tuple(_entry(spec) for spec in DTYPES)

BY_NAME = {d.name: d.dtype for d in TABLE}
SUPPORTED = tuple(d.dtype for d in TABLE)
FOREIGN = tuple(d.dtype for d in TABLE if d.foreign)
FOREIGN_NUMS = frozenset(d.num for d in FOREIGN)   # (comparing numbers is cheaper)
BFLOAT16 = BY_NAME["bfloat16"]

# Python's scalars, which NumPy's promotion treats as weak (NEP 50).
PYTHON_SCALARS = (bool, int, float, complex)


def castable(result, out):
    """The operator's rule for its output (aclnn's check 4, golden's
    cases): any of its dtypes casts to any other, but complex never to a
    real dtype."""
    return not (np.dtype(result).kind == "c" and np.dtype(out).kind != "c")
