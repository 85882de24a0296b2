# cython: language_level=3
"""``sigmoid_backward.sigmoid_backward``: the ufunc, plus a thread argument.

Every call is ``sigmoid_backward.ufunc(...)`` with the same arguments, and
``num_threads=`` applied to the kernel calls it makes: the inputs reach the
ufunc as they are, so that the function gives every object what the ufunc
(and ``np.multiply``) gives it, ``__array_wrap__`` and overrides included.
What it adds (_arguments.py):

- the common case (exact ndarrays of one supported dtype and one shape,
  aligned, native-endian, contiguous; ``out`` absent or like them, and not
  partly overlapping them; no other option) runs entirely in C, without
  NumPy's ufunc machinery, whose setup costs more than the kernel below a
  few thousand elements.  It returns exactly what the ufunc returns;
- PyTorch tensors and JAX arrays give their own type back, computed on
  NumPy views of them (_frameworks/_tensors.py);
- ``out=`` takes any writable buffer-protocol object, and is returned;
- DLPack producers NumPy cannot read are imported without a copy
  (_inputs.py);
- errors that name the argument: inputs NumPy cannot make an array of, a
  Python int beyond float64, raw bytes without a dtype, a complex result
  into a bfloat16 ``out``; and NumPy's errors told with the arguments'
  names, dtypes and shapes (_named_errors.py).
"""
cimport numpy as cnp

from sigmoid_backward._kernel._kernels cimport (DIRECT, SB_MAX_THREADS, Kind, call_threads,
                                                compute, direct_reason, kind_of,
                                                set_call_threads)

import numpy as np

from . import _arguments, _named_errors
from .._kernel import _dtypes, _threads
from .._frameworks import _tensors
from ._ufunc import ufunc as _ufunc

cnp.import_array()

cpdef object fast_path(object grad_output, object output, object out, int requested):
    """The call in C when it is the common case, else None (the ufunc's).

    ``requested`` is the num_threads= count (0: the default).  Python-visible
    for the tests, which check which calls it takes and that it returns
    exactly what the ufunc returns.
    """
    cdef cnp.ndarray g, y, o
    cdef bint c_order = True
    cdef Py_ssize_t size
    cdef Kind kind
    if type(grad_output) is not np.ndarray or type(output) is not np.ndarray:
        return None
    g = grad_output
    y = output
    if out is None:
        # Both like g, which a new out will be like.
        if (direct_reason(g, g, True, False) != DIRECT
                or direct_reason(y, g, True, False) != DIRECT):
            return None
    else:
        if type(out) is not np.ndarray:
            return None
        o = out
        c_order = cnp.PyArray_IS_C_CONTIGUOUS(o)
        if (direct_reason(o, o, c_order, True) != DIRECT
                or direct_reason(g, o, c_order, False) != DIRECT
                or direct_reason(y, o, c_order, False) != DIRECT):
            return None
    kind = <Kind>kind_of(cnp.PyArray_TYPE(g))
    if out is None:
        o = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(g), cnp.PyArray_DIMS(g), cnp.PyArray_TYPE(g), 0)
    size = cnp.PyArray_ITEMSIZE(o)
    with nogil:
        compute(kind, kind, <const char*>cnp.PyArray_DATA(g), size,
                kind, <const char*>cnp.PyArray_DATA(y), size,
                <char*>cnp.PyArray_DATA(o), size, cnp.PyArray_SIZE(o),
                requested)
    if out is None and cnp.PyArray_NDIM(o) == 0:
        return o[()]   # a NumPy scalar, as the ufunc returns
    return o


cdef inline bint _plain(object x):
    """An ndarray or a Python scalar: nothing for the framework or byte
    checks to look at (they cost more than a small call's share)."""
    cdef type t = type(x)
    return t is np.ndarray or t is float or t is int or t is complex or t is bool


# out's default: an out=None the caller spells out tells NumPy that a where=
# without an out is meant, and the ufunc does not warn then; this tells the
# two apart, as NumPy's own functions do.
cdef object _NO_OUT = np._NoValue
_FOREIGN_NUMS = _dtypes.FOREIGN_NUMS
# SB_MAX_THREADS as a Python int made once: comparing with the C constant
# would make one for every call.
cdef object _MAX_THREADS = SB_MAX_THREADS


def sigmoid_backward(grad_output, output, /, out=_NO_OUT, *, where=True,
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
    grad_output : array_like, tensor or DLPack producer
        Gradient of the loss with respect to the sigmoid's output.  PyTorch
        CPU tensors and JAX CPU arrays give their own type back (tensors
        share the result's memory; bfloat16 included); tensors and arrays on
        another device are refused.  Other DLPack producers are read
        without a copy.  Containers with ``__array_ufunc__`` (xarray,
        pandas, Dask, ``numpy.ma``) get their own type back.
    output : array_like or DLPack producer
        The sigmoid's forward output ``y = sigmoid(x)``.  Broadcasts against
        ``grad_output`` by NumPy's rules.
    out : ndarray, tensor, writable buffer, or tuple of one, optional
        Where to write the result: the inputs must broadcast to its shape
        (usually their broadcast shape).  The result is cast to its dtype
        under ``casting``.  It may be one of the inputs (in place); any
        other overlap is handled as NumPy does.  Any writable
        buffer-protocol object (``memoryview``, ``array.array``, a Cython
        typed memoryview) and a PyTorch CPU tensor are written through an
        array view of their memory, and returned.
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
    ndarray, scalar, tensor or container
        What the ufunc returns: ``out`` if given; else a new array, a NumPy
        scalar when both inputs are 0-d, or the container type of an input
        that overrides ``__array_ufunc__`` (a lazy Dask array for Dask); a
        tensor or JAX array for tensors or JAX arrays.

    Raises
    ------
    TypeError
        For an unsupported dtype, a cast that ``casting`` forbids (a complex
        result into a bfloat16 ``out`` included), an input that is no
        array, raw bytes (``bytes``, ``bytearray``, ``mmap``: wrap them with
        ``np.frombuffer(..., dtype=...)``), or an ``out`` that is neither an
        ndarray nor a writable buffer.
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
    cdef bint out_given = out is not _NO_OUT
    if not out_given:
        out = None
    if num_threads is not None:
        # A plain positive int, checked here: the Python check costs more
        # than a small call.  Anything else gets the full check and message.
        if type(num_threads) is int and 1 <= <object>num_threads <= _MAX_THREADS:
            requested = num_threads
        else:
            requested = _threads.check(num_threads, "num_threads")
    if (where is True and dtype is None and casting == "same_kind" and order == "K"
            and subok is True):
        result = fast_path(grad_output, output, out, requested)
        if result is not None:
            return result
    cdef bint plain = (_plain(grad_output) and _plain(output)
                       and (out is None or type(out) is np.ndarray))
    if not plain:
        # PyTorch tensors, JAX and CuPy arrays: the call on NumPy views of
        # them, the result back in their type (_frameworks/_tensors.py).
        result = _tensors.call(grad_output, output, out, sigmoid_backward,
                               (where, casting, order, dtype, subok, num_threads))
        if result is not NotImplemented:
            return result
    if not plain or type(grad_output) is int or type(output) is int:
        _arguments.check_input(grad_output, "grad_output")
        _arguments.check_input(output, "output")
    # Only the options the caller changed, as a ufunc call spells them: an
    # __array_ufunc__ override (Dask's, for one) may refuse the others.
    kwargs = {}
    if out_given:
        kwargs["out"] = out if type(out) is np.ndarray else _arguments.as_out(out)
        # An ndarray out of a dtype NumPy owns needs no look (cheaper here
        # than in the call).
        if type(out) is not np.ndarray or cnp.PyArray_TYPE(<cnp.ndarray>out) in _FOREIGN_NUMS:
            _arguments.refuse_complex_into_foreign(_ufunc, grad_output, output, kwargs["out"],
                                                   dtype)
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
        try:
            result = _ufunc(grad_output, output, **kwargs)
        except Exception as error:
            _arguments.name_a_refused_out(error, out)
            g, y = _arguments.after_failure(grad_output, output)
            if g is grad_output and y is output:
                raise _named_errors.told(error, g, y, kwargs)
            try:
                result = _ufunc(g, y, **kwargs)
            except Exception as again:
                raise _named_errors.told(again, g, y, kwargs)
    finally:
        set_call_threads(previous)
    if out is not None and kwargs["out"] is not out:
        return _arguments.returned_out(out)   # a buffer the ufunc wrote through a view
    return result
