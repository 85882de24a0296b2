/*
 * The dtype table (_dtypes.h) in NumPy's terms: type numbers and DType
 * classes, for the kernel's kind_of and the ufunc's promoter.
 */
#ifndef SIGMOID_BACKWARD_NUMPY_DTYPES_H
#define SIGMOID_BACKWARD_NUMPY_DTYPES_H

#include <Python.h>
#include <numpy/ndarraytypes.h>

#include "_dtypes.h"

/* ml_dtypes' bfloat16 type number, which NumPy hands out when ml_dtypes
 * registers it; each module that reads the table sets it at import. */
static int sb_bfloat16_num = -1;

static inline void sb_set_bfloat16_num(int num) { sb_bfloat16_num = num; }

/* The kind of a NumPy type number, or -1 for a dtype the kernels lack. */
static inline int sb_kind_of(int typenum)
{
#define SB_KIND_OF(K, name, size, num, widen, round, xla) if (typenum == (num)) return SB_KIND_##K;
    SB_DTYPES(SB_KIND_OF)
#undef SB_KIND_OF
    return -1;
}

/* The NumPy type number of a kind. */
static inline int sb_kind_typenum(int kind)
{
#define SB_KIND_NUM(K, name, size, num, widen, round, xla) if (kind == SB_KIND_##K) return (num);
    SB_DTYPES(SB_KIND_NUM)
#undef SB_KIND_NUM
    return -1;
}

#endif /* SIGMOID_BACKWARD_NUMPY_DTYPES_H */
