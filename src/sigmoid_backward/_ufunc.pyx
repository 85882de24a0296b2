# cython: language_level=3
"""``sigmoid_backward.ufunc``: the sigmoid gradient as a real ``numpy.ufunc``.

Built as scipy.special builds its ufuncs: ``PyUFunc_FromFuncAndData`` with
the loops of NumPy's dtypes (float16, float32, float64, complex64,
complex128, and every mixed pair of them), and the bfloat16 loops added with
``PyUFunc_RegisterLoopForType`` as ml_dtypes adds its own.  Every loop is the
same inner loop, told its dtypes by the loop's data pointer; it hands the
whole inner loop (any strides) to the kernel (_kernels.pyx), which widens a
narrower input as it reads it and splits large calls between OpenMP
threads.

NumPy does the rest, as for any ufunc: broadcasting, casting, ``out=``,
``where=``, ``order=``, ``subok=``, ``.outer``, ``.at``, and the
``__array_ufunc__`` protocol that xarray, pandas, Dask and ``numpy.ma`` use.
The dtype rules are a promoter (_promotion.h), which NumPy asks for every
combination of input dtypes without a loop of its own.
"""
from libc.stdint cimport intptr_t

cimport numpy as cnp
from cpython.object cimport PyObject
from cpython.pycapsule cimport PyCapsule_New

from sigmoid_backward._kernels cimport (Kind, KIND_F16, KIND_F32, KIND_F64, KIND_C64,
                                        KIND_C128, KIND_BF16, compute, resolve_threads)

import numpy as np
import ml_dtypes

from sigmoid_backward import _dtypes

cnp.import_array()
cnp.import_ufunc()

cdef extern from "_promotion.h":
    ctypedef struct PyArray_DTypeMeta:
        pass
    PyArray_DTypeMeta *sb_bfloat16_dtype
    int sb_promoter(object, PyArray_DTypeMeta **, PyArray_DTypeMeta **,
                    PyArray_DTypeMeta **) except -1

cdef extern from "numpy/ufuncobject.h":
    int PyUFunc_AddPromoter(object ufunc, object dtypes, object promoter) except -1


cdef void _inner_loop(char **args, const cnp.npy_intp *dimensions,
                      const cnp.npy_intp *steps, void *data) noexcept nogil:
    """NumPy's inner loop for every loop: grad_output, output, out.  The
    data pointer packs the compute dtype and each input's (_loop_data)."""
    cdef intptr_t kinds = <intptr_t>data
    compute(<Kind>(kinds & 15), <Kind>((kinds >> 4) & 15), args[0], steps[0],
            <Kind>((kinds >> 8) & 15), args[1], steps[1],
            args[2], steps[2], dimensions[0], resolve_threads(0))


cdef bytes _DOC = b"""\
Gradient of the sigmoid: ``grad_output * (1 - output) * output``.

For complex dtypes the result is ``grad_output * conj((1 - output) *
output)``.  float16 and bfloat16 are computed in float32 and rounded once to
nearest-even.  Python scalars are weak (NEP 50); float16 with bfloat16 gives
float32, and integer or bool inputs compute in float64.

This is a NumPy ufunc: broadcasting, ``out=``, ``where=``, ``casting=``,
``order=``, ``dtype=``, ``subok=``, ``.outer`` and ``.at`` behave as for
``np.multiply``, and containers that implement ``__array_ufunc__`` (xarray,
pandas, Dask, ``numpy.ma``) keep their type.  Threads: see
``sigmoid_backward.get_num_threads``; ``sigmoid_backward.sigmoid_backward``
is this ufunc with a ``num_threads=`` argument.  Floating-point errors are
never reported (``np.errstate`` has no effect): overflow gives inf and
invalid operations NaN, as in the operator this mirrors.
"""

# One loop for every pair of input dtypes, all the same inner loop: the
# compute dtype is their promotion, which holds both exactly, and the kernel
# widens a narrower input while it gathers it.  Without the mixed loops NumPy
# would cast such an input into small buffers first, on one thread, and a
# large float32-with-float64 call took 3.4x the same-dtype call's time
# (benchmarks/NOTES.md).  _dtypes.result_dtype states the promoter's rule in
# Python; the tests check every pair against the promoter.
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_KINDS = {np.dtype(np.float16): KIND_F16, np.dtype(np.float32): KIND_F32,
          np.dtype(np.float64): KIND_F64, np.dtype(np.complex64): KIND_C64,
          np.dtype(np.complex128): KIND_C128, _BFLOAT16: KIND_BF16}


def _loop_data(g, y, result):
    return _KINDS[result] | (_KINDS[g] << 4) | (_KINDS[y] << 8)


_pairs = [(g, y, _dtypes.result_dtype(np.empty(0, g), np.empty(0, y)))
          for g in _KINDS for y in _KINDS]
_numpy_loops = [p for p in _pairs if _BFLOAT16 not in p]
_bfloat16_loops = [p for p in _pairs if _BFLOAT16 in p]

cdef enum:
    _MAX_LOOPS = 36   # 6 x 6 pairs of input dtypes
cdef cnp.PyUFuncGenericFunction _funcs[_MAX_LOOPS]
cdef void *_data[_MAX_LOOPS]
cdef char _types[3 * _MAX_LOOPS]
cdef int _i, _j
assert len(_numpy_loops) <= _MAX_LOOPS
for _i, _loop in enumerate(_numpy_loops):
    _funcs[_i] = <cnp.PyUFuncGenericFunction>_inner_loop
    _data[_i] = <void *><intptr_t>_loop_data(*_loop)
    for _j in range(3):
        _types[3 * _i + _j] = _loop[_j].num

ufunc = cnp.PyUFunc_FromFuncAndData(_funcs, _data, _types, len(_numpy_loops), 2, 1,
                                    cnp.PyUFunc_None, b"sigmoid_backward", _DOC, 0)

cdef int _arg_types[3]
for _loop in _bfloat16_loops:
    for _j in range(3):
        _arg_types[_j] = _loop[_j].num
    cnp.PyUFunc_RegisterLoopForType(ufunc, _BFLOAT16.num,
                                    <cnp.PyUFuncGenericFunction>_inner_loop,
                                    _arg_types, <void *><intptr_t>_loop_data(*_loop))

_BFLOAT16_DTYPE = type(_BFLOAT16)   # the DType class; this reference keeps it alive
sb_bfloat16_dtype = <PyArray_DTypeMeta *><PyObject *>_BFLOAT16_DTYPE
PyUFunc_AddPromoter(ufunc, (None, None, None),
                    PyCapsule_New(<void *>sb_promoter, b"numpy._ufunc_promoter", NULL))

# pickle finds a ufunc by its __name__ in the module that holds it (Dask's
# distributed scheduler pickles the ufunc to send it to its workers).
sigmoid_backward = ufunc
try:
    ufunc.__module__ = __name__   # NumPy >= 2.1 keeps it; 2.0 finds us by name
except AttributeError:
    pass
