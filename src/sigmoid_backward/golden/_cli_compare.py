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

from .._atomic_write import Signals, Terminated, WriteError, check_target, replace_file
from .._cli import ArgumentParser, command
from .._paths import check_directory, check_file
from ._args import dtype_arg, shape_arg
from ._compare import ALL, CHUNK, compare_many, csv_rows
from ._dtype_names import choices, lookup
from ._dumps import BF16_AS, open_output, read_map
from ._errors import GoldenError
from ._files import ArrayFile, is_npy
from ._standards import ALIASES, ATK_ACC, DEFAULT, STANDARDS, Options, resolve


def _prog():
    """The command as the user typed it, for usage and errors."""
    return command("compare")


def _parser():
    standards = "\n".join(f"  {s.name}{''.join(f' (alias {a})' for a in s.aliases)}: "
                           f"{s.rule}\n    ({s.source})" for s in STANDARDS.values())
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
    p.add_argument("--standard", default=None, choices=[*STANDARDS, *ALIASES, ALL],
                   help=f"the precision standard, or {ALL} (default: a manifest case's own, "
                        f"else {DEFAULT})")
    for key in ("rtol", "atol", "ptol"):
        p.add_argument(f"--{key}", type=_tolerance_arg(key), metavar="X",
                       help=f"replace the standard's {key} (where it has one)")
    p.add_argument("--benchmark-precision", choices=["same", "raised"], default=None,
                   help="the benchmark precision of the msprobe standards (default theirs: "
                        "raised)")
    p.add_argument("--third-party", metavar="FILE",
                   help="a second device's output (same dtype and shape), for msprobe's "
                        "NPU/GPU ratio rule")
    p.add_argument("--csv", metavar="TABLE",
                   help="also write a table: one row per case and standard")
    p.add_argument("--bf16-as", choices=BF16_AS, default=None,
                   help="the device's bfloat16 output is stored as float32 values or uint16 "
                        "bits (.npy or raw)")
    p.add_argument("--map", metavar="FILE",
                   help="with --manifest: a JSON object of golden file (or case) names to "
                        "the device's file names in --actual-dir")
    p.add_argument("--hist", action="store_true",
                   help="print each result's error histogram (log2 buckets of the "
                        "standard's own error measure)")
    p.add_argument("--json", metavar="REPORT", help="also write every result to this file")
    p.add_argument("--worst", type=int, default=5, metavar="K",
                   help="how many of the worst elements to report (default 5)")
    return p


def _tolerance_arg(key):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value >= 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number >= 0")
        return value
    parse.__name__ = f"--{key}"
    return parse


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
    if args.map is not None and args.manifest is None:
        p.error("--map goes with --manifest")
    if args.third_party is not None and args.manifest is not None:
        p.error("--third-party goes with ACTUAL GOLDEN, not --manifest")


def _pair(actual, golden, dtype, shape, bf16_as=None):
    """Open both files; a raw one takes a .npy partner's dtype and shape."""
    if bf16_as is not None or str(actual).lower().endswith(".pt"):
        # A dump: the golden says what it must hold.
        g = ArrayFile(golden, "GOLDEN", dtype, shape)
        return open_output(actual, "ACTUAL", g.dtype.newbyteorder("="), g.shape, bf16_as), g
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


def _manifest_pairs(manifest, actual_dir, names=None, bf16_as=None):
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
            own = os.path.basename(case["golden"])
            names = names or {}
            actual = os.path.join(actual_dir, names.get(case["name"], names.get(own, own)))
            found.append((case["name"], [open_output(actual, "--actual-dir", dtype, shape,
                                                     bf16_as),
                                     ArrayFile(golden, "--manifest", dtype, shape)],
                          case.get("tolerance"), _case_standard(case)))
        return found
    except OSError as exc:
        raise GoldenError(f"--manifest: cannot read {manifest}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, GoldenError):
            raise
        raise GoldenError(f"--manifest: {manifest} is not a manifest of golden --cases "
                          f"({type(exc).__name__}: {exc})") from None


def _case_standard(case):
    """The standard a manifest case asks for (ATK's ``"standard": {"acc":
    ...}``, kept by golden --cases), or None."""
    acc = case.get("standard")
    if acc is None:
        return None
    try:
        return ATK_ACC.get(acc, None) or resolve(acc)
    except (KeyError, TypeError):
        raise GoldenError(f"--manifest: {case['name']}: unknown standard {acc!r}; known: "
                          f"{', '.join([*ATK_ACC, *STANDARDS])}") from None


def _judge(args, name, files, tolerance, case_standard):
    """Every result of one case: under --standard, else its own, else the default."""
    standard = args.standard or case_standard or DEFAULT
    overrides = {k: getattr(args, k) for k in ("rtol", "atol", "ptol")
                 if getattr(args, k) is not None}
    options = Options(tolerance=tolerance, overrides=overrides,
                      benchmark=args.benchmark_precision, third_party=len(files) > 2)
    chunks = zip(*(f.chunks(CHUNK) for f in files), strict=True)
    a = files[1]  # the golden: what the output must hold
    results = compare_many(chunks, a.dtype.newbyteorder("="), a.shape, standard, options,
                           args.worst, name, args.hist)
    for result in results:
        print(result.line(), flush=True)
        for note in result.notes:
            print(f"  note: {note}")
        if result.limits.get("overridden"):
            print("  overridden: " + ", ".join(f"{k} = {result.limits[k]}"
                                                for k in result.limits["overridden"]))
        for bucket, count in (result.hist or {}).items():
            print(f"  {bucket:>8}: {count}")
    return results


def run(args):
    """Compare every case; return the results."""
    for path, label in ((args.json, "--json"), (args.csv, "--csv")):
        if path is not None:
            check_target(path, label)  # refuse a bad report path before comparing
    if args.manifest is not None:
        names = read_map(args.map) if args.map is not None else None
        todo = _manifest_pairs(args.manifest, args.actual_dir, names, args.bf16_as)
    else:
        a, g = _pair(args.actual, args.golden, args.dtype, args.shape, args.bf16_as)
        files = [a, g]
        if args.third_party is not None:
            files.append(ArrayFile(args.third_party, "--third-party", a.dtype.newbyteorder("="),
                                   a.shape))
        todo = [(None, files, None, None)]
    results = []
    for name, files, tolerance, case_standard in todo:
        results.extend(_judge(args, name, files, tolerance, case_standard))
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
            standards = sorted({r.standard for r in results})
            what = "cases" if len(standards) == 1 else "results"
            print(f"{passed} of {len(results)} {what} passed under {', '.join(standards)}")
            if args.csv is not None:
                text = csv_rows(results)
                replace_file(args.csv, lambda f: f.write(text.encode()), signals, {},
                             label="--csv")
            if args.json is not None:
                report = {"standard": args.standard or "per case",
                          "passed": passed == len(results),
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
