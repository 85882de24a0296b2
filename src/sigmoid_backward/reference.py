"""The slow, obviously correct twin of :func:`sigmoid_backward.sigmoid_backward`.

Pure NumPy, one operation at a time, in the order docs/semantics.md fixes.
It is the oracle of the test suite, and shipped so that users can check the
fast path on their own data.  It shares no code with the fast path: its
dtype rules (_dtypes.py) restate the ufunc's promoter in Python, and the
tests compare the two on every pair of input dtypes and against the
promotion table.
"""
import numpy as np

from . import _dtypes


def sigmoid_backward(grad_output, output, /, *, dtype=None):
    """Reference ``grad_output * (1 - output) * output`` (conjugated for complex).

    Same promotion and broadcasting as the fast function; no ``out=``.
    Always returns an ndarray (0-d for 0-d inputs).
    """
    g = grad_output if _dtypes.is_weak_scalar(grad_output) else np.asarray(grad_output)
    y = output if _dtypes.is_weak_scalar(output) else np.asarray(output)
    dt = np.dtype(dtype) if dtype is not None else _dtypes.result_dtype(g, y)
    # 16-bit values: round the inputs to the compute dtype, widen to float32.
    work = np.float32 if dt in (_dtypes.FLOAT16, _dtypes.BFLOAT16) else dt
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
