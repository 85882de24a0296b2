"""``python -m sigmoid_backward golden``: golden data files for kernel tests.

``--grad-output G --output Y --out R [--dtype D] [--shape S]`` reads both
inputs (``.npy``, or raw given ``--dtype``; ``_files``), computes
:func:`sigmoid_backward.sigmoid_backward`, and writes the result.
``--dtype``, when given, is also the compute and result dtype (for ``.npy``
inputs it is the function's ``dtype=``); otherwise the inputs' promotion.
The result is written in the format its name says (``R.npy``, or raw), all
or nothing (``_atomic_write``).  Errors (a missing file, a size that does
not match the shape, inputs that do not broadcast, ...) print one line on
stderr and exit with status 1; usage errors exit with status 2, as argparse
does.

SIGINT, SIGTERM or SIGHUP remove the file being written; the command then
exits with 128 + the signal's number (130, 143, 129), as a shell reports a
command the signal killed.
"""
import argparse
import signal
import sys

import numpy as np

from .._atomic_write import Signals, Terminated, WriteError, check_target, replace_file
from .._function import sigmoid_backward
from ._args import dtype_arg, shape_arg
from ._dtype_names import DTYPES
from ._errors import GoldenError
from ._files import is_npy, read_npy, read_raw

PROG = "python -m sigmoid_backward golden"


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
    p.add_argument("--dtype", type=dtype_arg, metavar="DTYPE",
                   help="dtype of the raw inputs, and the compute and result dtype: "
                        + ", ".join(DTYPES))
    p.add_argument("--shape", type=shape_arg, metavar="N,N,...",
                   help="shape of the raw inputs, e.g. 2,3,4 (default: one dimension)")
    return p


def run(args, signals=None, progress=None):
    """Compute and write the golden result; return a one-line summary."""
    signals = Signals() if signals is None else signals
    progress = {} if progress is None else progress
    raw_inputs = [p for p in (args.grad_output, args.output) if not is_npy(p)]
    if args.shape is not None and not raw_inputs:
        raise GoldenError("--shape describes raw inputs; .npy files carry their own shape")
    check_target(args.out)  # refuse a bad --out before reading and computing
    arrays = []
    for path, what in ((args.grad_output, "--grad-output"), (args.output, "--output")):
        if is_npy(path):
            arrays.append(read_npy(path, what))
        else:
            arrays.append(read_raw(path, what, args.dtype, args.shape))
    g, y = arrays
    try:
        result = sigmoid_backward(g, y, dtype=args.dtype)
    except (TypeError, ValueError, OverflowError, RuntimeError) as exc:
        # RuntimeError: NumPy's iterators refuse some shapes of over 32 dims
        raise GoldenError(str(exc)) from None
    result = np.asarray(result)  # 0-d inputs give a NumPy scalar

    def fill(f):
        if is_npy(args.out):
            np.save(f, result, allow_pickle=False)
        else:
            result.tofile(f)
    replace_file(args.out, fill, signals, progress)
    return (f"wrote {args.out}: {result.dtype}, shape "
            f"{','.join(map(str, result.shape)) or '()'}")


def main(argv):
    """Entry point; ``argv`` excludes the ``golden`` word.  Returns the exit status."""
    args = _parser().parse_args(argv)  # exits with status 2 on usage errors
    progress: dict[str, object] = {}
    with Signals() as signals:
        try:
            print(run(args, signals, progress))
        except (GoldenError, WriteError) as exc:
            return _error(str(exc))
        except MemoryError:
            return _error("not enough memory for these inputs")
        except KeyboardInterrupt:
            return _stopped("interrupted", args, progress, signal.SIGINT)
        except Terminated as exc:
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
