# The C-level API of _kernels.pyx, for the ufunc's inner loop (_ufunc.pyx),
# the function's fast path (_function.pyx) and the Cython API
# (cython_api.pyx).
cimport numpy as cnp

from sigmoid_backward._kernel._dtype_table cimport Kind

# The kind of a NumPy type number, or -1 when the kernels do not support it
# (_dtypes.h's table).
cdef int kind_of(int typenum) noexcept nogil

# out[i] = g[i] * (1 - y[i]) * y[i] (conjugated for complex) for i < n, in
# the compute dtype `kind`, where element i of each operand lies i * step
# bytes past its pointer (any step, 0 included).  out has dtype `kind`; g and
# y have theirs (g_kind, y_kind), which `kind` must hold exactly (the same,
# or float16/bfloat16/float32 into a wider compute dtype, float64 or
# complex64 into complex128).  Any overlap of out with g or y that NumPy's inner-loop
# contract allows is computed as a forward element-by-element loop would
# (reductions and accumulations included); out identical to an input, or
# disjoint from both, runs on at most nthreads OpenMP threads; nthreads 0
# means the calling thread's count (resolve_threads(0)), asked only when the
# call is large enough to use more than one.
cdef void compute(Kind kind, Kind g_kind, const char *g, Py_ssize_t g_step,
                  Kind y_kind, const char *y, Py_ssize_t y_step,
                  char *out, Py_ssize_t out_step,
                  Py_ssize_t n, int nthreads) noexcept nogil

# The same over rows runs of n elements, each operand's next run *_row bytes
# on (the frameworks' broadcast walks): the runs split between threads as
# one long run would, when their operands lie apart (_overlap.h).
cdef void compute_rows(Kind kind, Kind g_kind, const char *g, Py_ssize_t g_step,
                       Py_ssize_t g_row, Kind y_kind, const char *y, Py_ssize_t y_step,
                       Py_ssize_t y_row, char *out, Py_ssize_t out_step, Py_ssize_t out_row,
                       Py_ssize_t n, Py_ssize_t rows, int nthreads) noexcept nogil

cdef extern from "_threads.h":
    # No thread count beyond this reaches OpenMP, whatever a caller asks.
    int SB_MAX_THREADS

# The threads a kernel call asking for ``requested`` uses (0: the calling
# thread's num_threads=, else the default), capped at the CPUs (_threads.h).
cpdef int resolve_threads(int requested) noexcept nogil
# Make the calling thread's kernel calls use n threads (0: the default), and
# what it was set to.
cpdef void set_call_threads(int n) noexcept nogil
cpdef int call_threads() noexcept nogil
# The parallel threshold in use: a thread's least share of a call's output,
# in bytes (_thresholds.h); the bandwidth floor splits by it too.
cdef Py_ssize_t parallel_share_bytes() noexcept nogil


# Can the kernel use an array in place, in a call that writes ``out``?
cpdef enum Direct:
    DIRECT = 0
    DTYPE       # not out's dtype, or one the kernels lack
    SHAPE       # not out's shape
    LAYOUT      # misaligned, byte-swapped, or not contiguous in the call's order
    READONLY    # out is not writeable
    OVERLAP     # shares memory with out, and is not out itself

# Can the kernel use ``a`` in place, in a call that writes ``out`` (``a`` may
# be ``out`` itself, with ``writes``) in the memory order ``c_order`` says?
# Every path that hands arrays to the kernel without NumPy's machinery asks
# this (the fast path, compute_into, aclnn's plan through _kernels.direct),
# and each refusal's message comes from its reason.  Inline: the fast path
# asks it three times per call.
cdef inline Direct direct_reason(cnp.ndarray a, cnp.ndarray out, bint c_order,
                                 bint writes) noexcept:
    cdef int typenum = cnp.PyArray_TYPE(out)
    cdef int layout = cnp.NPY_ARRAY_ALIGNED | (
        cnp.NPY_ARRAY_C_CONTIGUOUS if c_order else cnp.NPY_ARRAY_F_CONTIGUOUS)
    cdef char *ap
    cdef char *op
    cdef Py_ssize_t nbytes
    if kind_of(typenum) < 0 or cnp.PyArray_TYPE(a) != typenum:
        return DTYPE
    if not cnp.PyArray_SAMESHAPE(a, out):
        return SHAPE
    if (cnp.PyArray_FLAGS(a) & layout) != layout or not cnp.PyArray_ISNOTSWAPPED(a):
        return LAYOUT
    if writes:
        return DIRECT if cnp.PyArray_ISWRITEABLE(a) else READONLY
    # Element for element only: with one dtype, shape and order, the same
    # start address means the same view.
    ap = <char*>cnp.PyArray_DATA(a)
    op = <char*>cnp.PyArray_DATA(out)
    nbytes = cnp.PyArray_NBYTES(out)
    if ap == op or ap + nbytes <= op or op + nbytes <= ap:
        return DIRECT
    return OVERLAP
