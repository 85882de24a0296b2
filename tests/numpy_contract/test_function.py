"""The function as a NumPy user meets it: inputs, shapes, layouts, out=, errors."""
import array
import re

import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward

from dtypes_catalogue import ALL_DTYPES, BFLOAT16
from helpers import assert_same, layouts, numpy_refusal, random_array
from hostile import ArrayRaises, DLPackOnly

RNG = np.random.default_rng(1234)


# ---- inputs -----------------------------------------------------------------

def test_nested_lists_and_scalars():
    assert sigmoid_backward([[1.0, 1.0], [1.0, 1.0]], [[1, 2], [3, 4]]).tolist() == \
        [[0, -2], [-6, -12]]
    assert sigmoid_backward(1.0, [1.0, 2.0]).tolist() == [0, -2]


def test_buffer_protocol_inputs():
    g = array.array("f", [1, 1, 1, 1])
    y = memoryview(np.array([1, 2, 3, 4], np.float32))
    result = sigmoid_backward(g, y)
    assert result.dtype == np.float32 and result.tolist() == [0, -2, -6, -12]
    raw = bytearray(np.array([1.0, 2.0]).tobytes())
    assert sigmoid_backward(np.frombuffer(raw), array.array("d", [2.0])).tolist() == [-2, -4]
    typed = memoryview(raw).cast("d")   # a declared format: numbers, not bytes
    assert sigmoid_backward(typed, 2.0).tolist() == [-2, -4]


@pytest.mark.parametrize("make", [bytes, bytearray, lambda b: memoryview(bytearray(b)),
                                  lambda b: _mmap_of(b)],
                         ids=["bytes", "bytearray", "memoryview-of-bytes", "mmap"])
def test_raw_bytes_are_refused(make):
    # Their buffers declare no element type: NumPy would read each byte as
    # a uint8 number.
    raw = np.array([1.0, 2.0], np.float32).tobytes()
    for args, name in (((make(raw), 0.5), "grad_output"), ((0.5, make(raw)), "output")):
        with pytest.raises(TypeError, match=rf"^{name}: a \w+ holds raw bytes.*np.frombuffer"):
            sigmoid_backward(*args)
    out = np.zeros(2, np.float32)
    sigmoid_backward(np.frombuffer(make(raw), np.float32), 0.5, out=out)
    assert out.tolist() == [0.25, 0.5]


def _mmap_of(data):
    import mmap
    m = mmap.mmap(-1, len(data))
    m.write(data)
    return m


def test_dlpack_producer():
    g = np.ones(4, np.float32)
    y = np.array([1, 2, 3, 4], np.float32)
    assert sigmoid_backward(DLPackOnly(g), DLPackOnly(y)).tolist() == [0, -2, -6, -12]


def test_memmap_and_readonly_inputs(tmp_path):
    y = np.memmap(tmp_path / "y.bin", dtype=np.float32, mode="w+", shape=(1000,))
    y[:] = RNG.random(1000)
    y.flush()
    y_ro = np.memmap(tmp_path / "y.bin", dtype=np.float32, mode="r", shape=(1000,))
    g = RNG.standard_normal(1000).astype(np.float32)
    g.flags.writeable = False
    result = sigmoid_backward(g, y_ro)
    assert type(result) is np.ndarray
    assert_same(result, reference.sigmoid_backward(g, np.asarray(y_ro)))


def test_bfloat16_arrays():
    g = np.ones(4, BFLOAT16)
    y = np.array([1, 2, 3, 4], BFLOAT16)
    result = sigmoid_backward(g, y)
    assert result.dtype == BFLOAT16 and result.astype(float).tolist() == [0, -2, -6, -12]


def test_inputs_are_not_modified():
    for dtype in ALL_DTYPES:
        g, y = random_array(RNG, (5, 7), dtype), random_array(RNG, (7,), dtype)
        g0, y0 = g.copy(), y.copy()
        sigmoid_backward(g, y)
        assert_same(g, g0)
        assert_same(y, y0)


# ---- shapes -----------------------------------------------------------------

BROADCASTS = [((), ()), ((3,), ()), ((), (3,)), ((4, 1), (1, 5)), ((2, 3, 4), (4,)),
              ((1, 4, 1, 1), (1, 1, 4, 4)), ((5, 1, 3), (1, 6, 1)), ((0,), (1,)),
              ((2, 0, 1), (1, 3)), ((1,) * 10, (2,) * 9), ((1, 1 << 17), (2, 1))]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("gs, ys", BROADCASTS, ids=[f"{a}-{b}" for a, b in BROADCASTS])
def test_broadcasting(dtype, gs, ys):
    g, y = random_array(RNG, gs, dtype), random_array(RNG, ys, dtype)
    result = sigmoid_backward(g, y)
    expected = reference.sigmoid_backward(g, y)
    assert result.shape == np.broadcast_shapes(gs, ys)
    if result.ndim:
        assert result.flags.c_contiguous and type(result) is np.ndarray
    assert_same(result, expected)


def test_zero_d_inputs_return_a_scalar_like_a_ufunc():
    for dtype in ALL_DTYPES:
        g, y = np.array(1.0, dtype), np.array(3.0, dtype)
        result = sigmoid_backward(g, y)
        expected_type = type(np.add(g, g))
        assert type(result) is expected_type and result.dtype == dtype
        assert result == dtype.type(-6)
    out = np.zeros((), np.float32)
    assert sigmoid_backward(np.float32(1), np.float32(3), out=out) is out
    assert out[()] == -6


def test_more_than_eight_dimensions():
    shape = (2, 1, 2, 1, 2, 1, 2, 1, 2, 3)
    g = random_array(RNG, shape, np.float32)
    y = random_array(RNG, (2, 2, 1, 2, 1, 2, 1, 2, 1, 1), np.float32)
    assert_same(sigmoid_backward(g, y), reference.sigmoid_backward(g, y))


# ---- layouts ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_layout_of_each_input(dtype):
    rng = np.random.default_rng(7)
    other = random_array(rng, (6, 40), dtype)
    for name, a in layouts(rng, (6, 40), dtype):
        for g, y in ((a, other), (other, a), (a, a)):
            result = sigmoid_backward(g, y)
            assert result.dtype.isnative, name  # assert_same leaves byte order aside
            assert_same(result, reference.sigmoid_backward(g, y), name)


@pytest.mark.parametrize("order", ["K", "C", "F", "A"])
def test_result_memory_order_follows_numpy(order):
    """order='K' (the default) follows the inputs, as for any ufunc."""
    g = np.asfortranarray(random_array(RNG, (30, 50), np.float64))
    c = np.ascontiguousarray(g)
    for a, b in [(g, g), (c, c), (g, c), (c, g)]:
        result = sigmoid_backward(a, b, order=order)
        like = np.multiply(a, b, order=order)
        assert (result.flags.c_contiguous, result.flags.f_contiguous) == \
            (like.flags.c_contiguous, like.flags.f_contiguous)
        assert_same(result, reference.sigmoid_backward(a, b))


def test_unaligned_input():
    buf = np.zeros(4 * 1000 + 1, np.uint8)
    g = buf[1:].view(np.float32)
    assert not g.flags.aligned
    g[:] = RNG.standard_normal(1000)
    y = RNG.random(1000).astype(np.float32)
    assert_same(sigmoid_backward(g, y), reference.sigmoid_backward(g, y))


# ---- out= -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_out_same_dtype(dtype):
    g, y = random_array(RNG, (3, 5), dtype), random_array(RNG, (3, 5), dtype)
    out = np.empty((3, 5), dtype)
    assert sigmoid_backward(g, y, out=out) is out
    assert_same(out, reference.sigmoid_backward(g, y))
    out = np.empty((3, 5), dtype)
    assert sigmoid_backward(g, y, out=(out,)) is out   # ufunc spelling


@pytest.mark.parametrize("compute, out_dtype", [
    (np.float64, np.float32), (np.float32, np.float16), (np.float32, BFLOAT16),
    (np.float16, np.float64), (np.float32, np.complex128), (np.complex128, np.complex64)], ids=str)
def test_out_casts_same_kind(compute, out_dtype):
    g, y = random_array(RNG, 100, compute), random_array(RNG, 100, compute)
    out = np.empty(100, out_dtype)
    sigmoid_backward(g, y, out=out)
    assert_same(out, reference.sigmoid_backward(g, y).astype(out_dtype))


def test_out_layouts():
    g, y = random_array(RNG, (8, 9), np.float32), random_array(RNG, (9,), np.float32)
    expected = reference.sigmoid_backward(g, y)
    for out in [np.empty((9, 8), np.float32).T, np.empty((16, 18), np.float32)[::2, ::2],
                np.empty((8, 9), np.dtype(">f4")), np.empty((8, 9), np.float32)[::-1, ::-1]]:
        sigmoid_backward(g, y, out=out)
        assert_same(out.astype(np.float32), expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_in_place(dtype):
    g, y = random_array(RNG, 1000, dtype), random_array(RNG, 1000, dtype)
    expected = reference.sigmoid_backward(g, y)
    assert sigmoid_backward(g, y, out=g) is g
    assert_same(g, expected)
    g2 = random_array(RNG, 1000, dtype)
    expected = reference.sigmoid_backward(g2, y)
    sigmoid_backward(g2, y, out=y)
    assert_same(y, expected)


def test_in_place_with_broadcast_other_input():
    g = random_array(RNG, (40, 50), np.float64)
    y = random_array(RNG, (50,), np.float64)
    expected = reference.sigmoid_backward(g, y)
    sigmoid_backward(g, y, out=g)
    assert_same(g, expected)


@pytest.mark.parametrize("shift", [1, -1, 3, 100, -100])
def test_partial_overlap(shift):
    base = random_array(RNG, 2000, np.float32)
    n = 1000
    g = base[500:500 + n]
    out = base[500 + shift:500 + shift + n]
    y = random_array(RNG, n, np.float32)
    expected = reference.sigmoid_backward(g.copy(), y)
    sigmoid_backward(g, y, out=out)
    assert_same(out, expected)


def test_overlap_through_reversed_view():
    a = random_array(RNG, 1001, np.float64)
    y = random_array(RNG, 1001, np.float64)
    expected = reference.sigmoid_backward(a.copy(), y)
    sigmoid_backward(a, y, out=a[::-1])
    assert_same(a[::-1], expected)


# ---- errors: clear, and nothing written ---------------------------------------

def _untouched(out):
    snapshot = out.copy()
    return lambda: assert_same(out, snapshot)


def test_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match=re.escape("grad_output of shape (3,) and output of "
                                                   "shape (4,) could not be broadcast together")):
        sigmoid_backward(np.ones(3), np.ones(4))
    out = np.full(3, 7.0)
    check = _untouched(out)
    with pytest.raises(ValueError):
        sigmoid_backward(np.ones((2, 3)), np.ones((3, 3)), out=out)
    check()


@pytest.mark.parametrize("shape", [(3, 5), (5,), (1, 5), (2, 3, 5), ()])
def test_out_of_wrong_shape(shape):
    out = np.full(shape, 7.0)
    check = _untouched(out)
    # NumPy's message names out's shape, without spaces: (3,5), (5,), ().
    spelled = "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    with pytest.raises(ValueError, match=re.escape(spelled)):
        sigmoid_backward(np.ones((2, 5)), np.ones(5), out=out)
    check()


def test_out_may_broadcast_the_inputs_as_for_any_ufunc():
    out = np.full((3, 2, 5), 7.0)
    g, y = random_array(RNG, (2, 5), np.float64), random_array(RNG, (5,), np.float64)
    assert sigmoid_backward(g, y, out=out) is out
    assert_same(out, np.broadcast_to(reference.sigmoid_backward(g, y), (3, 2, 5)))


def test_read_only_out():
    out = np.full(4, 7.0)
    out.flags.writeable = False
    kind, message = numpy_refusal(lambda ufunc: ufunc(np.ones(4), np.ones(4), out=out))
    with pytest.raises(kind, match=message):
        sigmoid_backward(np.ones(4), np.ones(4), out=out)
    assert (out == 7).all()


OUT_DTYPES = [*ALL_DTYPES, np.dtype(np.int32), np.dtype(np.bool_)]


@pytest.mark.parametrize("casting", ["same_kind", "safe"])
@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
@pytest.mark.parametrize("g_dtype", ALL_DTYPES, ids=str)
def test_out_cast_follows_the_installed_cast_table(g_dtype, out_dtype, casting):
    """The result goes into out exactly when the installed NumPy (and
    ml_dtypes, for bfloat16) casts it under the call's rule, asked here at
    run time: ml_dtypes 0.7 added a same-kind bfloat16 -> float16 cast that
    0.4-0.6 lack, and a frozen table failed on the day it was released.
    One exception of ours: complex never becomes bfloat16, under any rule
    (ml_dtypes would drop the imaginary part)."""
    g, y = random_array(RNG, 4, g_dtype), random_array(RNG, 4, g_dtype)
    out = np.zeros(4, out_dtype)
    allowed = np.can_cast(g_dtype, out_dtype, casting) and not (
        g_dtype.kind == "c" and out_dtype.type.__module__ == "ml_dtypes")
    if allowed:
        assert sigmoid_backward(g, y, out=out, casting=casting) is out
        assert_same(out, reference.sigmoid_backward(g, y).astype(out_dtype))
        return
    check = _untouched(out)
    with pytest.raises(TypeError, match=r"(?i)cast"):
        sigmoid_backward(g, y, out=out, casting=casting)
    check()


def test_complex_never_into_a_bfloat16_out_even_unsafe():
    """casting='unsafe' allows what the ufunc allows, complex to real
    included, but not complex into bfloat16."""
    out = np.zeros(4, BFLOAT16)
    check = _untouched(out)
    with pytest.raises(TypeError, match="bfloat16"):
        sigmoid_backward(np.ones(4, np.complex64), np.ones(4, np.complex64), out=(out,),
                         casting="unsafe")
    check()


def test_out_casts_that_numpy_allows():
    """An object or string out is NumPy's business, as for np.multiply."""
    g, y = np.ones(2, np.float32), np.full(2, 0.5, np.float32)
    for dtype in (object, "U5"):
        expected = reference.sigmoid_backward(g, y).astype(dtype)
        assert (sigmoid_backward(g, y, out=np.zeros(2, dtype)) == expected).all()


def test_out_not_an_array():
    with pytest.raises(TypeError, match="^out: must be an ndarray or a writable "
                                        "buffer-protocol object, got list"):
        sigmoid_backward(np.ones(2), np.ones(2), out=[0.0, 0.0])


def test_errors_leave_out_untouched_for_bad_inputs():
    out = np.full(2, 7.0)
    check = _untouched(out)
    for args, kwargs, exc in [
        ((np.array(["a", "b"]), np.ones(2)), {}, TypeError),
        ((np.ones(2), np.ones(2)), {"dtype": np.int64}, TypeError),
        ((np.ones(2), np.ones(2)), {"num_threads": 0}, ValueError),
        ((np.ones(2), [[1.0], [1.0, 2.0]]), {}, ValueError),
    ]:
        with pytest.raises(exc):
            sigmoid_backward(*args, out=out, **kwargs)
        check()


def test_ragged_list_names_the_argument():
    with pytest.raises(ValueError, match="output: cannot make an array"):
        sigmoid_backward(np.ones(2), [[1.0], [1.0, 2.0]])


def test_object_whose_array_export_raises():
    with pytest.raises(TypeError, match="grad_output: cannot make an array of a ArrayRaises"):
        sigmoid_backward(ArrayRaises(), np.ones(2))


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_num_threads_validated(bad):
    with pytest.raises((TypeError, ValueError), match="num_threads"):
        sigmoid_backward(np.ones(2), np.ones(2), num_threads=bad)


def test_positional_only_and_keyword_only():
    with pytest.raises(TypeError):
        sigmoid_backward(grad_output=np.ones(2), output=np.ones(2))
    with pytest.raises(TypeError):
        sigmoid_backward(np.ones(2), np.ones(2), None, np.float32)


def test_empty_out_of_any_dtype():
    # NumPy gives empty arrays zero strides: that is no overlap.
    g, y = np.ones((0, 2), np.float32), np.ones((0, 2))
    for out in [np.empty((0, 2)), np.empty((0, 2), np.float32)[:, ::-1], np.empty((2, 0)).T]:
        assert sigmoid_backward(g, y, out=out) is out


def test_reference_returns_arrays_for_0d_inputs():
    for dtype in ALL_DTYPES:
        result = reference.sigmoid_backward(np.array(1, dtype), np.array(3, dtype))
        assert type(result) is np.ndarray and result.shape == () and result.dtype == dtype
