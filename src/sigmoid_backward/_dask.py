"""Dask arrays in, a lazy Dask array out: the kernel applied block by block.

Dask is optional.  Recognising a Dask array must not import Dask, since that
costs every NumPy call a large import: a Dask array's class lives in a
``dask.`` module, and only then is ``dask.array`` imported to make sure.

Each output block is computed by the in-memory function on the matching
blocks of the inputs, with the same ``dtype=`` and ``num_threads=``, so every
element is bit-identical to the in-memory result.  Broadcasting and chunk
alignment follow Dask's elementwise rules (``dask.array.blockwise`` with
``align_arrays``): inputs with different chunks are rechunked to a common
refinement, and dimensions of length one broadcast.
"""
from . import _dtypes, _threads


def is_dask_array(obj):
    """Is ``obj`` a ``dask.array.Array``?  Imports Dask only if it might be."""
    if not type(obj).__module__.startswith("dask."):
        return False
    import dask.array as da
    return isinstance(obj, da.Array)


def _block(g, y, block_dtype, num_threads):
    """One output block; a 0-d block stays an array, as Dask expects."""
    import numpy as np

    from ._function import sigmoid_backward
    return np.asarray(sigmoid_backward(g, y, dtype=block_dtype, num_threads=num_threads))


def _operand(obj, name):
    """(operand for blockwise, its block index or None)."""
    if _dtypes.is_weak_scalar(obj):
        return obj, None  # passed to every block as is: stays weak
    if not is_dask_array(obj):
        from ._inputs import as_array
        obj = as_array(obj, name)
    _dtypes.check_input_dtype(obj.dtype, name)
    # Dimensions are numbered from the right, so that they broadcast.
    return obj, tuple(range(obj.ndim))[::-1]


def sigmoid_backward(grad_output, output, out, dtype, num_threads):
    """:func:`sigmoid_backward.sigmoid_backward` when an input is a Dask array.

    Returns a lazy ``dask.array.Array``; nothing is computed until the caller
    asks (``.compute()``, ``dask.compute``, ``da.store``, ...).  ``num_threads``
    applies inside each block; by default each worker uses its own
    :func:`get_num_threads` (Dask's workers set ``OMP_NUM_THREADS=1``).
    """
    import numpy as np
    import dask.array as da
    from dask.base import tokenize

    from ._function import _compute_dtype

    if out is not None:
        raise TypeError("out= is not supported with Dask arrays: the result is a "
                        "lazy Dask array; write it with dask.array.store or "
                        "compute it into memory")
    g, g_ind = _operand(grad_output, "grad_output")
    y, y_ind = _operand(output, "output")
    dt = _compute_dtype(g, y, dtype)
    if num_threads is not None:
        _threads.resolve(num_threads)  # a bad value fails now, not on a worker
    shapes = [x.shape for x, ind in ((g, g_ind), (y, y_ind)) if ind is not None]
    try:
        shape = da.core.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"grad_output with shape {shapes[0]} and output with shape "
                         f"{shapes[-1]} cannot be broadcast together") from None
    out_ind = tuple(range(len(shape)))[::-1]
    name = "sigmoid_backward-" + tokenize(g, y, dt, dtype, num_threads)
    # block_dtype and num_threads are keyword arguments of every block call.
    return da.blockwise(_block, out_ind, g, g_ind, y, y_ind,
                        block_dtype=dtype, num_threads=num_threads,
                        dtype=dt, name=name, align_arrays=True,
                        meta=np.empty((0,) * len(shape), dt))
