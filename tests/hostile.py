"""Objects whose array, buffer or DLPack export raises, or whose memory is
gone, for the tests of hostile inputs; a wrapper that exports only
DLPack, as a foreign array library would; and stand-ins for arrays in
device memory (a CUDA tensor, a CuPy array, a JAX array on a GPU).

The classes are instantiated by the tests; the released and closed objects
are made fresh by a function each, since a test may need several.
"""
import mmap
import pickle

import numpy as np


class ArrayRaises:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("export failed")


class ArrayInterfaceRaises:
    @property
    def __array_interface__(self):
        raise RuntimeError("export failed")


class DLPackRaises:
    def __dlpack__(self, **kwargs):
        raise BufferError("export failed")

    def __dlpack_device__(self):
        return (1, 0)


class BufferRaises:
    """Python 3.12+ (PEP 688) calls this for the buffer protocol."""

    def __buffer__(self, flags):
        raise RuntimeError("export failed")


class SequenceRaises:
    """A sequence of length 3 whose items cannot be read."""

    def __len__(self):
        return 3

    def __getitem__(self, index):
        raise RuntimeError("export failed")


def released_memoryview():
    view = memoryview(bytearray(16))
    view.release()
    return view


def released_pickle_buffer():
    buf = pickle.PickleBuffer(bytearray(16))
    buf.release()
    return buf


def closed_mmap():
    m = mmap.mmap(-1, 64)
    m.close()
    return m


class DLPackOnly:
    """Exposes only the DLPack protocol, forwarded from ``array`` (a NumPy
    array or any other producer): no special case for its type applies."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


# ---- stand-ins for device arrays: known by their class's module, as the
# real ones are; each records whether anything copied it to the host.

class _Device:
    def __init__(self, kind, index):
        self.type, self.index, self.platform = kind, index, kind

    def __str__(self):
        return f"{self.type}:{self.index}"


class _DeviceArray:
    copied = False

    def __array__(self, dtype=None, copy=None):
        type(self).copied = True
        return np.zeros(3, np.float32)

    def __dlpack__(self, **kwargs):
        type(self).copied = True
        return np.zeros(3, np.float32).__dlpack__(**kwargs)


class Tensor(_DeviceArray):
    """A torch.Tensor on cuda:0."""
    __module__ = "torch"
    device = _Device("cuda", 0)
    requires_grad = False
    dtype = "torch.float32"

    def numpy(self):
        raise TypeError("can't convert cuda:0 device type tensor to numpy.")

    def __dlpack_device__(self):
        return (2, 0)


class ndarray(_DeviceArray):   # CuPy spells it so
    """A cupy.ndarray on CUDA device 1."""
    __module__ = "cupy"

    def __dlpack_device__(self):
        return (2, 1)


class ArrayImpl(_DeviceArray):
    """A JAX array on a GPU."""
    __module__ = "jaxlib._jax"

    def devices(self):
        return {_Device("gpu", 0)}
