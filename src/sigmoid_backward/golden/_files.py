"""Array files as NPU tests use them: ``.npy``, or raw ``.bin``.

- ``.npy`` carries its dtype and shape.  NumPy writes bfloat16 as the 2-byte
  void type ``|V2``; such a file is read back as bfloat16.
- any other name (``.bin`` as NPU test suites write it with ``tofile``): raw
  values in the machine's byte order (little-endian on x86-64 and AArch64),
  no header; the caller names the dtype and shape.

Whole arrays are read with :func:`read_npy` and :func:`read_raw`.
"""
import os

import numpy as np

from ._dtype_names import DTYPES, as_supported
from ._errors import GoldenError


def is_npy(path):
    return str(path).lower().endswith(".npy")


def read_npy(path, what):
    """The whole array of a .npy file; ``what`` names it in errors."""
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise GoldenError(f"{what}: no such file: {path}") from None
    except (OSError, ValueError, EOFError, OverflowError, TypeError) as exc:
        # OverflowError, ValueError: a header declaring an impossible shape
        raise GoldenError(f"{what}: {path} is not a readable .npy file: {exc}") from None
    if not isinstance(arr, np.ndarray):  # np.load opens .npz archives whatever their name
        if hasattr(arr, "close"):
            arr.close()
        raise GoldenError(f"{what}: {path} is an .npz archive ({type(arr).__name__}), "
                          f"not a .npy file")
    return as_supported(arr)


def _shape_text(shape):
    return ",".join(map(str, shape))


def raw_count(path, what, dtype, shape):
    """How many ``dtype`` values the raw file ``path`` holds, checked against
    ``shape`` (None: any count) before anything is read."""
    if dtype is None:
        raise GoldenError(f"{what}: {path} is a raw file: give its dtype with --dtype "
                          f"(one of {', '.join(DTYPES)})")
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise GoldenError(f"{what}: no such file: {path}") from None
    except OSError as exc:
        raise GoldenError(f"{what}: cannot read {path}: {exc}") from None
    count, extra = divmod(size, dtype.itemsize)
    if extra:
        raise GoldenError(f"{what}: {path} holds {size} bytes, not a whole number of "
                          f"{dtype} values ({dtype.itemsize} bytes each)")
    if shape is not None and count != int(np.prod(shape, dtype=object)):
        raise GoldenError(f"{what}: {path} holds {count} {dtype} values "
                          f"({size} bytes), but --shape {_shape_text(shape)} "
                          f"needs {int(np.prod(shape, dtype=object))}")
    return count


def read_raw(path, what, dtype, shape):
    """The whole array of a raw file; one dimension when ``shape`` is None."""
    count = raw_count(path, what, dtype, shape)
    try:
        arr = np.fromfile(path, dtype=dtype)
    except OSError as exc:
        raise GoldenError(f"{what}: cannot read {path}: {exc}") from None
    if arr.size != count:  # the file changed while we read it
        raise GoldenError(f"{what}: {path} changed size while being read")
    if shape is None:
        return arr
    try:
        return arr.reshape(shape)
    except (ValueError, OverflowError) as exc:  # too many dims, or too large
        raise GoldenError(f"--shape {_shape_text(shape)}: {exc}") from None
