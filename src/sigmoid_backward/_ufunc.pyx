# cython: language_level=3
"""``sigmoid_backward.ufunc``: the sigmoid gradient as a real ``numpy.ufunc``.

Built as scipy.special builds its ufuncs: ``PyUFunc_FromFuncAndData`` with
one loop per NumPy dtype (float16, float32, float64, complex64, complex128),
and the bfloat16 loop added with ``PyUFunc_RegisterLoopForType`` as ml_dtypes
adds its own.  Every loop is the same inner loop, told its dtype by the
loop's data pointer; it hands the whole inner loop (any strides) to the
kernel (_kernels.pyx), which splits large ones between OpenMP threads.

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
                                        KIND_C128, KIND_BF16, compute, threads_for_call)

import numpy as np
import ml_dtypes

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
    """NumPy's inner loop for every dtype: grad_output, output, out."""
    compute(<Kind><intptr_t>data, args[0], steps[0], args[1], steps[1],
            args[2], steps[2], dimensions[0], threads_for_call())


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

# Loops by NumPy type number, all with the same inner loop.
cdef cnp.PyUFuncGenericFunction _funcs[5]
cdef void *_data[5]
cdef char _types[15]

cdef int _i
cdef object _kinds = [(np.dtype(np.float16).num, KIND_F16), (cnp.NPY_FLOAT, KIND_F32),
                      (cnp.NPY_DOUBLE, KIND_F64), (cnp.NPY_CFLOAT, KIND_C64),
                      (cnp.NPY_CDOUBLE, KIND_C128)]
for _i, (_typenum, _kind) in enumerate(_kinds):
    _funcs[_i] = <cnp.PyUFuncGenericFunction>_inner_loop
    _data[_i] = <void *><intptr_t>_kind
    _types[3 * _i] = _types[3 * _i + 1] = _types[3 * _i + 2] = _typenum

ufunc = cnp.PyUFunc_FromFuncAndData(_funcs, _data, _types, 5, 2, 1, cnp.PyUFunc_None,
                                    b"sigmoid_backward", _DOC, 0)

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
cdef int _bf16_types[3]
_bf16_types[0] = _bf16_types[1] = _bf16_types[2] = _BFLOAT16.num
cnp.PyUFunc_RegisterLoopForType(ufunc, _BFLOAT16.num,
                                <cnp.PyUFuncGenericFunction>_inner_loop,
                                _bf16_types, <void *><intptr_t>KIND_BF16)

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
