"""The dtypes the tests draw from, by name.

Built from the package's own table (``sigmoid_backward._kernel._dtypes.TABLE``), so a
dtype added there reaches every test that walks ``ALL_DTYPES`` without an
edit here.  A test that means one dtype, or one kind of dtype, names it:
``BFLOAT16``, ``NARROW_DTYPES``, never a position in a list.

The subsets:

- ``ALL_DTYPES``: every dtype the package computes (the kernels, the ufunc,
  the function, the frameworks' adapters), in the table's order;
- ``NPU_DTYPES``: the NPU operator's list, aclnnSigmoidBackward's six
  (docs/semantics.md).  aclnn and golden accept these and only these, so their
  tests draw from it; the package does not keep this list apart from its
  table, so it is written out here;
- ``NARROW_DTYPES``: stored in 16 bits or fewer and computed in float32,
  rounded once (the table's ``narrow`` flag);
- ``REAL_DTYPES`` and ``COMPLEX_DTYPES``: by NumPy's kind.
"""
from typing import NamedTuple

import numpy as np

from sigmoid_backward._kernel import _dtypes


class Entry(NamedTuple):
    """One dtype the package computes, with what the tests ask of it."""
    name: str           # NumPy's name, as files, options and test IDs spell it
    dtype: np.dtype
    narrow: bool        # stored in <= 16 bits, computed in float32
    npu: bool           # in the NPU operator's list


# The NPU operator's list: aclnnSigmoidBackward's dtypes, which aclnn and
# golden keep to whatever else the package computes.
NPU_NAMES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")

ENTRIES: dict[str, Entry] = {
    d.name: Entry(d.name, np.dtype(d.dtype), d.narrow, d.name in NPU_NAMES)
    for d in _dtypes.TABLE
}
assert set(NPU_NAMES) <= set(ENTRIES), "the package's table lost one of the NPU operator's dtypes"


def by_name(name: str) -> np.dtype:
    """The dtype the package's table calls ``name``."""
    return ENTRIES[name].dtype


BY_NAME: dict[str, np.dtype] = {name: e.dtype for name, e in ENTRIES.items()}

# The NPU operator's six, each by name.
FLOAT16 = by_name("float16")
BFLOAT16 = by_name("bfloat16")
FLOAT32 = by_name("float32")
FLOAT64 = by_name("float64")
COMPLEX64 = by_name("complex64")
COMPLEX128 = by_name("complex128")

ALL_DTYPES: tuple[np.dtype, ...] = tuple(e.dtype for e in ENTRIES.values())
NPU_DTYPES: tuple[np.dtype, ...] = tuple(by_name(name) for name in NPU_NAMES)
NARROW_DTYPES: tuple[np.dtype, ...] = tuple(e.dtype for e in ENTRIES.values() if e.narrow)
REAL_DTYPES: tuple[np.dtype, ...] = tuple(d for d in ALL_DTYPES if d.kind != "c")
COMPLEX_DTYPES: tuple[np.dtype, ...] = tuple(d for d in ALL_DTYPES if d.kind == "c")
NPU_REAL_DTYPES: tuple[np.dtype, ...] = tuple(d for d in NPU_DTYPES if d.kind != "c")
