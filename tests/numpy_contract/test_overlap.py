"""Everything NumPy's inner-loop contract lets a ufunc loop receive, computed
as NumPy defines it, on one thread and on several:

- ``out=`` overlapping an input, ahead of it or behind it, at strides 1 and
  2 (NumPy hands a forward-safe overlap to the loop without a copy);
- ``reduce``, ``accumulate`` and ``reduceat``: left folds, whose loops get
  out itself, or out's previous element, as the first input.

The expected values come from the reference on copies, or one fold step at
a time (numpy_contract.py's folds, which test_numpy_contract.py checks
against np.subtract's), bit for bit."""
import numpy as np
import pytest

import sigmoid_backward as sb
from sigmoid_backward import reference
from sigmoid_backward._kernel import _kernels

from dtypes_catalogue import ALL_DTYPES
from helpers import assert_same, random_array
from numpy_contract import accumulate, fold, reduceat


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    """Thread counts, with thresholds that split even small calls."""
    with _kernels.settings(parallel_share_bytes=64):
        yield request.param


CALLS = {"function": lambda g, y, out, n: sb.sigmoid_backward(g, y, out=out, num_threads=n),
         "ufunc": lambda g, y, out, n: sb.ufunc(g, y, out=out)}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("shift", [1, -1, 3, -64],
                         ids=lambda s: f"input-{'ahead' if s > 0 else 'behind'}{abs(s)}")
@pytest.mark.parametrize("which", ["grad_output", "output"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_out_overlapping_an_input(dtype, which, shift, stride, call, threads):
    n = 20_000
    rng = np.random.default_rng(abs(shift) * 7 + stride)
    base = random_array(rng, (n + abs(shift)) * stride, dtype, scale=2.0)
    other = random_array(rng, n, dtype, scale=2.0)
    lo, hi = (shift, 0) if shift > 0 else (0, -shift)
    # the input starts `shift` elements ahead of out (or behind it)
    moving = base[lo * stride:(lo + n) * stride:stride]
    out = base[hi * stride:(hi + n) * stride:stride]
    assert np.shares_memory(moving, out)
    g, y = (moving, other) if which == "grad_output" else (other, moving)
    expected = reference.sigmoid_backward(g.copy(), y.copy())
    result = CALLS[call](g, y, out, threads)
    assert result is out
    assert_same(out, expected, f"{which} shifted by {shift}, stride {stride}")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_out_one_element_behind_at_default_thresholds(dtype):
    # 200,000 elements, the default thresholds, two threads
    x = np.random.default_rng(0).random(200_001).astype(dtype)
    y = np.full(200_000, 0.5, dtype)
    want = reference.sigmoid_backward(x[1:].copy(), y)
    sb.sigmoid_backward(x[1:], y, out=x[:-1], num_threads=2)
    assert_same(x[:-1], want)


SHAPES = [((3000,), 0), ((400, 7), 0), ((7, 400), 1), ((7, 400), 0), ((400, 7), 1)]


@pytest.mark.parametrize("shape,axis", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_accumulate_is_a_left_fold(dtype, shape, axis, threads):
    a = random_array(np.random.default_rng(1), shape, dtype, scale=1.5)
    assert_same(sb.ufunc.accumulate(a, axis=axis), accumulate(a, axis), f"axis {axis}")


@pytest.mark.parametrize("shape,axis", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_reduce_is_a_left_fold(dtype, shape, axis, threads):
    a = random_array(np.random.default_rng(2), shape, dtype, scale=1.5)
    expected = fold(a, axis)
    assert_same(sb.ufunc.reduce(a, axis=axis), expected, f"axis {axis}")
    assert_same(sb.ufunc.reduce(a, axis=axis, keepdims=True),
                np.expand_dims(expected, axis), "keepdims")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_reduceat_folds_each_slice(dtype, threads):
    a = random_array(np.random.default_rng(3), (2000, 3), dtype, scale=1.5)
    indices = [0, 5, 5, 700, 1999, 3]
    # NumPy's rule: a slice that does not go forward is its first row
    assert_same(sb.ufunc.reduceat(a, indices, axis=0), reduceat(a, indices))


def test_reduce_of_a_short_list():
    a = np.array([2, 0.5, 0.25, 3, -1, 0.75])
    assert sb.ufunc.reduce(a) == fold(a) == 0.2109375


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_large_threaded_accumulate_along_rows(dtype):
    # Rows long enough for several threads at the default thresholds.
    a = random_array(np.random.default_rng(4), (4, 300_000), dtype, scale=1.5)
    assert_same(sb.ufunc.accumulate(a, axis=0), accumulate(a))
    assert_same(sb.ufunc.reduce(a, axis=0), fold(a))


def test_out_whose_elements_overlap_each_other():
    # NumPy lets a broadcast out through when asked to: the last element's
    # result is what remains, as a forward loop leaves it.
    g = np.arange(1.0, 300_001.0)
    y = np.full_like(g, 0.25)
    out = np.lib.stride_tricks.as_strided(np.zeros(1), g.shape, (0,))
    sb.ufunc(g, y, out=out)
    assert out[0] == g[-1] * 0.75 * 0.25
