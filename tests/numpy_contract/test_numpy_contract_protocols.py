"""NumPy's own tests of the ufunc protocols, with ours as the binary ufunc:
``__array_wrap__``, ``__array_priority__``, ``__array_ufunc__`` overrides,
``out=`` and subclasses (``test_numpy_contract.py`` says how and why).

As they are, from ``test_umath.py``: ``TestSpecialMethods``'s ``test_wrap``,
``test_wrap_out``, ``test_priority``, ``test_failing_wrap``,
``test_none_wrap``, ``test_default_prepare``, ``test_ufunc_override``,
``test_ufunc_override_mro``, ``test_ufunc_override_methods``,
``test_ufunc_override_out``, ``test_ufunc_override_exception``,
``test_ufunc_override_disabled``, ``test_ufunc_override_with_super``;
``TestOut``'s ``test_out_subok`` and ``test_out_wrap_subok``;
``test_outer_subclass_preserve``, ``test_outer_bad_subclass``,
``test_outer_exceeds_maxdims``; and ``test_ufunc.py``'s
``TestUfunc.test_array_wrap_array_priority``.  The function runs those
that only call the ufunc.  Restated: ``test_wrap_with_iterable``,
``test_ufunc_override_not_implemented`` and ``test_array_ufunc_direct_call``
(they hard-code ``np.multiply``'s values or ``np.add``'s name), and, for
the function, ``test_wrap``, ``test_ufunc_override`` and
``test_failing_wrap``: NumPy checks that the callable it was given is
the one ``__array_wrap__`` and ``__array_ufunc__`` see, which for the
function is the ufunc it calls.

Left out: ``test_priority_with_scalar`` (it calls no ufunc by name),
``test_failing_out_wrap`` (two outputs), ``test_array_too_many_args``
(``np.sum``), ``test_gufunc_override``, ``test_ufunc_override_where``
(``np.negative``) and ``test_ufunc_docstring`` (``np.add``'s own
docstring; ``test_numpy_contract_calls.py`` checks ``__qualname__``).
"""
import fnmatch

import numpy as np
import pytest

import sigmoid_backward as sb
from sigmoid_backward import reference

from helpers import assert_same
from numpy_contract import BINARIES, FUNCTION, run_numpy_test

BOTH, UFUNC = ("ufunc", "function"), ("ufunc",)
AS_THEY_ARE = [
    # (module, test, the names its body calls our binary by, which binaries)
    ("test_umath", "TestSpecialMethods.test_wrap", ["minimum"], UFUNC),
    ("test_umath", "TestSpecialMethods.test_wrap_out", ["add"], BOTH),
    ("test_umath", "TestSpecialMethods.test_priority", ["minimum"], BOTH),
    ("test_umath", "TestSpecialMethods.test_failing_wrap", ["maximum"], UFUNC),
    ("test_umath", "TestSpecialMethods.test_none_wrap", ["maximum"], BOTH),
    ("test_umath", "TestSpecialMethods.test_default_prepare", ["minimum"], BOTH),
    ("test_umath", "TestSpecialMethods.test_ufunc_override", ["multiply"], UFUNC),
    ("test_umath", "TestSpecialMethods.test_ufunc_override_mro", ["multiply"], BOTH),
    ("test_umath", "TestSpecialMethods.test_ufunc_override_methods", ["multiply"], UFUNC),
    ("test_umath", "TestSpecialMethods.test_ufunc_override_out", ["multiply"], BOTH),
    ("test_umath", "TestSpecialMethods.test_ufunc_override_exception", ["divide"], BOTH),
    ("test_umath", "TestSpecialMethods.test_ufunc_override_disabled", ["add"], BOTH),
    ("test_umath", "TestSpecialMethods.test_ufunc_override_with_super", ["add"], UFUNC),
    ("test_umath", "TestOut.test_out_subok", ["add"], BOTH),
    ("test_umath", "TestOut.test_out_wrap_subok", ["add"], BOTH),
    ("test_umath", "test_outer_bad_subclass", ["add"], UFUNC),
    ("test_umath", "test_outer_exceeds_maxdims", ["add"], UFUNC),
    ("test_ufunc", "TestUfunc.test_array_wrap_array_priority", ["add"], BOTH),
]


@pytest.mark.parametrize("module, qualname, names, binary", [
    pytest.param(module, qualname, names, binary.values[0], id=f"{qualname}[{binary.id}]")
    for module, qualname, names, which in AS_THEY_ARE
    for binary in BINARIES if binary.id in which])
def test_protocols_as_numpy_tests_them(monkeypatch, module, qualname, names, binary):
    run_numpy_test(monkeypatch, module, qualname, binary, names)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("arr", [[0, 1], [[0, 1]], [[0, 1], [2, 5]]], ids=str)
def test_outer_subclass_preserve(monkeypatch, arr):
    """NumPy's test as it is, with its parameters (np.arange(2) and two
    np.matrix): ``outer`` keeps the subclass."""
    arr = np.arange(2) if arr == [0, 1] else np.matrix(arr)
    run_numpy_test(monkeypatch, "test_umath", "test_outer_subclass_preserve", sb.ufunc,
                   ["multiply"], arr=arr)


# ---- restated ------------------------------------------------------------------

class _WithWrap:
    """test_wrap's ``with_wrap``: an array-like whose ``__array_wrap__``
    returns a new object recording what it was given."""

    def __array__(self, dtype=None, copy=None):
        return np.zeros(1)

    def __array_wrap__(self, arr, context, return_scalar):
        wrapped = _WithWrap()
        wrapped.arr, wrapped.context = arr, context
        return wrapped


@pytest.mark.parametrize("binary", BINARIES)
def test_wrap(binary):
    """NumPy's test_wrap: an input's ``__array_wrap__`` gets the result and
    the context (the ufunc, the inputs, the output's index); for the
    function the ufunc is ``sigmoid_backward.ufunc``, the one it calls."""
    a = _WithWrap()
    x = binary(a, a)
    assert type(x) is _WithWrap
    assert_same(x.arr, np.zeros(1))
    func, args, i = x.context
    assert func is sb.ufunc
    assert args == (a, a) and i == 0


@pytest.mark.parametrize("binary", BINARIES)
def test_ufunc_override(binary):
    """NumPy's test_ufunc_override: ``__array_ufunc__`` wins over a higher
    ``__array_priority__`` and gets the ufunc, ``'__call__'``, the inputs and
    only the options given."""
    class A:
        def __array_ufunc__(self, func, method, *inputs, **kwargs):
            return self, func, method, inputs, kwargs

    class MyNDArray(np.ndarray):
        __array_priority__ = 100

    a = A()
    b = np.array([1]).view(MyNDArray)
    assert binary(a, b) == (a, sb.ufunc, "__call__", (a, b), {})
    assert binary(b, b, out=a) == (a, sb.ufunc, "__call__", (b, b), {"out": (a,)})


@pytest.mark.parametrize("binary", BINARIES)
def test_failing_wrap(binary):
    """NumPy's test_failing_wrap, the call (the ufunc's reduce runs as it is
    above): what ``__array_wrap__`` raises, the call raises."""
    class A:
        def __array__(self, dtype=None, copy=None):
            return np.zeros(2)

        def __array_wrap__(self, arr, context, return_scalar):
            raise RuntimeError

    with pytest.raises(RuntimeError):
        binary(A(), A())


@pytest.mark.parametrize("binary", BINARIES)
def test_wrap_with_iterable(binary):
    """NumPy's test_wrap_with_iterable (np.multiply's values there): an
    ndarray subclass with a priority and a tuple give that subclass."""
    class WithWrap(np.ndarray):
        __array_priority__ = 10

        def __new__(cls):
            return np.asarray(1.0).view(cls).copy()

        def __array_wrap__(self, arr, context, return_scalar):
            return arr.view(type(self))

    x = binary(WithWrap(), (1, 2, 3))
    assert isinstance(x, WithWrap)
    assert_same(x.view(np.ndarray), reference.sigmoid_backward(np.float64(1), [1.0, 2.0, 3.0]))


@pytest.mark.parametrize("binary", BINARIES)
def test_ufunc_override_not_implemented(binary):
    """NumPy's test (``<ufunc 'add'>`` there): when every override returns
    NotImplemented, the TypeError names the ufunc, the call and the types."""
    class A:
        def __array_ufunc__(self, *args, **kwargs):
            return NotImplemented

    msg = ("operand type(s) all returned NotImplemented from "
           "__array_ufunc__(<ufunc 'sigmoid_backward'>, '__call__', <*>, <object *>, "
           "out=(1,)): 'A', 'object', 'int'")
    with pytest.raises(TypeError, match=fnmatch.translate(msg)):
        binary(A(), object(), out=1)
    with pytest.raises(TypeError, match="all returned NotImplemented"):
        binary(A(), A())


def test_array_ufunc_direct_call():
    """NumPy's test (``a + a`` there): ``ndarray.__array_ufunc__`` called
    directly with our ufunc computes the call."""
    a = np.array(0.25)
    with pytest.raises(TypeError):
        a.__array_ufunc__()
    with pytest.raises(TypeError):
        a.__array_ufunc__(1, 2)
    assert_same(a.__array_ufunc__(sb.ufunc, "__call__", a, a), reference.sigmoid_backward(a, a))


def test_the_function_stands_for_the_ufunc():
    """The function runs the tests above by way of ``numpy_contract.FUNCTION``;
    that object only forwards to it."""
    assert FUNCTION(np.float32(2), np.float32(0.5)) == sb.sigmoid_backward(2, 0.5)
    assert not hasattr(FUNCTION, "reduce")
