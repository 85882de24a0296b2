"""Array files as NPU tests use them: ``.npy``, or raw ``.bin``.

- ``.npy`` carries its dtype and shape.  NumPy writes bfloat16 as the 2-byte
  void type ``|V2``; such a file is read back as bfloat16.
- any other name (``.bin`` as NPU test suites write it with ``tofile``): raw
  values in the machine's byte order (little-endian on x86-64 and AArch64),
  no header; the caller names the dtype and shape.

Whole arrays are read with :func:`read_npy` and :func:`read_raw`; large ones
in chunks of a bounded size through :class:`ArrayFile`, and written in chunks
with :func:`write_chunks`, so that a 164M-element case never sits in memory
whole.
"""
import io
import math
import os
import stat

import numpy as np

from .._tools._paths import check_file, kind
from ._dtype_names import DTYPES, as_supported
from ._errors import GoldenError

# What an input path must name; a directory or a FIFO is refused first.
DATA_FILE = "a .npy or raw data file"
# The most a file of arguments (--cases, --manifest, --map) may hold, read
# into memory whole: 64 MiB, over a thousand times ATK's 204-case file
# (55 KB) and over 100,000 --map pairs (~520 bytes at most each), so that a
# huge or endless one is refused by its size, not read.
SMALL_FILE_BYTES = 64 << 20


def check_data_file(path, what):
    """Refuse, in one line naming ``what``, a path that is not an existing
    regular file: before a directory's size reads as data, or a FIFO blocks."""
    check_file(path, what, DATA_FILE, GoldenError)


def open_data(path, what, nofollow=False, expected=DATA_FILE):
    """``path`` open for reading in binary, once it is known to be a regular
    file: opened without blocking (a FIFO put in its place after the check
    would block a plain open until a writer came) and checked again on the
    open file, so that nothing swapped in between is read.  ``nofollow``:
    a symlink is refused (a manifest's files stay inside its folder).
    ``expected`` says what the file should be, in the refusal."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) \
        | getattr(os, "O_CLOEXEC", 0) | (getattr(os, "O_NOFOLLOW", 0) if nofollow else 0)
    if nofollow and os.path.islink(path):  # where O_NOFOLLOW is missing too
        raise GoldenError(f"{what}: {path} is a symlink, refused: the file must be in "
                          f"the folder itself")
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if nofollow and os.path.islink(path):
            raise GoldenError(f"{what}: {path} is a symlink, refused: the file must be in "
                              f"the folder itself") from None
        raise GoldenError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise GoldenError(f"{what}: {path} is {kind(mode)}, not a regular file, "
                          f"expected {expected}")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_small(path, what, expected, limit=None):
    """The bytes of a small file argument (``--cases``, ``--manifest``,
    ``--map``), read as the data files are (refused unless a regular file,
    opened without blocking and checked again once open), and refused,
    before it is read, if larger than ``limit`` bytes (default
    :data:`SMALL_FILE_BYTES`): a huge or endless file must not fill the
    memory.  ``expected`` says what the file should be, in the refusals."""
    limit = SMALL_FILE_BYTES if limit is None else limit
    check_file(path, what, expected, GoldenError)
    with open_data(path, what, expected=expected) as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:  # (len: it grew while read)
        raise GoldenError(f"{what}: {path} holds {max(size, len(data)):,} bytes, more than "
                          f"the {limit:,} allowed, expected {expected}")
    return data


def element_count(shape, what, path):
    """The number of values of ``shape``, exactly (no int64 wrap: a header
    claiming (2**32, 2**32) must not pass as 0 values)."""
    count = math.prod(int(n) for n in shape)
    if count > np.iinfo(np.intp).max:
        raise GoldenError(f"{what}: {path} declares shape {_shape_text(shape)}: too large "
                          f"({count} values)")
    return count


def is_npy(path):
    return str(path).lower().endswith(".npy")


def read_npy(path, what, nofollow=False):
    """The whole array of a .npy file; ``what`` names it in errors.
    ``nofollow``: a symlink is refused (open_data)."""
    check_data_file(path, what)
    try:
        with open_data(path, what, nofollow) as f:
            arr = np.load(f, allow_pickle=False)
    except (OSError, ValueError, EOFError, OverflowError, TypeError, MemoryError) as exc:
        if isinstance(exc, GoldenError):
            raise
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
    check_data_file(path, what)
    if dtype is None:
        raise GoldenError(f"{what}: {path} is a raw file: give its dtype with --dtype "
                          f"(one of {', '.join(DTYPES)})")
    with open_data(path, what) as f:
        size = os.fstat(f.fileno()).st_size
    count, extra = divmod(size, dtype.itemsize)
    if extra:
        raise GoldenError(f"{what}: {path} holds {size} bytes, not a whole number of "
                          f"{dtype} values ({dtype.itemsize} bytes each)")
    needed = None if shape is None else math.prod(int(n) for n in shape)
    if needed is not None and count != needed:
        per_value, rest = divmod(size, needed) if needed else (0, 1)
        if not rest and per_value in (1, 2, 4, 8, 16) and per_value != dtype.itemsize:
            # The size fits the shape in another dtype: say dtype, not shape.
            raise GoldenError(f"{what}: {path} holds {size} bytes, {per_value} per value "
                              f"for shape {_shape_text(shape)}, but its dtype should be "
                              f"{dtype} ({dtype.itemsize} bytes): a dtype mismatch")
        raise GoldenError(f"{what}: {path} holds {count} {dtype} values "
                          f"({size} bytes), but --shape {_shape_text(shape)} "
                          f"needs {needed}")
    return count


def read_raw(path, what, dtype, shape):
    """The whole array of a raw file; one dimension when ``shape`` is None."""
    count = raw_count(path, what, dtype, shape)
    try:
        with open_data(path, what) as f:
            arr = np.fromfile(f, dtype=dtype)
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


def read_npy_header(f):
    """(shape, fortran_order, dtype) from the .npy header at the start of the
    open file ``f``, which is left at the first byte of the data."""
    fmt = np.lib.format
    version = fmt.read_magic(f)
    read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    return read(f)


class ArrayFile:
    """An array in a file, for reading in chunks.

    A raw file needs ``dtype`` (and ``shape``, else one dimension); a .npy
    file has its own, which ``dtype`` and ``shape``, when given, must match.
    :meth:`chunks` yields the values in C order, native byte order."""

    def __init__(self, path, what, dtype=None, shape=None, nofollow=False):
        self.path, self.what, self.nofollow = str(path), what, nofollow
        self.fortran = False
        if is_npy(path):
            self._open_npy(dtype, shape)
        else:
            count = raw_count(self.path, what, dtype, shape)
            self.dtype, self.shape = np.dtype(dtype), (count,) if shape is None else shape
            self.offset = 0

    def _open_npy(self, dtype, shape):
        check_data_file(self.path, self.what)
        try:
            with open_data(self.path, self.what, self.nofollow) as f:
                self.shape, self.fortran, stored = read_npy_header(f)
                self.offset = f.tell()
                file_size = os.fstat(f.fileno()).st_size
        except (OSError, ValueError, EOFError, OverflowError, TypeError) as exc:
            if isinstance(exc, GoldenError):
                raise
            raise GoldenError(f"{self.what}: {self.path} is not a readable .npy file: "
                              f"{exc}") from None
        self.dtype = as_supported(np.empty(0, stored)).dtype
        if stored.hasobject or self.dtype.newbyteorder("=") not in DTYPES.values():
            raise GoldenError(f"{self.what}: {self.path} holds {stored}, not one of "
                              f"{', '.join(DTYPES)}")
        if dtype is not None and self.dtype.newbyteorder("=") != dtype:
            raise GoldenError(f"{self.what}: {self.path} has dtype {self.dtype.name}, "
                              f"not {np.dtype(dtype).name}")
        if shape is not None and tuple(self.shape) != tuple(shape):
            raise GoldenError(f"{self.what}: {self.path} has shape {_shape_text(self.shape)}"
                              f", not {_shape_text(shape)}")
        expected = self.offset + element_count(self.shape, self.what, self.path) \
            * self.dtype.itemsize
        if file_size < expected:
            raise GoldenError(f"{self.what}: {self.path} is shorter than its header says "
                              f"({file_size} bytes, not {expected})")

    @property
    def size(self):
        return element_count(self.shape, self.what, self.path)

    def read(self):
        """The whole array, shaped."""
        if is_npy(self.path):  # as the header was read: through no link if nofollow
            return read_npy(self.path, self.what, self.nofollow)
        return read_raw(self.path, self.what, self.dtype, self.shape)

    def chunks(self, count):
        """Arrays of up to ``count`` values, in C order.  Each may reuse the
        previous one's memory: use it before asking for the next."""
        if self.fortran:  # stored in Fortran order: rare, read whole
            flat = self.read().ravel(order="C")
            for start in range(0, flat.size, count):
                yield flat[start:start + count]
            return
        native = self.dtype.newbyteorder("=")
        buf = np.empty(min(count, self.size), self.dtype)
        with open_data(self.path, self.what, self.nofollow) as f:
            f.seek(self.offset)
            for start in range(0, self.size, count):
                part = buf[:min(count, self.size - start)]
                if f.readinto(part.view(np.uint8).data) != part.nbytes:
                    raise GoldenError(f"{self.what}: {self.path} changed size while "
                                      f"being read")
                yield part if part.dtype == native else part.astype(native)


def npy_header(dtype, shape):
    """The header ``np.save`` writes for an array of this dtype and shape."""
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
              "fortran_order": False, "shape": tuple(shape)}
    out = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(out, header)
    except ValueError:  # too long for version 1.0, as np.save decides too
        out = io.BytesIO()
        np.lib.format.write_array_header_2_0(out, header)
    return out.getvalue()


def write_chunks(f, chunks, dtype, shape, npy):
    """Write an array given as C-order ``chunks`` to the binary file ``f``:
    a .npy header first if ``npy``, then the values' bytes."""
    if npy:
        f.write(npy_header(dtype, shape))
    for chunk in chunks:
        # As bytes: the buffer protocol has no format for bfloat16.
        f.write(np.ascontiguousarray(chunk).reshape(-1).view(np.uint8).data)
