# cython: language_level=3
"""GIL-free kernels of the sigmoid gradient over contiguous buffers.

One fused kernel serves every dtype:

- float32 / float64:  ``g * (1 - y) * y``, in that order;
- complex64 / complex128, as interleaved (re, im) pairs:
  ``g * conj((1 - y) * y)``, written out in real arithmetic exactly as NumPy
  evaluates complex ``-`` and ``*`` (C's complex ``*`` would call __mulsc3
  and round differently);
- float16 / bfloat16, carried as uint16: blocks are widened to float32, run
  through the float32 kernel, and rounded once (see _half.h).

The only entry point, :func:`apply`, takes three ndarrays of one supported
dtype, equal size and one memory order.  The Python facade guarantees that;
apply checks it again, because no caller may make it touch memory out of
bounds.
"""
from libc.stdint cimport uint16_t
from cython.parallel cimport prange

cimport numpy as cnp

from sigmoid_backward._half cimport sb_half_to_float, sb_float_to_half, sb_half_select
from sigmoid_backward._openmp cimport sb_openmp_enabled, sb_omp_max_threads

import numpy as np
import ml_dtypes

cnp.import_array()

ctypedef fused real_t:
    float
    double

ctypedef float complex complex64_t
ctypedef double complex complex128_t

ctypedef fused elem_t:
    float
    double
    complex64_t
    complex128_t
    uint16_t

cdef enum:
    # float32 elements per stack block of the 16-bit path: two 4 KiB buffers
    # stay in L1 while they are widened, computed and narrowed.
    HALF_BLOCK = 1024
    # Below this many bytes per operand one thread is faster than two: the
    # cost of waking the OpenMP team exceeds the work (benchmarks/NOTES.md).
    PARALLEL_MIN_BYTES = 1 << 17
    # Each thread's share starts on a 64-element boundary, so no two threads
    # write the same cache line.
    PART_ALIGN = 64

cdef int _FLOAT16_NUM = np.dtype(np.float16).num
cdef int _BFLOAT16_NUM = np.dtype(ml_dtypes.bfloat16).num
cdef bint _SIMD_HALF = sb_half_select(1)

OPENMP_ENABLED = bool(sb_openmp_enabled())


cdef inline void _span_real(const real_t* g,    # IN
                            const real_t* y,    # IN
                            real_t* out,        # OUT (may alias g or y)
                            Py_ssize_t n) noexcept nogil:
    # A typed one: Cython writes a bare 1 as the double 1.0, which would
    # compute float32 in double precision and round differently from NumPy.
    cdef real_t one = 1
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = g[i] * (one - y[i]) * y[i]


cdef inline void _span_complex(const real_t* g,    # IN, n (re, im) pairs
                               const real_t* y,    # IN, n (re, im) pairs
                               real_t* out,        # OUT, n (re, im) pairs
                               Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef real_t gr, gi, yr, yi, ar, ai, pr, npi
    cdef real_t one = 1, zero = 0   # typed, as in _span_real
    for i in range(n):
        gr = g[2 * i]
        gi = g[2 * i + 1]
        yr = y[2 * i]
        yi = y[2 * i + 1]
        # a = 1 - y, as NumPy subtracts complex(1, 0) - y
        ar = one - yr
        ai = zero - yi
        # p = a * y; keep -imag(p), which is imag(conj(p))
        pr = ar * yr - ai * yi
        npi = -(ar * yi + ai * yr)
        # g * conj(p)
        out[2 * i] = gr * pr - gi * npi
        out[2 * i + 1] = gr * npi + gi * pr


cdef void _span_half(const uint16_t* g,    # IN, float16 or bfloat16 bits
                     const uint16_t* y,    # IN
                     uint16_t* out,        # OUT (may alias g or y)
                     Py_ssize_t n,
                     int kind) noexcept nogil:   # 0 = float16, 1 = bfloat16
    cdef float gf[HALF_BLOCK]
    cdef float yf[HALF_BLOCK]
    cdef Py_ssize_t start = 0, m
    while start < n:
        m = min(<Py_ssize_t>HALF_BLOCK, n - start)
        sb_half_to_float(g + start, gf, m, kind)
        sb_half_to_float(y + start, yf, m, kind)
        _span_real(gf, yf, gf, m)
        sb_float_to_half(gf, out + start, m, kind)
        start += m


cdef inline void _span(const elem_t* g, const elem_t* y, elem_t* out,
                       Py_ssize_t n, int kind) noexcept nogil:
    if elem_t is float or elem_t is double:
        _span_real(g, y, out, n)
    elif elem_t is complex64_t:
        _span_complex(<const float*>g, <const float*>y, <float*>out, n)
    elif elem_t is complex128_t:
        _span_complex(<const double*>g, <const double*>y, <double*>out, n)
    else:
        _span_half(g, y, out, n, kind)


cdef void _run(const elem_t* g, const elem_t* y, elem_t* out,
               Py_ssize_t n, int nthreads, int kind) noexcept nogil:
    """Split [0, n) into one contiguous part per thread."""
    cdef Py_ssize_t part, t, start, stop
    if nthreads <= 1 or n * <Py_ssize_t>sizeof(elem_t) < PARALLEL_MIN_BYTES:
        _span(g, y, out, n, kind)
        return
    part = (n + nthreads - 1) // nthreads
    part = (part + PART_ALIGN - 1) // PART_ALIGN * PART_ALIGN
    for t in prange(nthreads, num_threads=nthreads, schedule='static'):
        start = t * part
        stop = min(n, start + part)
        if start < stop:
            _span(g + start, y + start, out + start, stop - start, kind)


cdef inline bint _usable(cnp.ndarray a, bint c_order):
    cdef int req = cnp.NPY_ARRAY_ALIGNED | (
        cnp.NPY_ARRAY_C_CONTIGUOUS if c_order else cnp.NPY_ARRAY_F_CONTIGUOUS)
    return (cnp.PyArray_FLAGS(a) & req) == req and cnp.PyArray_ISNOTSWAPPED(a)


def apply(cnp.ndarray g not None, cnp.ndarray y not None,
          cnp.ndarray out not None, int nthreads):
    """Compute ``out[...] = g * (1 - y) * y`` (conjugated for complex).

    All three arrays must have the same supported dtype (native byte order,
    aligned), the same number of elements and the same memory order (all C- or
    all F-contiguous); ``out`` must be writeable.  ``out`` may be ``g`` or
    ``y`` itself.  The GIL is released while computing, with at most
    ``nthreads`` threads (capped by OpenMP's own limit, which is what
    OMP_NUM_THREADS and threadpoolctl set).
    """
    cdef int typenum = cnp.PyArray_TYPE(out)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(out)
    cdef bint c_order = cnp.PyArray_IS_C_CONTIGUOUS(out)
    cdef void* gp = cnp.PyArray_DATA(g)
    cdef void* yp = cnp.PyArray_DATA(y)
    cdef void* op = cnp.PyArray_DATA(out)
    cdef int kind = 1 if typenum == _BFLOAT16_NUM else 0
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
    if not (typenum == cnp.NPY_FLOAT or typenum == cnp.NPY_DOUBLE
            or typenum == cnp.NPY_CFLOAT or typenum == cnp.NPY_CDOUBLE
            or typenum == _FLOAT16_NUM or typenum == _BFLOAT16_NUM):
        raise TypeError(f"apply: unsupported dtype {out.dtype}")
    nthreads = effective_num_threads(nthreads)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _run(<const float*>gp, <const float*>yp, <float*>op, n, nthreads, 0)
        elif typenum == cnp.NPY_DOUBLE:
            _run(<const double*>gp, <const double*>yp, <double*>op, n, nthreads, 0)
        elif typenum == cnp.NPY_CFLOAT:
            _run(<const complex64_t*>gp, <const complex64_t*>yp, <complex64_t*>op,
                 n, nthreads, 0)
        elif typenum == cnp.NPY_CDOUBLE:
            _run(<const complex128_t*>gp, <const complex128_t*>yp, <complex128_t*>op,
                 n, nthreads, 0)
        else:
            _run(<const uint16_t*>gp, <const uint16_t*>yp, <uint16_t*>op,
                 n, nthreads, kind)


cpdef int effective_num_threads(int requested) noexcept:
    """Threads a kernel call really uses: ``requested``, capped by OpenMP's
    limit in the calling thread (OMP_NUM_THREADS, threadpoolctl), and 1
    without OpenMP."""
    return max(1, min(requested, sb_omp_max_threads()))


def use_simd_half(bint enable):
    """Choose the SIMD (True) or portable (False) 16-bit conversions.

    Returns whether SIMD conversions are now in use.  For tests: both paths
    must give the same results.
    """
    global _SIMD_HALF
    _SIMD_HALF = sb_half_select(enable)
    return bool(_SIMD_HALF)
