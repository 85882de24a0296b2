"""sigmoid_backward.ufunc is a real numpy.ufunc: NumPy's own behaviours
(where=, casting=, order=, out=, .outer, .at), the __array_ufunc__ protocol
(xarray, pandas, numpy.ma, Dask, subclasses, overrides), the promoter
against its pure-Python twin, every inner-loop layout on every ISA, and
floating-point errors."""
import itertools
import warnings

import numpy as np
import pytest

import sigmoid_backward as sbm
from sigmoid_backward import reference, sigmoid_backward, ufunc
from sigmoid_backward._kernel import _kernels

from dtypes_catalogue import ALL_DTYPES, BFLOAT16
from helpers import assert_same, random_array, specials

RNG = np.random.default_rng(77)
CALLERS = {"function": sigmoid_backward, "ufunc": ufunc}


def _expected(g, y, **kwargs):
    with np.errstate(all="ignore"):
        return reference.sigmoid_backward(g, y, **kwargs)


# ---- a numpy.ufunc -------------------------------------------------------------

def test_is_a_numpy_ufunc():
    assert isinstance(ufunc, np.ufunc)
    assert (ufunc.__name__, ufunc.nin, ufunc.nout, ufunc.nargs) == ("sigmoid_backward", 2, 1, 3)
    assert "grad_output * (1 - output) * output" in ufunc.__doc__
    assert sbm.ufunc is ufunc


@pytest.mark.parametrize("g", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("y", ALL_DTYPES, ids=str)
def test_a_loop_for_every_pair_of_dtypes(g, y):
    # Each pair runs its own loop, with no cast of either input, computing in
    # the pair's promotion; a loop that widens an input says so to NumPy
    # (a 'safe' cast), as np.multiply's float32-to-float64 cast does.
    # (which loop each pair gets: test_dtype_table.py, test_dtypes.py)
    result = reference.result_dtype(np.empty(0, g), np.empty(0, y))
    assert ufunc.resolve_dtypes((g, y, None), casting="safe") == (g, y, result)
    if g == y == result:
        assert ufunc.resolve_dtypes((g, y, None), casting="no") == (g, y, result)
    else:
        with pytest.raises(TypeError, match="casting rule 'no'"):
            ufunc.resolve_dtypes((g, y, None), casting="no")


@pytest.mark.skipif(not hasattr(np.multiply, "__dict__"),
                    reason="NumPy 2.0 ufuncs have no __dict__")
def test_names_as_numpys_ufuncs_have_them():
    assert ufunc.__qualname__ == ufunc.__name__ == "sigmoid_backward"
    assert ufunc.__module__ == "sigmoid_backward._numpy._ufunc"
    # numpy.ma wraps a binary ufunc by these names
    masked = np.ma.core._MaskedBinaryOperation(ufunc)
    result = masked(np.ma.array([1.0, 2.0], mask=[False, True]), 0.5)
    assert result.mask.tolist() == [False, True] and result[0] == 0.25


def test_pickles_by_name():
    import pickle
    assert pickle.loads(pickle.dumps(ufunc)) is ufunc


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_where(dtype):
    g, y = random_array(RNG, (4, 6), dtype), random_array(RNG, (6,), dtype)
    mask = RNG.random((4, 6)) < 0.5
    expected = _expected(g, y)
    for call in CALLERS.values():
        out = np.zeros((4, 6), dtype)
        assert call(g, y, out=out, where=mask) is out
        assert_same(out[mask], expected[mask])
        assert (out[~mask] == 0).all()
    # A broadcast mask, and no out: the masked slots are uninitialised, and
    # NumPy says so unless out=None is spelled out, through either caller.
    for call in CALLERS.values():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fresh = call(g, y, out=None, where=mask[0])
        assert_same(fresh[:, mask[0]], expected[:, mask[0]])
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        fresh = sigmoid_backward(g, y, where=mask[0])
    with warnings.catch_warnings(record=True) as numpys:   # NumPy >= 2.1 warns
        warnings.simplefilter("always")
        np.multiply(g, y, where=mask[0])
    assert [str(w.message) for w in ours] == [str(w.message) for w in numpys]
    assert_same(fresh[:, mask[0]], expected[:, mask[0]])


def test_casting():
    f32, f64 = np.ones(3, np.float32), np.full(3, 0.5)
    for call in CALLERS.values():
        # float32 with float64 has a loop of its own, which widens float32
        # as it reads it: a 'safe' cast, which 'no' and 'equiv' refuse, as
        # for np.multiply.  An integer needs a cast NumPy makes.
        for casting in ("no", "equiv"):
            with pytest.raises(TypeError, match=f"casting rule '{casting}'"):
                call(f32, f64, casting=casting)
            with pytest.raises(TypeError, match=f"casting rule '{casting}'"):
                np.multiply(f32, f64, casting=casting)
        assert call(f32, f64, casting="safe").dtype == np.float64
        with pytest.raises(TypeError, match="casting rule 'no'"):
            call(f32, np.ones(3, np.int32), casting="no")
        assert call(f32, f32, casting="no").dtype == np.float32
        out = np.zeros(3, np.float16)
        with pytest.raises(TypeError, match="casting rule 'safe'"):
            call(f32, f32, out=out, casting="safe")
        call(f32.astype(np.float64), f64, out=out, casting="unsafe")
        assert (out == 0.25).all()
        with pytest.raises(TypeError, match="casting rule 'same_kind'"):
            call(np.ones(3, np.complex64), f32, dtype=np.float32)


@pytest.mark.parametrize("casting", ["same_kind", "unsafe"])
@pytest.mark.parametrize("g,y", [
    (np.array([1 + 1j, 2j], np.complex64), np.full(2, 0.5, np.complex64)),
    (np.ones(2, BFLOAT16), 1j),
    (np.ones(2, np.float32), np.full(2, 0.5, np.complex128)),
], ids=["complex64", "python-complex", "float32-with-complex128"])
def test_complex_never_becomes_bfloat16(g, y, casting):
    # ml_dtypes lets complex cast to bfloat16, dropping the imaginary part;
    # NumPy never casts complex to a real dtype under 'same_kind'.
    for call in CALLERS.values():
        with pytest.raises(TypeError, match="complex .*never cast to dtype="):
            call(g, y, dtype=BFLOAT16, casting=casting)
    out = np.full(2, 7, BFLOAT16)
    with pytest.raises(TypeError, match="complex"):
        sigmoid_backward(g, y, out=out, casting=casting)
    assert (out == 7).all()


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_order(order):
    g = np.asfortranarray(random_array(RNG, (5, 7), np.float32))
    for call in CALLERS.values():
        result = call(g, g, order=order)
        like = np.multiply(g, g, order=order)
        assert result.flags.c_contiguous == like.flags.c_contiguous
        assert result.flags.f_contiguous == like.flags.f_contiguous
        assert_same(result, _expected(g, g))


def test_out_tuple_and_subok():
    g, y = random_array(RNG, 9, np.float64), random_array(RNG, 9, np.float64)
    for call in CALLERS.values():
        out = np.empty(9)
        assert call(g, y, out=(out,)) is out
        assert_same(out, _expected(g, y))
        sub = g.view(np.matrix)
        assert type(call(sub, y)) is np.matrix
        assert type(call(sub, y, subok=False)) is np.ndarray


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_outer(dtype):
    g, y = random_array(RNG, (3, 4), dtype), random_array(RNG, 5, dtype)
    result = ufunc.outer(g, y)
    assert result.shape == (3, 4, 5)
    assert_same(result, _expected(g[..., None], y))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_at_applies_repeated_indices_one_by_one(dtype):
    a = random_array(RNG, 8, dtype)
    y = random_array(RNG, 4, dtype)
    indices = [0, 3, 3, 7]
    expected = a.copy()
    for i, v in zip(indices, y, strict=True):
        expected[i] = _expected(expected[i:i + 1], v.reshape(1))[0]
    ufunc.at(a, indices, y)
    assert_same(a, expected)


# ---- the dtype rules: promoter and pure-Python twin ---------------------------------

OPERAND_DTYPES = [*ALL_DTYPES, *(np.dtype(t) for t in ("bool", "int8", "uint8", "int16",
                                                       "int32", "uint32", "int64", "uint64"))]
WEAK = [0.5, 2, True, 0.5 - 1j]


def _operands():
    for a, b in itertools.product(OPERAND_DTYPES + WEAK, repeat=2):
        yield (np.ones(3, a) if isinstance(a, np.dtype) else a,
               np.full(3, 0.5, b) if isinstance(b, np.dtype) else b)


@pytest.mark.parametrize("g, y", list(_operands()),
                         ids=lambda v: str(v.dtype) if isinstance(v, np.ndarray) else repr(v))
def test_promoter_matches_its_python_twin(g, y):
    """Function, ufunc and reference agree on the dtype and the bits, and the
    C promoter agrees with reference.result_dtype (bool and Python scalars
    alone are strong: NumPy treats all-scalar calls that way).  A pair the
    reference refuses (an integer a narrow result cannot hold) both refuse."""
    try:
        reference.result_dtype(g, y)
    except TypeError:
        with pytest.raises(TypeError, match="cannot hold every"):
            sigmoid_backward(g, y)
        with pytest.raises(TypeError, match="cannot hold every"):
            ufunc(g, y)
        return
    expected = _expected(g, y)
    result = sigmoid_backward(g, y)
    assert_same(result, expected)
    assert_same(ufunc(g, y), expected)
    assert np.asarray(result).dtype == reference.result_dtype(g, y)


def test_resolve_dtypes_weak_scalars_and_integers():
    bf16, f64 = BFLOAT16, np.dtype(np.float64)
    assert ufunc.resolve_dtypes((bf16, float, None)) == (bf16,) * 3   # weak
    assert ufunc.resolve_dtypes((np.dtype(np.int8), int, None)) == (f64,) * 3


# ---- containers: NumPy's __array_ufunc__ protocol -------------------------------------

def _data(shape=(2, 3)):
    return RNG.standard_normal(shape), RNG.random(shape)


@pytest.mark.parametrize("call", CALLERS.values(), ids=CALLERS.keys())
def test_xarray_keeps_dims_and_coords(call):
    xr = pytest.importorskip("xarray")
    g, y = _data()
    coords = {"a": [10, 20], "b": ["x", "y", "z"]}
    xg = xr.DataArray(g, dims=("a", "b"), coords=coords, name="g")
    result = call(xg, xr.DataArray(y, dims=("a", "b"), coords=coords))
    assert isinstance(result, xr.DataArray)
    assert result.dims == ("a", "b") and list(result.coords["b"].values) == coords["b"]
    assert_same(result.values, sigmoid_backward(g, y))


@pytest.mark.parametrize("call", CALLERS.values(), ids=CALLERS.keys())
def test_xarray_backed_by_dask_stays_lazy(call):
    xr = pytest.importorskip("xarray")
    da = pytest.importorskip("dask.array")
    g, y = _data((4, 6))
    xg = xr.DataArray(da.from_array(g, chunks=2), dims=("a", "b"))
    result = call(xg, 0.5)
    assert isinstance(result, xr.DataArray) and isinstance(result.data, da.Array)
    assert_same(result.compute().values, sigmoid_backward(g, 0.5))


@pytest.mark.parametrize("call", CALLERS.values(), ids=CALLERS.keys())
def test_pandas_series_keep_their_index_and_align_by_label(call):
    pd = pytest.importorskip("pandas")
    g = pd.Series([1.0, 2.0, 3.0], index=["a", "b", "c"])
    y = pd.Series([0.1, 0.25, 0.5], index=["c", "b", "a"])
    result = call(g, y)
    assert isinstance(result, pd.Series) and list(result.index) == ["a", "b", "c"]
    aligned = y.reindex(g.index).to_numpy()
    assert_same(result.to_numpy(), sigmoid_backward(g.to_numpy(), aligned))


@pytest.mark.parametrize("call", CALLERS.values(), ids=CALLERS.keys())
def test_masked_arrays_keep_their_mask(call):
    g = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])
    y = np.ma.array([0.5, 0.5, 0.25, 0.75], mask=[0, 0, 0, 1])
    result = call(g, y)
    assert isinstance(result, np.ma.MaskedArray)
    assert result.mask.tolist() == [False, True, False, True]
    assert_same(result.data, sigmoid_backward(g.data, y.data))   # what np.multiply does


@pytest.mark.parametrize("call", CALLERS.values(), ids=CALLERS.keys())
def test_dask_arrays_stay_lazy(call):
    da = pytest.importorskip("dask.array")
    g, y = _data((6, 4))
    result = call(da.from_array(g, chunks=3), y)
    assert isinstance(result, da.Array)
    assert_same(result.compute(scheduler="sync"), sigmoid_backward(g, y))


class Sub(np.ndarray):
    pass


@pytest.mark.parametrize("call", CALLERS.values(), ids=CALLERS.keys())
def test_subclasses_keep_their_class(call):
    g, y = _data()
    result = call(g.view(Sub), y)
    assert type(result) is Sub
    assert_same(result.view(np.ndarray), sigmoid_backward(g, y))


@pytest.mark.parametrize("call", CALLERS.values(), ids=CALLERS.keys())
def test_custom_overrides_are_honoured(call):
    class Override:
        def __array_ufunc__(self, uf, method, *inputs, **kwargs):
            return ("handled", uf.__name__, method, len(inputs), sorted(kwargs))

    assert call(Override(), 1.0) == ("handled", "sigmoid_backward", "__call__", 2, [])
    assert call(np.ones(2), Override(), out=None) == \
        ("handled", "sigmoid_backward", "__call__", 2, [])

    class Refuses:
        __array_ufunc__ = None

    with pytest.raises(TypeError, match="does not support ufuncs"):
        call(np.ones(2), Refuses())


# ---- shapes --------------------------------------------------------------------------

@pytest.mark.parametrize("ndim", [33, 64])
def test_more_than_32_dimensions_on_every_path(ndim):
    shape = (1,) * (ndim - 2) + (3, 4)
    g = random_array(RNG, shape, np.float32)
    y = random_array(RNG, shape, np.float32)
    expected = _expected(g, y)
    for call in CALLERS.values():
        assert_same(call(g, y), expected)                             # contiguous
        assert_same(call(g, y[..., :1]), _expected(g, y[..., :1]))    # broadcast
        assert_same(call(g, y.astype(np.float64)),                    # cast
                    _expected(g, y.astype(np.float64)))
        out = np.empty(shape[:-1] + (8,), np.float32)[..., ::2]       # strided out
        call(g, y, out=out)
        assert_same(out, expected)


# ---- inner loop layouts ----------------------------------------------------------------

@pytest.fixture
def every_isa():
    with _kernels.settings():
        yield _kernels.available_isas()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_strided_and_broadcast_inner_loops_on_every_isa(dtype, every_isa):
    """Gathered blocks (strides of 0, +-1, +-3 elements) around the block
    size, a strided out, one and two threads: the bits of the contiguous
    loop."""
    block = _kernels.thresholds()["block_bytes"] // dtype.itemsize
    n = 2 * block + 37
    g3 = random_array(RNG, 3 * n, dtype)
    y3 = random_array(RNG, 3 * n, dtype)
    for isa in every_isa:
        _kernels.use_isa(isa)
        for g, y in [(g3[::3], y3[:n]), (g3[:n], y3[::-3]), (g3[:n], y3[:1]),
                     (g3[5:6], y3[::3]), (g3[::-3], y3[:1])]:
            g_b, y_b = np.broadcast_arrays(g, y)
            expected = _expected(g_b.copy(), y_b.copy())
            for m in (1, block - 1, block, block + 1, n):
                for threads in (1, 2):
                    assert_same(sigmoid_backward(g_b[:m], y_b[:m], num_threads=threads),
                                expected[:m], f"{isa} m={m}")
                    out = np.zeros(3 * m, dtype)[::-3]
                    sigmoid_backward(g_b[:m], y_b[:m], out=out, num_threads=threads)
                    assert_same(out, expected[:m], f"{isa} strided out m={m}")


@pytest.mark.parametrize("g_dtype, y_dtype", [(a, b) for a in ALL_DTYPES for b in ALL_DTYPES
                                               if a != b],
                         ids=lambda d: str(d))
def test_mixed_dtype_loops_widen_exactly(g_dtype, y_dtype, every_isa):
    """Each mixed pair has a loop that widens the narrower input as it
    gathers it: the reference's bits (it casts first), contiguous, strided
    and broadcast, one and several threads, on every ISA."""
    n = 3 * _kernels.thresholds()["parallel_share_bytes"] // 8 + 77
    g = random_array(RNG, n, g_dtype)
    y = random_array(RNG, 2 * n, y_dtype)
    special_g, special_y = specials(g_dtype)[:, None], specials(y_dtype)[None, :]
    for isa in every_isa:
        _kernels.use_isa(isa)
        # Every pair of special values (signed zeros, inf, NaN, subnormals).
        assert_same(sigmoid_backward(special_g, special_y), _expected(special_g, special_y), isa)
        for gv, yv in [(g, y[:n]), (g, y[::2]), (g[::-1], y[:1])]:
            expected = _expected(gv, yv)
            for threads in (1, 2):
                assert_same(sigmoid_backward(gv, yv, num_threads=threads), expected, isa)
                assert_same(sigmoid_backward(yv, gv, num_threads=threads),
                            _expected(yv, gv), isa)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_large_strided_calls_split_between_threads(dtype):
    """Above the parallel threshold the strided path runs on several
    threads; the bits never depend on the count."""
    n = 2 * _kernels.thresholds()["parallel_share_bytes"] // dtype.itemsize + 101
    g = random_array(RNG, 2 * n, dtype)[::2]
    y = random_array(RNG, n, dtype)
    expected = _expected(g, y)
    for threads in (1, 2, 3):
        assert_same(sigmoid_backward(g, y, num_threads=threads), expected)
        assert_same(sigmoid_backward(g, y[:1], num_threads=threads), _expected(g, y[:1]))


# ---- threads -----------------------------------------------------------------------------

def test_num_threads_is_restored_after_the_call():
    g = np.ones(4, np.float32)
    assert _kernels.call_threads() == 0
    sigmoid_backward(g, g[:1], num_threads=2)
    assert _kernels.call_threads() == 0
    with pytest.raises(ValueError):
        sigmoid_backward(np.ones(3), np.ones(4), num_threads=2)
    assert _kernels.call_threads() == 0
