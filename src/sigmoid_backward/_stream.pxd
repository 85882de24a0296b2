# Declarations of the streaming stores in _stream.h (see there for why).
cdef extern from "_stream.h" nogil:
    enum: SB_LINE
    void sb_stream_fence()
    size_t sb_line_misalignment(const void *p)
