"""Small calls off the C fast path, each beside the NumPy expression a user
would write instead: the cases that ``python -m sigmoid_backward bench``
and the asv suite (benchmarks/benchmarks/bench_small.py) time, so that both
measure the same thing.

Every case computes what its NumPy twin computes, on the same inputs; only
the route differs.  The fast-path case and ``np.add`` are the per-call
reference: the cheapest call into a ufunc.
"""
import numpy as np

from .._numpy._function import sigmoid_backward
from .._numpy._ufunc import ufunc


def cases(n=1000, seed=0):
    """``{name: (ours, numpy)}``: zero-argument callables on ``n`` float32
    elements (the other input as each case says)."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    y64 = y.astype(np.float64)
    y_strided = np.repeat(y, 2)[::2]
    y_one = y[:1]
    out = np.empty(n, np.float32)
    out16 = np.empty(n, np.float16)
    f16 = np.float16(1)
    return {
        "python scalar y": (lambda: sigmoid_backward(g, 0.5),
                            lambda: g * (1 - 0.5) * 0.5),
        "strided y": (lambda: sigmoid_backward(g, y_strided),
                      lambda: g * (1 - y_strided) * y_strided),
        "float32 with float64": (lambda: sigmoid_backward(g, y64),
                                 lambda: g * (1 - y64) * y64),
        "broadcast (n,) x (1,)": (lambda: sigmoid_backward(g, y_one),
                                  lambda: g * (1 - y_one) * y_one),
        "out=float16 (one cast)": (lambda: sigmoid_backward(g, y, out=out16),
                                   lambda: np.multiply(g * (1 - y), y, out=out16)),
        "dtype=float16": (lambda: sigmoid_backward(g, y, dtype=np.float16),
                          lambda: (g.astype(np.float16) * (f16 - y.astype(np.float16))
                                   * y.astype(np.float16))),
        "ufunc, out=": (lambda: ufunc(g, y, out=out),
                        lambda: np.add(g, y, out=out)),
        "fast path, out=": (lambda: sigmoid_backward(g, y, out=out),
                            lambda: np.add(g, y, out=out)),
    }
