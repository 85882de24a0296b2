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
over ``R`` at the end, so ``R`` is either complete or untouched:

- ``R`` a symlink: the file it points to is replaced (created, if the link
  dangles); the link stays a link.
- ``R`` not a regular file (a FIFO, a device such as ``/dev/null``, a
  directory, a socket): refused.  Such a file cannot be replaced without
  destroying it (as root, replacing ``/dev/null`` breaks the system), and a
  stream cannot take a file atomically; writing into a FIFO would also block
  until a reader comes.  A golden result is a file to keep and read back.
- an existing ``R`` keeps its permission bits, and its owner and group where
  this process may set them (root, or a group it belongs to); a new ``R``
  gets ``0666`` less the umask.  An ``R`` this process may not write is
  refused, as the shell's ``>`` refuses it.
- ``R`` is a new file (a new inode), as with ``mv``: another hard link to
  the old file keeps the old contents.  Writing in place would break the
  all-or-nothing promise, and would also change every other name of a file
  that a build cache may have hard-linked.
- SIGINT, SIGTERM or SIGHUP during the run remove the temporary file; the
  command then exits with 128 + the signal's number (130, 143, 129), as a
  shell reports a command the signal killed.

Errors (a missing file, a size that does not match the shape, an unknown
dtype, inputs that do not broadcast, an ``.npz`` archive under a ``.npy``
name, a shape too large or of too many dimensions, an ``--out`` that is not a
regular file, ...) print one line on stderr and exit with status 1; usage
errors exit with status 2, as argparse does.
"""
import argparse
import contextlib
import os
import signal
import stat
import sys
import tempfile
import threading

import numpy as np

from . import _dtypes
from ._function import sigmoid_backward

DTYPES = _dtypes.BY_NAME
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
                   help="where to write the result: .npy, or raw for any other name; "
                        "a regular file or a new name (a symlink is followed), "
                        "replaced whole, keeping its mode")
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
    except (OSError, ValueError, EOFError, OverflowError, TypeError) as exc:
        # OverflowError, ValueError: a header declaring an impossible shape
        raise GoldenError(f"{what}: {path} is not a readable .npy file: {exc}") from None
    if not isinstance(arr, np.ndarray):  # np.load opens .npz archives whatever their name
        if hasattr(arr, "close"):
            arr.close()
        raise GoldenError(f"{what}: {path} is an .npz archive ({type(arr).__name__}), "
                          f"not a .npy file")
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
    if shape is None:
        return arr
    try:
        return arr.reshape(shape)
    except (ValueError, OverflowError) as exc:  # too many dims, or too large
        raise GoldenError(f"--shape {','.join(map(str, shape))}: {exc}") from None


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def _not_regular(path, mode):
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return GoldenError(f"--out: {path} is {kind}, not a regular file: golden writes "
                       f"regular files only")


def _target(path):
    """The file that ``--out path`` replaces, and its stat (None if new).

    A symlink is followed to the file it points to, which is replaced and
    keeps being pointed to; anything but a regular file is refused."""
    if not path or path.endswith(("/", os.sep)):
        raise GoldenError(f"--out: {path!r} names no file")
    try:
        st = os.stat(path)  # follows symlinks, to the end of a chain
    except FileNotFoundError:
        st = None  # a new file, or a dangling symlink whose target is created
    except OSError as exc:  # a symlink loop, a file in the path, no access
        raise GoldenError(f"--out: cannot use {path}: {exc.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    if st is not None and not os.access(path, os.W_OK):
        raise GoldenError(f"--out: {path} is not writable (permission denied)")
    return os.path.realpath(path), st


class _Signals:
    """SIGINT, SIGTERM and SIGHUP as exceptions, held back in the few steps
    where an exception would lose track of the temporary file.

    SIGINT raises KeyboardInterrupt as usual; SIGTERM and SIGHUP raise
    :class:`_Terminated`.  A signal that is ignored (``nohup``) or handled by
    someone else stays so.  Only the main thread can take signals; elsewhere
    this does nothing."""

    def __init__(self):
        self.held, self.pending, self.previous = 0, None, {}

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            current = signal.getsignal(sig)
            expected = signal.default_int_handler if name == "SIGINT" else signal.SIG_DFL
            if current is expected:
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}

    def _handle(self, signum, frame):
        if self.held:
            self.pending = self.pending or signum
            return
        self._raise(signum)

    @staticmethod
    def _raise(signum):
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise _Terminated(signum)

    @contextlib.contextmanager
    def hold(self):
        """Hold signals back inside the block; raise the first one after."""
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1
            if not self.held and self.pending is not None:
                signum, self.pending = self.pending, None
                self._raise(signum)  # takes precedence over an error in the block


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (a BaseException, like KeyboardInterrupt,
    so that nothing on the way treats it as an ordinary error)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _keep_owner_and_mode(fd, tmp, st):
    """Give the new file (open as ``fd``, named ``tmp``) the owner, group and
    permission bits of the file it replaces (``st``), as far as this process
    may; a new ``--out`` gets 0666 less the umask (mkstemp made it 0600)."""
    if st is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    else:
        mode = stat.S_IMODE(st.st_mode)
        owner_kept = not hasattr(os, "fchown")
        if hasattr(os, "fchown"):
            try:  # root may; others only their own uid and groups they are in
                os.fchown(fd, st.st_uid, st.st_gid)
                owner_kept = True
            except OSError:
                try:
                    os.fchown(fd, -1, st.st_gid)
                except OSError:
                    pass
        if not owner_kept:  # no set-id bits on a file of another owner
            mode &= ~(stat.S_ISUID | stat.S_ISGID)
    # After the chown, which clears the set-id bits.
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows: chmod by name; only the read-only bit exists there
        os.chmod(tmp, mode)


def _write(arr, path, npy, signals, progress):
    """Write to a temporary file beside the target of ``path``, then rename
    it over the target (see the module's docstring for what is kept)."""
    target, st = _target(path)
    folder = os.path.dirname(target)
    tmp = f = None
    try:
        with signals.hold():  # no signal between creating the file and knowing its name
            try:
                fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".",
                                           suffix=".tmp", dir=folder)
            except OSError as exc:
                raise GoldenError(f"--out: cannot write in {folder}: {exc}") from None
            f = os.fdopen(fd, "wb")  # closes fd whatever happens next
        with f:
            if npy:
                np.save(f, arr, allow_pickle=False)
            else:
                arr.tofile(f)
            f.flush()
            os.fsync(f.fileno())
            _keep_owner_and_mode(f.fileno(), tmp, st)
        # The target may have changed while we computed and wrote: never
        # replace what has become a symlink, FIFO or device meanwhile.
        try:
            now = os.lstat(target)
        except FileNotFoundError:
            now = None
        if now is not None and not stat.S_ISREG(now.st_mode):
            raise GoldenError(f"--out: {path} changed while the result was written; "
                              f"left as it is") from None
        with signals.hold():  # replaced and recorded as such, or neither
            os.replace(tmp, target)
            tmp = None
            progress["written"] = True
    except OSError as exc:
        raise GoldenError(f"--out: cannot write {path}: {exc}") from None
    finally:  # any failure, Ctrl-C, SIGTERM: never leave the temporary behind
        if tmp is not None:
            if f is not None:  # closed already, unless a signal came right after fdopen
                with contextlib.suppress(OSError):
                    f.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def run(args, signals=None, progress=None):
    """Compute and write the golden result; return a one-line summary."""
    signals = _Signals() if signals is None else signals
    progress = {} if progress is None else progress
    raw_inputs = [p for p in (args.grad_output, args.output) if not _is_npy(p)]
    if args.shape is not None and not raw_inputs:
        raise GoldenError("--shape describes raw inputs; .npy files carry their own shape")
    _target(args.out)  # refuse a bad --out before reading and computing
    arrays = []
    for path, what in ((args.grad_output, "--grad-output"), (args.output, "--output")):
        if _is_npy(path):
            arrays.append(_read_npy(path, what))
        else:
            arrays.append(_read_raw(path, what, args.dtype, args.shape))
    g, y = arrays
    try:
        result = sigmoid_backward(g, y, dtype=args.dtype)
    except (TypeError, ValueError, OverflowError, RuntimeError) as exc:
        # RuntimeError: NumPy's iterators refuse some shapes of over 32 dims
        raise GoldenError(str(exc)) from None
    result = np.asarray(result)  # 0-d inputs give a NumPy scalar
    _write(result, args.out, _is_npy(args.out), signals, progress)
    return (f"wrote {args.out}: {result.dtype}, shape "
            f"{','.join(map(str, result.shape)) or '()'}")


def main(argv):
    """Entry point; ``argv`` excludes the ``golden`` word.  Returns the exit status."""
    args = _parser().parse_args(argv)  # exits with status 2 on usage errors
    progress: dict[str, object] = {}
    with _Signals() as signals:
        try:
            print(run(args, signals, progress))
        except GoldenError as exc:
            return _error(str(exc))
        except MemoryError:
            return _error("not enough memory for these inputs")
        except KeyboardInterrupt:
            return _stopped("interrupted", args, progress, signal.SIGINT)
        except _Terminated as exc:
            return _stopped(f"terminated by {signal.Signals(exc.signum).name}", args,
                            progress, exc.signum)
        except Exception as exc:  # a case not foreseen above: still one line
            return _error(f"unexpected {type(exc).__name__}: {exc}")
    return 0


def _error(message):
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    return 1


def _stopped(why, args, progress, signum):
    done = "was written" if progress.get("written") else "was not written"
    print(f"{PROG}: {why}; {args.out} {done}", file=sys.stderr)
    return 128 + int(signum)
