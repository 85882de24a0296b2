"""The dtypes, in one table: what Python needs of each.

The ufunc registers a loop for every pair of them (_ufunc.pyx); golden
names files and reads raw data by them; aclnn maps CANN's aclDataType to
them; the bench and the tests walk them.  The C side has its own table,
``_dtypes.h``, for the kernels and the promoter; ``_kernels.DTYPE_TABLE``
shows it, and a test holds the two, and the ufunc's loops, together.

``narrow`` dtypes are stored in 16 bits and computed in float32, rounded
once; bfloat16 is ml_dtypes', which NumPy knows as a user dtype.
"""
from typing import NamedTuple

import ml_dtypes
import numpy as np


class DType(NamedTuple):
    name: str          # NumPy's name, which files and options use
    dtype: np.dtype
    acl: int           # CANN's aclDataType value
    npu_name: str      # the name of NPU case files (ATK's, TTK's)
    narrow: bool       # computed in float32 and rounded once


TABLE = (
    DType("float16", np.dtype(np.float16), acl=1, npu_name="fp16", narrow=True),
    DType("bfloat16", np.dtype(ml_dtypes.bfloat16), acl=27, npu_name="bf16", narrow=True),
    DType("float32", np.dtype(np.float32), acl=0, npu_name="fp32", narrow=False),
    DType("float64", np.dtype(np.float64), acl=11, npu_name="fp64", narrow=False),
    DType("complex64", np.dtype(np.complex64), acl=16, npu_name="complex64", narrow=False),
    DType("complex128", np.dtype(np.complex128), acl=17, npu_name="complex128",
          narrow=False),
)

BY_NAME = {d.name: d.dtype for d in TABLE}
SUPPORTED = tuple(d.dtype for d in TABLE)
NARROW = tuple(d.dtype for d in TABLE if d.narrow)
BFLOAT16 = BY_NAME["bfloat16"]

# Python's scalars, which NumPy's promotion treats as weak (NEP 50).
PYTHON_SCALARS = (bool, int, float, complex)


def castable(result, out):
    """The operator's rule for its output (aclnn's check 4, golden's
    cases): any of its dtypes casts to any other, but complex never to a
    real dtype."""
    return not (np.dtype(result).kind == "c" and np.dtype(out).kind != "c")
