"""``python -m sigmoid_backward golden``: golden data files for kernel tests.

Two modes:

- **one case from files**: ``--grad-output G --output Y --out R [--dtype D]
  [--shape S]`` reads both inputs (``.npy``, or raw given ``--dtype``;
  ``_files``), computes :func:`sigmoid_backward.sigmoid_backward`, and writes
  the result.  ``--dtype``, when given, is also the compute and result dtype
  (for ``.npy`` inputs it is the function's ``dtype=``); otherwise the
  inputs' promotion.  The result is written in the format its name says
  (``R.npy``, or raw), all or nothing (``_atomic_write``).
- **a case set**: ``--cases FILE --out-dir DIR [--format bin|npy] [--seed
  N] [--max-bytes N]`` writes every case's inputs, golden and
  ``DIR/manifest.json`` (``_generate``), a line per case.

Exit status, as ``compare``'s: 0 when everything was written; 2 for a usage
error or a bad argument or file (a missing input, a size that does not match
the shape, a malformed case file, a case set over ``--max-bytes``), found
before anything is written; 3 when a write failed once writing began (a
full disk, a symlink planted in the folder): with ``--cases``, the other
cases are written all the same and the manifest marks the lost ones
``"error"``.  Every error is one line on stderr.

SIGINT, SIGTERM or SIGHUP remove the file being written; the command then
exits with 128 + the signal's number (130, 143, 129), as a shell reports a
command the signal killed.
"""
import argparse
import signal
import sys

import numpy as np

from .._numpy._function import sigmoid_backward
from .._tools._cli import ArgumentParser, command
from ._args import dtype_arg, print_line, shape_arg
from ._atomic_write import Signals, Terminated, WriteError, check_target, replace_file
from ._dtype_names import DTYPES
from ._errors import GoldenError
from ._files import is_npy, read_npy, read_raw
from ._generate import FORMATS, generate

SINGLE = ("grad_output", "output", "out")
CASE_SET = ("out_dir", "format", "seed", "max_bytes")
# Exit statuses (docs/golden.md): 1, a case failing its standard, is compare's.
REFUSED, NOT_WRITTEN = 2, 3


def _prog():
    """The command as the user typed it, for usage and errors."""
    return command("golden")


def _parser():
    p = ArgumentParser(
        prog=_prog(),
        description="Compute sigmoid_backward(grad_output, output) from files and write "
                    "the result: .npy files, or raw .bin files (as tofile writes them) "
                    "given --dtype and --shape.  Or, with --cases, generate inputs and "
                    "goldens for every case of an ATK json or TTK csv.")
    p.add_argument("--grad-output", metavar="G",
                   help="grad_output: a .npy file, or a raw file")
    p.add_argument("--output", metavar="Y",
                   help="output (the sigmoid's forward result): a .npy file, or a raw file")
    p.add_argument("--out", metavar="R",
                   help="where to write the result: .npy, or raw for any other name; "
                        "a regular file or a new name (a symlink is followed), "
                        "replaced whole, keeping its mode")
    p.add_argument("--dtype", type=dtype_arg, metavar="DTYPE",
                   help="dtype of the raw inputs, and the compute and result dtype: "
                        + ", ".join(DTYPES))
    p.add_argument("--shape", type=shape_arg, metavar="N,N,...",
                   help="shape of the raw inputs, e.g. 2,3,4 (default: one dimension)")
    cases = p.add_argument_group("a case set")
    cases.add_argument("--cases", metavar="FILE",
                       help="an ATK json, TTK kernel csv or TTK aclnn csv: generate every "
                            "case (instead of --grad-output/--output/--out)")
    cases.add_argument("--out-dir", metavar="DIR",
                       help="where to write the cases' files and manifest.json")
    cases.add_argument("--format", choices=FORMATS,
                       help="raw little-endian .bin files (default) or .npy")
    cases.add_argument("--seed", type=int, metavar="N",
                       help="mixed with each case's name into its seed (default 0)")
    cases.add_argument("--max-bytes", type=_bytes_arg, metavar="N",
                       help="refuse a case set whose files would take more than N bytes "
                            "(default: the free space of the disk)")
    return p


def _bytes_arg(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"bad byte count {text!r}: expected an integer >= 0")
    return value


def _options(names):
    return ", ".join("--" + n.replace("_", "-") for n in names)


def _check_mode(p, args):
    """One mode or the other, each with what it needs (usage errors: exit 2)."""
    if args.cases is not None:
        extra = [n for n in (*SINGLE, "dtype", "shape") if getattr(args, n) is not None]
        if extra:
            p.error(f"--cases generates its own inputs: drop {_options(extra)}")
        if args.out_dir is None:
            p.error("the following arguments are required with --cases: --out-dir")
        return
    missing = [n for n in SINGLE if getattr(args, n) is None]
    if missing:
        p.error(f"the following arguments are required: {_options(missing)}")
    extra = [n for n in CASE_SET if getattr(args, n) is not None]
    if extra:
        p.error(f"{_options(extra)} go with --cases")


def run(args, signals=None, progress=None):
    """Compute and write the golden result of one case; return a one-line summary."""
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


def _run_cases(args, signals, done, progress):
    """Write the case set; return (summary line, how many cases were lost)."""
    def log(line):
        progress["writing"] = True
        done.append(line)
        print_line(line)
    manifest = generate(args.cases, args.out_dir, fmt=args.format or "bin",
                        seed=args.seed or 0, log=log, signals=signals,
                        max_bytes=args.max_bytes)
    lost = [c["name"] for c in manifest["cases"] if "error" in c]
    written = len(manifest["cases"]) - len(lost)
    if lost:
        return (f"wrote {written} of {len(manifest['cases'])} cases and their manifest.json "
                f"to {args.out_dir}; ERROR (not written): {', '.join(lost)}", len(lost))
    return f"wrote {written} cases and their manifest.json to {args.out_dir}", 0


def main(argv):
    """Entry point; ``argv`` excludes the ``golden`` word.  Returns the exit status."""
    p = _parser()
    args = p.parse_args(argv)  # exits with status 2 on usage errors
    _check_mode(p, args)
    progress: dict[str, object] = {}
    done: list[str] = []
    lost = 0
    with Signals() as signals:
        try:
            if args.cases is None:
                print_line(run(args, signals, progress))
            else:
                line, lost = _run_cases(args, signals, done, progress)
                print_line(line)
        except (GoldenError, WriteError, MemoryError) as exc:
            # Found before the first write: nothing was written (2); else 3.
            status = NOT_WRITTEN if progress.get("writing") else REFUSED
            return _error(str(exc) or "not enough memory for these inputs", status)
        except KeyboardInterrupt:
            return _stopped("interrupted", args, progress, done, signal.SIGINT)
        except Terminated as exc:
            return _stopped(f"terminated by {signal.Signals(exc.signum).name}", args,
                            progress, done, exc.signum)
        except Exception as exc:  # a case not foreseen above: still one line
            status = NOT_WRITTEN if progress.get("writing") else REFUSED
            return _error(f"unexpected {type(exc).__name__}: {exc}", status)
    return NOT_WRITTEN if lost else 0


def _error(message, status):
    print(f"{_prog()}: error: {' '.join(message.split())}", file=sys.stderr)
    return status


def _stopped(why, args, progress, done, signum):
    if args.cases is not None:
        what = f"{len(done)} cases were written, {args.out_dir}/manifest.json was not"
    else:
        what = f"{args.out} {'was' if progress.get('written') else 'was not'} written"
    print(f"{_prog()}: {why}; {what}", file=sys.stderr)
    return 128 + int(signum)
