# Declarations of the 16-bit conversions in _half.h (see there for why).
from libc.stdint cimport uint16_t

cdef extern from "_half.h" nogil:
    # kind: 0 = float16, 1 = bfloat16
    void sb_half_to_float(const uint16_t *src, float *dst, Py_ssize_t n, int kind)
    void sb_float_to_half(const float *src, uint16_t *dst, Py_ssize_t n, int kind)
    int sb_half_select(int use_simd)
