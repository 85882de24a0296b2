"""``python -m sigmoid_backward golden``: golden data files for kernel tests.

Reads ``grad_output`` and ``output`` from files, computes
:func:`sigmoid_backward.sigmoid_backward`, and writes the result.

Formats, chosen per file by its name:

- ``*.npy``: NumPy's format, which carries dtype and shape, so inputs may
  differ in dtype and broadcast against each other.  NumPy writes bfloat16 as
  the 2-byte void type ``|V2``; such a file is read back as bfloat16.
- any other name (``*.bin`` as NPU test suites write it with ``tofile``):
  raw values in the machine's byte order (little-endian on x86-64 and
  AArch64), no header.  ``--dtype`` names their dtype and is required;
  ``--shape`` their shape (both raw inputs have the same dtype and shape),
  by default one dimension holding the whole file.

``--dtype``, when given, is also the compute and result dtype (for ``.npy``
inputs it is the function's ``dtype=``); otherwise the inputs' promotion.
The result is written in the format its name says (``--out R.npy`` or
``--out R.bin``), to a temporary file in the same folder first and renamed
over ``R`` at the end, so ``R`` is either complete or untouched.

Errors (a missing file, a size that does not match the shape, an unknown
dtype, inputs that do not broadcast, ...) print one line on stderr and exit
with status 1; usage errors exit with status 2, as argparse does.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

from . import _dtypes
from ._function import sigmoid_backward

DTYPES = {
    "float16": _dtypes.FLOAT16,
    "bfloat16": _dtypes.BFLOAT16,
    "float32": _dtypes.FLOAT32,
    "float64": _dtypes.FLOAT64,
    "complex64": _dtypes.COMPLEX64,
    "complex128": _dtypes.COMPLEX128,
}
# The short names NPU tooling uses.
ALIASES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}

PROG = "python -m sigmoid_backward golden"


class GoldenError(Exception):
    """A problem with the user's files or arguments: reported in one line."""


def _dtype(text):
    name = ALIASES.get(text.strip().lower(), text.strip().lower())
    try:
        return DTYPES[name]
    except KeyError:
        raise argparse.ArgumentTypeError(
            f"unknown dtype {text!r}; choose one of {', '.join(DTYPES)} "
            f"(or {', '.join(ALIASES)})") from None


def _shape(text):
    """'2,3,4' -> (2, 3, 4); '' -> () for a 0-d value."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad shape {text!r}: expected comma-separated integers such as 2,3,4") from None
    if any(n < 0 for n in shape):
        raise argparse.ArgumentTypeError(f"bad shape {text!r}: dimensions must be >= 0")
    return shape


def _parser():
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Compute sigmoid_backward(grad_output, output) from files and write "
                    "the result: .npy files, or raw .bin files (as tofile writes them) "
                    "given --dtype and --shape.")
    p.add_argument("--grad-output", required=True, metavar="G",
                   help="grad_output: a .npy file, or a raw file")
    p.add_argument("--output", required=True, metavar="Y",
                   help="output (the sigmoid's forward result): a .npy file, or a raw file")
    p.add_argument("--out", required=True, metavar="R",
                   help="where to write the result: .npy, or raw for any other name")
    p.add_argument("--dtype", type=_dtype, metavar="DTYPE",
                   help="dtype of the raw inputs, and the compute and result dtype: "
                        + ", ".join(DTYPES))
    p.add_argument("--shape", type=_shape, metavar="N,N,...",
                   help="shape of the raw inputs, e.g. 2,3,4 (default: one dimension)")
    return p


def _is_npy(path):
    return path.lower().endswith(".npy")


def _read_npy(path, what):
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise GoldenError(f"{what}: no such file: {path}") from None
    except (OSError, ValueError, EOFError) as exc:
        raise GoldenError(f"{what}: {path} is not a readable .npy file: {exc}") from None
    if arr.dtype == np.dtype("V2"):
        arr = arr.view(_dtypes.BFLOAT16)  # how np.save writes ml_dtypes' bfloat16
    return arr


def _read_raw(path, what, dtype, shape):
    if dtype is None:
        raise GoldenError(f"{what}: {path} is a raw file: give its dtype with --dtype "
                          f"(one of {', '.join(DTYPES)})")
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise GoldenError(f"{what}: no such file: {path}") from None
    except OSError as exc:
        raise GoldenError(f"{what}: cannot read {path}: {exc}") from None
    # Sizes are checked before reading, so a wrong file is not loaded whole.
    count, extra = divmod(size, dtype.itemsize)
    if extra:
        raise GoldenError(f"{what}: {path} holds {size} bytes, not a whole number of "
                          f"{dtype} values ({dtype.itemsize} bytes each)")
    if shape is not None and count != int(np.prod(shape, dtype=object)):
        raise GoldenError(f"{what}: {path} holds {count} {dtype} values "
                          f"({size} bytes), but --shape {','.join(map(str, shape))} "
                          f"needs {int(np.prod(shape, dtype=object))}")
    try:
        arr = np.fromfile(path, dtype=dtype)
    except OSError as exc:
        raise GoldenError(f"{what}: cannot read {path}: {exc}") from None
    if arr.size != count:  # the file changed while we read it
        raise GoldenError(f"{what}: {path} changed size while being read")
    return arr if shape is None else arr.reshape(shape)


def _write(arr, path, npy):
    """Write to a temporary file beside ``path``, then rename it over ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                                   suffix=".tmp", dir=folder)
    except OSError as exc:
        raise GoldenError(f"--out: cannot write in {folder}: {exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            if npy:
                np.save(f, arr, allow_pickle=False)
            else:
                arr.tofile(f)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); give it the usual mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as exc:  # also Ctrl-C: never leave the temporary behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise GoldenError(f"--out: cannot write {path}: {exc}") from None
        raise


def run(args):
    """Compute and write the golden result; return a one-line summary."""
    raw_inputs = [p for p in (args.grad_output, args.output) if not _is_npy(p)]
    if args.shape is not None and not raw_inputs:
        raise GoldenError("--shape describes raw inputs; .npy files carry their own shape")
    arrays = []
    for path, what in ((args.grad_output, "--grad-output"), (args.output, "--output")):
        if _is_npy(path):
            arrays.append(_read_npy(path, what))
        else:
            arrays.append(_read_raw(path, what, args.dtype, args.shape))
    g, y = arrays
    try:
        result = sigmoid_backward(g, y, dtype=args.dtype)
    except (TypeError, ValueError) as exc:
        raise GoldenError(str(exc)) from None
    result = np.asarray(result)  # 0-d inputs give a NumPy scalar
    _write(result, args.out, _is_npy(args.out))
    return (f"wrote {args.out}: {result.dtype}, shape "
            f"{','.join(map(str, result.shape)) or '()'}")


def main(argv):
    """Entry point; ``argv`` excludes the ``golden`` word.  Returns the exit status."""
    args = _parser().parse_args(argv)  # exits with status 2 on usage errors
    try:
        print(run(args))
    except GoldenError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{PROG}: error: not enough memory for these inputs", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; {args.out} was not written", file=sys.stderr)
        return 130
    return 0
