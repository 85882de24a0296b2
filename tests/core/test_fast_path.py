"""The function's fast path (_function.fast_path) takes exactly the simple
calls, and every call gives what the ufunc gives: overlap, read-only
outputs, subclasses, memory orders, 0-d results and memory use included."""
import tracemalloc

import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward, ufunc
from sigmoid_backward._kernel import _kernels
from sigmoid_backward._numpy import _function

from dtypes_catalogue import ALL_DTYPES
from helpers import assert_same


class Sub(np.ndarray):
    """An ndarray subclass: never the fast path's."""


def _inputs(shape, dtype=np.float32, seed=0):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    g = rng.standard_normal(2 * n).view(np.complex128)[:n] if dtype.kind == "c" \
        else rng.standard_normal(n)
    y = rng.random(2 * n).view(np.complex128)[:n] if dtype.kind == "c" else rng.random(n)
    return g.astype(dtype).reshape(shape), y.astype(dtype).reshape(shape)


def _expected(g, y):
    return reference.sigmoid_backward(np.array(g), np.array(y))


def _direct(g, y, out=None):
    return _function.fast_path(g, y, out, 0)


def _assert_like_ufunc(result, g, y, out=None, **kwargs):
    """What the ufunc returns for the same call: type, dtype, shape, memory
    order and bytes."""
    expected = ufunc(g, y, **kwargs) if out is None else \
        ufunc(g, y, out=np.empty_like(out), **kwargs)
    assert type(result) is type(expected)
    result, expected = np.asarray(result), np.asarray(expected)
    assert (result.dtype, result.shape) == (expected.dtype, expected.shape)
    assert (result.flags.c_contiguous, result.flags.f_contiguous) == \
        (expected.flags.c_contiguous, expected.flags.f_contiguous)
    # The fast path runs the ufunc's own kernel and must return exactly what
    # the ufunc returns: a NaN's bits too.
    assert_same(result, expected, nan_payloads=True)


# ---- calls the fast path takes ----------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (7, 9), (2, 0, 3)], ids=str)
def test_simple_calls_are_direct_and_exact(dtype, shape):
    g, y = _inputs(shape, dtype)
    expected = _expected(g, y)
    out = np.empty(shape, dtype)
    assert _direct(g, y, out) is out
    assert_same(out, expected)
    result = _direct(g, y)
    assert type(result) is np.ndarray and result.flags.c_contiguous
    assert_same(result, expected)
    # ... and the public function returns the same through it.
    out2 = np.empty(shape, dtype)
    assert sigmoid_backward(g, y, out=out2) is out2
    assert_same(out2, expected)
    assert_same(sigmoid_backward(g, y), expected)
    _assert_like_ufunc(sigmoid_backward(g, y), g, y)
    _assert_like_ufunc(result, g, y)


def test_fortran_order_with_fortran_out_is_direct():
    g, y = _inputs((30, 40))
    g, y = np.asfortranarray(g), np.asfortranarray(y)
    out = np.empty((30, 40), np.float32, order="F")
    assert _direct(g, y, out) is out
    assert_same(out, _expected(g, y))


@pytest.mark.parametrize("which", ["grad_output", "output"])
def test_in_place_is_direct(which):
    g, y = _inputs((5000,))
    expected = _expected(g, y)
    out = g if which == "grad_output" else y
    assert _direct(g, y, out) is out
    assert_same(out, expected)


def test_read_only_inputs_are_direct():
    g, y = _inputs((100,))
    g.flags.writeable = y.flags.writeable = False
    assert_same(_direct(g, y), _expected(g, y))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_zero_dim_gives_a_scalar_or_out(dtype):
    g, y = _inputs((), dtype)
    expected = _expected(g, y)
    result = _direct(g, y)
    assert isinstance(result, np.generic) and result.dtype == dtype
    assert_same(result, expected)
    public = sigmoid_backward(g, y)
    assert type(public) is type(result)
    assert_same(public, expected)
    _assert_like_ufunc(result, g, y)
    out = np.empty((), dtype)
    assert _direct(g, y, out) is out
    assert_same(out, expected)


def test_threads_are_checked_on_the_fast_path():
    g, y = _inputs((10,))
    with pytest.raises(ValueError, match="num_threads must be >= 1"):
        sigmoid_backward(g, y, num_threads=0)
    with pytest.raises(TypeError, match="num_threads must be an integer"):
        sigmoid_backward(g, y, num_threads="2")
    with pytest.raises(TypeError, match="num_threads must be an integer"):
        sigmoid_backward(g, y, num_threads=True)
    for count in (3, np.int64(2), 5000):
        assert_same(sigmoid_backward(g, y, num_threads=count), _expected(g, y))


def test_large_call_with_default_threads():
    n = 2 * _kernels.thresholds()["parallel_share_bytes"] // 4 + 5
    g, y = _inputs((n,))
    assert_same(_direct(g, y), _expected(g, y))


# ---- calls the fast path leaves to the ufunc -------------------------------------

def _partial_overlap_out():
    buf = np.random.default_rng(1).random(1001).astype(np.float32)
    return buf[1:], _inputs((1000,))[1], buf[:-1]   # out is grad_output shifted by one


def _partial_overlap_y():
    buf = np.random.default_rng(2).random(1001).astype(np.float32)
    return _inputs((1000,))[0], buf[:-1], buf[1:]


def _misaligned():
    g, y = _inputs((100,))
    raw = np.empty(g.nbytes + 1, np.uint8)
    gm = raw[1:].view(np.float32)
    gm[...] = g
    assert not gm.flags.aligned
    return gm, y, np.empty(100, np.float32)


NOT_SIMPLE = {
    "dtypes differ": lambda: (_inputs((10,))[0], _inputs((10,), np.dtype(np.float64))[1], None),
    "broadcast": lambda: (_inputs((3, 1))[0], _inputs((1, 4))[1], None),
    "out dtype differs": lambda: (*_inputs((10,)), np.empty(10, np.float64)),
    "input subclass": lambda: (_inputs((10,))[0].view(Sub), _inputs((10,))[1], None),
    "out subclass": lambda: (*_inputs((10,)), np.empty(10, np.float32).view(Sub)),
    "out overlaps grad_output": _partial_overlap_out,
    "out overlaps output": _partial_overlap_y,
    "fortran inputs, no out": lambda: (*(np.asfortranarray(a) for a in _inputs((6, 5))), None),
    "fortran inputs, C out": lambda: (*(np.asfortranarray(a) for a in _inputs((6, 5))),
                                      np.empty((6, 5), np.float32)),
    "byte-swapped": lambda: (*(a.astype(">f4") for a in _inputs((10,))), None),
    "misaligned": _misaligned,
    "strided": lambda: (_inputs((20,))[0][::2], _inputs((10,))[1], None),
    "integers": lambda: (np.arange(5, dtype=np.int32), np.arange(5, dtype=np.int32), None),
    "lists": lambda: ([1.0, 2.0], [0.5, 0.25], None),
    "python scalars": lambda: (1.0, 0.5, None),
}


@pytest.mark.parametrize("case", NOT_SIMPLE)
def test_other_calls_fall_back_and_stay_right(case):
    g, y, out = NOT_SIMPLE[case]()
    expected = _expected(np.array(g), np.array(y))  # copies: out may overlap them
    assert _direct(g, y, out) is None
    result = sigmoid_backward(g, y, out=out)
    if out is not None:
        assert result is out
        expected = expected.astype(out.dtype)
    else:
        _assert_like_ufunc(result, g, y)
    np.testing.assert_array_equal(np.asarray(result).view(type=np.ndarray), expected)


@pytest.mark.parametrize("option", [{"dtype": np.float32}, {"where": [True] * 10},
                                    {"casting": "no"}, {"order": "F"}, {"subok": False}],
                         ids=lambda o: next(iter(o)))
def test_any_other_option_is_the_ufuncs(option):
    g, y = _inputs((10,))
    out = np.zeros(10, np.float32) if "where" in option else None
    result = sigmoid_backward(g, y, out=out, **option)
    if out is None:
        _assert_like_ufunc(result, g, y, **option)
    assert_same(result, _expected(g, y))


def test_out_tuple_is_left_to_the_ufunc():
    g, y = _inputs((10,))
    out = np.empty(10, np.float32)
    assert _direct(g, y, (out,)) is None
    assert sigmoid_backward(g, y, out=(out,)) is out
    assert_same(out, _expected(g, y))


def test_read_only_out_raises_and_writes_nothing():
    g, y = _inputs((10,))
    out = np.zeros(10, np.float32)
    out.flags.writeable = False
    assert _direct(g, y, out) is None
    with pytest.raises(ValueError, match="read-only"):
        sigmoid_backward(g, y, out=out)
    assert not out.any()


# ---- memory --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_no_temporaries_for_contiguous_same_dtype_inputs(dtype):
    """tracemalloc sees NumPy's data allocations: without ``out`` the peak
    is the result (plus the array object), with ``out`` nothing at all.
    Sizes on both sides of the parallel threshold."""
    for n in (1000, 300_000):
        g, y = _inputs((n,), dtype)
        out = np.empty_like(g)
        sigmoid_backward(g, y, out=out)  # warm up: nothing lazy may count
        slack = 1024  # the ndarray object itself
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            result = sigmoid_backward(g, y)
            peak = tracemalloc.get_traced_memory()[1] - base
            assert result.nbytes <= peak <= result.nbytes + slack, (n, peak)
            del result
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            sigmoid_backward(g, y, out=out)
            peak = tracemalloc.get_traced_memory()[1] - base
            assert peak <= slack, (n, peak)
        finally:
            tracemalloc.stop()


def test_compute_into_refuses_partial_overlap():
    from sigmoid_backward._kernel._kernels import compute_into
    a = np.arange(11.0)
    y = np.full(10, 2.0)
    before = a.copy()
    with pytest.raises(ValueError, match="^compute_into: g: out partly overlaps"):
        compute_into(a[:-1], y, a[1:], 1)
    assert (a == before).all()
    for args, named in [((a[1:], y, y.astype(np.float32)), "g: operands must share one dtype"),
                        ((a[1:], y[:5], a[1:]), "y: operands must have one shape"),
                        ((a[1:], y, a[::-1][:10]), "out: operands must be aligned")]:
        with pytest.raises((TypeError, ValueError), match=f"^compute_into: {named}"):
            compute_into(*args, 1)
    compute_into(a[1:], y, a[1:], 1)  # the very same view: in place
    assert (a[1:] == before[1:] * -1 * 2).all()
