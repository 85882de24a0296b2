"""No loop reads or writes a byte outside its operands: every instruction
set's loops, every dtype, every length up to two of the widest blocks, with
each operand ending at (or starting at) a page that may not be touched, so
that an access beyond it faults.  The vector tails, masked or copied through
buffers, are what this checks; the bits are test_kernel_paths.py's."""

import ctypes
import mmap
import sys

import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward
from sigmoid_backward._kernel import _kernels

from dtypes_catalogue import ALL_DTYPES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="mprotect through ctypes: Linux only here")

PAGE = mmap.PAGESIZE
PROT_NONE = 0   # <sys/mman.h>; the mmap module has PROT_READ and PROT_WRITE only
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class _Guarded:
    """One page of data between two pages that fault when touched."""

    def __init__(self):
        self.map = mmap.mmap(-1, 3 * PAGE)
        self.data = np.frombuffer(self.map, np.uint8)
        base = self.data.ctypes.data
        for start in (base, base + 2 * PAGE):
            if _libc.mprotect(start, PAGE, PROT_NONE) != 0:
                raise OSError(ctypes.get_errno(), "mprotect")

    def array(self, values, at_end):
        """``values`` copied against the far guard page (at_end) or the near one."""
        start = 2 * PAGE - values.nbytes if at_end else PAGE
        a = self.data[start:start + values.nbytes].view(values.dtype)
        a[...] = values
        return a


@pytest.fixture(scope="module")
def pages():
    yield [_Guarded() for _ in range(3)]   # g, y, out; released with the process


@pytest.mark.parametrize("isa", _kernels.available_isas())
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_no_access_beyond_an_operand(dtype, isa, pages):
    rng = np.random.default_rng(3)
    g_all = rng.standard_normal(70).astype(dtype)
    y_all = rng.random(70).astype(dtype)
    with _kernels.settings(isa=isa):
        for n in range(66):
            expected = reference.sigmoid_backward(g_all[:n], y_all[:n])
            for at_end in (True, False):
                g, y, out = (p.array(v, at_end) for p, v in
                             zip(pages, (g_all[:n], y_all[:n], np.zeros(n, dtype)), strict=True))
                sigmoid_backward(g, y, out=out)
                assert out.tobytes() == expected.tobytes(), (isa, n, at_end)
