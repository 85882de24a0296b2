"""The slow, obviously correct twin of :func:`sigmoid_backward.sigmoid_backward`.

Pure NumPy, one operation at a time, in the order docs/semantics.md fixes.
It is the oracle of the test suite, and shipped so that users can check the
fast path on their own data.  It shares no code with the fast path: its
promotion asks NumPy and ml_dtypes (``np.result_type``, ``ml_dtypes.finfo``)
where the ufunc asks a promoter in C (_promotion.h); the tests compare the
two on every pair of input dtypes.
"""
import ml_dtypes
import numpy as np

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
BF16 = np.dtype(ml_dtypes.bfloat16)


def _is_narrow(dt):
    """Stored in 16 bits or fewer, and computed in float32: float16 and
    ml_dtypes' floating types (bfloat16, float8)."""
    # By name: ml_dtypes' types do not share one NumPy kind ('f' for some,
    # 'V' for others).
    return dt == F16 or dt.type.__name__.startswith(("bfloat16", "float8"))


def _weak(x):
    # Exact types: np.float64 subclasses float but is a strong NumPy scalar.
    return type(x) in (bool, int, float, complex)


def _native(dt):
    return dt.newbyteorder("=")   # byte order is storage, not type


def _stand_in(dt):
    """float16 for ml_dtypes' narrow types, where ml_dtypes has no rule."""
    return F16 if _is_narrow(dt) else dt


def _promote(a, b):
    """NumPy's promotion, ml_dtypes' where it has a rule; where it has none,
    float16 stands in for ml_dtypes' types, and two different narrow dtypes
    give float32."""
    try:
        dt = np.result_type(a, b)
        if dt.kind in "biufc" or _is_narrow(dt):
            return dt
    except TypeError:
        pass
    if _is_narrow(a) and _is_narrow(b) and a != b:
        return F32
    dt = np.result_type(_stand_in(a), _stand_in(b))
    if dt == F16 and F16 not in (a, b):
        return a if _is_narrow(a) else b
    return dt


def _check_holds(result, integer):
    """A narrow result must hold every value of an integer input."""
    if not _is_narrow(result):
        return
    info = ml_dtypes.finfo(result)
    bits = 1 if integer.kind == "b" else 8 * integer.itemsize - (integer.kind == "i")
    if bits > info.nmant + 1 or bits - 1 > info.maxexp - 1:
        raise TypeError(f"{integer} and {result}: {result} cannot hold every {integer} "
                        f"value exactly")


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
        if type(scalar) is complex and dt.kind != "c":
            return C128 if dt == F64 else C64
        return dt
    a, b = _native(g.dtype), _native(y.dtype)
    if a.kind in "biu" and b.kind in "biu":
        return F64
    dt = _promote(a, b)
    for x in (a, b):
        if x.kind in "biu":
            _check_holds(dt, x)
    return dt


def sigmoid_backward(grad_output, output, /, *, dtype=None):
    """Reference ``grad_output * (1 - output) * output`` (conjugated for complex).

    Same promotion and broadcasting as the fast function; no ``out=``.
    Always returns an ndarray (0-d for 0-d inputs).
    """
    g = grad_output if _weak(grad_output) else np.asarray(grad_output)
    y = output if _weak(output) else np.asarray(output)
    dt = np.dtype(dtype) if dtype is not None else result_dtype(g, y)
    # Narrow values: round the inputs to the compute dtype, widen to float32.
    work = F32 if _is_narrow(dt) else dt
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
