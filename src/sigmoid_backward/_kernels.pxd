# The C-level API of _kernels.pyx, for the ufunc's inner loop (_ufunc.pyx)
# and the function's fast path (_function.pyx).
cimport numpy as cnp

cdef enum Kind:
    KIND_F32
    KIND_F64
    KIND_C64
    KIND_C128
    KIND_F16
    KIND_BF16

# The Kind of a NumPy type number, or -1 when the kernels do not support it.
cdef int kind_of(int typenum) noexcept nogil

# out[i] = g[i] * (1 - y[i]) * y[i] (conjugated for complex) for i < n, in
# the compute dtype `kind`, where element i of each operand lies i * step
# bytes past its pointer (any step, 0 included).  out has dtype `kind`; g and
# y have theirs (g_kind, y_kind), which `kind` must hold exactly (the same,
# or float16/bfloat16/float32 into a wider compute dtype, complex64 into
# complex128).  Any overlap of out with g or y that NumPy's inner-loop
# contract allows is computed as a forward element-by-element loop would
# (reductions and accumulations included); out identical to an input, or
# disjoint from both, runs on at most nthreads OpenMP threads.
cdef void compute(Kind kind, Kind g_kind, const char *g, Py_ssize_t g_step,
                  Kind y_kind, const char *y, Py_ssize_t y_step,
                  char *out, Py_ssize_t out_step,
                  Py_ssize_t n, int nthreads) noexcept nogil

# The threads a kernel call asking for ``requested`` uses (0: the calling
# thread's num_threads=, else the default), capped at the CPUs (_threads.h).
cpdef int resolve_threads(int requested) noexcept nogil
# Make the calling thread's kernel calls use n threads (0: the default), and
# what it was set to.
cpdef void set_call_threads(int n) noexcept nogil
cpdef int call_threads() noexcept nogil


# Can the kernel read or write ``a`` in place: aligned, native-endian and
# contiguous in the order ``c_order`` says?
cdef inline bint usable(cnp.ndarray a, bint c_order) noexcept:
    cdef int req = cnp.NPY_ARRAY_ALIGNED | (
        cnp.NPY_ARRAY_C_CONTIGUOUS if c_order else cnp.NPY_ARRAY_F_CONTIGUOUS)
    return (cnp.PyArray_FLAGS(a) & req) == req and cnp.PyArray_ISNOTSWAPPED(a)


# May the kernel read ``a`` while it writes ``out``?  Only element for
# element: ``a`` and ``out`` have one dtype, shape and memory order, so the
# same start address means the same view.
cdef inline bint same_or_disjoint(cnp.ndarray a, cnp.ndarray out) noexcept:
    cdef char* ap = <char*>cnp.PyArray_DATA(a)
    cdef char* op = <char*>cnp.PyArray_DATA(out)
    cdef Py_ssize_t nbytes = cnp.PyArray_NBYTES(out)
    return ap == op or ap + nbytes <= op or op + nbytes <= ap
