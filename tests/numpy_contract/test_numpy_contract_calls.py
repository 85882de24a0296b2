"""NumPy's own tests of ufunc calls, with ours as the binary ufunc: casting,
``out=``, ``where=``, ``ufunc.at``, strides, types and the ufunc's identity
as an object (``test_numpy_contract.py`` says how and why).

As they are, from ``test_ufunc.py``: ``TestUfunc.test_cast_safety``,
``test_out_broadcast_errors``, ``test_ufunc_at_inner_loops``,
``test_at_negative_indexes``, ``test_ufunc_types``,
``test_ufunc_noncontiguous``, ``test_ufunc_warn_with_nan`` and
``TestUFuncInspectSignature``'s ``test_dunder_signature_attr``,
``test_params_common_positional`` and ``test_params_common_ufunc`` (the
ufunc only: the function's signature adds ``num_threads``).  Restated
(np.add's values or integer loops there): ``test_out_broadcasts``,
``test_casting_out_param``, ``test_where_param_buffer_output``,
``test_where_warns``, the ``test_ufunc_at_*`` tests of values (basic,
ellipsis, 0-d, multi-dimensional, advanced, large, complex inner loops),
``TestLowlevelAPIAccess.test_resolve_dtypes_basic`` and
``test_pickle_name_is_qualname``.

Left out: ``test_cast_safety_scalar`` and ``test_reduce_arguments`` (their
calls need integer and object loops), ``test_where_param`` (``np.power``'s
integer loop in place), ``test_trivial_loop_invalid_cast`` and the cast
error tests (object and structured inputs), ``test_ufunc_method_signatures``
(``np.ufunc``'s own methods), and the low-level loop access tests
(``np.negative``'s loop).
"""
import importlib
import pickle
import warnings

import numpy as np
import pytest

import sigmoid_backward as sb
from sigmoid_backward import reference

from dtypes_catalogue import ALL_DTYPES, BFLOAT16
from helpers import assert_same, random_array
from numpy_contract import BINARIES, UFUNC_ONLY, numpy_test_module, run_numpy_test, step

UFUNC_PARAMETER = [
    ("test_ufunc", "TestUfunc.test_cast_safety", BINARIES),
    ("test_ufunc", "test_ufunc_types", BINARIES),
    ("test_ufunc", "test_ufunc_noncontiguous", BINARIES),
    ("test_ufunc", "test_ufunc_warn_with_nan", BINARIES),
    ("test_ufunc", "TestUFuncInspectSignature.test_dunder_signature_attr", UFUNC_ONLY),
    ("test_ufunc", "TestUFuncInspectSignature.test_params_common_positional", UFUNC_ONLY),
    ("test_ufunc", "TestUFuncInspectSignature.test_params_common_ufunc", UFUNC_ONLY),
]


@pytest.mark.parametrize("module, qualname, binary", [
    pytest.param(module, qualname, binary.values[0], id=f"{qualname}[{binary.id}]")
    for module, qualname, binaries in UFUNC_PARAMETER for binary in binaries])
def test_calls_as_numpy_tests_them(monkeypatch, module, qualname, binary):
    """NumPy's tests that take the ufunc as their parameter, given ours."""
    run_numpy_test(monkeypatch, module, qualname, binary, [], ufunc=binary)


@pytest.mark.parametrize("case", range(3), ids=["(1,)->()", "(2,)->(1,)", "(4, 3)->(4, 1)"])
@pytest.mark.parametrize("binary", BINARIES)
def test_out_broadcast_errors(monkeypatch, binary, case):
    """NumPy's test as it is, with its parameters: an ``out`` smaller than
    the result raises ValueError ("non-broadcastable")."""
    arr, out = [([2], np.empty(())), ([1, 2], np.empty(1)),
                (np.ones((4, 3)), np.empty((4, 1)))][case]
    run_numpy_test(monkeypatch, "test_ufunc", "TestUfunc.test_out_broadcast_errors", binary,
                   ["add"], arr=arr, out=out)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("numpy_test", ["TestUfunc.test_ufunc_at_inner_loops",
                                        "TestUfunc.test_at_negative_indexes"])
def test_ufunc_at_as_numpy_tests_it(monkeypatch, numpy_test, dtype):
    """NumPy's tests as they are, with (dtype, sb.ufunc) as their parameters:
    ``ufunc.at`` equals the call applied index by index.  Their comparison
    is ours, bit for bit with NaNs by position: NumPy 2.0's assert_equal
    does not see ml_dtypes 0.4's float8 NaNs as NaNs."""
    monkeypatch.setattr(numpy_test_module("test_ufunc"), "assert_equal", assert_same)
    dtype_argument = {"TestUfunc.test_ufunc_at_inner_loops": "typecode"}.get(numpy_test, "dtype")
    with np.errstate(all="ignore"):
        run_numpy_test(monkeypatch, "test_ufunc", numpy_test, sb.ufunc, [],
                       **{dtype_argument: dtype, "ufunc": sb.ufunc})


# ---- restated ------------------------------------------------------------------

@pytest.mark.parametrize("binary", BINARIES)
def test_out_broadcasts(binary):
    """NumPy's test_out_broadcasts (np.add's values there): ``out`` may
    broadcast the inputs, along length-1 dimensions and new ones."""
    arr = np.array([[0.25, 0.5, 2.0]])
    out = np.empty((5, 4, 3))
    binary(arr, arr, out=out)
    assert_same(out, np.broadcast_to(reference.sigmoid_backward(arr, arr), out.shape))


@pytest.mark.parametrize("binary", BINARIES)
def test_casting_out_param(binary):
    """NumPy's test_casting_out_param (np.add and np.subtract there): the
    result is cast into ``out``'s dtype, also past the buffer size."""
    a = np.full((200, 100), 3, np.int64)
    c = np.ones((200, 100), np.float64)
    binary(a, a, out=c)
    assert_same(c, reference.sigmoid_backward(a, a))
    a = np.full(65536, 0.1)
    b = np.zeros(65536, np.float32)
    binary(a, 0.3, out=b)
    assert_same(b, reference.sigmoid_backward(a, 0.3).astype(np.float32))


@pytest.mark.parametrize("binary", BINARIES)
def test_where_param_buffer_output(binary):
    """NumPy's test (np.add there): with a cast into ``out``, ``where=``
    leaves the unselected elements as they were."""
    a = np.full(10, 3, np.int64)
    c = np.full(10, 1.5)
    where = np.array([1, 0, 0, 1, 0, 0, 1, 1, 1, 0], bool)
    binary(a, a, out=c, where=where)
    assert_same(c, np.where(where, reference.sigmoid_backward(a, a), 1.5))


def _warned(call, *args, **kwargs):
    """What ``call(*args, **kwargs)`` returns, and the messages of the
    warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args, **kwargs)
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("binary", BINARIES)
def test_where_warns(binary):
    """NumPy's test (np.add there): ``where=`` without ``out=`` warns (since
    NumPy 2.1), an explicit ``out=None`` does not, nor ``where=True``; ours
    gives the warnings np.add gives."""
    a = np.arange(7.0) / 4
    mask = np.arange(7) % 2 == 0
    expected = reference.sigmoid_backward(a, a)
    for kwargs in [{"where": mask}, {"where": mask, "out": None}, {"where": True}]:
        result, messages = _warned(binary, a, a, **kwargs)
        assert messages == _warned(np.add, a, a, **kwargs)[1], kwargs
        assert_same(result[mask], expected[mask])


def _at_by_hand(a, index, b):
    """``ufunc.at(a, index, b)`` as NumPy defines it: for each indexed
    element in turn (repeats included), ``a[i] = f(a[i], b[j])``."""
    a = a.copy()
    targets = np.arange(a.size).reshape(a.shape)[index]
    values = np.broadcast_to(np.asarray(b), targets.shape)
    for target, value in zip(targets.ravel(), values.ravel(), strict=True):
        a.flat[target] = step(a.flat[target], value)
    return a


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_ufunc_at(dtype):
    """NumPy's test_ufunc_at_basic, _ellipsis, _multiD, _0D, _advanced,
    _large and _inner_loops_complex (np.add's values there): repeated
    indices, slices, subspaces, 0-d, an empty subspace, byte-swapped values
    and 8,195 updates of one element, each against the updates by hand."""
    rng = np.random.default_rng(7)
    a = random_array(rng, 10, dtype, scale=1.0)
    grid = random_array(rng, (3, 3, 3), dtype, scale=1.0)
    cases = [
        (a, [2, 5, 2], np.asarray(0.5, dtype)),
        (a, [2, 5, 2], random_array(rng, 3, dtype, scale=1.0)),
        (a, slice(None), random_array(rng, 10, dtype, scale=1.0)),
        (a, [-1, 1, -1, 2], random_array(rng, 4, dtype, scale=1.0)),
        (grid[0], (slice(None), [1, 2, 1]), random_array(rng, (3, 3), dtype, scale=1.0)),
        (grid, (slice(None), slice(None), [1, 2, 1]), random_array(rng, 3, dtype, scale=1.0)),
        (np.asarray(0.75, dtype), (), np.asarray(0.5, dtype)),
        (a[:, None][:, 0:0], [0, 1], np.asarray(0.5, dtype)),
        # (1 - b) * b near -1: 8,195 steps stay finite
        (np.ones(1, dtype), np.zeros(8195, np.int16),
         (-0.618034 + 0.002 * rng.standard_normal(8195)).astype(dtype)),
    ]
    if dtype != BFLOAT16:
        cases.append((a.astype(dtype.newbyteorder()), [1, 2, 1], np.asarray(0.5, dtype)))
    for number, (target, index, b) in enumerate(cases):
        expected = _at_by_hand(target, index, b)
        got = target.copy()
        with np.errstate(all="ignore"):
            sb.ufunc.at(got, index, b)
        assert_same(got, expected, f"case {number}")
    with pytest.raises(IndexError):
        sb.ufunc.at(np.asarray(0.5, dtype), 0, 1)
    with pytest.raises(ValueError):
        sb.ufunc.at(a.copy(), [2, 5, 3])   # the second operand missing


@pytest.mark.parametrize("first", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("second", ALL_DTYPES, ids=str)
def test_resolve_dtypes_basic(first, second):
    """NumPy's TestLowlevelAPIAccess.test_resolve_dtypes_basic (np.add on
    int32 and float32 there): ``resolve_dtypes`` gives the dtype the call
    computes in, and refuses ``casting="no"`` when an input must be cast to
    it, as np.multiply does."""
    result = sb.ufunc(np.ones(1, first), np.ones(1, second)).dtype
    assert sb.ufunc.resolve_dtypes((first, second, None))[2] == result
    if first == second == result:
        assert sb.ufunc.resolve_dtypes((first, second, None), casting="no") == (first,) * 3
    else:
        with pytest.raises(TypeError):
            sb.ufunc.resolve_dtypes((first, second, None), casting="no")


def test_pickle_name_is_qualname():
    """NumPy's test (a ufunc of its own test module there): the ufunc
    pickles by its ``__module__`` and ``__qualname__``, which name it."""
    if not hasattr(np.add, "__qualname__"):
        pytest.skip(f"NumPy {np.__version__}'s own ufuncs have no __qualname__")
    assert pickle.loads(pickle.dumps(sb.ufunc)) is sb.ufunc
    module = importlib.import_module(sb.ufunc.__module__)
    assert getattr(module, sb.ufunc.__qualname__) is sb.ufunc
