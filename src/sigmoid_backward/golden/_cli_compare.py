"""``python -m sigmoid_backward compare``: judge a device's output against
its golden under one of the precision standards NPU tests use.

- ``compare ACTUAL GOLDEN [--dtype D] [--shape S]``: one pair of files
  (``.npy``, or raw given ``--dtype``; a raw file takes the dtype and shape
  of a ``.npy`` partner).
- ``compare --manifest M --actual-dir D``: every case of a manifest written
  by ``golden --cases``; each case's actual output is the file in ``D``
  named as its golden.

Files are read in chunks, so memory stays bounded whatever their size.  One
line per case on stdout, a summary, and with ``--json REPORT`` every result
in full.  Exit status: 0 if every case passes, 1 if any fails, 2 for a
usage error or a file that cannot be read (one line on stderr).
"""
import argparse
import json
import os
import signal
import sys

from .._tools._cli import ArgumentParser, command
from .._tools._paths import check_directory, check_file
from ._args import dtype_arg, shape_arg
from ._atomic_write import Signals, Terminated, WriteError, check_target, replace_file
from ._compare import CHUNK, compare_chunks
from ._dtype_names import choices, lookup
from ._errors import GoldenError
from ._files import ArrayFile, is_npy
from ._standards import DEFAULT, STANDARDS


def _prog():
    """The command as the user typed it, for usage and errors."""
    return command("compare")


def _parser():
    standards = "\n".join(f"  {s.name}: {s.rule}\n    ({s.source})"
                           for s in STANDARDS.values())
    p = ArgumentParser(
        prog=_prog(), formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare a device's output with its golden under a precision standard\n"
                    "of NPU operator tests; exit 0 if every case passes, 1 if any fails,\n"
                    "2 on usage errors and unreadable files.",
        epilog=f"standards (docs/golden.md has their numbers):\n{standards}")
    p.add_argument("actual", nargs="?", metavar="ACTUAL", help="the device's output file")
    p.add_argument("golden", nargs="?", metavar="GOLDEN", help="the golden file")
    p.add_argument("--dtype", type=dtype_arg, metavar="DTYPE",
                   help=f"dtype of raw files: {choices()}")
    p.add_argument("--shape", type=shape_arg, metavar="N,N,...",
                   help="shape of raw files, e.g. 2,3,4 (default: one dimension)")
    p.add_argument("--manifest", metavar="M", help="a manifest.json written by golden --cases")
    p.add_argument("--actual-dir", metavar="D",
                   help="with --manifest: the folder of the device's outputs")
    p.add_argument("--standard", default=DEFAULT, choices=list(STANDARDS),
                   help=f"the precision standard (default {DEFAULT})")
    p.add_argument("--json", metavar="REPORT", help="also write every result to this file")
    p.add_argument("--worst", type=int, default=5, metavar="K",
                   help="how many of the worst elements to report (default 5)")
    return p


def _check_mode(p, args):
    if args.manifest is not None or args.actual_dir is not None:
        if args.manifest is None or args.actual_dir is None:
            p.error("--manifest and --actual-dir go together")
        if args.actual is not None or args.dtype is not None or args.shape is not None:
            p.error("--manifest names the files, dtypes and shapes: drop ACTUAL, GOLDEN, "
                    "--dtype and --shape")
    elif args.golden is None:
        p.error("give ACTUAL and GOLDEN, or --manifest and --actual-dir")
    if args.worst < 0:
        p.error("--worst must be >= 0")


def _pair(actual, golden, dtype, shape):
    """Open both files; a raw one takes a .npy partner's dtype and shape."""
    paths = {"ACTUAL": actual, "GOLDEN": golden}
    first = next((w for w in paths if is_npy(paths[w])), "GOLDEN")
    opened = {first: ArrayFile(paths[first], first, dtype, shape)}
    second = "ACTUAL" if first == "GOLDEN" else "GOLDEN"
    if dtype is None and shape is None and is_npy(paths[first]):
        dtype, shape = opened[first].dtype.newbyteorder("="), opened[first].shape
    opened[second] = ArrayFile(paths[second], second, dtype, shape)
    a, g = opened["ACTUAL"], opened["GOLDEN"]
    if a.dtype.newbyteorder("=") != g.dtype.newbyteorder("="):
        raise GoldenError(f"ACTUAL holds {a.dtype.name}, GOLDEN {g.dtype.name}")
    if tuple(a.shape) != tuple(g.shape):
        raise GoldenError(f"ACTUAL has shape {list(a.shape)}, GOLDEN {list(g.shape)}")
    return a, g


def _manifest_pairs(manifest, actual_dir):
    """(name, actual, golden, tolerance) of every case, all opened first, so
    that a missing or short file stops the run before any comparison."""
    check_file(manifest, "--manifest", "a manifest.json written by golden --cases",
               GoldenError)
    check_directory(actual_dir, "--actual-dir", "a directory of the device's outputs",
                    GoldenError)
    try:
        with open(manifest, encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        folder = os.path.dirname(os.path.abspath(manifest))
        found = []
        for case in cases:
            dtype, shape = lookup(case["dtype"]), tuple(case["shape"])
            golden = os.path.join(folder, case["golden"])
            actual = os.path.join(actual_dir, os.path.basename(case["golden"]))
            found.append((case["name"], ArrayFile(actual, "--actual-dir", dtype, shape),
                          ArrayFile(golden, "--manifest", dtype, shape),
                          case.get("tolerance")))
        return found
    except OSError as exc:
        raise GoldenError(f"--manifest: cannot read {manifest}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, GoldenError):
            raise
        raise GoldenError(f"--manifest: {manifest} is not a manifest of golden --cases "
                          f"({type(exc).__name__}: {exc})") from None


def run(args):
    """Compare every case; return the results."""
    if args.json is not None:
        check_target(args.json, "--json")  # refuse a bad --json before comparing
    if args.manifest is not None:
        todo = _manifest_pairs(args.manifest, args.actual_dir)
    else:
        a, g = _pair(args.actual, args.golden, args.dtype, args.shape)
        todo = [(None, a, g, None)]
    results = []
    for name, a, g, tolerance in todo:
        pairs = zip(a.chunks(CHUNK), g.chunks(CHUNK), strict=True)
        result = compare_chunks(pairs, a.dtype.newbyteorder("="), a.shape, args.standard,
                                tolerance, args.worst, name)
        print(result.line(), flush=True)
        results.append(result)
    return results


def main(argv):
    """Entry point; ``argv`` excludes the ``compare`` word.  Returns the exit status."""
    p = _parser()
    args = p.parse_args(argv)  # exits with status 2 on usage errors
    _check_mode(p, args)
    with Signals() as signals:
        try:
            results = run(args)
            passed = sum(r.passed for r in results)
            print(f"{passed} of {len(results)} cases passed under {args.standard}")
            if args.json is not None:
                report = {"standard": args.standard, "passed": passed == len(results),
                          "cases": [r.as_dict() for r in results]}
                text = json.dumps(report, indent=1, allow_nan=False) + "\n"
                replace_file(args.json, lambda f: f.write(text.encode()), signals, {},
                             label="--json")
        except (GoldenError, WriteError) as exc:
            return _error(str(exc))
        except MemoryError:
            return _error("not enough memory for these files")
        except KeyboardInterrupt:
            print(f"{_prog()}: interrupted", file=sys.stderr)
            return 128 + signal.SIGINT
        except Terminated as exc:
            print(f"{_prog()}: terminated by {signal.Signals(exc.signum).name}",
                  file=sys.stderr)
            return 128 + int(exc.signum)
        except Exception as exc:  # a case not foreseen above: still one line
            return _error(f"unexpected {type(exc).__name__}: {exc}")
    return 0 if passed == len(results) else 1


def _error(message):
    print(f"{_prog()}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2
