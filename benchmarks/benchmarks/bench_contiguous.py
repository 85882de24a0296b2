"""Contiguous inputs of one dtype and shape: the path straight to the kernel,
and the NumPy expression it replaces."""
import numpy as np

from sigmoid_backward import sigmoid_backward

from .common import DTYPES, SIZES, THREADS, assert_contiguous, inputs, numpy_expression


class Contiguous:
    params = [DTYPES, SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        self.g, self.y = inputs(dtype, n)
        self.out = np.empty_like(self.g)
        assert_contiguous(self.g, self.y, self.out)

    def time_out(self, dtype, n, threads):
        sigmoid_backward(self.g, self.y, out=self.out, num_threads=threads)

    def time_new_array(self, dtype, n, threads):
        sigmoid_backward(self.g, self.y, num_threads=threads)

    def peakmem_new_array(self, dtype, n, threads):
        # No temporaries: the peak is setup's plus the result.
        sigmoid_backward(self.g, self.y, num_threads=threads)

    def peakmem_setup(self, dtype, n, threads):
        # Empty on purpose: what setup alone costs, to subtract from the above.
        pass


class NumpyExpression:
    """Reference: ``g * (1 - y) * y`` with NumPy (one thread)."""
    params = [DTYPES, SIZES]
    param_names = ["dtype", "n"]

    def setup(self, dtype, n):
        self.g, self.y = inputs(dtype, n)
        assert_contiguous(self.g, self.y)

    def time_expression(self, dtype, n):
        numpy_expression(self.g, self.y)

    def peakmem_expression(self, dtype, n):
        numpy_expression(self.g, self.y)
