"""Reference implementations from other libraries, when installed: PyTorch's
CPU kernel and numexpr, on the same arrays and thread counts."""
import warnings

import numpy as np

from .common import DTYPES, SIZES, THREADS, assert_contiguous, inputs, need, tensor


class Torch:
    params = [DTYPES, SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        torch = need("torch")
        g, y = inputs(dtype, n)
        out = np.empty_like(g)
        assert_contiguous(g, y, out)
        with warnings.catch_warnings():  # the inputs are read-only: torch warns
            warnings.simplefilter("ignore", UserWarning)
            self.g, self.y, self.out = (tensor(torch, a) for a in (g, y, out))
        torch.set_num_threads(threads)
        self.op = torch.ops.aten.sigmoid_backward.grad_input

    def time_sigmoid_backward(self, dtype, n, threads):
        self.op(self.g, self.y, grad_input=self.out)


class Numexpr:
    params = [["float32", "float64", "complex128"], SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        self.ne = need("numexpr")
        g, y = inputs(dtype, n)
        self.env = {"g": g, "y": y}
        self.out = np.empty_like(g)
        assert_contiguous(g, y, self.out)
        self.expr = "g * conj((1 - y) * y)" if g.dtype.kind == "c" else "g * (1 - y) * y"
        self.ne.set_num_threads(threads)

    def time_evaluate(self, dtype, n, threads):
        self.ne.evaluate(self.expr, local_dict=self.env, out=self.out)
