# cython: language_level=3
"""The memory-bandwidth floor for the benchmarks: a plain C loop that reads
two arrays and writes a third with non-temporal stores (as wide as the kernels'
own), doing the least work possible (a bitwise xor) in between.

No kernel that reads ``g`` and ``y`` and writes ``out`` can move fewer
bytes, so its time is the floor that ``python -m sigmoid_backward bench``
compares the real kernel with.  It is not part of the library's API.
"""
cimport numpy as cnp

from sigmoid_backward._kernel._kernels cimport parallel_share_bytes

cnp.import_array()

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    #include "_cpu.h"
    #if SB_X86_DISPATCH

    /* The widest streaming store the kernels use (_nontemporal.h): 32 bytes with
     * AVX2, else 16 (SSE2). */
    __attribute__((target("avx2")))
    static ptrdiff_t sb_floor_avx2(const char *g, const char *y, char *out,
                                   ptrdiff_t i, ptrdiff_t n)
    {
        for (; i + 32 <= n; i += 32)
            _mm256_stream_si256((__m256i *)(out + i),
                                _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(g + i)),
                                                 _mm256_loadu_si256((const __m256i *)(y + i))));
        return i;
    }

    static ptrdiff_t sb_floor_sse2(const char *g, const char *y, char *out,
                                   ptrdiff_t i, ptrdiff_t n)
    {
        for (; i + 16 <= n; i += 16)
            _mm_stream_si128((__m128i *)(out + i),
                             _mm_xor_si128(_mm_loadu_si128((const __m128i *)(g + i)),
                                           _mm_loadu_si128((const __m128i *)(y + i))));
        return i;
    }
    #endif

    static void sb_floor_span(const char *g, const char *y, char *out, ptrdiff_t n, int avx2)
    {
        ptrdiff_t i = 0;
    #if SB_X86_DISPATCH
        for (; i < n && ((uintptr_t)(out + i) & 31); i++) out[i] = g[i] ^ y[i];
        i = avx2 ? sb_floor_avx2(g, y, out, i, n) : sb_floor_sse2(g, y, out, i, n);
        _mm_sfence();
    #endif
        (void)avx2;
        for (; i < n; i++) out[i] = g[i] ^ y[i];
    }

    /* One contiguous, 64-byte-rounded share per thread, as the kernels
     * split, and as many threads as the kernels' share threshold allows. */
    static void sb_floor(const char *g, const char *y, char *out, ptrdiff_t n, int nthreads,
                         ptrdiff_t share)
    {
        if (nthreads > n / share) nthreads = (int)(n / share);
        if (nthreads < 1) nthreads = 1;
        const ptrdiff_t part = (n / nthreads + 63) / 64 * 64;
        int avx2 = 0;
    #if SB_X86_DISPATCH
        avx2 = (sb_cpu_features() & SB_CPU_AVX2) != 0;
    #endif
        #pragma omp parallel for num_threads(nthreads) schedule(static) if(nthreads > 1)
        for (int t = 0; t < nthreads; t++) {
            const ptrdiff_t start = t * part;
            const ptrdiff_t stop = start + part < n ? start + part : n;
            if (start < stop) sb_floor_span(g + start, y + start, out + start, stop - start, avx2);
        }
    }
    """
    void sb_floor(const char *g, const char *y, char *out, Py_ssize_t n, int nthreads,
                  Py_ssize_t share) nogil


def bandwidth_floor(cnp.ndarray g not None, cnp.ndarray y not None,
                    cnp.ndarray out not None, int nthreads):
    """``out = g ^ y`` over the raw bytes, with non-temporal stores.

    The three arrays must be C-contiguous with the same number of bytes and
    ``out`` writeable; ``nthreads`` >= 1 threads split the work, as many
    as the kernels would wake for this many bytes (their
    ``parallel_share_bytes``).
    """
    cdef Py_ssize_t n = cnp.PyArray_NBYTES(out)
    cdef cnp.ndarray a
    for a, name in ((g, "g"), (y, "y"), (out, "out")):
        if not cnp.PyArray_IS_C_CONTIGUOUS(a):
            raise ValueError(f"bandwidth_floor: {name} must be C-contiguous")
        if cnp.PyArray_NBYTES(a) != n:
            raise ValueError(f"bandwidth_floor: {name} has {a.nbytes} bytes, out {n}")
    if not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("bandwidth_floor: out is read-only")
    if nthreads < 1:
        raise ValueError(f"bandwidth_floor: nthreads must be >= 1, got {nthreads}")
    with nogil:
        sb_floor(<const char*>cnp.PyArray_DATA(g), <const char*>cnp.PyArray_DATA(y),
                 <char*>cnp.PyArray_DATA(out), n, nthreads, parallel_share_bytes())
