# cython: language_level=3
"""GIL-free kernels of the sigmoid gradient over contiguous buffers.

One fused kernel serves every dtype: it splits the work between OpenMP
threads, and each thread runs the dtype's loop of _loops.h (the arithmetic,
compiled for the best instruction set this CPU has) over its share.  Large
outputs are computed in small blocks and written with streaming stores
(_nontemporal.h), which saves the read of out's old contents from memory.

Two entry points:

- :func:`apply` takes three ndarrays of one supported dtype, equal size and
  one memory order.  The Python facade guarantees that; apply checks it
  again, because no caller may make it touch memory out of bounds.
- :func:`try_direct` is the facade's fast path for the common case (exact
  ndarrays of one dtype and shape, contiguous, aligned, no overlap): it does
  the whole call in C, or returns None for the facade to handle.
"""
from libc.stdint cimport uint16_t
from cython.parallel cimport prange

cimport numpy as cnp

from sigmoid_backward._loops cimport sb_loops, sb_isa_supported, sb_select_isa
from sigmoid_backward._openmp cimport sb_omp_num_procs
from sigmoid_backward._nontemporal cimport SB_LINE, sb_nt_fence, sb_line_misalignment

import numpy as np
import ml_dtypes

from sigmoid_backward._threads import resolve as _resolve_threads

cnp.import_array()

ctypedef float complex complex64_t
ctypedef double complex complex128_t

ctypedef fused elem_t:
    float
    double
    complex64_t
    complex128_t
    uint16_t

cdef enum:
    # Below this many bytes per operand one thread is faster than two: the
    # cost of waking the OpenMP team exceeds the work (benchmarks/NOTES.md).
    PARALLEL_MIN_BYTES = 1 << 17
    # Each thread's share is a multiple of 64 elements, so shares meet on a
    # cache line of out whenever out starts on one (NumPy's large arrays do).
    PART_ALIGN = 64
    # Doubles (1 KiB) computed into an L1 buffer before they are streamed to
    # out: small enough that loads and streaming stores keep overlapping
    # (benchmarks/NOTES.md).
    STREAM_BLOCK = 128
    # Each thread streams its part of out when the part has this many bytes:
    # smaller outputs stay in this machine's caches from call to call, and
    # their readers find them there (benchmarks/NOTES.md).
    # stream_min_bytes() changes it.
    STREAM_MIN_BYTES = 1 << 22

cdef int _FLOAT16_NUM = np.dtype(np.float16).num
cdef int _BFLOAT16_NUM = np.dtype(ml_dtypes.bfloat16).num
cdef Py_ssize_t _stream_min_bytes = STREAM_MIN_BYTES
# Read once: omp_get_num_procs() asks the kernel for the affinity mask on
# every call, which costs more than a 1,000-element call of the kernel.
cdef int _NUM_PROCS = sb_omp_num_procs()
sb_select_isa(NULL)


cdef inline void _compute(const elem_t* g,    # IN
                          const elem_t* y,    # IN
                          elem_t* out,        # OUT (may alias g or y)
                          Py_ssize_t n, bint bf16) noexcept nogil:
    if elem_t is float:
        sb_loops.f32(g, y, out, n)
    elif elem_t is double:
        sb_loops.f64(g, y, out, n)
    elif elem_t is complex64_t:
        sb_loops.c64(<const float*>g, <const float*>y, <float*>out, n)
    elif elem_t is complex128_t:
        sb_loops.c128(<const double*>g, <const double*>y, <double*>out, n)
    elif bf16:
        sb_loops.bf16(g, y, out, n)
    else:
        sb_loops.f16(g, y, out, n)


cdef void _span(const elem_t* g,    # IN
                const elem_t* y,    # IN
                elem_t* out,        # OUT (may alias g or y)
                Py_ssize_t n, bint bf16, bint stream) noexcept nogil:
    """One thread's share; ``stream`` writes ``out`` with streaming stores."""
    # double: aligned for every elem_t (complex128 needs 8 bytes)
    cdef double buf[STREAM_BLOCK]
    cdef Py_ssize_t start = 0, m
    if not stream:
        # Start the vector loop on a 64-byte line of y, which the loops read
        # twice: wide loads that split lines cost up to 30% in cache, and
        # NumPy's large arrays (all 16 bytes past a line) then align together
        # (benchmarks/NOTES.md).
        start = min(<Py_ssize_t>((SB_LINE - sb_line_misalignment(y)) % SB_LINE
                                 // sizeof(elem_t)), n)
        _compute(g, y, out, start, bf16)
        _compute(g + start, y + start, out + start, n - start, bf16)
        return
    while start < n:
        # End blocks on 64-byte lines of out, so that only the share's first
        # and last lines are written with ordinary stores.
        m = min(<Py_ssize_t>((sizeof(buf) - sb_line_misalignment(out + start))
                             // sizeof(elem_t)), n - start)
        _compute(g + start, y + start, <elem_t*>buf, m, bf16)
        sb_loops.nt_copy(out + start, buf, m * sizeof(elem_t))
        start += m
    sb_nt_fence()


cdef void _run(const elem_t* g, const elem_t* y, elem_t* out,
               Py_ssize_t n, int nthreads, bint bf16) noexcept nogil:
    """Split [0, n) into one contiguous part per thread."""
    cdef Py_ssize_t part, t, start, stop
    cdef Py_ssize_t nbytes = n * <Py_ssize_t>sizeof(elem_t)
    if nbytes < PARALLEL_MIN_BYTES:
        nthreads = 1
    cdef bint stream = nbytes // nthreads >= _stream_min_bytes
    if nthreads <= 1:
        _span(g, y, out, n, bf16, stream)
        return
    part = (n + nthreads - 1) // nthreads
    part = (part + PART_ALIGN - 1) // PART_ALIGN * PART_ALIGN
    for t in prange(nthreads, num_threads=nthreads, schedule='static'):
        start = t * part
        stop = min(n, start + part)
        if start < stop:
            _span(g + start, y + start, out + start, stop - start, bf16, stream)


cdef void _launch(int typenum, void* gp, void* yp, void* op,
                  Py_ssize_t n, int nthreads) noexcept nogil:
    """Run the kernel of a supported ``typenum`` (checked by the caller)."""
    # The thread policy caps counts at the CPUs (_threads.py); this guard
    # keeps any caller from asking OpenMP for thousands of threads.
    nthreads = max(1, min(nthreads, _NUM_PROCS))
    if typenum == cnp.NPY_FLOAT:
        _run(<const float*>gp, <const float*>yp, <float*>op, n, nthreads, False)
    elif typenum == cnp.NPY_DOUBLE:
        _run(<const double*>gp, <const double*>yp, <double*>op, n, nthreads, False)
    elif typenum == cnp.NPY_CFLOAT:
        _run(<const complex64_t*>gp, <const complex64_t*>yp, <complex64_t*>op,
             n, nthreads, False)
    elif typenum == cnp.NPY_CDOUBLE:
        _run(<const complex128_t*>gp, <const complex128_t*>yp, <complex128_t*>op,
             n, nthreads, False)
    else:
        _run(<const uint16_t*>gp, <const uint16_t*>yp, <uint16_t*>op,
             n, nthreads, typenum == _BFLOAT16_NUM)


cdef inline bint _supported(int typenum) noexcept:
    return (typenum == cnp.NPY_FLOAT or typenum == cnp.NPY_DOUBLE
            or typenum == cnp.NPY_CFLOAT or typenum == cnp.NPY_CDOUBLE
            or typenum == _FLOAT16_NUM or typenum == _BFLOAT16_NUM)


cdef inline bint _usable(cnp.ndarray a, bint c_order) noexcept:
    cdef int req = cnp.NPY_ARRAY_ALIGNED | (
        cnp.NPY_ARRAY_C_CONTIGUOUS if c_order else cnp.NPY_ARRAY_F_CONTIGUOUS)
    return (cnp.PyArray_FLAGS(a) & req) == req and cnp.PyArray_ISNOTSWAPPED(a)


cdef inline bint _same_or_disjoint(cnp.ndarray a, cnp.ndarray out) noexcept:
    """May the kernel read ``a`` while it writes ``out``?  Only element for
    element: ``a`` and ``out`` have one dtype, shape and memory order, so the
    same start address means the same view."""
    cdef char* ap = <char*>cnp.PyArray_DATA(a)
    cdef char* op = <char*>cnp.PyArray_DATA(out)
    cdef Py_ssize_t nbytes = cnp.PyArray_NBYTES(out)
    return ap == op or ap + nbytes <= op or op + nbytes <= ap


def apply(cnp.ndarray g not None, cnp.ndarray y not None,
          cnp.ndarray out not None, int nthreads):
    """Compute ``out[...] = g * (1 - y) * y`` (conjugated for complex).

    All three arrays must have the same supported dtype (native byte order,
    aligned), the same number of elements and the same memory order (all C- or
    all F-contiguous); ``out`` must be writeable.  ``out`` may be ``g`` or
    ``y`` itself, but may not overlap them otherwise.  The GIL is released
    while computing, with ``nthreads`` threads (at most the processors
    available; the policy of _threads.py is the caller's).
    """
    cdef int typenum = cnp.PyArray_TYPE(out)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(out)
    cdef bint c_order = cnp.PyArray_IS_C_CONTIGUOUS(out)
    cdef void* gp = cnp.PyArray_DATA(g)
    cdef void* yp = cnp.PyArray_DATA(y)
    cdef void* op = cnp.PyArray_DATA(out)
    if (cnp.PyArray_TYPE(g) != typenum or cnp.PyArray_TYPE(y) != typenum
            or cnp.PyArray_SIZE(g) != n or cnp.PyArray_SIZE(y) != n):
        raise ValueError(
            f"apply: operands differ: {g.dtype}{(<object>g).shape}, {y.dtype}{(<object>y).shape}, "
            f"out {out.dtype}{(<object>out).shape}")
    if not (_usable(g, c_order) and _usable(y, c_order) and _usable(out, c_order)):
        raise ValueError("apply: operands must be aligned, native-endian and "
                         "contiguous in one memory order")
    if not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("apply: out is read-only")
    if not _supported(typenum):
        raise TypeError(f"apply: unsupported dtype {out.dtype}")
    if not (_same_or_disjoint(g, out) and _same_or_disjoint(y, out)):
        raise ValueError("apply: out partly overlaps an input")
    with nogil:
        _launch(typenum, gp, yp, op, n, nthreads)


def try_direct(grad_output, output, out, dtype, num_threads):
    """``sigmoid_backward(grad_output, output, out=out, dtype=dtype,
    num_threads=num_threads)`` when the call is the simple case, else None.

    The simple case: ``dtype`` is None; the inputs are exact ndarrays of one
    supported dtype and one shape, aligned, native-endian and all C- or all
    F-contiguous; ``out`` is None (then C order only) or an exact, writeable
    ndarray like them that is one of the inputs or overlaps neither.  Every
    other case (including every error) is the facade's.  The result is what
    the facade returns: ``out``, or a new array, or a NumPy scalar for 0-d
    inputs without ``out``.
    """
    cdef cnp.ndarray g, y, o
    cdef int typenum, ndim, nthreads = 1
    cdef bint c_order = True
    if (dtype is not None or type(grad_output) is not np.ndarray
            or type(output) is not np.ndarray):
        return None
    g = grad_output
    y = output
    typenum = cnp.PyArray_TYPE(g)
    ndim = cnp.PyArray_NDIM(g)
    if (cnp.PyArray_TYPE(y) != typenum or not _supported(typenum)
            or not cnp.PyArray_SAMESHAPE(g, y)):
        return None
    if out is not None:
        if type(out) is not np.ndarray:
            return None
        o = out
        c_order = cnp.PyArray_IS_C_CONTIGUOUS(o)
        if (cnp.PyArray_TYPE(o) != typenum or not cnp.PyArray_SAMESHAPE(g, o)
                or not cnp.PyArray_ISWRITEABLE(o) or not _usable(o, c_order)):
            return None
    if not (_usable(g, c_order) and _usable(y, c_order)):
        return None
    # The thread policy (environment, affinity) costs more than a small
    # call: below the parallel threshold one thread runs whatever the count,
    # so a valid count needs no lookup (an invalid one is the facade's error).
    if cnp.PyArray_NBYTES(g) >= PARALLEL_MIN_BYTES:
        nthreads = _resolve_threads(num_threads)
    elif num_threads is not None and not (type(num_threads) is int and num_threads >= 1):
        return None
    if out is None:
        o = cnp.PyArray_EMPTY(ndim, cnp.PyArray_DIMS(g), typenum, 0)
    elif not (_same_or_disjoint(g, o) and _same_or_disjoint(y, o)):
        return None
    with nogil:
        _launch(typenum, cnp.PyArray_DATA(g), cnp.PyArray_DATA(y), cnp.PyArray_DATA(o),
                cnp.PyArray_SIZE(o), nthreads)
    if out is None and ndim == 0:
        return o[()]
    return o


def use_isa(isa=None):
    """Run the loops compiled for ``isa``: "portable", "avx2" or "avx512";
    None (the default at import) picks the best this CPU supports.

    Returns the name now in use.  Raises ValueError when the CPU (or the
    build, off x86-64) cannot run ``isa``.  For tests and benchmarks: every
    ISA must give the same bits.
    """
    cdef bytes name
    cdef const char* chosen
    if isa is None:
        chosen = sb_select_isa(NULL)
    else:
        name = str(isa).encode()
        chosen = sb_select_isa(name)
    if chosen == NULL:
        raise ValueError(f"isa {isa!r} is not available here; choose one of "
                         f"{', '.join(available_isas())}")
    return chosen.decode()


def available_isas():
    """Names of the ISAs this CPU and build can run, slowest first."""
    return [name for name in ("portable", "avx2", "avx512")
            if sb_isa_supported(name.encode())]


def thresholds():
    """The kernel's size thresholds, in bytes: below ``parallel_min_bytes``
    of output one thread runs; when each thread's part of the output has
    ``stream_min_bytes``, it is streamed, ``stream_block_bytes`` at a time."""
    return {"parallel_min_bytes": PARALLEL_MIN_BYTES,
            "stream_min_bytes": _stream_min_bytes,
            "stream_block_bytes": STREAM_BLOCK * sizeof(double)}


def stream_min_bytes(nbytes=None):
    """Get, or set and return the old, streaming-store threshold.

    Each thread whose part of the output has at least ``nbytes`` bytes
    writes it with streaming stores.  For tests and benchmarks: 0 streams
    every output, a huge value none, and both must give the same results.
    """
    global _stream_min_bytes
    old = _stream_min_bytes
    if nbytes is not None:
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes}")
        _stream_min_bytes = nbytes
    return old
