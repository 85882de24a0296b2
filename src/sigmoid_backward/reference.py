"""The slow, obviously correct twin of :func:`sigmoid_backward.sigmoid_backward`.

Pure NumPy, one operation at a time, in the order docs/semantics.md fixes.
It is the oracle of the test suite, and shipped so that users can check the
fast path on their own data.  It shares no code with the fast path: its
promotion is the operator's table, written out below, where the ufunc asks
a promoter in C (_promotion.h); the tests compare the two on every pair of
input dtypes.
"""
import ml_dtypes
import numpy as np

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
BF16 = np.dtype(ml_dtypes.bfloat16)

# The operator's promotion table: row promoted with column.
_ORDER = (F16, BF16, F32, F64, C64, C128)
_TABLE = {
    F16: (F16, F32, F32, F64, C64, C128),
    BF16: (F32, BF16, F32, F64, C64, C128),
    F32: (F32, F32, F32, F64, C64, C128),
    F64: (F64, F64, F64, F64, C128, C128),
    C64: (C64, C64, C64, C128, C64, C128),
    C128: (C128, C128, C128, C128, C128, C128),
}
# A Python complex next to each real dtype, and bool/int/float next to any.
_WITH_COMPLEX = {F16: C64, BF16: C64, F32: C64, F64: C128, C64: C64, C128: C128}


def _weak(x):
    # Exact types: np.float64 subclasses float but is a strong NumPy scalar.
    return type(x) in (bool, int, float, complex)


def _native(dt):
    return dt.newbyteorder("=")   # byte order is storage, not type


def _with_integers(floating, integer):
    """A compute dtype next to an integer or bool array: NumPy's promotion,
    with float16 standing in for bfloat16 (ml_dtypes before 0.7 has no such
    rule, and 0.7 agrees with float16's)."""
    stand_in = F16 if floating == BF16 else floating
    dt = np.result_type(stand_in, integer)
    return floating if dt == stand_in else dt


def result_dtype(g, y):
    """The compute dtype of two operands, each an ndarray or a Python scalar."""
    if _weak(g) and _weak(y):
        return C128 if complex in (type(g), type(y)) else F64
    if _weak(g) or _weak(y):
        scalar, array = (g, y) if _weak(g) else (y, g)
        dt = _native(array.dtype)
        if dt.kind in "biu":
            dt = np.result_type(dt, scalar)   # NumPy's rule for a weak scalar
            return dt if dt.kind in "fc" else F64
        return _WITH_COMPLEX[dt] if type(scalar) is complex else dt
    a, b = _native(g.dtype), _native(y.dtype)
    if a.kind in "biu" and b.kind in "biu":
        return F64
    if a.kind in "biu" or b.kind in "biu":
        floating, integer = (b, a) if a.kind in "biu" else (a, b)
        return _with_integers(floating, integer)
    return _TABLE[a][_ORDER.index(b)]


def sigmoid_backward(grad_output, output, /, *, dtype=None):
    """Reference ``grad_output * (1 - output) * output`` (conjugated for complex).

    Same promotion and broadcasting as the fast function; no ``out=``.
    Always returns an ndarray (0-d for 0-d inputs).
    """
    g = grad_output if _weak(grad_output) else np.asarray(grad_output)
    y = output if _weak(output) else np.asarray(output)
    dt = np.dtype(dtype) if dtype is not None else result_dtype(g, y)
    # 16-bit values: round the inputs to the compute dtype, widen to float32.
    work = F32 if dt in (F16, BF16) else dt
    with np.errstate(all="ignore"):  # overflow and NaN are values here, not errors
        return np.asarray(_compute(np.asarray(g, dtype=dt).astype(work),
                                   np.asarray(y, dtype=dt).astype(work), dt))


def _compute(g, y, dt):
    if dt.kind == "c":
        # (1 - y) as NumPy subtracts complex(1, 0) - y, then p = (1 - y) * y,
        # then g * conj(p), each product expanded in real arithmetic.
        ar, ai = 1 - y.real, 0 - y.imag
        pr = ar * y.real - ai * y.imag
        pi = ar * y.imag + ai * y.real
        cr, ci = pr, -pi
        gr, gi = g.real, g.imag
        result = np.empty(np.broadcast_shapes(g.shape, y.shape), dt)
        result.real = gr * cr - gi * ci
        result.imag = gr * ci + gi * cr
        return result
    one_minus_y = 1 - y
    result = g * one_minus_y
    result = result * y
    return result.astype(dt)
