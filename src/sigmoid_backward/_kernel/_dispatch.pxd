# Declarations of the instruction sets' loops (_dispatch.h), for the kernels.
cdef extern from "_dispatch.h" nogil:
    ctypedef void (*sb_loop_fn)(const void *g, const void *y, void *out,
                                Py_ssize_t n) noexcept nogil
    ctypedef void (*sb_nt_copy_fn)(void *dst, const void *src, size_t nbytes) noexcept nogil
    ctypedef struct sb_loops_t:
        const char *name
        sb_nt_copy_fn nt_copy
    void sb_dispatch_init()
    const sb_loops_t *sb_loops_in_use()
    sb_loop_fn sb_loop_for(const sb_loops_t *loops, int kind)
    int sb_num_isas()
    const char *sb_isa_name(int k)
    int sb_isa_supported(int k)
    const char *sb_select_isa(const char *isa)
