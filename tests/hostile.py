"""Objects whose array, buffer or DLPack export raises, or whose memory is
gone, for the tests of hostile inputs; and a wrapper that exports only
DLPack, as a foreign array library would.

The classes are instantiated by the tests; the released and closed objects
are made fresh by a function each, since a test may need several.
"""
import mmap
import pickle


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
