"""Which arrays the kernel can use as they are, without a staging copy.

The kernel (``_kernels.apply``) runs over three arrays of one dtype, shape
and memory order, aligned and contiguous, and writes its output element by
element as it reads the inputs.  The NumPy facade (_function.py) and the
aclnn plan (aclnn/_plan.py) both ask these questions before they stage.
"""
import numpy as np


def address(a):
    """The address of ``a``'s first element."""
    return a.__array_interface__["data"][0]


def contiguous(a, order):
    """Is ``a`` contiguous in ``order`` ('C' or 'F')?"""
    return a.flags.c_contiguous if order == "C" else a.flags.f_contiguous


def kernel_ready(a, dtype, shape, order):
    """Can the kernel use ``a`` in place: ``dtype`` (so native-endian, as
    every compute dtype is), ``shape``, aligned and contiguous in ``order``?"""
    return a.dtype == dtype and a.shape == shape and a.flags.aligned and contiguous(a, order)


def reads_safely(a, out):
    """May the kernel read ``a`` while it writes ``out`` (both kernel-ready
    alike)?  Only if they share no memory, or are the very same view: with
    one dtype, shape and order, the same start address is the same view."""
    return not np.may_share_memory(a, out) or address(a) == address(out)
