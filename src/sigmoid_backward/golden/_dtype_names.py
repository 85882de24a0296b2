"""The dtypes golden data may have, by the names NPU tooling spells them.

NumPy's names (``float16`` ... ``complex128``, ``bfloat16`` for ml_dtypes'
type) are the canonical ones, written to manifests and reports.  Case files
and users may also write the short names of ATK and the msprobe/TTK tools
(``fp16``, ``bf16``, ``fp32``, ``fp64``).
"""
import numpy as np

from .._kernel import _dtypes

# The NPU operator's dtypes (aclnnSigmoidBackward's list), which golden data
# may have: the operator's, not the package's table, so a dtype the CPU
# learns (float8) is refused here as int8 is.  With the short names of
# ATK's and TTK's case files.
_NPU_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
              "complex64": "complex64", "complex128": "complex128"}
DTYPES = {name: _dtypes.BY_NAME[name] for name in _NPU_NAMES}
ALIASES = {short: name for name, short in _NPU_NAMES.items() if short != name}

# How NumPy stores bfloat16 in a .npy file, and how TTK hands it over: two
# raw bytes.  Read back as bfloat16.
RAW_BFLOAT16 = np.dtype("V2")


def lookup(text):
    """The dtype named ``text`` (any case, short names too); KeyError if none."""
    name = str(text).strip().lower()
    return DTYPES[ALIASES.get(name, name)]


def choices():
    """The accepted names, for error messages."""
    return f"{', '.join(DTYPES)} (or {', '.join(ALIASES)})"


def name_of(dtype):
    """The canonical name of a supported dtype (``bfloat16`` for bfloat16)."""
    return np.dtype(dtype).name


def as_supported(arr):
    """``arr`` with 2-byte void data read as bfloat16 (how NumPy saves it and
    TTK passes it); other arrays unchanged."""
    return arr.view(_dtypes.BFLOAT16) if arr.dtype == RAW_BFLOAT16 else arr
