"""Device outputs as dump tools write them, read for ``compare``.

- ``.npy`` of bfloat16 stored as float32 (NumPy has no bfloat16, so a dump
  tool upcasts it) or as its raw uint16 bits: ``--bf16-as float32|uint16``
  reads it back as bfloat16.  Float32 values must be exact bfloat16 values
  (an upcast is): anything else is refused, since rounding would hide an
  error.
- ``.pt``: a tensor saved by ``torch.save`` (loaded with
  ``weights_only=True``), when torch is installed; read whole.
- ``--map FILE``: a JSON object pairing a golden's file name (or its case's
  name) with the device output's file name, where a tool named them
  differently.
"""
import json
import os

import numpy as np

from .._kernel import _dtypes
from ._dtype_names import DTYPES, as_supported
from ._errors import GoldenError
from ._files import ArrayFile, check_data_file, open_data, read_npy_header, read_small

BF16_AS = ("float32", "uint16")
MAP_FILE = "a JSON object of golden file or case names to file names"


class MemoryArray:
    """An array already in memory, with ArrayFile's reading interface."""

    def __init__(self, arr, path):
        self.arr, self.path = arr if arr.flags.c_contiguous else np.ascontiguousarray(arr), \
            str(path)
        self.dtype, self.shape = self.arr.dtype, tuple(self.arr.shape)

    @property
    def size(self):
        return self.arr.size

    def chunks(self, count):
        flat = self.arr.reshape(-1)
        for start in range(0, flat.size, count):
            # native byte order, in memory (a mapped file is read here)
            yield np.asarray(flat[start:start + count], self.dtype.newbyteorder("="))


class Bfloat16View:
    """An ArrayFile of float32 or uint16 values read as bfloat16."""

    def __init__(self, source, what):
        self.source, self.what, self.path = source, what, source.path
        self.dtype, self.shape = _dtypes.BFLOAT16, tuple(source.shape)

    @property
    def size(self):
        return self.source.size

    def chunks(self, count):
        for part in self.source.chunks(count):
            if part.dtype == np.uint16:
                yield part.view(_dtypes.BFLOAT16)
                continue
            values = part.astype(_dtypes.BFLOAT16)
            back = values.astype(np.float32)
            inexact = (back.view(np.uint32) != part.view(np.uint32)) & ~np.isnan(part)
            if inexact.any():
                bad = part[np.flatnonzero(inexact)[0]]
                raise GoldenError(f"{self.what}: {self.path} holds {bad!r}, not a bfloat16 "
                                  f"value: --bf16-as float32 takes bfloat16 upcast to float32")
            yield values


def open_output(path, what, dtype, shape, bf16_as=None):
    """The device's output at ``path`` as an array reader of ``dtype`` and
    ``shape`` (the golden's), whatever the dump format."""
    if str(path).lower().endswith(".pt"):
        return _open_pt(path, what, dtype, shape)
    if bf16_as is not None and dtype == _dtypes.BFLOAT16:
        stored = np.dtype(np.float32 if bf16_as == "float32" else np.uint16)
        source: MemoryArray | ArrayFile
        if str(path).lower().endswith(".npy"):
            source = MemoryArray(_mapped_npy(path, what), path)  # mapped: read as needed
            if source.dtype.newbyteorder("=") != stored:
                raise GoldenError(f"{what}: {path} has dtype {source.dtype}, not the "
                                  f"{stored} that --bf16-as {bf16_as} says")
            if shape is not None and source.shape != tuple(shape):
                raise GoldenError(f"{what}: {path} has shape {list(source.shape)}, the "
                                  f"golden {list(shape)}")
        else:
            source = ArrayFile(path, what, stored, shape)
        return Bfloat16View(source, what)
    return ArrayFile(path, what, dtype, shape)


def _mapped_npy(path, what):
    """The .npy file at ``path``, mapped (read as needed), whatever its dtype
    (the caller checks it): opened as the data files are, without blocking
    and checked again once open, so that a FIFO swapped in is refused."""
    check_data_file(path, what)
    try:
        with open_data(path, what) as f:
            shape, fortran, dtype = read_npy_header(f)
            if dtype.hasobject:
                raise ValueError(f"it holds {dtype}, Python objects")
            arr = np.memmap(f, dtype=dtype, mode="r", shape=shape, offset=f.tell(),
                            order="F" if fortran else "C")
    except (OSError, ValueError, EOFError, OverflowError, TypeError) as exc:
        if isinstance(exc, GoldenError):
            raise
        raise GoldenError(f"{what}: {path} is not a readable .npy file: {exc}") from None
    return arr.view(np.ndarray)


def _open_pt(path, what, dtype, shape):
    try:
        import torch
    except ImportError:
        raise GoldenError(f"{what}: {path} is a .pt file: reading it needs torch, which "
                          f"is not installed") from None
    check_data_file(path, what)
    try:
        with open_data(path, what) as f:  # without blocking, checked again once open
            tensor = torch.load(f, map_location="cpu", weights_only=True)
    except GoldenError:
        raise
    except Exception as exc:  # torch raises many kinds for a bad file
        raise GoldenError(f"{what}: {path} is not a readable .pt file: "
                          f"{type(exc).__name__}: {exc}") from None
    if not isinstance(tensor, torch.Tensor):
        raise GoldenError(f"{what}: {path} holds a {type(tensor).__name__}, not a tensor")
    tensor = tensor.detach().contiguous()
    if tensor.dtype == torch.bfloat16:
        arr = tensor.view(torch.int16).numpy().view(_dtypes.BFLOAT16)
    else:
        arr = as_supported(tensor.numpy())
    if arr.dtype not in DTYPES.values():
        raise GoldenError(f"{what}: {path} has dtype {arr.dtype}, not one of "
                          f"{', '.join(DTYPES)}")
    if arr.dtype != dtype:
        raise GoldenError(f"{what}: {path} has dtype {arr.dtype}, the golden {dtype}")
    if shape is not None and tuple(arr.shape) != tuple(shape):
        raise GoldenError(f"{what}: {path} has shape {list(arr.shape)}, the golden "
                          f"{list(shape)}")
    return MemoryArray(arr, path)


def read_map(path):
    """``--map FILE``: {golden file or case name: device output file name}.
    Read as the manifest is (a FIFO, a device or a directory refused, never
    blocking), and at most ``_files.SMALL_FILE_BYTES``."""
    data = read_small(path, "--map", MAP_FILE)
    try:
        pairs = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError too
        raise GoldenError(f"--map: {path} is not readable JSON: {exc}") from None
    if not isinstance(pairs, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v and os.path.basename(v) == v
            for k, v in pairs.items()):
        raise GoldenError(f"--map: {path} must be a JSON object of golden file or case "
                          f"names to plain file names in --actual-dir")
    return pairs
