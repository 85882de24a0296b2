# cython: language_level=3
"""The Cython API (cython_api.pxd): each function checks its views, then
runs the kernel of _kernels.pxd on them, without the GIL."""
from libc.stdint cimport uint16_t

from sigmoid_backward._kernel._dtype_table cimport Kind
from sigmoid_backward._kernel._fused cimport elem_t   # the kernel's storage types
from sigmoid_backward._kernel._kernels cimport compute

from sigmoid_backward._kernel import _kernels

# The kinds of this API's functions, by name from the dtype table.
_NAMES = [name for name, _size in _kernels.DTYPE_TABLE]
cdef Kind KIND_F32 = <Kind><int>_NAMES.index("float32")
cdef Kind KIND_F64 = <Kind><int>_NAMES.index("float64")
cdef Kind KIND_C64 = <Kind><int>_NAMES.index("complex64")
cdef Kind KIND_C128 = <Kind><int>_NAMES.index("complex128")
cdef Kind KIND_F16 = <Kind><int>_NAMES.index("float16")
cdef Kind KIND_BF16 = <Kind><int>_NAMES.index("bfloat16")

cdef extern from "_overlap.h" nogil:
    bint sb_disjoint(const char *a, Py_ssize_t a_step, Py_ssize_t a_size,
                     const char *b, Py_ssize_t b_step, Py_ssize_t b_size, Py_ssize_t n)


cdef int _refuse(bint g_none, bint y_none, bint out_none, Py_ssize_t g_len, Py_ssize_t y_len,
                 Py_ssize_t out_len, int num_threads) except -1 with gil:
    """Raise the error that says which check failed (the GIL is taken only
    here, on the error path)."""
    for name, missing in (("grad_output", g_none), ("output", y_none), ("grad_input", out_none)):
        if missing:
            raise TypeError(f"sigmoid_backward cython_api: {name} is None")
    if g_len != out_len or y_len != out_len:
        raise ValueError(f"sigmoid_backward cython_api: lengths differ: grad_output {g_len}, "
                         f"output {y_len}, grad_input {out_len}")
    if num_threads < 0:
        raise ValueError(f"sigmoid_backward cython_api: num_threads must be >= 0, "
                         f"got {num_threads}")
    raise ValueError("sigmoid_backward cython_api: grad_input overlaps grad_output or "
                     "output (it may only be that very view)")


cdef inline bint _same_or_disjoint(const char* a, const char* out, Py_ssize_t size,
                                   Py_ssize_t n) noexcept nogil:
    # The API computes from the inputs as they are: out may be an input
    # itself, but not overlap it otherwise (the kernel would then compute
    # what a forward loop over the overlap gives).
    return n == 0 or a == out or sb_disjoint(a, size, size, out, size, size, n)


cdef int _run(Kind kind, const elem_t[::1] g, const elem_t[::1] y, elem_t[::1] out,
              int num_threads) except -1 nogil:
    """The one call of the kernel: every function of the API comes here."""
    # A typed memoryview argument may be None (its data pointer then NULL).
    cdef bint g_none = g is None, y_none = y is None, out_none = out is None
    cdef Py_ssize_t n = out.shape[0]
    cdef const char* gp = <const char*>&g[0]   # with n == 0 the kernel reads nothing
    cdef const char* yp = <const char*>&y[0]
    cdef char* op = <char*>&out[0]
    if (g_none or y_none or out_none or g.shape[0] != n or y.shape[0] != n or num_threads < 0
            or not _same_or_disjoint(gp, op, sizeof(elem_t), n)
            or not _same_or_disjoint(yp, op, sizeof(elem_t), n)):
        return _refuse(g_none, y_none, out_none, g.shape[0], y.shape[0], n, num_threads)
    compute(kind, kind, gp, sizeof(elem_t), kind, yp, sizeof(elem_t), op, sizeof(elem_t), n,
            num_threads)   # 0: the default count
    return 0


cdef int sigmoid_backward_float(const float[::1] grad_output, const float[::1] output,
                                float[::1] grad_input, int num_threads) except -1 nogil:
    return _run(KIND_F32, grad_output, output, grad_input, num_threads)


cdef int sigmoid_backward_double(const double[::1] grad_output, const double[::1] output,
                                 double[::1] grad_input, int num_threads) except -1 nogil:
    return _run(KIND_F64, grad_output, output, grad_input, num_threads)


cdef int sigmoid_backward_float_complex(
        const float complex[::1] grad_output, const float complex[::1] output,
        float complex[::1] grad_input, int num_threads) except -1 nogil:
    return _run(KIND_C64, grad_output, output, grad_input, num_threads)


cdef int sigmoid_backward_double_complex(
        const double complex[::1] grad_output, const double complex[::1] output,
        double complex[::1] grad_input, int num_threads) except -1 nogil:
    return _run(KIND_C128, grad_output, output, grad_input, num_threads)


cdef int sigmoid_backward_float16(const uint16_t[::1] grad_output, const uint16_t[::1] output,
                                  uint16_t[::1] grad_input, int num_threads) except -1 nogil:
    return _run(KIND_F16, grad_output, output, grad_input, num_threads)


cdef int sigmoid_backward_bfloat16(const uint16_t[::1] grad_output, const uint16_t[::1] output,
                                   uint16_t[::1] grad_input, int num_threads) except -1 nogil:
    return _run(KIND_BF16, grad_output, output, grad_input, num_threads)
