"""Shared test helpers: exact comparison and the array generator."""
import numpy as np
import ml_dtypes

BF16 = np.dtype(ml_dtypes.bfloat16)
ALL_DTYPES = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64),
              np.dtype(np.complex64), np.dtype(np.complex128)]
REAL_DTYPES = ALL_DTYPES[:4]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _describe(a):
    a = np.asarray(a)
    order = "C" if a.flags.c_contiguous else "F" if a.flags.f_contiguous else "strided"
    return f"dtype={a.dtype} shape={a.shape} order={order}"


def _real_parts(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return [np.ascontiguousarray(a.real), np.ascontiguousarray(a.imag)]
    return [np.ascontiguousarray(a)]


def assert_same(actual, expected, context=""):
    """Bit-for-bit equality; NaNs compare by position only (any payload)."""
    actual_arr, expected_arr = np.asarray(actual), np.asarray(expected)
    msg = f"{context} actual {_describe(actual_arr)} expected {_describe(expected_arr)}"
    assert actual_arr.dtype == expected_arr.dtype, msg
    assert actual_arr.shape == expected_arr.shape, msg
    for a, e in zip(_real_parts(actual_arr), _real_parts(expected_arr)):
        a_nan = np.isnan(a.astype(np.float64) if a.dtype == BF16 else a)
        e_nan = np.isnan(e.astype(np.float64) if e.dtype == BF16 else e)
        assert np.array_equal(a_nan, e_nan), f"NaN positions differ: {msg}"
        bits = _UINT[a.dtype.itemsize]
        a_bits, e_bits = a.view(bits)[~a_nan], e.view(bits)[~e_nan]
        bad = np.flatnonzero(a_bits != e_bits)
        assert bad.size == 0, (f"{bad.size} elements differ, first at flat index {bad[0]}: "
                               f"{a[~a_nan][bad[0]]!r} != {e[~e_nan][bad[0]]!r}; {msg}")


SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
            1.17e-38, 5e-324, 1e-310, 3.4028235e38, -3.4028235e38, 1.7976931348623157e308,
            -1.7976931348623157e308, 65504.0, -65504.0, 6e-8, 6.1e-5, 3.3895e38]


def specials(dtype):
    """Special values (+-0, +-inf, NaN, subnormals, largest finite) in dtype;
    for complex, every pair of them as (real, imag)."""
    dtype = np.dtype(dtype)
    info = ml_dtypes.finfo(dtype) if dtype == BF16 else np.finfo(dtype)
    extra = [float(info.max), -float(info.max), float(info.smallest_subnormal),
             -float(info.smallest_subnormal), float(info.tiny)]
    values = SPECIALS + extra
    with np.errstate(over="ignore", under="ignore"):
        if dtype.kind == "c":
            return np.array([complex(a, b) for a in values for b in values], dtype)
        return np.array(values, np.float64).astype(dtype)


def random_array(rng, shape, dtype, scale=4.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        part = dtype.type(0).real.dtype
        return (rng.standard_normal(shape) * scale).astype(part) + \
            1j * (rng.standard_normal(shape) * scale).astype(part)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def layouts(rng, shape, dtype):
    """The same logical array in several memory layouts (bottleneck-style)."""
    base = random_array(rng, shape, dtype)
    yield "C", base
    yield "F", np.asfortranarray(base)
    big = random_array(rng, tuple(2 * s for s in shape), dtype)
    strided = big[tuple(slice(None, None, 2) for _ in shape)]
    yield "strided", strided
    yield "reversed", base[tuple(slice(None, None, -1) for _ in shape)]
    if dtype != BF16:
        yield "byteswapped", base.astype(base.dtype.newbyteorder())
    ro = base.copy()
    ro.flags.writeable = False
    yield "readonly", ro
    if base.ndim >= 2:
        yield "transposed", np.ascontiguousarray(base.T).T


# ---- objects whose array export raises (hardening tests) -------------------

class ArrayRaises:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("export failed")


class ArrayInterfaceRaises:
    @property
    def __array_interface__(self):
        raise RuntimeError("export failed")


class DLPackRaises:
    def __dlpack__(self, **kwargs):
        raise BufferError("export failed")

    def __dlpack_device__(self):
        return (1, 0)


class BufferRaises:
    """Python 3.12+ (PEP 688) calls this for the buffer protocol."""

    def __buffer__(self, flags):
        raise RuntimeError("export failed")
