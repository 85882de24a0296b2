# Declarations of the dtype table (_dtypes.h, generated from _dtype_spec.py),
# for the kernels and the ufunc.  The Cython code names no dtype: it reads
# the table, and dispatches on how a dtype is stored.
cdef extern from "_dtypes.h" nogil:
    ctypedef enum Kind "sb_kind":
        NUM_KINDS "SB_NUM_KINDS"
    # The fused kernel's storage types (_fused.pxd's elem_t).
    ctypedef enum Storage "sb_storage":
        STORE_F32 "SB_STORE_F32"
        STORE_F64 "SB_STORE_F64"
        STORE_C64 "SB_STORE_C64"
        STORE_C128 "SB_STORE_C128"
        STORE_U16 "SB_STORE_U16"
        STORE_U8 "SB_STORE_U8"
    const char *sb_kind_names[]
    const int sb_kind_sizes[]
    const int sb_kind_storage[]
    int sb_kind_is_narrow(int kind)

cdef extern from "_numpy_dtypes.h" nogil:
    void sb_set_kind_typenum(int kind, int num)
    int sb_kind_of(int typenum)
    int sb_kind_typenum(int kind)
