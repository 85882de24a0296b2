# Declarations of the per-ISA loops in _loops.h (see there for why).
from libc.stdint cimport uint16_t

cdef extern from "_loops.h" nogil:
    ctypedef struct sb_loops_t:
        const char *name
        void (*f32)(const float *g, const float *y, float *out, Py_ssize_t n) noexcept nogil
        void (*f64)(const double *g, const double *y, double *out, Py_ssize_t n) noexcept nogil
        # complex: n (re, im) pairs
        void (*c64)(const float *g, const float *y, float *out, Py_ssize_t n) noexcept nogil
        void (*c128)(const double *g, const double *y, double *out, Py_ssize_t n) noexcept nogil
        void (*f16)(const uint16_t *g, const uint16_t *y, uint16_t *out,
                    Py_ssize_t n) noexcept nogil
        void (*bf16)(const uint16_t *g, const uint16_t *y, uint16_t *out,
                     Py_ssize_t n) noexcept nogil
        # _nontemporal.h: copies nbytes, out's whole 64-byte lines non-temporally
        void (*nt_copy)(void *dst, const void *src, size_t nbytes) noexcept nogil
    const sb_loops_t *sb_loops_in_use()
    int sb_isa_supported(const char *isa)
    const char *sb_select_isa(const char *isa)
