"""The NumPy-facing function: validation, promotion, broadcasting, ``out=``.

The arithmetic lives in the kernels (_kernels.pyx).  This module only decides
which arrays reach them:

- the direct path hands aligned, native, contiguous arrays of the compute
  dtype and the output's shape straight to the kernel, with no copy;
- every other case (broadcasting, casts, strides, byte order, overlap) goes
  through a buffered ``np.nditer`` that feeds the same kernel contiguous
  blocks of the compute dtype, so extra memory stays bounded by the buffer.

Everything that can fail is checked before the first element is written.
"""
import numpy as np

from . import _dask, _dtypes, _layout, _threads
from ._inputs import as_array as _as_array
from ._kernels import apply as _apply, try_direct as _try_direct

# Elements per nditer block: large enough that the per-block Python cost is
# small next to the kernel and that blocks can use both threads.
_BLOCK = 1 << 16

_IN_FLAGS = ["readonly", "contig", "aligned", "nbo"]
_OUT_FLAGS = ["writeonly", "contig", "aligned", "nbo", "no_broadcast"]
_ITER_FLAGS = ["external_loop", "buffered", "grow_inner", "zerosize_ok",
               "copy_if_overlap"]


def _operand(obj, name):
    """(value for promotion, ndarray or None for a weak Python scalar)."""
    if _dtypes.is_weak_scalar(obj):
        return obj, None
    arr = _as_array(obj, name)
    _dtypes.check_input_dtype(arr.dtype, name)
    return arr, arr


def _compute_dtype(g_val, y_val, dtype):
    if dtype is not None:
        dt = np.dtype(dtype).newbyteorder("=")  # results are native-endian
        _dtypes.check_compute_dtype(dt)
        for val, name in ((g_val, "grad_output"), (y_val, "output")):
            if _dtypes.is_weak_scalar(val):
                if isinstance(val, complex) and dt.kind != "c":
                    raise TypeError(f"{name}, a Python complex, cannot be cast to "
                                    f"dtype={dt} under the 'same_kind' rule")
            elif not _dtypes.can_cast(val.dtype, dt):
                raise TypeError(f"{name} of dtype {val.dtype} cannot be cast to "
                                f"dtype={dt} under the 'same_kind' rule")
        return dt
    dt = _dtypes.result_dtype(g_val, y_val)
    if dt not in _dtypes.SUPPORTED:
        raise TypeError(f"grad_output and output promote to unsupported dtype {dt}; "
                        f"supported are {', '.join(map(str, _dtypes.SUPPORTED))}")
    return dt


def _weak_array(val, dt, name):
    """A Python scalar as a 0-d array of the compute dtype (NEP 50 casts its value)."""
    try:
        return np.asarray(val, dtype=dt)
    except OverflowError as exc:  # an int beyond float64's range
        raise OverflowError(f"{name}: the Python {type(val).__name__} does not fit "
                            f"in {dt}: {exc}") from None


def _check_out(out, shape, dt):
    if isinstance(out, tuple) and len(out) == 1:  # ufunc spelling out=(arr,)
        out = out[0]
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape}, but the broadcast shape of "
                         f"grad_output and output is {shape}")
    if not out.flags.writeable:
        raise ValueError(f"out (dtype {out.dtype}, shape {out.shape}) is read-only")
    if out.size and any(s == 0 and n > 1 for s, n in zip(out.strides, out.shape)):
        # Several results would land on one element; np.nditer may also hand
        # such an out to the kernel unbuffered, which rejects it part way.
        raise ValueError(f"out (dtype {out.dtype}, shape {out.shape}) has a zero "
                         f"stride: its elements overlap")
    if not ((out.dtype.kind in "fc" and out.dtype.fields is None)
            or out.dtype == _dtypes.BFLOAT16) or not _dtypes.can_cast(dt, out.dtype):
        raise TypeError(f"cannot cast the result from {dt} to out's dtype "
                        f"{out.dtype} under the 'same_kind' rule")
    return out


def _compute_into(g, y, out, dt, nthreads):
    order = "C" if out.flags.c_contiguous else "F"
    if _layout.kernel_ready(out, dt, out.shape, order) and all(
            _layout.kernel_ready(a, dt, out.shape, order) and _layout.reads_safely(a, out)
            for a in (g, y)):
        _apply(g, y, out, nthreads)
        return
    it = np.nditer([g, y, out], flags=_ITER_FLAGS,
                   op_flags=[_IN_FLAGS, _IN_FLAGS, _OUT_FLAGS],
                   op_dtypes=[dt, dt, dt], casting="unsafe",  # checked by the caller
                   buffersize=_BLOCK, order="K")
    with it:
        for gb, yb, ob in it:
            _apply(gb, yb, ob, nthreads)


def sigmoid_backward(grad_output, output, /, out=None, *, dtype=None, num_threads=None):
    """Gradient of the sigmoid: ``grad_output * (1 - output) * output``.

    For complex dtypes the result is ``grad_output * conj((1 - output) *
    output)``.  float16 and bfloat16 are computed in float32 and rounded once
    to nearest-even.

    Parameters
    ----------
    grad_output : array_like, DLPack producer or dask.array.Array
        Gradient of the loss with respect to the sigmoid's output.  DLPack
        producers (PyTorch CPU tensors, JAX arrays) are read without a copy;
        a bfloat16 tensor gives an ml_dtypes bfloat16 result.
    output : array_like, DLPack producer or dask.array.Array
        The sigmoid's forward output ``y = sigmoid(x)``.  Broadcasts against
        ``grad_output`` by NumPy's rules.
    out : ndarray, optional
        Where to write the result: a writeable array of the broadcast shape.
        The result is cast to its dtype under the 'same_kind' rule.  It may be
        one of the inputs (in place).
    dtype : dtype, optional
        Compute and result dtype, one of float16, bfloat16, float32, float64,
        complex64, complex128.  By default NumPy's promotion of the inputs
        (Python scalars are weak), with bfloat16 and float16 giving float32
        and integer or bool inputs giving float64.
    num_threads : int, optional
        Threads to use; defaults to :func:`get_num_threads`.  Results do not
        depend on it.

    Returns
    -------
    ndarray or scalar or dask.array.Array
        ``out`` if given; else a new C-ordered array, or a NumPy scalar when
        both inputs are 0-d, as a NumPy ufunc returns.  When either input is
        a Dask array: a lazy Dask array, computed block by block with the
        same kernel when asked (``out=`` is then a TypeError).

    Raises
    ------
    TypeError
        For an unsupported dtype, or a cast the 'same_kind' rule forbids.
    ValueError
        For shapes that do not broadcast, or an ``out`` of the wrong shape,
        read-only, or with a zero stride.  Nothing is written to ``out`` when
        an error is raised.
    OverflowError
        For a Python int beyond float64's range.

    Examples
    --------
    >>> import numpy as np
    >>> from sigmoid_backward import sigmoid_backward
    >>> sigmoid_backward(np.ones((2, 2), np.float32), np.array([[1, 2], [3, 4]], np.float32))
    array([[  0.,  -2.],
           [ -6., -12.]], dtype=float32)
    """
    # Same-dtype, same-shape contiguous ndarrays: the whole call in C.
    result = _try_direct(grad_output, output, out, dtype, num_threads)
    if result is not None:
        return result
    if _dask.is_dask_array(grad_output) or _dask.is_dask_array(output):
        return _dask.sigmoid_backward(grad_output, output, out, dtype, num_threads)
    g_val, g = _operand(grad_output, "grad_output")
    y_val, y = _operand(output, "output")
    dt = _compute_dtype(g_val, y_val, dtype)
    if g is None:
        g = _weak_array(grad_output, dt, "grad_output")
    if y is None:
        y = _weak_array(output, dt, "output")
    try:
        shape = np.broadcast_shapes(g.shape, y.shape)
    except ValueError as exc:
        # Say so when the shapes match but their product overflows intp.
        why = f" ({exc})" if "too large" in str(exc) else ""
        raise ValueError(f"grad_output with shape {g.shape} and output with shape "
                         f"{y.shape} cannot be broadcast together{why}") from None
    nthreads = _threads.resolve(num_threads)
    if out is None:
        result = np.empty(shape, dt)
        _compute_into(g, y, result, dt, nthreads)
        return result[()] if result.ndim == 0 else result
    out = _check_out(out, shape, dt)
    _compute_into(g, y, out, dt, nthreads)
    return out
