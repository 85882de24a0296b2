"""Inputs shared by the benchmarks: seeded, cached, read-only, contiguous;
and the import of an optional module (the other libraries: peers.py)."""
import functools
import importlib

import numpy as np

from sigmoid_backward._kernel import _dtypes

DTYPES = [d.name for d in _dtypes.TABLE]   # the package's dtype table
SIZES = [1_000, 100_000, 10_000_000]
THREADS = [1, 2]


def dtype(name):
    return _dtypes.BY_NAME[name]


@functools.lru_cache(maxsize=2)
def inputs(name, n):
    """``(grad_output, output)`` of ``n`` elements: standard normal gradients,
    sigmoid outputs uniform in [0, 1) (complex: both parts)."""
    dt = dtype(name)
    rng = np.random.default_rng(n)
    # Generated without temporaries where possible, so that peakmem_setup
    # stays below the peaks it is compared with.
    if dt.kind == "c":
        g, y = np.empty(n, dt), np.empty(n, dt)
        part = g.real.dtype
        for a, draw in ((g, rng.standard_normal), (y, rng.random)):
            a.real = draw(n, part)
            a.imag = draw(n, part)
    else:
        work = np.float64 if dt == np.float64 else np.float32
        g = rng.standard_normal(n, work).astype(dt, copy=False)
        y = rng.random(n, work).astype(dt, copy=False)
    # Benchmarks share these arrays: no benchmark may write into them.
    g.flags.writeable = False
    y.flags.writeable = False
    return g, y


def need(module):
    """``import module``; asv skips a setup that raises NotImplementedError."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise NotImplementedError(f"{module} is not installed") from None


def assert_contiguous(*arrays):
    """The benchmarks of the direct path must not time a copy by mistake."""
    for a in arrays:
        assert a.flags.c_contiguous and a.flags.aligned, (a.dtype, a.shape, a.strides)


def numpy_expression(g, y):
    """The formula as NumPy users write it (conjugated for complex)."""
    if g.dtype.kind == "c":
        return g * np.conj((1 - y) * y)
    return g * (1 - y) * y
