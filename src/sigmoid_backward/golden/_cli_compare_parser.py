"""The ``compare`` command's arguments: its parser, and the checks of which
arguments go together."""
import argparse

from .._tools._cli import ArgumentParser, command
from ._args import dtype_arg, shape_arg
from ._casefile_checks import check_tolerance
from ._compare import ALL
from ._dtype_names import choices
from ._dumps import BF16_AS
from ._errors import GoldenError
from ._standards import ALIASES, DEFAULT, STANDARDS


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
                    "3 if none fails but some could not be judged (ERROR) or a report\n"
                    "could not be written, 2 on usage errors and unreadable arguments\n"
                    "(nothing written).",
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
    p.add_argument("--csv", metavar="TABLE",
                   help="also write a table to this file: one row per case and standard, "
                        "its status (PASS, WARNING, FAIL, ERROR) and metrics")
    p.add_argument("--worst", type=int, default=5, metavar="K",
                   help="how many of the worst elements to report (default 5)")
    return p


def _tolerance_arg(key):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        try:
            check_tolerance({key: value}, f"--{key}", columns=False)
        except GoldenError:
            limits = "in [0, 1]" if key == "ptol" else "a finite number >= 0"
            raise argparse.ArgumentTypeError(f"{text!r} is not {limits}") from None
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
