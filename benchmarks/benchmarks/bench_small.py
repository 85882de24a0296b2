"""Per-call overhead on small arrays, against the cheapest NumPy ufunc call
on the same arrays."""
import numpy as np

from sigmoid_backward import sigmoid_backward
from sigmoid_backward.bench import small_calls

from .common import THREADS, assert_contiguous, inputs

SMALL_DTYPES = ["float32", "float64", "float16"]
SMALL_SIZES = [1, 100, 1_000]


class Small:
    params = [SMALL_DTYPES, SMALL_SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        self.g, self.y = inputs(dtype, n)
        self.out = np.empty_like(self.g)
        assert_contiguous(self.g, self.y, self.out)
        self.g0, self.y0 = self.g[0], self.y[0]  # NumPy scalars

    def time_out(self, dtype, n, threads):
        sigmoid_backward(self.g, self.y, out=self.out, num_threads=threads)

    def time_out_default_threads(self, dtype, n, threads):
        sigmoid_backward(self.g, self.y, out=self.out)

    def time_new_array(self, dtype, n, threads):
        sigmoid_backward(self.g, self.y)

    def time_numpy_scalars(self, dtype, n, threads):
        sigmoid_backward(self.g0, self.y0)

    def time_np_add_reference(self, dtype, n, threads):
        # Reference: the simplest ufunc call, the floor for per-call cost.
        np.add(self.g, self.y, out=self.out)


class OffFastPath:
    """Calls that NumPy's ufunc machinery serves (a Python scalar, strides,
    a cast, broadcasting), each beside the NumPy expression on the same
    inputs (sigmoid_backward/bench/small_calls.py, shared with the bench
    command).  The goal: ours takes at most the expression's time."""
    params = [list(small_calls.cases(1)), [1_000]]
    param_names = ["case", "n"]

    def setup(self, case, n):
        self.ours, self.numpy = small_calls.cases(n)[case]

    def time_sigmoid_backward(self, case, n):
        self.ours()

    def time_numpy_expression(self, case, n):
        self.numpy()
