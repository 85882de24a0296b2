"""Other libraries on the same arrays and thread counts, when installed:
PyTorch's CPU kernel, JAX's jitted formula, a numba parallel ufunc and
numexpr (the adapters of peers.py, which benchmarks/compare.py times too).
A dtype a library cannot compute is skipped."""
import numpy as np

from . import peers
from .common import DTYPES, SIZES, THREADS, assert_contiguous, inputs


def _load(name, threads=None):
    """``peers.load``; asv skips a setup that raises NotImplementedError."""
    module = peers.load(name, threads)
    if module is None:
        raise NotImplementedError(f"{name} is not installed")
    return module


def _runnable(call, name, dtype):
    if call is None:
        raise NotImplementedError(f"{name} cannot compute {dtype}")
    return call


class _IntoOut:
    """A peer that writes into a preallocated ``out``."""
    params = [DTYPES, SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]
    peer = ""          # the library's name, for peers.load
    adapter = None     # its adapter, as a staticmethod of peers' *_call

    def setup(self, dtype, n, threads):
        module = _load(self.peer, threads)
        g, y = inputs(dtype, n)
        out = np.empty_like(g)
        assert_contiguous(g, y, out)
        self.call = _runnable(self.adapter(module, g, y, out), self.peer, dtype)


class Torch(_IntoOut):
    peer, adapter = "torch", staticmethod(peers.torch_call)

    def time_sigmoid_backward(self, dtype, n, threads):
        self.call()


class Numba(_IntoOut):
    peer, adapter = "numba", staticmethod(peers.numba_call)

    def time_parallel_ufunc(self, dtype, n, threads):
        self.call()


class Numexpr(_IntoOut):
    peer, adapter = "numexpr", staticmethod(peers.numexpr_call)

    def time_evaluate(self, dtype, n, threads):
        self.call()


class Jax:
    """A new array per call; XLA's CPU client picks its own threads."""
    params = [DTYPES, SIZES]
    param_names = ["dtype", "n"]

    def setup(self, dtype, n):
        jax = _load("jax")
        self.call = _runnable(peers.jax_call(jax, *inputs(dtype, n)), "jax", dtype)

    def time_jit_formula(self, dtype, n):
        self.call()
