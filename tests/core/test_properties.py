"""Hypothesis: for any shapes that broadcast, any dtypes and layouts, the
fast function equals the slow twin bit for bit."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sigmoid_backward import reference, sigmoid_backward

from dtypes_catalogue import ALL_DTYPES
from helpers import assert_same

dtypes = st.sampled_from(ALL_DTYPES)
elements = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                     st.sampled_from([0.0, -0.0, 1.0, 5e-324, 1e-40, 6e-8, 65504.0, 3.4e38]))


def _fill(data, dtype, shape):
    reals = data.draw(hnp.arrays(np.float64, shape, elements=elements))
    with np.errstate(all="ignore"):
        a = reals.astype(dtype)
        if np.dtype(dtype).kind == "c":
            imags = data.draw(hnp.arrays(np.float64, shape, elements=elements))
            a = (a + 1j * imags.astype(a.real.dtype)).astype(dtype)
    return a


def _view(data, a):
    """The same values in a random layout: transposed, strided or reversed."""
    choice = data.draw(st.sampled_from(["as-is", "fortran", "strided", "reversed"]))
    if choice == "fortran":
        return np.array(a, order="F")
    if choice == "strided" and a.ndim:
        big = np.repeat(a, 2, axis=-1)
        return big[..., ::2]
    if choice == "reversed" and a.ndim:
        return np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    return a


@settings(max_examples=150, deadline=None)
@given(data=st.data(),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=5, max_side=6),
       gd=dtypes, yd=dtypes, with_out=st.booleans())
def test_equals_reference_for_any_broadcast(data, shapes, gd, yd, with_out):
    gs, ys = shapes.input_shapes
    g = _view(data, _fill(data, gd, gs))
    y = _view(data, _fill(data, yd, ys))
    expected = reference.sigmoid_backward(g, y)
    if with_out:
        out = np.empty(shapes.result_shape, expected.dtype)
        assert sigmoid_backward(g, y, out=out) is out
        assert_same(out, expected)
    else:
        assert_same(np.asarray(sigmoid_backward(g, y)), expected)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=40),
       dtype=dtypes, threads=st.integers(1, 4))
def test_thread_count_never_changes_bits(data, shape, dtype, threads):
    g, y = _fill(data, dtype, shape), _fill(data, dtype, shape)
    assert_same(sigmoid_backward(g, y, num_threads=threads), sigmoid_backward(g, y, num_threads=1))
