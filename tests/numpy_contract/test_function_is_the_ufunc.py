"""The function is the ufunc for every input: the same type, dtype and
values, ``__array_wrap__`` and ``__array_priority__`` included, and the
same refusals.  Its additions (num_threads=, buffer outs, DLPack imports,
named errors) are tested in test_function.py and test_out_buffers.py."""
import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward, ufunc

from helpers import assert_same


class Wraps:
    """Has data, and wraps every ufunc result it takes part in."""
    __array_priority__ = 10.0

    def __init__(self, data):
        self.data = np.asarray(data)

    def __array__(self, dtype=None, copy=None):
        return self.data

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return ("wrapped", type(self).__name__, array, context is not None)


class WrapsHigher(Wraps):
    __array_priority__ = 20.0


class WrapsNone(Wraps):
    """NumPy's test_none_wrap: a wrap that returns None."""

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return None


class OnlyArray:
    def __array__(self, dtype=None, copy=None):
        return np.array([0.25, 0.5])


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and a[:2] == b[:2] and a[3] == b[3]
        _same(a[2], b[2])
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert type(a) is type(b)
        assert_same(a, b)
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b))


CASES = {
    "list": ([1.0, 2.0], [0.25, 0.5]),
    "nested-list-and-scalar": ([[1.0], [2.0]], 0.5),
    "tuple": ((1.0, 2.0), np.float32(0.5)),
    "array-like": (OnlyArray(), 2.0),
    "wrap": (Wraps([1.0, 2.0]), [0.5, 0.25]),
    "wrap-second": (np.ones(2), Wraps([0.5, 0.25])),
    "priority": (Wraps([1.0, 2.0]), WrapsHigher([0.5, 0.25])),
    "priority-reversed": (WrapsHigher([1.0, 2.0]), Wraps([0.5, 0.25])),
    "none-wrap": (WrapsNone([1.0, 2.0]), 0.5),
    "numpy-scalars": (np.float32(2.0), np.float64(0.5)),
    "0-d-list": ([[2.0]], [[0.5]]),
}


@pytest.mark.parametrize("case", CASES)
def test_same_result_as_the_ufunc(case):
    g, y = CASES[case]
    _same(sigmoid_backward(g, y), ufunc(g, y))
    _same(sigmoid_backward(g, y, num_threads=1), ufunc(g, y))


def test_wrap_gets_the_ufunc_context():
    result = sigmoid_backward(Wraps([1.0, 2.0]), 0.5)
    assert result[:2] == ("wrapped", "Wraps") and result[3] is True
    assert_same(result[2], np.array([0.25, 0.5]))


def test_overrides_returning_not_implemented_give_numpys_error():
    class A:
        def __array_ufunc__(self, *args, **kwargs):
            return NotImplemented

    for args in [(A(), 1.0), (A(), object())]:
        with pytest.raises(TypeError) as ours:
            sigmoid_backward(*args)
        with pytest.raises(TypeError) as theirs:
            ufunc(*args)
        assert str(ours.value) == str(theirs.value)
