"""NumPy's own generic ufunc tests, with ours as the binary ufunc: memory
overlap, reduce, accumulate and reduceat.

NumPy ships its tests inside the package (``numpy/_core/tests``).  The
tests here, in ``test_numpy_contract_protocols.py`` and in
``test_numpy_contract_calls.py`` run those of ``test_mem_overlap.py``,
``test_umath.py`` and ``test_ufunc.py`` that exercise a binary ufunc
generically, with ``sigmoid_backward.ufunc`` and, where a test only calls
the ufunc, the function ``sigmoid_backward.sigmoid_backward`` in its place,
in each of our dtypes.  They skip when NumPy was installed without its tests.
Three ways, in order of preference (``numpy_contract.py`` has the tools):

- **NumPy's test, run as it is**, its binary ufunc (``np.add``, ``ncu.minimum``)
  bound to ours while it runs, or passed to it as its parameter;
- **NumPy's helper, ours passed in**: its overlap fuzzer
  (``TestUFunc.check_unary_fuzz``) with ``ufunc.reduce``, ``.accumulate``
  and ``.reduceat`` and our dtypes;
- **NumPy's test restated**, where it hard-codes ``np.add``'s values, types
  or name (integer dtypes, ``== 6``, ``"<ufunc 'add'>"``): the same calls
  and layouts, checked against our values, which for reductions are the
  left fold NumPy defines (``numpy_contract.fold``).  These carry NumPy's
  test name and say what changed.

In this module, from ``test_mem_overlap.py``: ``test_binary_ufunc_reduce_fuzz``,
``_accumulate_fuzz`` and ``_reduceat_fuzz`` (the fuzzer, ours passed in);
``test_binary_ufunc_1d_manual`` (also at a size the kernel splits between
threads), ``test_binary_ufunc_reduceat_manual``, ``test_inplace_op_simple_manual``
(restated).  From ``test_umath.py``: ``test_memoverlap_accumulate_symmetric``
(as it is), ``test_memoverlap_accumulate`` (restated).  From
``test_ufunc.py``: ``test_reduction_where_initial_needed``,
``test_reducelike_byteorder_resolution``,
``test_reducelike_output_needs_identical_cast``, ``test_reduce_noncontig_output``,
``test_reduceat_and_accumulate_out_shape_mismatch``,
``test_reduce_wrong_dimension_output``,
``test_reduce_output_does_not_broadcast_input``, ``test_reduce_output_subclass_ok``
and ``test_umath.py``'s ``test_reduceat`` and ``test_reduceat_empty`` (as
they are); ``test_identityless_reduction``,
``test_identityless_reduction_nonreorderable``, ``test_reduce_zero_axis``,
``test_initial_reduction``, ``test_reduction_with_where_and_initial``
(restated; our ufunc has no identity and is not reorderable, so NumPy
refuses to reduce it over several axes at once, and these take one axis).

Left out, here and in the other two modules, because they do not take a
binary ufunc generically: tests of unary ufuncs, gufuncs (``vecdot``,
``matmul``), ``frompyfunc`` and object, string, datetime, integer and bool
loops, which ours does not have (``test_reduce_arguments`` and
``test_cast_safety_scalar`` among them: their calls need an integer or
object loop); tests of one ufunc's values or special-value rules
(``TestMaximum``, ``TestDivision``, ...); tests of NumPy's floating-point
error state (``test_ufunc_methods_floaterrors``, ...), which does not apply
to ours (docs/semantics.md); tests of the methods' argument parsing or of
``np.ufunc`` itself, which are NumPy's code, not the loop's; and NumPy's
identity and multi-axis reduction tests, which need an identity or a
reorderable ufunc.  The function has no methods, so only the ufunc runs
the reduce, accumulate, reduceat, outer and at tests.
"""
import itertools

import numpy as np
import pytest

import sigmoid_backward as sb

from dtypes_catalogue import ALL_DTYPES
from helpers import assert_same, random_array
from numpy_contract import BINARIES, accumulate, fold, numpy_test_module, reduceat, run_numpy_test

# ---- test_mem_overlap.py: the overlap fuzzer, ours passed in ------------------
# Each get_out_axis_size and do_reduceat restates the closure of the NumPy
# test of the same name (they are local to its body); the reduce one skips
# axis=None on more than one dimension, which NumPy refuses for a ufunc that
# is not reorderable, as ours.


def _accumulate_out_axis_size(a, b, axis):
    if axis is None:
        return (a.size, False) if a.ndim == 1 else ("skip", False)
    return a.shape[axis], False


def _reduce_out_axis_size(a, b, axis):
    if axis is None and a.ndim > 1:
        return "skip", False   # not reorderable: NumPy reduces one axis at a time
    return None, (axis is None or a.ndim == 1)


def _do_reduceat(a, out, axis):
    size = len(a) if axis is None else a.shape[axis]
    step = size // (len(out) if axis is None else out.shape[axis])
    return sb.ufunc.reduceat(a, np.arange(0, size, step), out=out, axis=axis)


FUZZED = {
    "test_binary_ufunc_accumulate_fuzz": (sb.ufunc.accumulate, _accumulate_out_axis_size),
    "test_binary_ufunc_reduce_fuzz": (sb.ufunc.reduce, _reduce_out_axis_size),
    "test_binary_ufunc_reduceat_fuzz": (_do_reduceat, _accumulate_out_axis_size),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("numpy_test", list(FUZZED))
def test_overlap_fuzz(numpy_test, dtype, monkeypatch):
    """NumPy's test_mem_overlap TestUFunc.<numpy_test>: random views of one
    buffer as the input and the output of the method, every axis; the
    result equals the call into a copy.  Its dtype is int16; ours here.
    Its comparison is ours, bit for bit with NaNs by position: NumPy's
    assert_equal does not see ml_dtypes' bfloat16 NaNs as NaNs.  Its views
    come from as_strided, which rebuilds a dtype from dtype.str: where that
    fails (ml_dtypes' float8_e5m2 is '<f1'), NumPy's test cannot run."""
    try:
        np.lib.stride_tricks.as_strided(np.zeros(2, dtype))
    except TypeError as exc:
        pytest.skip(f"NumPy's as_strided cannot make {dtype} views: {exc}")
    overlap = numpy_test_module("test_mem_overlap")
    monkeypatch.setattr(overlap, "assert_equal", assert_same)
    operation, out_axis_size = FUZZED[numpy_test]
    with np.errstate(all="ignore"):  # the fuzzer casts 0..65535 into float16
        overlap.TestUFunc().check_unary_fuzz(operation, out_axis_size, dtype=dtype, count=500)


# ---- test_mem_overlap.py, restated -----------------------------------------------

def _views_1d(n, k):
    """TestUFunc.test_binary_ufunc_1d_manual's views: forward, shifted,
    reversed, shifted and reversed, each with step 1 and 2."""
    views = []
    for p in (1, 2):
        views += [np.index_exp[:p * n:p], np.index_exp[k:k + p * n:p],
                  np.index_exp[p * n - 1::-p], np.index_exp[k + p * n - 1:k - 1:-p]]
    return views


def _check_into_copy(binary, a, b, out):
    expected = binary(a, b, out=out.copy())
    assert binary(a, b, out=out) is out
    assert_same(out, expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("binary", BINARIES)
def test_binary_ufunc_1d_manual(binary, dtype):
    """NumPy's TestUFunc.test_binary_ufunc_1d_manual (np.add over NumPy's
    dtypes there): every triple of the views of one buffer as both inputs
    and the output, and 1-element and 0-d inputs, 1,000 elements each."""
    n, k = 1000, 10
    values = random_array(np.random.default_rng(1), 6 * n, dtype, scale=1.0)
    for xs, ys, zs in itertools.product(_views_1d(n, k), repeat=3):
        v = values.copy()
        x, y, z = v[xs], v[ys], v[zs]
        _check_into_copy(binary, x, y, z)
        for scalar in (x[:1], x[-1:], x[:1].reshape([]), x[-1:].reshape([])):
            _check_into_copy(binary, scalar, y, z)
            _check_into_copy(binary, y, scalar, z)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("binary", BINARIES)
def test_binary_ufunc_1d_manual_threaded(binary, dtype):
    """The same views at 70,000 elements (140 KB and more), which the kernel
    splits between threads, as either input and as the output (the other
    input the buffer's forward view): an output overlapping an input that
    lies ahead of it must still get the element-by-element loop's values."""
    n, k = 70_000, 3
    values = random_array(np.random.default_rng(2), 6 * n, dtype, scale=1.0)
    for xs, zs in itertools.product(_views_1d(n, k), repeat=2):
        v = values.copy()
        _check_into_copy(binary, v[xs], v[:n], v[zs])
        _check_into_copy(binary, v[:n], v[xs], v[zs])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("binary", BINARIES)
def test_inplace_op_simple_manual(binary, dtype):
    """NumPy's TestUFunc.test_inplace_op_simple_manual (``x += x.T``, larger
    than the buffer): ``f(x, x.T, out=x)`` equals the call into a copy."""
    x = random_array(np.random.default_rng(3), (200, 200), dtype, scale=1.0)
    _check_into_copy(binary, x, x.T, x)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_binary_ufunc_reduceat_manual(dtype):
    """NumPy's TestUFunc.test_binary_ufunc_reduceat_manual: the input is the
    output (its second case, indices that are a view of the input, needs an
    integer loop)."""
    a = random_array(np.random.default_rng(4), 10_000, dtype, scale=1.0)
    indices = np.arange(10_000)[::-1].copy()
    expected = reduceat(a, indices)   # the last index, 0, folds the whole array
    assert_same(sb.ufunc.reduceat(a.copy(), indices, out=a.copy()), expected)
    assert_same(sb.ufunc.reduceat(a, indices, out=a), expected)


# ---- test_umath.py: accumulate -----------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_memoverlap_accumulate_symmetric(monkeypatch, dtype):
    """NumPy's test as it is, with (sb.ufunc, dtype) as its parameters:
    ``accumulate`` equals ``itertools.accumulate`` over the ufunc."""
    run_numpy_test(monkeypatch, "test_umath", "test_memoverlap_accumulate_symmetric",
                   sb.ufunc, [], ufunc=sb.ufunc, dtype=dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_memoverlap_accumulate(dtype):
    """NumPy's test_memoverlap_accumulate (np.maximum's running maximum
    there): its array, and ours, accumulated along both axes of 2-D too."""
    arr = np.array([0.61, 0.60, 0.77, 0.41, 0.19]).astype(dtype)
    assert_same(sb.ufunc.accumulate(arr), accumulate(arr))
    grid = random_array(np.random.default_rng(5), (40, 30), dtype, scale=1.0)
    for axis in (0, 1):
        assert_same(sb.ufunc.accumulate(grid, axis=axis), accumulate(grid, axis))


# ---- test_ufunc.py: reductions, as they are ----------------------------------

AS_THEY_ARE = [
    ("test_ufunc", "TestUfunc.test_reduction_where_initial_needed", ["maximum"], {}),
    ("test_ufunc", "TestUfunc.test_reducelike_byteorder_resolution", ["add"], {}),
    ("test_ufunc", "TestUfunc.test_reducelike_output_needs_identical_cast", ["add"], {}),
    ("test_ufunc", "TestUfunc.test_reduce_noncontig_output", ["add"], {}),
    ("test_ufunc", "TestUfunc.test_reduceat_and_accumulate_out_shape_mismatch", ["add"],
     {"with_cast": True}),
    ("test_ufunc", "TestUfunc.test_reduceat_and_accumulate_out_shape_mismatch", ["add"],
     {"with_cast": False}),
    ("test_ufunc", "TestUfunc.test_reduce_output_does_not_broadcast_input", ["add"], {}),
    ("test_ufunc", "TestUfunc.test_reduce_output_subclass_ok", ["add"], {}),
    ("test_umath", "test_reduceat", ["add"], {}),
    ("test_umath", "test_reduceat_empty", ["add"], {}),
] + [
    ("test_ufunc", "TestUfunc.test_reduce_wrong_dimension_output", [],
     {"f_reduce": sb.ufunc.reduce, "keepdims": keepdims, "out_shape": out_shape})
    for keepdims in (True, False)
    for out_shape in [(), (1,), (3,), (1, 1), (1, 3), (4, 3)]
]


@pytest.mark.parametrize(
    "module, qualname, names, arguments",
    [pytest.param(*case, id=f"{case[1]}{list(case[3].values()) or ''}") for case in AS_THEY_ARE])
def test_reductions_as_numpy_tests_them(monkeypatch, module, qualname, names, arguments):
    run_numpy_test(monkeypatch, module, qualname, sb.ufunc, names, **arguments)


# ---- test_ufunc.py: reductions, restated -------------------------------------

def test_the_folds_are_numpys_definitions():
    """The oracle of the restated tests: with np.subtract (not reorderable,
    as ours) as the step, the folds give np.subtract's methods exactly."""
    rng = np.random.default_rng(8)
    a = rng.random((5, 4, 6))
    where = rng.random(a.shape) > 0.3
    for axis in (0, 1, 2):
        assert_same(fold(a, axis, f=np.subtract), np.subtract.reduce(a, axis=axis))
        assert_same(fold(a, axis, initial=0.5, where=where, f=np.subtract),
                    np.subtract.reduce(a, axis=axis, initial=0.5, where=where))
        assert_same(accumulate(a, axis, f=np.subtract), np.subtract.accumulate(a, axis=axis))
        indices = [0, 3, 1, 1, 2]
        assert_same(reduceat(a, indices, axis, f=np.subtract),
                    np.subtract.reduceat(a, indices, axis=axis))


def _identityless_layouts(dtype):
    """TestUfunc.identityless_reduce_arrs's layouts in ``dtype``: C, F, mixed
    order, reversed, not contiguous, and not contiguous nor aligned."""
    yield np.empty((2, 3, 4), dtype, order="C")
    yield np.empty((2, 3, 4), dtype, order="F")
    yield np.empty((2, 4, 3), dtype, order="C").swapaxes(1, 2)
    yield np.empty((2, 3, 4), dtype, order="C")[::-1, ::-1, ::-1]
    yield np.empty((3, 5, 4), dtype, order="C").swapaxes(1, 2)[1:, 1:, 1:]
    unaligned = np.empty(3 * 4 * 5 * dtype.itemsize + 1, np.uint8)[1:].view(dtype)
    yield unaligned.reshape(3, 4, 5)[1:, 1:, 1:]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_identityless_reduction(dtype):
    """NumPy's test_identityless_reduction (np.minimum there, over every
    axis tuple): its layouts, filled with values, each single axis and
    ``()``; the result, and the result into ``out=``, is the fold."""
    rng = np.random.default_rng(6)
    for layout in _identityless_layouts(dtype):
        a = layout
        a[...] = random_array(rng, a.shape, dtype, scale=1.0)
        for axis in (0, 1, 2, -1):
            expected = fold(a, axis)
            assert_same(sb.ufunc.reduce(a, axis=axis), expected, f"axis {axis}")
            out = np.full_like(expected, np.nan)
            sb.ufunc.reduce(a, axis=axis, out=out)
            assert_same(out, expected, f"axis {axis}, out=")
        assert_same(sb.ufunc.reduce(a, axis=()), a)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_identityless_reduction_nonreorderable(dtype):
    """NumPy's test (np.divide there): along each axis the fold, over no
    axis the array, over both a ValueError (the ufunc is not reorderable)."""
    a = np.array([[8.0, 2.0, 2.0], [1.0, 0.5, 0.25]]).astype(dtype)
    assert_same(sb.ufunc.reduce(a, axis=0), fold(a, 0))
    assert_same(sb.ufunc.reduce(a, axis=1), fold(a, 1))
    assert_same(sb.ufunc.reduce(a, axis=()), a)
    with pytest.raises(ValueError):
        sb.ufunc.reduce(a, axis=(0, 1))


def test_reduce_zero_axis():
    """NumPy's test_reduce_zero_axis for a ufunc without an identity
    (np.maximum there), single axes only: reducing n rows of m elements
    works for m > 0 and raises ValueError for m == 0; accumulate always works."""
    def shapes(n, m):
        return [((n, m), 1), ((m, n), 0), ((n // 2, n // 2, m), 2), ((n // 2, m, n // 2), 1),
                ((m, 10, n), 0), ((10, m, n), 1), ((10, n, m), 2)]

    for n, m in [(30, 30), (0, 30), (30, 0), (0, 0)]:
        for shape, axis in shapes(n, m):
            if m > 0:
                sb.ufunc.reduce(np.zeros(shape), axis=axis)
            else:
                with pytest.raises(ValueError):
                    sb.ufunc.reduce(np.zeros(shape), axis=axis)
    with pytest.raises(ValueError):
        sb.ufunc.reduce([])
    sb.ufunc.reduce(np.zeros((0, 0)), axis=())
    for shape in [(30, 0), (0, 30), (30, 30), (0, 0)]:
        sb.ufunc.accumulate(np.zeros(shape), axis=0)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_initial_reduction(dtype):
    """NumPy's test_initial_reduction (np.minimum, np.maximum and np.add
    there): with ``initial=`` an empty reduction is ``initial`` and a
    non-empty one starts from it; ``initial=None`` raises ValueError."""
    assert_same(sb.ufunc.reduce(np.array([], dtype), initial=0.5), np.asarray(0.5, dtype)[()])
    for values, initial in [([5], 4), ([4], 5), ([0.25, 0.5, 3], 0.75)]:
        a = np.array(values).astype(dtype)
        assert_same(sb.ufunc.reduce(a, initial=initial), fold(a, initial=initial))
    with pytest.raises(ValueError):
        sb.ufunc.reduce(np.array([], dtype), initial=None)
    assert_same(sb.ufunc.reduce(np.array([2.0, 0.5]), initial=np._NoValue),
                fold(np.array([2.0, 0.5])))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("initial", [-np.inf, 5.0])
@pytest.mark.parametrize("axis, where", [(0, np.array([True, False, True])),
                                         (1, [True, True, False]),
                                         (None, True)])
def test_reduction_with_where_and_initial(axis, where, initial, dtype):
    """NumPy's test (np.maximum there): the fold from ``initial`` over the
    elements ``where`` selects.  Our ufunc reduces 2-D arrays along one axis
    only, so ``axis=None`` takes a 1-D array."""
    a = (np.arange(9.0).reshape(3, 3) / 8).astype(dtype)
    if axis is None:
        a = a.ravel()
    result = sb.ufunc.reduce(a, axis=axis, where=where, initial=initial)
    assert_same(result, fold(a, axis or 0, initial=initial, where=where))
