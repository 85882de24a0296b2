# The Cython API of sigmoid_backward, as scipy.special.cython_special is
# scipy.special's: the kernels without Python overhead, callable without the
# GIL.  In a .pyx file:
#
#     from sigmoid_backward.cython_api cimport sigmoid_backward_double
#
#     cdef double[::1] g = ..., y = ..., out = ...
#     with nogil:
#         sigmoid_backward_double(g, y, out, 0)
#
# Cython finds this file on sys.path (it is installed in the package); the
# extension that cimports it needs no NumPy headers.
#
# Each function sets grad_input[i] = grad_output[i] * (1 - output[i]) * output[i]
# (conjugated for complex), bit for bit as sigmoid_backward.sigmoid_backward
# does, over contiguous one-dimensional memoryviews of one dtype.  float16 and
# bfloat16 values travel as their 16-bit patterns (uint16_t; from NumPy:
# a.view(numpy.uint16)) and are computed in float32, rounded once.
#
# num_threads: 0 for the package's default (set_num_threads, OMP_NUM_THREADS,
# threadpoolctl), n >= 1 for at most n threads (capped at the CPUs).
#
# Errors: each returns 0, or -1 with an exception set (taking the GIL only
# then), grad_input left untouched: TypeError when a view is None; ValueError
# when the three lengths differ, num_threads is negative, or grad_input
# overlaps an input other than by being that very view.
from libc.stdint cimport uint16_t

cdef int sigmoid_backward_float(const float[::1] grad_output, const float[::1] output,
                                float[::1] grad_input, int num_threads) except -1 nogil
cdef int sigmoid_backward_double(const double[::1] grad_output, const double[::1] output,
                                 double[::1] grad_input, int num_threads) except -1 nogil
cdef int sigmoid_backward_float_complex(
    const float complex[::1] grad_output, const float complex[::1] output,
    float complex[::1] grad_input, int num_threads) except -1 nogil
cdef int sigmoid_backward_double_complex(
    const double complex[::1] grad_output, const double complex[::1] output,
    double complex[::1] grad_input, int num_threads) except -1 nogil
cdef int sigmoid_backward_float16(const uint16_t[::1] grad_output, const uint16_t[::1] output,
                                  uint16_t[::1] grad_input, int num_threads) except -1 nogil
cdef int sigmoid_backward_bfloat16(const uint16_t[::1] grad_output, const uint16_t[::1] output,
                                   uint16_t[::1] grad_input, int num_threads) except -1 nogil
