/*
 * The dtype table (_dtypes.h) in NumPy's terms: type numbers and DType
 * classes, for the kernel's kind_of and the ufunc's promoter.
 */
#ifndef SIGMOID_BACKWARD_NUMPY_DTYPES_H
#define SIGMOID_BACKWARD_NUMPY_DTYPES_H

#include <Python.h>
#include <numpy/ndarraytypes.h>

#include "_dtypes.h"

/* Each kind's NumPy type number.  ml_dtypes' types get theirs when
 * ml_dtypes registers them, so every module that reads the table sets them
 * at import (sb_set_kind_typenum, from _dtypes.py's table), in one array
 * rather than a variable per dtype. */
static int sb_kind_typenums_plus_one[SB_NUM_KINDS];   /* 0: not set yet */

static inline void sb_set_kind_typenum(int kind, int num) { sb_kind_typenums_plus_one[kind] = num + 1; }

/* The kind of a NumPy type number, or -1 for a dtype the kernels lack. */
static inline int sb_kind_of(int typenum)
{
    for (int kind = 0; kind < SB_NUM_KINDS; kind++)
        if (sb_kind_typenums_plus_one[kind] == typenum + 1) return kind;
    return -1;
}

/* The NumPy type number of a kind. */
static inline int sb_kind_typenum(int kind) { return sb_kind_typenums_plus_one[kind] - 1; }

#endif /* SIGMOID_BACKWARD_NUMPY_DTYPES_H */
