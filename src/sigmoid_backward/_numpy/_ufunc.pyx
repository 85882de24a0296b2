# cython: language_level=3
"""``sigmoid_backward.ufunc``: the sigmoid gradient as a real ``numpy.ufunc``.

Built with NumPy 2's ArrayMethod API: ``PyUFunc_FromFuncAndData`` makes a
ufunc without loops, and ``PyUFunc_AddLoopFromSpec`` adds one loop for
every pair of the dtype table's dtypes (_dtype_spec.py), ml_dtypes' among
them.  Every loop is the
same inner loop, which reads the operands' dtypes from the loop's
descriptors and hands the whole inner loop (any strides, any overlap NumPy
allows) to the kernel (_kernels.pyx), which widens a narrower input as it
reads it and splits large calls between OpenMP threads.

NumPy does the rest, as for any ufunc: broadcasting, casting, ``out=``,
``where=``, ``order=``, ``subok=``, ``.outer``, ``.at``, the reductions,
and the ``__array_ufunc__`` protocol that xarray, pandas, Dask and
``numpy.ma`` use.  The dtype rules are a promoter (_promotion.h), which
NumPy asks for every combination of input dtypes without a loop of its own,
and which also names each loop's result dtype below.
"""
cimport numpy as cnp
from cpython.object cimport PyObject
from cpython.pycapsule cimport PyCapsule_New
from cpython.ref cimport Py_XDECREF

from sigmoid_backward._kernel._kernels cimport Kind, compute, kind_of


from sigmoid_backward._kernel import _dtypes, _kernels

cnp.import_array()
cnp.import_ufunc()

cdef extern from "Python.h":
    ctypedef struct PyType_Slot:
        int slot
        void *pfunc

cdef extern from "_promotion.h":
    ctypedef struct PyArray_DTypeMeta:
        pass
    void sb_set_kind_typenum(int kind, int num)
    PyArray_DTypeMeta *sb_promote(PyArray_DTypeMeta *g, PyArray_DTypeMeta *y) except NULL
    int sb_promoter(object, PyArray_DTypeMeta **, PyArray_DTypeMeta **,
                    PyArray_DTypeMeta **) except -1
    int sb_refuse(PyArray_DTypeMeta **dtypes, PyObject **known) except -1

cdef extern from "numpy/ndarraytypes.h":
    # The field the inner loop reads (numpy's .pxd keeps the struct opaque).
    ctypedef struct Descr "PyArray_Descr":
        int type_num

cdef extern from "numpy/dtype_api.h":
    ctypedef struct PyArrayMethod_Context:
        Descr **descriptors
    ctypedef struct NpyAuxData:
        pass
    ctypedef struct PyArrayMethod_Spec:
        const char *name
        int nin, nout
        cnp.NPY_CASTING casting
        int flags
        PyArray_DTypeMeta **dtypes
        PyType_Slot *slots
    enum:
        NPY_METH_strided_loop
        NPY_METH_NO_FLOATINGPOINT_ERRORS

cdef extern from "numpy/ufuncobject.h":
    int PyUFunc_AddPromoter(object ufunc, object dtypes, object promoter) except -1
    int PyUFunc_AddLoopFromSpec(object ufunc, PyArrayMethod_Spec *spec) except -1


cdef int _strided_loop(PyArrayMethod_Context *context, char **args,
                       const cnp.npy_intp *dimensions, const cnp.npy_intp *steps,
                       NpyAuxData *auxdata) noexcept nogil:
    """NumPy's inner loop for every loop: grad_output, output, out, any
    strides and any overlap NumPy allows (_kernels.pxd).  The operands'
    dtypes come from the loop's descriptors."""
    cdef Descr **descrs = context.descriptors
    compute(<Kind>kind_of(descrs[2].type_num),
            <Kind>kind_of(descrs[0].type_num), args[0], steps[0],
            <Kind>kind_of(descrs[1].type_num), args[1], steps[1],
            args[2], steps[2], dimensions[0], 0)   # 0: the calling thread's count
    return 0


cdef bytes _DOC = b"""\
Gradient of the sigmoid: ``grad_output * (1 - output) * output``.

For complex dtypes the result is ``grad_output * conj((1 - output) *
output)``.  float16 and bfloat16 are computed in float32 and rounded once to
nearest-even.  Python scalars are weak (NEP 50); float16 with bfloat16 gives
float32, and integer or bool inputs compute in float64.

This is a NumPy ufunc: broadcasting, ``out=``, ``where=``, ``casting=``,
``order=``, ``dtype=``, ``subok=``, ``.outer``, ``.at``, ``.reduce``,
``.accumulate`` and ``.reduceat`` (left folds) behave as for
``np.subtract``, and containers that implement ``__array_ufunc__``
(xarray, pandas, Dask, ``numpy.ma``) keep their type.  Threads: see
``sigmoid_backward.get_num_threads``; ``sigmoid_backward.sigmoid_backward``
is this ufunc with a ``num_threads=`` argument.  Floating-point errors are
never reported (``np.errstate`` has no effect): overflow gives inf and
invalid operations NaN, as in the operator this mirrors.
"""

ufunc = cnp.PyUFunc_FromFuncAndData(NULL, NULL, NULL, 0, 2, 1, cnp.PyUFunc_None,
                                    b"sigmoid_backward", _DOC, 0)

# The promoter reads _dtypes.h's table, and ml_dtypes' type numbers come at import.
for _kind, (_kind_name, _size) in enumerate(_kernels.DTYPE_TABLE):
    sb_set_kind_typenum(_kind, _dtypes.BY_NAME[_kind_name].num)


cdef PyArray_DTypeMeta *_dtype_class(dtype):
    """The DType class of a dtype instance (borrowed: NumPy and ml_dtypes
    keep their classes alive)."""
    cls = type(dtype)
    return <PyArray_DTypeMeta *><PyObject *>cls


# One loop for every pair of input dtypes, all the same inner loop: the
# compute dtype is their promotion (the promoter's own answer), which holds
# both exactly, and the kernel widens a narrower input while it gathers it.
# Without the mixed loops NumPy would cast such an input into small buffers
# first, on one thread, and a large float32-with-float64 call took 3.4x the
# same-dtype call's time (benchmarks/NOTES.md).  A mixed loop declares the
# widening a 'safe' cast, so that casting='no' or 'equiv' refuses it, as
# np.multiply refuses to cast float32 to float64.  Floating-point flags:
# the kernel restores the caller's (_fpflags.h), so NumPy need not check
# them after our loops (its own casts still report theirs).
cdef PyType_Slot _slots[2]
_slots[0].slot = NPY_METH_strided_loop
_slots[0].pfunc = <void *>_strided_loop
_slots[1].slot = 0
_slots[1].pfunc = NULL
cdef PyArray_DTypeMeta *_loop_dtypes[3]
cdef PyArrayMethod_Spec _spec
cdef bytes _name
_spec.nin, _spec.nout = 2, 1
_spec.flags = NPY_METH_NO_FLOATINGPOINT_ERRORS
_spec.slots = _slots
_spec.dtypes = _loop_dtypes
for _g in _dtypes.SUPPORTED:
    for _y in _dtypes.SUPPORTED:
        _loop_dtypes[0] = _dtype_class(_g)
        _loop_dtypes[1] = _dtype_class(_y)
        _loop_dtypes[2] = sb_promote(_loop_dtypes[0], _loop_dtypes[1])   # a new reference
        _name = f"sigmoid_backward_{_g.name}_{_y.name}".encode()
        _spec.name = _name
        _spec.casting = (cnp.NPY_NO_CASTING if _loop_dtypes[0] == _loop_dtypes[1] == _loop_dtypes[2]
                         else cnp.NPY_SAFE_CASTING)
        try:
            PyUFunc_AddLoopFromSpec(ufunc, &_spec)
        finally:
            Py_XDECREF(<PyObject *>_loop_dtypes[2])

PyUFunc_AddPromoter(ufunc, (None, None, None),
                    PyCapsule_New(<void *>sb_promoter, b"numpy._ufunc_promoter", NULL))


def refuse(cnp.dtype grad_output, cnp.dtype output, cnp.dtype dtype):
    """Raise the promoter's refusal of inputs of these dtypes with this
    ``dtype=`` (each a dtype instance, or None when not given), naming
    these dtypes; return None when the promoter takes them.

    The promoter sees only DTypes, and names a parametric one by its class
    (``numpy.dtypes.StrDType``); the function, which knows its operands,
    asks this after a refusal to name their dtypes (``dtype('<U1')``), in
    the promoter's words (_named_errors.py).
    """
    cdef PyArray_DTypeMeta *dtypes[3]
    cdef PyObject *known[3]
    for i, d in enumerate((grad_output, output, dtype)):
        dtypes[i] = NULL if d is None else _dtype_class(d)
        known[i] = NULL if d is None else <PyObject *>d
    sb_refuse(dtypes, known)


# pickle finds a ufunc by its __name__ in the module that holds it (Dask's
# distributed scheduler pickles the ufunc to send it to its workers), and
# numpy.ma's wrappers read __qualname__; np.multiply has both.
sigmoid_backward = ufunc
try:
    ufunc.__module__ = __name__   # NumPy >= 2.1 keeps these; 2.0 finds us by name
    ufunc.__qualname__ = "sigmoid_backward"
except AttributeError:
    pass
