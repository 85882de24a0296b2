"""Floating-point values as their place in the ordered line of a dtype's
values: ULP distances, and the representable bounds of a range.

A float's bits, read as sign and magnitude, become an integer "ordinal"
that counts representable values: +0 and -0 are both 0, the smallest
subnormal 1, infinity one past the largest finite value; negative values
mirror positive ones.  Two values are then ``|ordinal(a) - ordinal(b)|``
ULPs apart, whatever their exponents.
"""
import math

import numpy as np

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def real_part_dtype(dtype):
    """float32 for complex64, float64 for complex128, the dtype otherwise."""
    dtype = np.dtype(dtype)
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


def parts(arr):
    """A 1-d or 0-d array's values as rows of real parts: shape (n, 1), or
    (n, 2) for complex (real, imaginary)."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    if flat.dtype.kind == "c":
        return flat.view(real_part_dtype(flat.dtype)).reshape(-1, 2)
    return flat.reshape(-1, 1)


def ordinal(real):
    """The ordinals of an array of real floats (any float dtype), as int64."""
    size = real.dtype.itemsize
    signed = real.view(f"i{size}")
    lowest = np.iinfo(signed.dtype).min
    # A set sign bit makes the integer negative: its magnitude is
    # bits - lowest, and the ordinal minus that, lowest - bits (no overflow).
    return np.where(signed < 0, lowest - signed, signed).astype(np.int64, copy=False)


def ulp_distance(a, b):
    """``|ordinal(a) - ordinal(b)|`` as uint64: exact even for float64, whose
    ordinals take 64 bits (the difference wraps in int64 but not in uint64)."""
    oa, ob = ordinal(a), ordinal(b)
    if a.dtype.itemsize < 8:  # ordinals of 32 bits or fewer: no overflow
        return np.abs(oa - ob).view(np.uint64)
    return np.where(oa >= ob, oa - ob, ob - oa).view(np.uint64)


def _from_ordinal(n, dtype):
    size = dtype.itemsize
    bits = n if n >= 0 else (-n) | (1 << (8 * size - 1))
    return np.array(bits, _UINT[size]).view(dtype)[()]


def _step(value, dtype, direction):
    """The neighbour of ``value`` (a scalar of ``dtype``) towards +inf
    (``direction`` 1) or -inf (-1)."""
    return _from_ordinal(int(ordinal(np.array([value], dtype))[0]) + direction, dtype)


def rounded(x, dtype):
    """The Python number ``x`` rounded to ``dtype`` (infinite beyond its range)."""
    try:
        value = float(x)
    except OverflowError:  # an int beyond float64
        value = float("inf") if x > 0 else float("-inf")
    with np.errstate(over="ignore"):
        return dtype.type(value)


def inner_bounds(dtype, lo, hi):
    """The smallest and largest values of the real ``dtype`` within
    ``[lo, hi]`` (Python numbers, compared exactly), or None if it holds
    none.  Values drawn in ``[lo, hi]`` and clipped to these bounds round to
    values in the range: rounding is monotonic."""
    dtype = np.dtype(dtype)
    low, high = rounded(lo, dtype), rounded(hi, dtype)
    if float(low) < lo:
        low = _step(low, dtype, 1)
    if float(high) > hi:
        high = _step(high, dtype, -1)
    return (low, high) if float(low) <= float(high) else None


def number_json(x):
    """A float as JSON can carry it: itself, or "nan", "inf", "-inf"."""
    return x if math.isfinite(x) else {math.inf: "inf", -math.inf: "-inf"}.get(x, "nan")
