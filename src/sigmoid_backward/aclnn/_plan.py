"""What phase 2 does, decided in phase 1: the plan, its workspace, its run.

The kernel (``_kernels.compute_into``) needs three aligned arrays of the
compute dtype, of one shape and one memory order.  Each operand that is not already
so gets a staging array carved out of the caller's workspace:

- an input that is broadcast, strided, misaligned, of another dtype, or
  that partly overlaps a directly written ``gradInput`` is copied (and
  cast) into one, so the kernel never reads what it is overwriting;
- a ``gradInput`` that is strided or of another dtype gets a staging result,
  copied (and cast) into its view after the kernel.  The kernel writes it in
  place over a staged input when there is one (it allows ``out is g``), so
  the result needs no region of its own.

Each region starts on a 64-byte boundary (a cache line: the kernel's threads
write disjoint lines); the workspace holds 63 bytes more than the regions,
so that phase 2 finds the first boundary at whatever address the caller's
buffer starts.  The common case (contiguous, same dtype, same shape) needs
no region and 0 bytes.
"""
from typing import Literal

import numpy as np

from .._kernel._kernels import Direct, compute_into, direct

ALIGN = 64


def address(a):
    """The address of ``a``'s first element."""
    return a.__array_interface__["data"][0]


class Plan:
    """The arrays of one operator call and where their staging copies go.

    Attributes
    ----------
    g, y, out : ndarray
        The element views of gradOutput, output and gradInput.
    dtype : numpy.dtype
        The compute dtype.
    order : {'C', 'F'}
        The memory order the kernel runs in.
    g_region, y_region, out_region : int or None
        Byte offset of each staging array among the regions, or None when
        the kernel uses the tensor's own memory.  ``out_region`` may equal
        ``g_region`` or ``y_region`` (in place over the staged input).
    workspace_size : int
        The bytes phase 2 needs.
    """

    def __init__(self, g, y, out, dtype):
        self.g, self.y, self.out, self.dtype = g, y, out, dtype
        self.order: Literal["C", "F"] = (
            "F" if out.flags.f_contiguous and not out.flags.c_contiguous else "C")
        c_order = self.order == "C"
        direct_out = out.dtype == dtype and direct(out, out, c_order, True) == Direct.DIRECT
        region_bytes = _round_up(out.size * dtype.itemsize)
        regions = 0

        def region():
            nonlocal regions
            regions += 1
            return (regions - 1) * region_bytes

        self.g_region = None if self._direct(g, direct_out) else region()
        self.y_region = None if self._direct(y, direct_out) else region()
        if direct_out:
            self.out_region = None
        elif self.g_region is not None:
            self.out_region = self.g_region
        elif self.y_region is not None:
            self.out_region = self.y_region
        else:
            self.out_region = region()
        self.workspace_size = ALIGN - 1 + regions * region_bytes if regions else 0

    def _direct(self, a, direct_out):
        """Can the kernel read ``a`` in place: of the compute dtype and out's
        shape, and, beside a directly written out, sharing memory with it
        only element for element?"""
        beside = self.out if direct_out else a
        return (a.dtype == self.dtype and a.shape == self.out.shape
                and direct(a, beside, self.order == "C", False) == Direct.DIRECT)

    def run(self, workspace, nthreads):
        """Compute into gradInput's view.

        Parameters
        ----------
        workspace : ndarray or None
            1-d writable ``uint8`` array of at least ``workspace_size`` bytes,
            checked by the caller; None when the size is 0.
        nthreads : int
            Threads for the kernel (resolved in the launching thread).
        """
        base = 0 if workspace is None else -address(workspace) % ALIGN

        def staging(offset):
            return np.ndarray(self.out.shape, self.dtype, buffer=workspace,
                              offset=base + offset, order=self.order)

        # IEEE results (inf on overflow, NaN) are the operator's contract, not
        # warnings; the error state is per thread, so set it where we run.
        with np.errstate(all="ignore"):
            self._run(staging, nthreads)

    def _run(self, staging, nthreads):
        g = self.g if self.g_region is None else staging(self.g_region)
        y = self.y if self.y_region is None else staging(self.y_region)
        out = self.out if self.out_region is None else staging(self.out_region)
        if g is not self.g:
            np.copyto(g, self.g, casting="unsafe")  # a widening cast: exact
        if y is not self.y:
            np.copyto(y, self.y, casting="unsafe")
        compute_into(g, y, out, nthreads)
        if out is not self.out:
            # Phase 1 allowed this cast under the 'same_kind' rule.
            np.copyto(self.out, out, casting="unsafe")


def _round_up(nbytes):
    return -(-nbytes // ALIGN) * ALIGN
