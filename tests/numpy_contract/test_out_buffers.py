"""``out=`` takes any writable buffer-protocol object: the function writes
through an array view of its memory and returns the object itself.  Buffers
that are read-only, untyped or of no NumPy dtype are refused with an error
that names ``out``, and nothing is written."""
import array
import sys

import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward

from helpers import assert_same, numpy_refusal

G = np.array([1.0, 2.0, 3.0, 4.0])
Y = np.array([0.5, 0.25, 0.75, 2.0])


class Exports:
    """A PEP 688 object: Python 3.12+ reads its buffer through __buffer__."""

    def __init__(self, n):
        self.storage = bytearray(8 * n)

    def __buffer__(self, flags):
        return memoryview(self.storage).cast("d")


def _written(obj):
    return np.frombuffer(memoryview(obj).cast("B"), np.float64)


@pytest.mark.parametrize("make", [
    lambda: memoryview(bytearray(32)).cast("d"),
    lambda: array.array("d", [0.0] * 4),
    pytest.param(lambda: Exports(4), marks=pytest.mark.skipif(
        sys.version_info < (3, 12), reason="__buffer__ is Python 3.12+ (PEP 688)")),
], ids=["memoryview", "array.array", "__buffer__"])
@pytest.mark.parametrize("as_tuple", [False, True])
def test_a_writable_buffer_is_written_and_returned(make, as_tuple):
    out = make()
    result = sigmoid_backward(G, Y, out=(out,) if as_tuple else out)
    assert result is out
    assert_same(_written(out if not isinstance(out, Exports) else out.storage),
                reference.sigmoid_backward(G, Y))


def test_a_float32_buffer_gets_the_cast_result():
    out = array.array("f", [0.0] * 4)
    sigmoid_backward(G, Y, out=out)
    assert_same(np.asarray(out), reference.sigmoid_backward(G, Y).astype(np.float32))


def test_a_read_only_buffer_is_refused():
    out = memoryview(bytes(32)).cast("d")
    with pytest.raises(ValueError, match="^out: the buffer of the memoryview is read-only"):
        sigmoid_backward(G, Y, out=out)


@pytest.mark.parametrize("make", [bytearray, lambda n: memoryview(bytearray(n))],
                         ids=["bytearray", "memoryview-of-bytearray"])
def test_raw_bytes_are_refused(make):
    out = make(32)
    with pytest.raises(TypeError, match=r"^out: a \w+ holds raw bytes.*np.frombuffer"):
        sigmoid_backward(G, Y, out=out)
    assert not any(bytes(out))


def test_a_buffer_of_another_kind_is_numpys_cast_error():
    out = array.array("i", [7] * 4)
    kind, message = numpy_refusal(lambda ufunc: ufunc(G, Y, out=np.zeros(4, np.intc)))
    with pytest.raises(kind, match=message):
        sigmoid_backward(G, Y, out=out)
    assert out.tolist() == [7] * 4


def test_not_a_buffer():
    for out in ([0.0] * 4, object(), "abcd"):
        with pytest.raises(TypeError, match="^out: must be an ndarray or a writable"):
            sigmoid_backward(G, Y, out=out)


def test_a_buffer_of_the_wrong_shape():
    out = array.array("d", [0.0] * 3)
    with pytest.raises(ValueError):
        sigmoid_backward(G, Y, out=out)
    assert out.tolist() == [0.0] * 3
