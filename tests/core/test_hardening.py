"""Hardening of the NumPy function: fuzzing against the reference, Python
threads, leaks and hostile inputs (Ctrl-C: test_interrupts.py).

The fuzzing runs a short budget by default; ``python -m pytest --runslow``
(or ``-m slow``) adds a 10,000-example run of the same property.
"""
import gc
import os
import re
import sys

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sigmoid_backward import reference
from sigmoid_backward import sigmoid_backward as sb

from dtypes_catalogue import ALL_DTYPES, BFLOAT16
from helpers import assert_same, rss_bytes, run_threads, under_asan, zero_strided
from hostile import (
    ArrayInterfaceRaises,
    ArrayRaises,
    BufferRaises,
    DLPackRaises,
    SequenceRaises,
    released_memoryview,
)

OTHER_INPUTS = [np.dtype(d) for d in ("bool", "int8", "int32", "uint16")]  # -> float64
OUT_DTYPES = [*ALL_DTYPES, np.dtype("int32")]  # an integer out is an error


# --- generating ------------------------------------------------------------

def _real(dt):
    return np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt


@st.composite
def values(draw, dtype, shape):
    """Every bit pattern (NaN payloads, infinities, subnormals), or ordinary values."""
    real = _real(dtype)

    def part():
        if real.kind in "biu":
            return draw(hnp.arrays(real, shape))
        if draw(st.booleans()):
            return draw(hnp.arrays(np.dtype(f"u{real.itemsize}"), shape)).view(real)
        nice = st.floats(-4, 4) | st.sampled_from([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan])
        return draw(hnp.arrays(np.float64, shape, elements=nice)).astype(real)

    if dtype.kind != "c":
        return part()
    arr = np.empty(shape, dtype)
    arr.real, arr.imag = part(), part()
    return arr


@st.composite
def laid_out(draw, arr):
    """``arr``'s values in another memory layout: steps of +-1 or +-2 per
    dimension, C or Fortran order, byte-swapped, or misaligned."""
    dtype = arr.dtype
    if dtype != BFLOAT16 and dtype.itemsize > 1 and draw(st.booleans()):
        dtype = dtype.newbyteorder()
    steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in arr.shape]
    big_shape = tuple(n * abs(s) for n, s in zip(arr.shape, steps, strict=True))
    order = draw(st.sampled_from("CF"))
    if order == "C" and dtype.itemsize > 1 and draw(st.booleans()):
        count = int(np.prod(big_shape))
        raw = np.empty(count * dtype.itemsize + 1, np.uint8)[1:]  # odd address
        big = raw.view(dtype).reshape(big_shape)
    else:
        big = np.empty(big_shape, dtype, order=order)
    view = big[tuple(slice(None, None, s) for s in steps) + (...,)]  # 0-d stays an array
    view[...] = arr
    return view


def _operand(draw, shape):
    if draw(st.integers(0, 9)) == 0:  # a weak Python scalar
        return draw(st.sampled_from([0.5, -2.0, 3, True, 1 - 0.5j, float("nan")]))
    dtype = draw(st.sampled_from([*ALL_DTYPES, *OTHER_INPUTS]))
    return draw(laid_out(draw(values(dtype, shape))))


@st.composite
def cases(draw):
    """(grad_output, output, kwargs) for one call, ``out`` included."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5))
    g = _operand(draw, shapes.input_shapes[0])
    y = _operand(draw, shapes.input_shapes[1])
    kwargs = {}
    arrays = [v for v in (g, y) if isinstance(v, np.ndarray)]
    if draw(st.booleans()):
        # NumPy's cast table, where complex never becomes real (not even
        # bfloat16, which ml_dtypes' table would allow: test_ufunc.py)
        complex_input = any(type(v) is complex or np.dtype(getattr(v, "dtype", float)).kind == "c"
                            for v in (g, y))
        castable = [d for d in ALL_DTYPES if all(np.can_cast(a.dtype, d, "same_kind")
                                                 for a in arrays)
                    and (d.kind == "c" or not complex_input)]
        if castable:
            kwargs["dtype"] = draw(st.sampled_from(castable))
    if draw(st.integers(0, 2)) == 2:
        kwargs["num_threads"] = 2
    how = draw(st.sampled_from(["none", "out", "out", "in place"]))
    if how == "out":
        shape = shapes.result_shape
        if draw(st.integers(0, 9)) == 0:  # a wrong shape: must raise
            shape = shape + (2,)
        out = draw(laid_out(np.zeros(shape, draw(st.sampled_from(OUT_DTYPES)))))
        if draw(st.integers(0, 9)) == 0:
            out.flags.writeable = False  # read-only: must raise
        kwargs["out"] = out
    elif how == "in place":
        kwargs["out"] = draw(st.sampled_from(arrays)) if arrays else None
    return g, y, kwargs


def _expected_error(g, y, out, dtype):
    """Does the call refuse ``out``?  NumPy's rules, as for any ufunc: the
    inputs broadcast to out's shape, out is writeable, and the result casts
    to out's dtype under 'same_kind' (NumPy's cast table, ml_dtypes' for
    bfloat16); and complex is never cast to ml_dtypes' types."""
    dt = np.dtype(dtype) if dtype is not None else reference.result_dtype(g, y)
    shape = np.broadcast_shapes(np.shape(g), np.shape(y))
    try:
        fits = np.broadcast_shapes(shape, out.shape) == out.shape
    except ValueError:
        fits = False
    return (not fits or not out.flags.writeable
            or not np.can_cast(dt, out.dtype, "same_kind")
            or (dt.kind == "c" and out.dtype.type.__module__ == "ml_dtypes"))


def check_case(g, y, kwargs):
    """The property: the reference's result, cast to ``out``'s dtype; or, for
    an invalid ``out``, an error with nothing written anywhere."""
    with np.errstate(all="ignore"):  # NaN, inf and overflowing casts are inputs here
        _check_case(g, y, kwargs)


def _check_case(g, y, kwargs):
    inputs_before = [a.copy() for a in (g, y) if isinstance(a, np.ndarray)]
    out = kwargs.get("out")
    try:
        expected = reference.sigmoid_backward(g, y, dtype=kwargs.get("dtype"))
    except TypeError:   # a pair the reference refuses (float8 with int8): refused too
        out_before = None if out is None else out.copy()
        # ... unless an out= that is wrong too (read-only, of another shape)
        # is reported first, as NumPy checks out= before it promotes.
        with pytest.raises(TypeError if out is None else (TypeError, ValueError)):
            sb(g, y, **kwargs)
        assert out is None or out.tobytes() == out_before.tobytes()
        return
    if out is None:
        kwargs.pop("out", None)
        assert_same(sb(g, y, **kwargs), expected)
    else:
        out_before = out.copy()
        if _expected_error(g, y, out, kwargs.get("dtype")):
            with pytest.raises((TypeError, ValueError)):
                sb(g, y, **kwargs)
            assert out.tobytes() == out_before.tobytes()
            return
        assert sb(g, y, **kwargs) is out
        assert_same(out, np.broadcast_to(expected, out.shape).astype(out.dtype))
    arrays = [a for a in (g, y) if isinstance(a, np.ndarray)]
    for before, now in zip(inputs_before, arrays, strict=True):
        if now is not out:
            assert now.tobytes() == before.tobytes()  # inputs are never modified


FUZZ = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                  HealthCheck.data_too_large])


@settings(max_examples=300, **FUZZ)
@given(cases())
def test_fuzz_against_reference(case):
    check_case(*case)


@pytest.mark.slow
@settings(max_examples=10_000, **FUZZ)
@given(cases())
def test_fuzz_against_reference_10000_examples(case):
    check_case(*case)


# --- concurrency -----------------------------------------------------------

def test_8_python_threads_x_200_calls_are_exact():
    rng = np.random.default_rng(8)
    f32 = rng.standard_normal(70_000).astype(np.float32)  # big enough for OpenMP
    work = [  # (call, expected): direct, buffered, broadcast, out=, 16-bit, complex
        lambda: sb(f32, f32[::-1]),
        lambda: sb(f32[::2], 0.25, num_threads=2),
        lambda: sb(f32.reshape(700, 100)[:, :1], f32[:100].astype(np.float16)),
        lambda: sb(f32.astype(BFLOAT16), f32.astype(BFLOAT16), num_threads=1),
        lambda: sb(f32.view(np.complex64), f32[:35_000].astype(np.complex128)),
        lambda: sb(f32.astype(np.float16), f32.astype(np.float16)),
    ]
    expected = [call().tobytes() for call in work]
    outs = [np.empty(70_000, np.float64) for _ in range(8)]
    failures = []

    def worker(index):
        for i in range(200):
            k = (index + i) % (len(work) + 1)
            if k == len(work):  # each thread also writes its own out=
                sb(f32, f32, out=outs[index])
                got, want = outs[index].tobytes(), sb(f32, f32).astype(np.float64).tobytes()
            else:
                got, want = work[k]().tobytes(), expected[k]
            if got != want:
                failures.append((index, i, k))

    assert run_threads(worker, 8, barrier=True) == []
    assert failures == []


# --- leaks -----------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
@pytest.mark.skipif(under_asan(), reason="AddressSanitizer's quarantine of freed memory "
                    "grows the resident memory this test bounds")
def test_refcounts_and_memory_are_stable_over_100000_calls():
    g = np.ones(4, np.float32)
    y = np.full(4, 0.5, np.float32)
    out = np.empty(4, np.float32)
    bad = np.array(["x"] * 4)

    def error_call():
        try:
            sb(g, bad)
        except TypeError:
            pass

    calls = [lambda: sb(g, y), lambda: sb(g, y, out=out), lambda: sb(g, y[:1]),
             lambda: sb(2.0, y, dtype=BFLOAT16), lambda: sb([1.0, 2.0, 3.0, 4.0], y),
             error_call]
    for _ in range(2_000):  # warm up caches and free lists
        for call in calls:
            call()
    gc.collect()
    refs = [sys.getrefcount(a) for a in (g, y, out, bad)]
    blocks = sys.getallocatedblocks()
    rss = rss_bytes()
    for i in range(100_000):
        calls[i % len(calls)]()
    gc.collect()
    assert [sys.getrefcount(a) for a in (g, y, out, bad)] == refs
    # A leak of one object per call would be >= 16,000 blocks here.
    assert sys.getallocatedblocks() - blocks < 1_000
    assert rss_bytes() - rss < 4 * 2**20


# --- hostile inputs --------------------------------------------------------

class ArrayInterfaceTooBig:
    """Claims 2**80 elements: NumPy must refuse before reading any memory."""
    __array_interface__ = {"shape": (2**40, 2**40), "typestr": "<f4",
                           "data": (0, True), "version": 3}


def test_dims_whose_product_overflows():
    with pytest.raises(ValueError, match="^grad_output: cannot make an array of it"):
        sb(ArrayInterfaceTooBig(), 1.0)
    # Each shape fits, their broadcast does not.
    tall, wide = zero_strided((2**32, 1)), zero_strided((1, 2**32))
    with pytest.raises(ValueError, match="too large"):
        sb(tall, wide)
    # 2**60 elements fit in intp but not in memory: refused before any work.
    huge = zero_strided((2**30, 2**30))
    with pytest.raises(MemoryError):
        sb(huge, huge)


@pytest.mark.parametrize("n", [3, 300_000])
def test_zero_stride_out_keeps_the_last_result_as_numpy_does(n):
    """Every result lands on one element: as in NumPy, the last one wins,
    whatever the thread count (the kernel runs such an out serially)."""
    g = np.linspace(1, 2, n, dtype=np.float32)
    y = np.full(n, 2.0, np.float32)
    expected = reference.sigmoid_backward(g[-1:], y[-1:])[0]
    for threads in (1, 2):
        storage = np.zeros(1, np.float32)
        out = np.lib.stride_tricks.as_strided(storage, shape=(n,), strides=(0,),
                                              writeable=True)
        sb(g, y, out=out, num_threads=threads)
        assert storage[0] == expected


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_negative_strides(dtype):
    a = np.linspace(-2, 2, 24).astype(dtype).reshape(4, 6)
    y = np.linspace(0, 1, 24).astype(dtype).reshape(4, 6)
    assert_same(sb(a[::-1, ::-2], y[:, ::-2]),
                reference.sigmoid_backward(a[::-1, ::-2].copy(), y[:, ::-2].copy()))
    out = np.zeros((8, 6), dtype)[::-2]
    sb(a, y[::-1], out=out)
    assert_same(out, reference.sigmoid_backward(a, y[::-1].copy()))
    # Written in place through a reversed view of an input: each input element
    # must be read before it is overwritten, also across buffered blocks.
    for n in (24, 300_000):
        a = np.linspace(-2, 2, n).astype(dtype)
        y = np.linspace(0, 1, n).astype(dtype)
        expected = reference.sigmoid_backward(a, y)[::-1]
        sb(a, y, out=a[::-1])
        assert_same(a, expected)


@pytest.mark.parametrize("ragged, name", [
    ([[1.0, 2.0], [3.0]], "grad_output"),
    ([[[0.5]], [0.5, 0.5]], "grad_output"),
    ([1.0, [2.0, 3.0]], "grad_output"),
])
def test_ragged_lists(ragged, name):
    with pytest.raises(ValueError, match=f"^{name}: cannot make an array of it"):
        sb(ragged, 0.5)
    out = np.zeros(2)
    with pytest.raises(ValueError, match="^output: cannot make an array of it"):
        sb(np.ones(2), ragged, out=out)
    assert not out.any()


HOSTILE = [ArrayRaises, ArrayInterfaceRaises, DLPackRaises, SequenceRaises]


@pytest.mark.parametrize("cls", HOSTILE, ids=lambda c: c.__name__)
def test_objects_whose_export_raises(cls):
    out = np.zeros(3)
    for args, name in (((cls(), np.ones(3)), "grad_output"), ((np.ones(3), cls()), "output")):
        with pytest.raises(TypeError, match=f"^{name}: cannot .* {cls.__name__}.*export failed"):
            sb(*args, out=out)
    assert not out.any()


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ is Python 3.12+ (PEP 688)")
def test_buffer_export_raises():
    with pytest.raises(TypeError, match="^grad_output: cannot .*export failed"):
        sb(BufferRaises(), 1.0)


def test_python_scalars_that_do_not_fit():
    # NumPy's own TypeError, whose words depend on its version.
    for fn in (sb, np.multiply):
        with pytest.raises(TypeError, match="complex"):
            fn(np.ones(2, np.float32), 1 - 2j, dtype=np.float32)
    with pytest.raises(OverflowError, match="^grad_output: the Python int does not fit in float64"):
        sb(10**400, np.ones(2))
    # Within float64's range but not float16's: NEP 50 casts it, to inf, as NumPy does.
    with np.errstate(over="ignore"):
        assert np.isposinf(sb(2**70, np.full(1, 0.5, np.float16))).all()


def test_released_memoryview_and_objects():
    with pytest.raises(TypeError, match="^output: cannot read the buffer of a memoryview: "
                                        "operation forbidden on released memoryview"):
        sb(1.0, released_memoryview())
    with pytest.raises(TypeError, match="^" + re.escape("sigmoid_backward: grad_output's dtype, "
                                                        "dtype('O'), is not supported")):
        sb(np.array([1.0, None]), 1.0)
