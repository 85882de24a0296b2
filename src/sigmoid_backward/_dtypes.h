/*
 * The dtypes, in one table.  Every list of dtypes in the C code is made from
 * it (numexpr's functions.hpp style: each use defines X and expands the
 * table): the Kind enum, the loops table's entries, the names and sizes,
 * kind_of and the promoter's dtypes (_numpy_dtypes.h), the portable loops
 * of the narrow dtypes (_loops.h).  The Python side has its own table,
 * _dtypes.py, and a test holds the two (and the ufunc's loops) together.
 *
 * X(KIND, name, itemsize, NumPy type number, widen to float32, round from
 * float32, XLA's DataType): widen and round only for the narrow dtypes,
 * which are stored in 16 bits or fewer and computed in float32 (_half.h).
 * The type number is an expression, read only where NumPy's headers are
 * included (ml_dtypes' bfloat16 gets its number at import); the XLA name
 * only by the XLA FFI handler (_xla_ffi.cc).
 */
#ifndef SIGMOID_BACKWARD_DTYPES_H
#define SIGMOID_BACKWARD_DTYPES_H

#define SB_WIDE_DTYPES(X)                                                   \
    X(F32,  "float32",    4,  NPY_FLOAT,   none, none, F32)                 \
    X(F64,  "float64",    8,  NPY_DOUBLE,  none, none, F64)                 \
    X(C64,  "complex64",  8,  NPY_CFLOAT,  none, none, C64)                 \
    X(C128, "complex128", 16, NPY_CDOUBLE, none, none, C128)

#define SB_NARROW_DTYPES(X)                                                 \
    X(F16,  "float16",  2, NPY_HALF,        sb_f16_to_f32,  sb_f32_to_f16,  F16)  \
    X(BF16, "bfloat16", 2, sb_bfloat16_num, sb_bf16_to_f32, sb_f32_to_bf16, BF16)

#define SB_DTYPES(X) SB_WIDE_DTYPES(X) SB_NARROW_DTYPES(X)

typedef enum {
#define SB_KIND_ENUM(K, name, size, num, widen, round, xla) SB_KIND_##K,
    SB_DTYPES(SB_KIND_ENUM)
#undef SB_KIND_ENUM
    SB_NUM_KINDS
} sb_kind;

static const char *const sb_kind_names[SB_NUM_KINDS] = {
#define SB_KIND_NAME(K, name, size, num, widen, round, xla) name,
    SB_DTYPES(SB_KIND_NAME)
#undef SB_KIND_NAME
};

static const int sb_kind_sizes[SB_NUM_KINDS] = {
#define SB_KIND_SIZE(K, name, size, num, widen, round, xla) size,
    SB_DTYPES(SB_KIND_SIZE)
#undef SB_KIND_SIZE
};

/* Computed in float32 and rounded once? */
static inline int sb_kind_is_narrow(int kind)
{
#define SB_KIND_NARROW(K, name, size, num, widen, round, xla) if (kind == SB_KIND_##K) return 1;
    SB_NARROW_DTYPES(SB_KIND_NARROW)
#undef SB_KIND_NARROW
    return 0;
}

#endif /* SIGMOID_BACKWARD_DTYPES_H */
