"""The dtype rules in pure Python: the slow twin of the ufunc's promoter.

The ufunc decides its compute dtype in C (_promotion.h); this module states
the same rules with NumPy's own promotion, for the reference
(reference.py) and for the tests, which compare the two on every pair of
input dtypes.  The rules: NumPy's promotion with weak Python scalars
(NEP 50), except that bfloat16 with float16 gives float32 and integer or
bool inputs compute in float64.  ml_dtypes does not promote bfloat16 with
Python scalars or integers the way NumPy promotes float16, and it allows
casting complex to bfloat16; bfloat16 therefore follows float16's rules
here, with float16 standing in for it.
"""
import ml_dtypes
import numpy as np

FLOAT16 = np.dtype(np.float16)
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
COMPLEX64 = np.dtype(np.complex64)
COMPLEX128 = np.dtype(np.complex128)

SUPPORTED = (FLOAT16, BFLOAT16, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128)
PYTHON_SCALARS = (bool, int, float, complex)


def _stand_in(dt):
    """float16 plays bfloat16's part in NumPy's promotion and cast tables."""
    return FLOAT16 if dt == BFLOAT16 else dt


def is_weak_scalar(obj):
    # Exact types: np.float64 subclasses float but is a strong NumPy scalar.
    return type(obj) in PYTHON_SCALARS


def result_dtype(a, b):
    """Compute dtype of two operands, each an ndarray or a Python scalar."""
    # Byte order is storage, not type: a big-endian float16 is a float16.
    da = None if is_weak_scalar(a) else a.dtype.newbyteorder("=")
    db = None if is_weak_scalar(b) else b.dtype.newbyteorder("=")
    if {da, db} == {FLOAT16, BFLOAT16}:
        return FLOAT32
    has_bf16 = BFLOAT16 in (da, db)
    args = [a if d is None else _stand_in(d) for a, d in ((a, da), (b, db))]
    dt = np.result_type(*args)
    if dt.kind in "biu":
        dt = FLOAT64
    if has_bf16 and dt == FLOAT16:
        dt = BFLOAT16
    return dt


def can_cast(from_, to, casting="same_kind"):
    return np.can_cast(_stand_in(from_), _stand_in(to), casting)
