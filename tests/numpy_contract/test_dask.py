"""Dask arrays in, lazy Dask arrays out, through NumPy's ``__array_ufunc__``
protocol: Dask treats the ufunc as it treats ``np.multiply``.

Results computed on a ``distributed.LocalCluster`` of two worker processes
must be bit-identical to the in-memory function on the same NumPy data.
"""
import subprocess
import sys

import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward as sb
from sigmoid_backward import ufunc

from dtypes_catalogue import ALL_DTYPES, BFLOAT16
from helpers import assert_same

da = pytest.importorskip("dask.array")

RNG = np.random.default_rng(20240501)


def _data(shape, dtype):
    """Values in (-2, 2), with a NaN, an inf and a signed zero for float
    dtypes when there is room.  assert_same lets a NaN match any NaN: a
    block's length decides which elements the vector loop computes and which
    its scalar tail does, and the two may give a NaN another sign."""
    dtype = np.dtype(dtype)
    real = np.asarray(RNG.uniform(-2, 2, shape))
    if dtype.kind == "c":
        real = real + 1j * RNG.uniform(-2, 2, shape)
    if dtype.kind not in "biu":
        flat = real.reshape(-1)
        flat[:3] = [np.nan, np.inf, -0.0][:flat.size]
    return real.astype(dtype)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


def _distributed_carries(dtype):
    """Can distributed send an array of this dtype to a worker and back?
    Asked of its serializer: distributed 2026.8 writes a dtype as
    ``dtype.str``, which is ``'<f1'`` for ml_dtypes' float8_e5m2 (NumPy's
    kind 'f', one byte), and NumPy cannot read that back: every such
    transfer fails, whatever computes on the arrays."""
    from distributed.protocol import deserialize, serialize
    a = np.zeros(2, dtype)
    try:
        return deserialize(*serialize(a)).dtype == a.dtype
    except TypeError:
        return False


# (grad_output shape, chunks or None for NumPy), (output shape, chunks or None)
LAYOUTS = {
    "same chunks": (((6, 8), (3, 4)), ((6, 8), (3, 4))),
    "mixed chunks": (((6, 8), ((1, 5), (3, 3, 2))), ((6, 8), ((4, 2), (2, 6)))),
    "broadcast dask-dask": (((5, 1, 7), (2, 1, 3)), ((4, 7), (3, 4))),
    "broadcast dask-numpy": (((5, 4, 7), (2, 2, 3)), ((4, 1), None)),
    "numpy-dask": (((3, 7), None), ((3, 7), (2, 7))),
    "0-d": (((), ()), ((), ())),
    "empty": (((0, 4), (1, 2)), ((0, 4), (1, 2))),
}


def _operand(shape, chunks, dtype):
    data = _data(shape, dtype)
    return data, (data if chunks is None else da.from_array(data, chunks=chunks))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_cluster_matches_in_memory(client, layout, dtype):
    if not _distributed_carries(dtype):
        pytest.skip(f"distributed cannot serialize {dtype} arrays (dtype.str {dtype.str!r})")
    (gshape, gchunks), (yshape, ychunks) = LAYOUTS[layout]
    g, dg = _operand(gshape, gchunks, dtype)
    y, dy = _operand(yshape, ychunks, dtype)
    lazy = sb(dg, dy)
    assert isinstance(lazy, da.Array)
    assert lazy.dtype == np.dtype(dtype)
    assert lazy.shape == np.broadcast_shapes(gshape, yshape)
    assert_same(client.compute(lazy).result(), sb(g, y))


@pytest.mark.parametrize("g_dtype, y_dtype", [
    ("float16", BFLOAT16),          # promote to float32
    ("float32", "float64"),
    ("complex64", "float64"),   # complex128
    ("int32", "float32"),       # integers compute in float64
    (BFLOAT16, "float32"),
], ids=str)
def test_cluster_promotion(client, g_dtype, y_dtype):
    g, dg = _operand((6, 5), (4, 2), g_dtype)
    y, dy = _operand((5,), (3,), y_dtype)
    lazy = sb(dg, dy)
    expected = sb(g, y)
    assert lazy.dtype == expected.dtype
    assert_same(client.compute(lazy).result(), expected)


@pytest.mark.parametrize("scalar", [2.0, 3, 1 + 2j, True])
def test_cluster_weak_python_scalars(client, scalar):
    y, dy = _operand((7, 3), (2, 2), "float32")
    lazy = sb(scalar, dy)
    expected = sb(scalar, y)
    assert lazy.dtype == expected.dtype  # float32 stays float32 with a Python float
    assert_same(client.compute(lazy).result(), expected)
    assert_same(client.compute(sb(dy, scalar)).result(), sb(y, scalar))


def test_cluster_num_threads_and_the_ufunc(client):
    g, dg = _operand((9, 4), (4, 4), "float32")
    y, dy = _operand((9, 4), (5, 2), "float16")
    expected = sb(g, y)
    for lazy in (sb(dg, dy, num_threads=1), sb(dg, dy, num_threads=2), ufunc(dg, dy)):
        assert isinstance(lazy, da.Array) and lazy.dtype == expected.dtype
        assert_same(client.compute(lazy).result(), expected)


def test_dtype_follows_dask_as_for_any_ufunc(client):
    """Dask applies dtype= to a ufunc's result, after computing in the
    promoted dtype (np.multiply on Dask arrays does the same); the in-memory
    ufunc computes in dtype.  docs/dask.md says so."""
    g, dg = _operand((9, 4), (4, 4), "float32")
    y, dy = _operand((9, 4), (5, 2), "float16")
    for dtype in ("float64", BFLOAT16, "complex64"):
        lazy = sb(dg, dy, dtype=dtype)
        assert lazy.dtype == np.dtype(dtype)
        assert_same(client.compute(lazy).result(), sb(g, y).astype(dtype))


def test_chunks_follow_dask_alignment():
    dg = da.ones((6, 8), chunks=((1, 5), (3, 3, 2)), dtype=np.float32)
    dy = da.ones((6, 8), chunks=((4, 2), (2, 6)), dtype=np.float32)
    # The common refinement of both chunkings, as dask's elementwise ops give.
    assert sb(dg, dy).chunks == (dg + dy).chunks == ((1, 3, 2), (2, 1, 3, 2))


def test_nothing_is_computed_until_asked():
    source_calls = []

    def source_block(block):
        source_calls.append(block.shape)
        return block

    meta = np.empty((0, 0), np.float32)  # else map_blocks calls source_block to infer it
    g = da.ones((8, 6), chunks=(4, 3), dtype=np.float32).map_blocks(source_block, meta=meta)
    y = da.full((8, 6), 0.5, chunks=(2, 6), dtype=np.float32).map_blocks(source_block,
                                                                           meta=meta)
    lazy = sb(g, y)
    lazy = sb(lazy, y)  # chained, still lazy
    assert isinstance(lazy, da.Array) and source_calls == []
    result = lazy.compute(scheduler="sync")
    assert source_calls
    assert_same(result, sb(sb(np.ones((8, 6), np.float32), np.float32(0.5)), np.float32(0.5)))


def test_inputs_are_not_read_when_building_the_graph():
    import dask

    @dask.delayed
    def unreadable():
        raise RuntimeError("the input was read before .compute()")

    g = da.from_delayed(unreadable(), shape=(3,), dtype=np.float64)
    lazy = sb(g, np.ones(3))  # must not raise
    with pytest.raises(RuntimeError, match="before .compute"):
        lazy.compute(scheduler="sync")


def test_out_with_dask_input_is_what_dask_says():
    dg = da.ones(4, chunks=2)
    out = np.zeros(4)
    with pytest.raises(Exception) as ours:
        sb(dg, np.ones(4), out=out)
    with pytest.raises(Exception) as numpys:
        np.multiply(dg, np.ones(4), out=np.zeros(4))
    assert type(ours.value) is type(numpys.value)
    assert not out.any()
    # A Dask out is Dask's: it gets the lazy result.
    dout = da.zeros(4, chunks=2)
    sb(dg, da.full(4, 0.5, chunks=2), out=dout)
    assert_same(dout.compute(), np.full(4, 0.25))


@pytest.mark.parametrize("call, error, message", [
    (lambda dg: sb(dg, da.ones(5, chunks=2)), ValueError, "broadcast"),
    (lambda dg: sb(dg, np.array(["a"] * 4)), TypeError, "NotImplemented|not supported"),
    (lambda dg: sb(dg, 1.0, num_threads=0), ValueError, "num_threads must be >= 1"),
    (lambda dg: sb(dg, [[1.0], [2.0, 3.0]]), ValueError, "output: cannot make an array"),
])
def test_errors_are_raised_when_building_the_graph(call, error, message):
    with pytest.raises(error, match=message):
        call(da.ones(4, chunks=2))


def test_same_inputs_give_the_same_graph_name():
    dg = da.ones(4, chunks=2)
    assert sb(dg, 0.5).name == sb(dg, 0.5).name
    assert sb(dg, 0.5).name != sb(dg, 0.25).name
    assert sb(dg, 0.5).name != sb(dg, 0.5, dtype=np.float32).name
    assert sb(dg, 0.5).name == ufunc(dg, 0.5).name


def test_numpy_calls_do_not_import_dask():
    code = ("import sys, numpy as np, sigmoid_backward as s;"
            "s.sigmoid_backward(np.ones(3), 0.5);"
            "s.sigmoid_backward([1.0], np.float32(2));"
            "assert 'dask' not in sys.modules, 'dask was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
