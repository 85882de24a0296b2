# cython: language_level=3
"""``sigmoid_backward.sigmoid_backward``: the ufunc, plus a thread argument.

Every call is ``sigmoid_backward.ufunc(...)`` with ``num_threads=`` applied
to the kernel calls it makes, with two additions:

- the common case (exact ndarrays of one supported dtype and one shape,
  aligned, native-endian, contiguous; ``out`` absent or like them; no other
  option) runs entirely in C, without NumPy's ufunc machinery, whose setup
  costs more than the kernel below a few thousand elements.  It returns
  exactly what the ufunc returns;
- DLPack producers (PyTorch tensors, JAX arrays) are imported without a
  copy, bfloat16 included (_inputs.py), and arguments NumPy cannot make an
  array of get an error that names them.

Objects that implement ``__array_ufunc__`` (xarray, pandas, Dask,
``numpy.ma``, ndarray subclasses) are passed to the ufunc untouched, so
that NumPy's override protocol gives them what ``np.multiply`` would.
"""
cimport numpy as cnp

from sigmoid_backward._kernels cimport (Kind, call_threads, compute, kind_of, same_or_disjoint,
                                        set_call_threads, threads_for, usable)

import numpy as np

from . import _frameworks, _threads
from ._dtypes import BFLOAT16 as _BFLOAT16
from ._inputs import as_array as _as_array
from ._ufunc import ufunc as _ufunc

cnp.import_array()

_PYTHON_SCALARS = (float, int, complex, bool)


cpdef object fast_path(object grad_output, object output, object out, int requested):
    """The call in C when it is the common case, else None (the ufunc's).

    ``requested`` is the num_threads= count (0: the default).  Python-visible
    for the tests, which check which calls it takes and that it returns
    exactly what the ufunc returns.
    """
    cdef cnp.ndarray g, y, o
    cdef int typenum, kind
    cdef bint c_order = True
    cdef Py_ssize_t size
    if type(grad_output) is not np.ndarray or type(output) is not np.ndarray:
        return None
    g = grad_output
    y = output
    typenum = cnp.PyArray_TYPE(g)
    kind = kind_of(typenum)
    if kind < 0 or cnp.PyArray_TYPE(y) != typenum or not cnp.PyArray_SAMESHAPE(g, y):
        return None
    if out is not None:
        if type(out) is not np.ndarray:
            return None
        o = out
        c_order = cnp.PyArray_IS_C_CONTIGUOUS(o)
        if (cnp.PyArray_TYPE(o) != typenum or not cnp.PyArray_SAMESHAPE(g, o)
                or not cnp.PyArray_ISWRITEABLE(o) or not usable(o, c_order)
                or not (same_or_disjoint(g, o) and same_or_disjoint(y, o))):
            return None
    if not (usable(g, c_order) and usable(y, c_order)):
        return None
    if out is None:
        o = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(g), cnp.PyArray_DIMS(g), typenum, 0)
    size = cnp.PyArray_ITEMSIZE(o)
    with nogil:
        compute(<Kind>kind, <Kind>kind, <const char*>cnp.PyArray_DATA(g), size,
                <Kind>kind, <const char*>cnp.PyArray_DATA(y), size,
                <char*>cnp.PyArray_DATA(o), size, cnp.PyArray_SIZE(o),
                threads_for(requested))
    if out is None and cnp.PyArray_NDIM(o) == 0:
        return o[()]   # a NumPy scalar, as the ufunc returns
    return o


cdef object _operand(object x, str name):
    """What the ufunc gets for an input: NumPy's protocols where they apply,
    else an array made here (DLPack import, errors that name ``name``)."""
    if type(x) is np.ndarray or type(x) in _PYTHON_SCALARS:
        if type(x) is int:
            try:
                float(x)
            except OverflowError:
                raise OverflowError(f"{name}: the Python int does not fit in float64 "
                                    f"({x.bit_length()} bits)") from None
        return x
    if hasattr(type(x), "__array_ufunc__"):
        return x   # ndarray subclasses, overrides: NumPy dispatches them
    return _as_array(x, name)


def sigmoid_backward(grad_output, output, /, out=None, *, where=True,
                     casting="same_kind", order="K", dtype=None, subok=True,
                     num_threads=None):
    """Gradient of the sigmoid: ``grad_output * (1 - output) * output``.

    For complex dtypes the result is ``grad_output * conj((1 - output) *
    output)``.  float16 and bfloat16 are computed in float32 and rounded once
    to nearest-even.

    This is :data:`sigmoid_backward.ufunc` called with the same arguments,
    plus ``num_threads``: every option behaves as for a NumPy ufunc such as
    ``np.multiply``.

    Parameters
    ----------
    grad_output : array_like or DLPack producer
        Gradient of the loss with respect to the sigmoid's output.  DLPack
        producers (PyTorch CPU tensors, JAX arrays) are read without a copy;
        a bfloat16 tensor gives an ml_dtypes bfloat16 result.  Containers
        with ``__array_ufunc__`` (xarray, pandas, Dask, ``numpy.ma``) get
        their own type back.
    output : array_like or DLPack producer
        The sigmoid's forward output ``y = sigmoid(x)``.  Broadcasts against
        ``grad_output`` by NumPy's rules.
    out : ndarray or tuple of one ndarray, optional
        Where to write the result: the inputs must broadcast to its shape
        (usually their broadcast shape).  The result is cast to its dtype
        under ``casting``.  It may be one of the
        inputs (in place); any other overlap is handled as NumPy does.
    where : array_like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its values (and a
        new output is left uninitialised), as for any ufunc.
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, optional
        Which casts of the inputs to the compute dtype, and of the result to
        ``out``, are allowed.
    order : {'K', 'C', 'F', 'A'}, optional
        Memory order of a new output; 'K' follows the inputs.
    dtype : dtype, optional
        Compute and result dtype, one of float16, bfloat16, float32, float64,
        complex64, complex128.  By default NumPy's promotion of the inputs
        (Python scalars are weak), with float16 and bfloat16 giving float32
        and integer or bool inputs giving float64.
    subok : bool, optional
        Whether an ndarray subclass input gives a result of its class.
    num_threads : int, optional
        Threads for the computations this call makes; defaults to
        :func:`get_num_threads`.  Results do not depend on it.  Lazy
        containers (Dask) compute later, with the default of the thread
        that computes them.

    Returns
    -------
    ndarray, scalar or container
        What the ufunc returns: ``out`` if given; else a new array, a NumPy
        scalar when both inputs are 0-d, or the container type of an input
        that overrides ``__array_ufunc__`` (a lazy Dask array for Dask).

    Raises
    ------
    TypeError
        For an unsupported dtype, a cast that ``casting`` forbids (a complex
        result into a bfloat16 ``out`` included), or an input that is no
        array.
    ValueError
        For shapes that do not broadcast, or an ``out`` of the wrong shape
        or read-only.  Nothing is written to ``out`` when an error is raised.

    Examples
    --------
    >>> import numpy as np
    >>> from sigmoid_backward import sigmoid_backward
    >>> sigmoid_backward(np.ones((2, 2), np.float32), np.array([[1, 2], [3, 4]], np.float32))
    array([[  0.,  -2.],
           [ -6., -12.]], dtype=float32)
    """
    cdef int requested = 0, previous
    if num_threads is not None:
        # A plain positive int, checked here: the Python check costs more
        # than a small call.  Anything else gets the full check and message.
        if type(num_threads) is int and 1 <= <object>num_threads <= (1 << 30):
            requested = num_threads
        else:
            requested = _threads.check(num_threads, "num_threads")
    if (where is True and dtype is None and casting == "same_kind" and order == "K"
            and subok is True):
        result = fast_path(grad_output, output, out, requested)
        if result is not None:
            return result
    # PyTorch tensors, JAX and CuPy arrays: the call on NumPy views of them,
    # the result back in their type (_frameworks.py).
    result = _frameworks.call(grad_output, output, out, sigmoid_backward,
                              (where, casting, order, dtype, subok, num_threads))
    if result is not NotImplemented:
        return result
    g = _operand(grad_output, "grad_output")
    y = _operand(output, "output")
    # Only the options the caller changed, as a ufunc call spells them: an
    # __array_ufunc__ override (Dask's, for one) may refuse the others.
    kwargs = {}
    if out is not None:
        _check_complex_into_bfloat16(g, y, out, dtype)
        kwargs["out"] = out
    if where is not True:
        kwargs["where"] = where
    if casting != "same_kind":
        kwargs["casting"] = casting
    if order != "K":
        kwargs["order"] = order
    if dtype is not None:
        kwargs["dtype"] = dtype
    if subok is not True:
        kwargs["subok"] = subok
    previous = call_threads()
    set_call_threads(requested)
    try:
        return _ufunc(g, y, **kwargs)
    finally:
        set_call_threads(previous)


cdef _check_complex_into_bfloat16(g, y, out, dtype):
    """ml_dtypes lets complex cast to bfloat16 under 'same_kind' (dropping the
    imaginary part), where NumPy forbids complex to any real dtype; the
    function keeps NumPy's rule."""
    outs = out if isinstance(out, tuple) else (out,)
    if not any(isinstance(o, np.ndarray) and o.dtype == _BFLOAT16 for o in outs):
        return
    try:
        compute_dtype = _ufunc.resolve_dtypes(
            (_dtype_or_type(g), _dtype_or_type(y), None),
            signature=(None, None, None if dtype is None else np.dtype(dtype).type))[2]
    except (TypeError, ValueError):
        return   # the ufunc call reports it
    if compute_dtype.kind == "c":
        raise TypeError(f"cannot cast the result from {compute_dtype} to out's dtype "
                        f"{_BFLOAT16} under the 'same_kind' rule: complex to real")


cdef _dtype_or_type(x):
    if type(x) is bool:
        return np.dtype(bool)
    if type(x) in _PYTHON_SCALARS:
        return type(x)
    return np.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype
