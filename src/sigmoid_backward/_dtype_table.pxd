# Declarations of the dtype table (_dtypes.h), for the kernels and the ufunc.
cdef extern from "_dtypes.h" nogil:
    # Only the kinds the Cython code names; the others come from the table.
    ctypedef enum Kind "sb_kind":
        KIND_F32 "SB_KIND_F32"
        KIND_F64 "SB_KIND_F64"
        KIND_C64 "SB_KIND_C64"
        KIND_C128 "SB_KIND_C128"
        KIND_F16 "SB_KIND_F16"
        KIND_BF16 "SB_KIND_BF16"
        NUM_KINDS "SB_NUM_KINDS"
    const char *sb_kind_names[]
    const int sb_kind_sizes[]
    int sb_kind_is_narrow(int kind)

cdef extern from "_numpy_dtypes.h" nogil:
    void sb_set_bfloat16_num(int num)
    int sb_kind_of(int typenum)
