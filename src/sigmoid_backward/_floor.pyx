# cython: language_level=3
"""The memory-bandwidth floor for the benchmarks: a plain C loop that reads
two arrays and writes a third with streaming stores, doing the least work
possible (a bitwise xor) in between.

No kernel that reads ``g`` and ``y`` and writes ``out`` can move fewer
bytes, so its time is the floor that ``python -m sigmoid_backward bench``
compares the real kernel with.  It is not part of the library's API.
"""
cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    #if defined(__SSE2__)
    #  include <emmintrin.h>
    #endif

    static void sb_floor_span(const char *g, const char *y, char *out, ptrdiff_t n)
    {
        ptrdiff_t i = 0;
    #if defined(__SSE2__)
        for (; i < n && ((uintptr_t)(out + i) & 15); i++) out[i] = g[i] ^ y[i];
        for (; i + 16 <= n; i += 16)
            _mm_stream_si128((__m128i *)(out + i),
                             _mm_xor_si128(_mm_loadu_si128((const __m128i *)(g + i)),
                                           _mm_loadu_si128((const __m128i *)(y + i))));
        _mm_sfence();
    #endif
        for (; i < n; i++) out[i] = g[i] ^ y[i];
    }

    /* One contiguous, 64-byte-rounded share per thread, as the kernels
     * split; serial below 128 KiB, as the kernels run. */
    static void sb_floor(const char *g, const char *y, char *out, ptrdiff_t n, int nthreads)
    {
        const ptrdiff_t part = (n / nthreads + 63) / 64 * 64;
        #pragma omp parallel for num_threads(nthreads) schedule(static) if(n >= (1 << 17))
        for (int t = 0; t < nthreads; t++) {
            const ptrdiff_t start = t * part;
            const ptrdiff_t stop = start + part < n ? start + part : n;
            if (start < stop) sb_floor_span(g + start, y + start, out + start, stop - start);
        }
    }
    """
    void sb_floor(const char *g, const char *y, char *out, Py_ssize_t n, int nthreads) nogil


def stream_floor(cnp.ndarray g not None, cnp.ndarray y not None,
                 cnp.ndarray out not None, int nthreads):
    """``out = g ^ y`` over the raw bytes, with streaming stores.

    The three arrays must be C-contiguous with the same number of bytes and
    ``out`` writeable; ``nthreads`` >= 1 threads split the work.
    """
    cdef Py_ssize_t n = cnp.PyArray_NBYTES(out)
    for a, name in ((g, "g"), (y, "y"), (out, "out")):
        if not a.flags.c_contiguous:
            raise ValueError(f"stream_floor: {name} must be C-contiguous")
        if a.nbytes != n:
            raise ValueError(f"stream_floor: {name} has {a.nbytes} bytes, out {n}")
    if not out.flags.writeable:
        raise ValueError("stream_floor: out is read-only")
    if nthreads < 1:
        raise ValueError(f"stream_floor: nthreads must be >= 1, got {nthreads}")
    with nogil:
        sb_floor(<const char*>cnp.PyArray_DATA(g), <const char*>cnp.PyArray_DATA(y),
                 <char*>cnp.PyArray_DATA(out), n, nthreads)
