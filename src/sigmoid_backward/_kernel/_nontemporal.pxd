# Declarations of the non-temporal stores in _nontemporal.h (see there for why).
cdef extern from "_nontemporal.h" nogil:
    enum: SB_LINE
    void sb_nt_fence()
    size_t sb_line_misalignment(const void *p)
