"""The dtypes the kernels compute: the one description of them.

Everything else is made from this table.  At build time meson runs
``_dtype_codegen.py``, which writes the C table (``_dtypes.h``: the kinds,
their names, sizes, storage and conversions, in X-macro form) and every
instruction set's loops (``_isa_loops.h``).  At run time ``_dtypes.py``
turns it into NumPy dtypes, the ufunc registers a loop for every pair of
its entries, and the torch and JAX adapters map the names to their own
types.  The NPU operator's own list (aclnn, golden) is not this table: it
is the operator's, and stays as it is when the CPU learns a dtype.

Each entry:

- ``name``: NumPy's (or ml_dtypes') name for the dtype;
- ``kind``: the C name of its kind (``SB_KIND_<kind>``, ``sb_<kind>_<isa>``);
- ``module``: where its NumPy type lives (``numpy`` or ``ml_dtypes``);
- ``storage``: how the kernels carry it: ``f32``, ``f64``, ``c64``, ``c128``,
  or the unsigned integer of its width, ``u16`` or ``u8``, for the narrow
  dtypes, which are computed in float32 and rounded once;
- ``format``: a narrow dtype's bits, ``(exponent bits, mantissa bits, bias,
  special)``; ``special`` is ``"ieee"`` (the top exponent is inf and NaN) or
  ``"fn"`` (finite only: the one NaN is all ones, and overflow is NaN);
- ``convert``: a narrow dtype's scalar conversions to and from float32, by
  the C names of ``_half.h``: ``minifloat`` makes them from ``format``;
- ``vector``: a narrow dtype's fast path: ``f16`` (F16C) or ``bf16``,
  hand-written vector conversions in ``_simd.h``; ``table`` (one-byte
  dtypes): every instruction set reads the result of each (g, y) pair of
  codes from a 65,536-entry table, which the scalar conversions' loop fills
  at import (``_loops_table.h``), but ``avx512vbmi``, which computes them from the
  format (AVX512-VBMI, -VBMI2 and GFNI, ``_loops_vbmi.h``); or ``None``: the
  scalar conversions, which the compiler vectorises for each instruction
  set;
- ``xla``: XLA's name of the dtype, for the JAX target's FFI handler;
- ``torch``: c10's ``ScalarType`` name of the dtype, for the native torch op
  (left out where torch lacks the dtype).

Only literals here: the build reads this file without importing NumPy.
"""

DTYPES = (
    {"name": "float32", "kind": "F32", "module": "numpy", "storage": "f32", "xla": "F32",
     "torch": "Float"},
    {"name": "float64", "kind": "F64", "module": "numpy", "storage": "f64", "xla": "F64",
     "torch": "Double"},
    {"name": "complex64", "kind": "C64", "module": "numpy", "storage": "c64", "xla": "C64",
     "torch": "ComplexFloat"},
    {"name": "complex128", "kind": "C128", "module": "numpy", "storage": "c128", "xla": "C128",
     "torch": "ComplexDouble"},
    {"name": "float16", "kind": "F16", "module": "numpy", "storage": "u16",
     "format": (5, 10, 15, "ieee"), "convert": ("sb_f16_to_f32", "sb_f32_to_f16"),
     "vector": "f16", "xla": "F16", "torch": "Half"},
    {"name": "bfloat16", "kind": "BF16", "module": "ml_dtypes", "storage": "u16",
     "format": (8, 7, 127, "ieee"), "convert": ("sb_bf16_to_f32", "sb_f32_to_bf16"),
     "vector": "bf16", "xla": "BF16", "torch": "BFloat16"},
    {"name": "float8_e4m3fn", "kind": "F8E4M3FN", "module": "ml_dtypes", "storage": "u8",
     "format": (4, 3, 7, "fn"), "convert": "minifloat", "vector": "table",
     "xla": "F8E4M3FN", "torch": "Float8_e4m3fn"},
    {"name": "float8_e5m2", "kind": "F8E5M2", "module": "ml_dtypes", "storage": "u8",
     "format": (5, 2, 15, "ieee"), "convert": "minifloat", "vector": "table",
     "xla": "F8E5M2", "torch": "Float8_e5m2"},
)
