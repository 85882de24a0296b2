"""sigmoid_backward inside PyTorch and JAX, each next to the framework's own
expression, when installed:

- ``TorchOp``: ``torch.ops.sigmoid_backward.sigmoid_backward`` and
  ``torch.ops.aten.sigmoid_backward``, each returning a new tensor;
- ``TorchTensors``: the function on CPU tensors (a tensor back) and on
  NumPy arrays over the same memory;
- ``JaxTarget``: ``jax.jit`` of ``sigmoid_backward.jax.sigmoid_backward``
  and of ``g * (1 - y) * y`` (XLA's CPU client picks its own threads).
"""
import numpy as np

import sigmoid_backward

from .common import SIZES, THREADS, inputs, need
from .peers import tensor

FRAMEWORK_DTYPES = ["bfloat16", "float16", "float32"]


def _tensors(torch, dtype, n):
    return tuple(tensor(torch, a) for a in inputs(dtype, n))


class TorchOp:
    params = [FRAMEWORK_DTYPES, SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        torch = need("torch")
        need("sigmoid_backward.torch")
        self.g, self.y = _tensors(torch, dtype, n)
        torch.set_num_threads(threads)
        sigmoid_backward.set_num_threads(threads)   # the op runs on the default count
        self.ours = torch.ops.sigmoid_backward.sigmoid_backward
        self.aten = torch.ops.aten.sigmoid_backward

    def teardown(self, dtype, n, threads):
        sigmoid_backward.set_num_threads(None)

    def time_sigmoid_backward_op(self, dtype, n, threads):
        self.ours(self.g, self.y)

    def time_aten_sigmoid_backward(self, dtype, n, threads):
        self.aten(self.g, self.y)


class TorchTensors:
    params = [["bfloat16", "float32"], [1_000, 100_000]]
    param_names = ["dtype", "n"]

    def setup(self, dtype, n):
        torch = need("torch")
        self.g, self.y = inputs(dtype, n)
        self.tg, self.ty = _tensors(torch, dtype, n)
        self.out = np.empty_like(self.g)
        self.tout = tensor(torch, self.out)

    def time_tensors(self, dtype, n):
        sigmoid_backward.sigmoid_backward(self.tg, self.ty)

    def time_tensors_out(self, dtype, n):
        sigmoid_backward.sigmoid_backward(self.tg, self.ty, out=self.tout)

    def time_arrays(self, dtype, n):
        sigmoid_backward.sigmoid_backward(self.g, self.y)


class JaxTarget:
    params = [FRAMEWORK_DTYPES, [1_000, 100_000, 1_000_000]]
    param_names = ["dtype", "n"]

    def setup(self, dtype, n):
        jax = need("jax")
        sbj = need("sigmoid_backward.jax")
        g, y = inputs(dtype, n)
        self.g, self.y = jax.device_put(g), jax.device_put(y)
        self.ours = jax.jit(sbj.sigmoid_backward)
        self.xla = jax.jit(lambda g, y: g * (1 - y) * y)
        self.ours(self.g, self.y).block_until_ready()   # compile outside the timing
        self.xla(self.g, self.y).block_until_ready()

    def time_sigmoid_backward_jax(self, dtype, n):
        self.ours(self.g, self.y).block_until_ready()

    def time_xla_expression(self, dtype, n):
        self.xla(self.g, self.y).block_until_ready()
