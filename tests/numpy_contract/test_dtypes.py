"""Result dtypes: the promotion table, NEP 50 scalars, dtype=, errors."""
import math
import re

import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward, ufunc

from dtypes_catalogue import ALL_DTYPES, BFLOAT16, COMPLEX64, COMPLEX128, FLOAT16, FLOAT32, FLOAT64
from helpers import assert_same, random_array

f16, bf16, f32, f64, c64, c128 = FLOAT16, BFLOAT16, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128
# The operator's promotion table, as its specification states it (row
# promoted with column): the one the ufunc's promoter and the reference's
# own table are both held to.
TABLE = {
    f16: [f16, f32, f32, f64, c64, c128],
    bf16: [f32, bf16, f32, f64, c64, c128],
    f32: [f32, f32, f32, f64, c64, c128],
    f64: [f64, f64, f64, f64, c128, c128],
    c64: [c64, c64, c64, c128, c64, c128],
    c128: [c128, c128, c128, c128, c128, c128],
}
PAIRS = [(a, b, TABLE[a][i]) for a in TABLE for i, b in enumerate(TABLE)]


@pytest.mark.parametrize("a, b, expected", PAIRS, ids=[f"{a}-{b}" for a, b, _ in PAIRS])
def test_promotion_table(a, b, expected):
    # Each pair has its own loop: the inputs stay as they are.
    assert ufunc.resolve_dtypes((a, b, None)) == (a, b, expected)
    assert reference.result_dtype(np.empty(0, a), np.empty(0, b)) == expected
    rng = np.random.default_rng(0)
    g, y = random_array(rng, 257, a), random_array(rng, 257, b)
    result = sigmoid_backward(g, y)
    assert result.dtype == expected
    assert_same(result, reference.sigmoid_backward(g, y))
    # The inputs are rounded to the compute dtype first, then computed.
    assert_same(result, reference.sigmoid_backward(g.astype(expected), y.astype(expected)))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("scalar, kind", [(0.25, "f"), (2, "i"), (True, "b")])
def test_python_real_scalars_are_weak(dtype, scalar, kind):
    a = random_array(np.random.default_rng(1), 33, dtype)
    for args in [(a, scalar), (scalar, a)]:
        result = sigmoid_backward(*args)
        assert result.dtype == dtype
        assert_same(result, reference.sigmoid_backward(*args))


@pytest.mark.parametrize("dtype, expected", [(f16, c64), (bf16, c64), (f32, c64),
                                             (f64, c128), (c64, c64), (c128, c128)], ids=str)
def test_python_complex_scalar(dtype, expected):
    a = random_array(np.random.default_rng(1), 9, dtype)
    result = sigmoid_backward(a, 0.5 + 0.25j)
    assert result.dtype == expected
    assert_same(result, reference.sigmoid_backward(a, 0.5 + 0.25j))


def test_numpy_scalars_are_strong():
    a = np.ones(3, np.float32)
    assert sigmoid_backward(a, np.float64(0.5)).dtype == f64
    assert sigmoid_backward(a, np.float16(0.5)).dtype == f32


@pytest.mark.parametrize("int_dtype", [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64])
def test_integer_and_bool_inputs_compute_in_float64(int_dtype):
    g = np.array([1, 0, 1], int_dtype)
    y = np.array([1, 1, 0], int_dtype)
    result = sigmoid_backward(g, y)
    assert result.dtype == f64
    assert_same(result, reference.sigmoid_backward(g.astype(f64), y.astype(f64)))
    assert sigmoid_backward([[1, 1], [1, 1]], [[1, 2], [3, 4]]).tolist() == [[0, -2], [-6, -12]]


@pytest.mark.parametrize("int_dtype", [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint64])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_integer_with_float_follows_the_installed_promotion(dtype, int_dtype):
    """An integer or bool array next to a floating one promotes as the
    installed NumPy (ml_dtypes, for its types) promotes them, asked here at
    run time.  Where ml_dtypes has no rule (bfloat16 with int16 and wider
    before 0.7, float8 with int16 before 0.7), its type promotes as float16
    would.  The one exception: a result that cannot hold every value of
    the integer (ml_dtypes' float8 with int8) is refused, naming both."""
    try:
        expected = np.result_type(dtype, int_dtype)
    except TypeError:   # no common DType: ml_dtypes defines none for this pair
        assert dtype.type.__module__ == "ml_dtypes", \
            f"NumPy has no promotion of {dtype} with {int_dtype}"
        stand_in = np.result_type(f16, int_dtype)
        expected = dtype if stand_in == f16 else stand_in
    for args in [(np.ones(2, int_dtype), np.ones(2, dtype)),
                 (np.ones(2, dtype), np.ones(2, int_dtype))]:
        # The exception is for the narrow results (stored in 16 bits or
        # fewer): float64 with uint64 gives float64, as NumPy says.
        if expected.itemsize <= 2 and not _holds_every(expected, np.dtype(int_dtype)):
            with pytest.raises(TypeError, match="cannot hold every"):
                sigmoid_backward(*args)
            with pytest.raises(TypeError):
                reference.result_dtype(*args)
            continue
        result = sigmoid_backward(*args)
        assert result.dtype == expected
        assert reference.result_dtype(*args) == expected
        assert_same(result, reference.sigmoid_backward(*args))


def _holds_every(floating, integer):
    """Does ``floating`` hold every value of ``integer``?  Its extremes, and
    the odd one below the top, which needs every bit, come back exactly."""
    if integer.kind == "b":
        ints = np.array([0, 1], integer)
    else:
        info = np.iinfo(integer)
        ints = np.array([info.min, info.min + 1, info.max - 1, info.max], integer)
    with np.errstate(all="ignore"):
        back = ints.astype(floating)
    back = (back.real if back.dtype.kind == "c" else back).astype(np.float64).tolist()
    return all(math.isfinite(b) and int(b) == i for b, i in zip(back, ints.tolist(), strict=True))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtype_forces_compute_and_result(dtype):
    rng = np.random.default_rng(4)
    g, y = rng.standard_normal(50), rng.random(50)          # float64 inputs
    if dtype.kind == "c":
        g = g + 0.5j
    result = sigmoid_backward(g, y, dtype=dtype)
    assert result.dtype == dtype
    assert_same(result, reference.sigmoid_backward(g.astype(dtype), y.astype(dtype)))


def test_dtype_may_not_cast_complex_to_real():
    with pytest.raises(TypeError, match=re.escape("input 0 from dtype('complex128') to "
                                                  "dtype('float32')")):
        sigmoid_backward(np.ones(2, complex), np.ones(2), dtype=np.float32)


@pytest.mark.parametrize("bad", [np.int32, np.bool_, object, np.longdouble])
def test_dtype_argument_must_be_supported(bad):
    with pytest.raises(TypeError, match=r"dtype=.* is not supported"):
        sigmoid_backward(np.ones(2), np.ones(2), dtype=bad)


@pytest.mark.parametrize("bad", [
    np.array(["a", "b"]), np.array([1, 2], object), np.array([1, 2], "datetime64[s]"),
    np.array([1, 2], "timedelta64[s]"), np.zeros(2, [("x", "f4")]), np.zeros(2, "V4"),
    np.array([b"x", b"y"]), np.ones(2, np.longdouble)], ids=lambda a: str(a.dtype))
def test_unsupported_input_dtypes_raise_typeerror_naming_dtype(bad):
    """The function names the argument and its dtype as NumPy prints it.
    The ufunc's promoter sees DType classes (StrDType, VoidDType, ...), not
    the dtypes: it names a parametric one by its class."""
    shown = repr(type(bad.dtype)) if type(bad.dtype)._parametric else repr(bad.dtype)
    with pytest.raises(TypeError, match=re.escape(f"grad_output's dtype, {bad.dtype!r}, "
                                                  "is not supported")):
        sigmoid_backward(bad, np.ones(2))
    with pytest.raises(TypeError, match=re.escape(f"sigmoid_backward: output's dtype, "
                                                  f"{bad.dtype!r}, is not supported")):
        sigmoid_backward(np.ones(2), bad)
    with pytest.raises(TypeError, match=re.escape(f"grad_output's dtype, {shown}, ")):
        ufunc(bad, np.ones(2))


@pytest.mark.parametrize("a, b, expected", PAIRS, ids=[f"{a}-{b}" for a, b, _ in PAIRS])
def test_byte_order_does_not_change_promotion(a, b, expected):
    # ml_dtypes' bfloat16 has one byte order only; swap every other dtype.
    def swapped(dt):
        return dt if dt == BFLOAT16 else dt.newbyteorder()

    g, y = np.ones(3, swapped(a)), np.ones(3, swapped(b))
    assert sigmoid_backward(g, y).dtype == expected


def test_dtype_argument_in_another_byte_order_is_refused_as_by_numpy():
    # A ufunc's dtype= selects a DType, not a byte order: NumPy refuses '>f4'.
    for fn in (sigmoid_backward, np.multiply):
        with pytest.raises(TypeError, match="byte order"):
            fn(np.ones(3), np.full(3, 0.5), dtype=">f4")
