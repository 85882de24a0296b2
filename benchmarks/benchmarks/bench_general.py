"""Inputs the fast path leaves to the ufunc: broadcasting, strided views,
byte-swapped data, mixed dtypes (NumPy's iterator, then the kernel's
strided path or its contiguous one on NumPy's cast buffers)."""
import numpy as np

from sigmoid_backward import sigmoid_backward

from .common import DTYPES, SIZES, THREADS, dtype, inputs


class Broadcast:
    """A row of 100 broadcast against a matrix of ``n`` elements."""
    params = [DTYPES, SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        g, y = inputs(dtype, n)
        self.matrix = g[: n // 100 * 100].reshape(-1, 100)
        self.row = y[:100]
        self.out = np.empty(self.matrix.shape, g.dtype)

    def time_broadcast_row(self, dtype, n, threads):
        sigmoid_backward(self.matrix, self.row, out=self.out, num_threads=threads)


class Strided:
    """Every other element of arrays twice as long."""
    params = [DTYPES, SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        g, y = inputs(dtype, n)
        self.g = np.repeat(g, 2)[::2]
        self.y = np.repeat(y, 2)[::2]
        assert not self.g.flags.c_contiguous
        self.out = np.empty(n, g.dtype)

    def time_strided(self, dtype, n, threads):
        sigmoid_backward(self.g, self.y, out=self.out, num_threads=threads)

    def peakmem_strided_new_array(self, dtype, n, threads):
        # No copies: setup's peak plus the result (the kernel gathers 1 KiB
        # blocks on the stack).
        sigmoid_backward(self.g, self.y, num_threads=threads)


class ByteSwapped:
    """grad_output in the other byte order (ml_dtypes' types have none; a
    one-byte dtype's is itself)."""
    params = [[d for d in DTYPES if not dtype(d).type.__module__.startswith("ml_dtypes")
               and dtype(d).itemsize > 1], SIZES, THREADS]
    param_names = ["dtype", "n", "threads"]

    def setup(self, dtype, n, threads):
        g, self.y = inputs(dtype, n)
        self.g = g.byteswap().view(g.dtype.newbyteorder())
        self.out = np.empty(n, g.dtype)

    def time_byteswapped(self, dtype, n, threads):
        sigmoid_backward(self.g, self.y, out=self.out, num_threads=threads)


class MixedDtypes:
    """float16 with float32 inputs compute in float32 (SPEC's promotion)."""
    params = [SIZES, THREADS]
    param_names = ["n", "threads"]

    def setup(self, n, threads):
        self.g, _ = inputs("float16", n)
        _, self.y = inputs("float32", n)
        self.out = np.empty(n, np.float32)

    def time_float16_with_float32(self, n, threads):
        sigmoid_backward(self.g, self.y, out=self.out, num_threads=threads)
