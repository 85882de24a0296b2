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
in full, with ``--csv TABLE`` a row per case and standard.  A case of a manifest that
cannot be judged (its output missing, unreadable, of another dtype or
shape; its golden outside the manifest's folder) is an ERROR with its
reason, and the others go on.  The reports are written, each all or
nothing and each whatever became of the other, before the exit status: 0
if every case passes, 1 if any fails, 3 if none fails but some are ERROR,
or if a report could not be written (stderr then also says how many
failed), 2 for a usage error or an argument that cannot be read (a report
path naming an input or the other report, a manifest of no cases), found
before any case runs and anything is written (one line on stderr).  A
closed stdout (``| head``) is not an error.
"""
import argparse
import json
import os
import signal
import sys
from dataclasses import dataclass

from .._tools._cli import ArgumentParser, command
from .._tools._paths import check_directory
from ._args import dtype_arg, print_line, shape_arg
from ._atomic_write import Signals, Terminated, WriteError, check_target, replace_file
from ._casefile import check_tolerance
from ._compare import ALL, CHUNK, compare_many, csv_rows
from ._dtype_names import choices, lookup
from ._dumps import BF16_AS, open_output, read_map
from ._errors import GoldenError
from ._files import ArrayFile, is_npy, read_small
from ._standards import ALIASES, ATK_ACC, DEFAULT, STANDARDS, Options, resolve

FAILED, NOT_JUDGED = 1, 3  # exit statuses (2: usage, argparse's)


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
        raise GoldenError(f"ACTUAL has dtype {a.dtype.name}, GOLDEN {g.dtype.name}")
    if tuple(a.shape) != tuple(g.shape):
        raise GoldenError(f"ACTUAL has shape {list(a.shape)}, GOLDEN {list(g.shape)}")
    return a, g


MANIFEST_FILE = "a manifest.json written by golden --cases"


def _load_manifest(manifest, actual_dir):
    """The manifest's list of cases, or a GoldenError (exit 2, nothing
    written) when the manifest itself cannot be read."""
    try:
        data = read_small(manifest, "--manifest", MANIFEST_FILE)
        check_directory(actual_dir, "--actual-dir", "a directory of the device's outputs",
                        GoldenError)
        cases = json.loads(data.decode("utf-8"))["cases"]
        if not isinstance(cases, list):
            raise TypeError("'cases' is not a list")
    except RecursionError:
        raise GoldenError(f"--manifest: {manifest}: JSON nested too deeply to be a "
                          f"manifest") from None
    except OSError as exc:
        raise GoldenError(f"--manifest: cannot read {manifest}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError too
        if isinstance(exc, GoldenError):
            raise
        raise GoldenError(f"--manifest: {manifest} is not a manifest of golden --cases "
                          f"({type(exc).__name__}: {exc})") from None
    if not cases:  # a campaign that compares nothing must not pass
        raise GoldenError(f"--manifest: {manifest} has no cases: nothing to compare")
    return cases


def _case_name(case, n):
    name = case.get("name") if isinstance(case, dict) else None
    return name if isinstance(name, str) and name else f"case #{n}"


def _plain_name(value, where):
    """A file name of the manifest: one plain name inside its folder.  An
    absolute path, a ``..`` or a separator would read a file elsewhere."""
    if not isinstance(value, str) or not value or value in (".", "..") \
            or os.path.basename(value) != value or (os.altsep or "/") in value \
            or "\0" in value:
        raise GoldenError(f"{where}: golden {value!r} is outside the manifest's folder, "
                          f"refused: it must be a plain file name")
    return value


def _case_standard(case, where):
    """The standard a manifest case asks for (ATK's ``"standard": {"acc":
    ...}``, kept by golden --cases), or None."""
    acc = case.get("standard")
    if acc is None:
        return None
    try:
        return ATK_ACC.get(acc, None) or resolve(acc)
    except (KeyError, TypeError):
        raise GoldenError(f"{where}: unknown standard {acc!r}; known: "
                          f"{', '.join([*ATK_ACC, *STANDARDS])}") from None


def _open_case(case, n, folder, actual_dir, names, bf16_as):
    """(name, [actual, golden], tolerance) of a case of the
    manifest, or a GoldenError saying, in one line, why the case cannot be
    judged.  ``names``: --map's device file names; ``bf16_as``: how the
    device stored a bfloat16 output."""
    name = _case_name(case, n)
    where = f"--manifest: {name}"
    if not isinstance(case, dict):
        raise GoldenError(f"{where}: not a case object")
    if "error" in case:
        raise GoldenError(f"{where}: golden --cases could not write it: {case['error']}")
    missing = [key for key in ("dtype", "shape", "golden") if key not in case]
    if missing:
        raise GoldenError(f"{where}: missing {', '.join(map(repr, missing))}")
    try:
        dtype = lookup(case["dtype"])
    except KeyError:
        raise GoldenError(f"{where}: field 'dtype': unknown dtype {case['dtype']!r}; "
                          f"accepted: {choices()}") from None
    try:
        shape = case["shape"]
        if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise GoldenError(f"{where}: shape {shape!r} is not a list of integers >= 0")
        golden = _plain_name(case["golden"], where)
    except TypeError as exc:
        raise GoldenError(f"{where}: {exc}") from None
    tolerance = case.get("tolerance")
    try:
        check_tolerance(tolerance, f"{name}")
    except GoldenError as exc:
        raise GoldenError(f"--manifest: {str(exc).removeprefix('--cases: ')}") from None
    golden_file = ArrayFile(os.path.join(folder, golden), f"{where}: golden", dtype,
                            tuple(shape), nofollow=True)
    own = names.get(name, names.get(golden, golden))  # read_map's are plain names too
    actual = open_output(os.path.join(actual_dir, own), f"{where}: --actual-dir", dtype,
                         tuple(shape), bf16_as)
    return name, [actual, golden_file], tolerance


def _judge(args, files, name=None, tolerance=None, case_standard=None):
    """Every result of one case: under --standard, else its own, else the
    default; each printed with its notes, overrides and histogram."""
    standard = args.standard or case_standard or DEFAULT
    overrides = {k: getattr(args, k) for k in ("rtol", "atol", "ptol")
                 if getattr(args, k) is not None}
    options = Options(tolerance=tolerance, overrides=overrides,
                      benchmark=args.benchmark_precision, third_party=len(files) > 2)
    chunks = zip(*(f.chunks(CHUNK) for f in files), strict=True)
    g = files[1]  # the golden: what the output must hold
    results = compare_many(chunks, g.dtype.newbyteorder("="), g.shape, standard, options,
                           args.worst, name, args.hist)
    for result in results:
        print_line(result.line())
        for note in result.notes:
            print_line(f"  note: {note}")
        if result.limits.get("overridden"):
            print_line("  overridden: " + ", ".join(f"{k} = {result.limits[k]}"
                                                     for k in result.limits["overridden"]))
        for bucket, count in (result.hist or {}).items():
            print_line(f"  {bucket:>8}: {count}")
    return results


def _same_file(first, second):
    """Whether two paths name one file: the same real path (a new file's
    too), or, for files that exist, the same inode (a hard link)."""
    try:
        if os.path.realpath(first) == os.path.realpath(second):
            return True
        return os.path.samefile(first, second)
    except (OSError, ValueError):  # missing, or a name no file can have
        return False


def _manifest_files(cases, folder, actual_dir, names):
    """(what, path) of every golden and device output a manifest's cases
    name, as _open_case will read them (names it will refuse are left out)."""
    for n, case in enumerate(cases):
        if not isinstance(case, dict) or "error" in case:
            continue
        where = f"--manifest: {_case_name(case, n)}"
        try:
            golden = _plain_name(case.get("golden"), where)
        except GoldenError:
            continue
        yield f"{where}: golden", os.path.join(folder, golden)
        own = names.get(_case_name(case, n), names.get(golden, golden))
        yield f"{where}: --actual-dir", os.path.join(actual_dir, own)


def check_report_paths(args, inputs):
    """Refuse a --json or --csv that names the other report, or an input
    (``inputs``: (what, path) pairs): writing it would destroy the input, or
    one report the other.  Before any case runs, so nothing is written."""
    reports = [(label, path) for label, path in (("--json", args.json), ("--csv", args.csv))
               if path is not None]
    for n, (label, path) in enumerate(reports):
        for what, other in (*reports[:n], *inputs):
            if other is not None and _same_file(path, other):
                raise GoldenError(f"{label}: {path} is the same file as {what} {other}: "
                                  f"refused, the report would overwrite it")


def run(args):
    """Judge every case; return the results: CompareResult, or CaseError
    for a case that could not be judged (the campaign goes on)."""
    for path, label in ((args.json, "--json"), (args.csv, "--csv")):
        if path is not None:
            check_target(path, label)  # refuse a bad report path before comparing
    results = []
    if args.manifest is None:
        check_report_paths(args, [("ACTUAL", args.actual), ("GOLDEN", args.golden),
                                  ("--third-party", args.third_party)])
        a, g = _pair(args.actual, args.golden, args.dtype, args.shape, args.bf16_as)
        files = [a, g]
        if args.third_party is not None:
            files.append(ArrayFile(args.third_party, "--third-party", g.dtype.newbyteorder("="),
                                   g.shape))
        return _judge(args, files)
    names = read_map(args.map) if args.map is not None else {}
    cases = _load_manifest(args.manifest, args.actual_dir)
    folder = os.path.dirname(os.path.abspath(args.manifest))
    check_report_paths(args, [("--manifest", args.manifest), ("--map", args.map),
                              *_manifest_files(cases, folder, args.actual_dir, names)])
    for n, case in enumerate(cases):
        name = _case_name(case, n)
        # One ERROR row for a case not judged, whatever the standards asked.
        standard = args.standard or DEFAULT
        try:
            own = _case_standard(case, f"--manifest: {name}") if isinstance(case, dict) \
                else None
            standard = args.standard or own or DEFAULT
            name, files, tolerance = _open_case(case, n, folder, args.actual_dir, names,
                                                args.bf16_as)
            results.extend(_judge(args, files, name, tolerance, own))
            continue
        except (GoldenError, MemoryError, OSError) as exc:
            error = CaseError(name, standard,
                              " ".join((str(exc) or "not enough memory").split()))
        except Exception as exc:  # not foreseen: still this case's ERROR, not the run's
            error = CaseError(name, standard,
                              " ".join(f"unexpected {type(exc).__name__}: {exc}".split()))
        print_line(error.line())
        results.append(error)
    return results


@dataclass
class CaseError:
    """A case that could not be judged: a missing, unreadable, wrong-dtype or
    wrong-shaped output or golden.  It is in the reports as ERROR."""
    name: str
    standard: str
    reason: str
    passed = False
    status = "error"

    def line(self):
        return f"ERROR {self.name} {self.standard}: {self.reason}"

    def as_dict(self):
        return {"name": self.name, "status": "ERROR", "passed": False,
                "standard": self.standard, "error": self.reason}


def status_of(result):
    """PASS, WARNING (msprobe's middle tier), FAIL, or ERROR (not judged)."""
    return result.status.upper()


def json_text(results, standard):
    counts = {s: sum(status_of(r) == s for r in results)
              for s in ("PASS", "WARNING", "FAIL", "ERROR")}
    cases = []
    for r in results:
        case = r.as_dict()
        case["status"] = status_of(r)
        cases.append(case)
    report = {"standard": standard, "passed": bool(results) and counts["PASS"] == len(results),
              "counts": counts, "cases": cases}
    return json.dumps(report, indent=1, allow_nan=False) + "\n"


def write_reports(args, results, signals):
    """The --json and --csv reports, each all or nothing, and each tried
    whatever became of the other; return the WriteErrors of those not
    written."""
    standard = args.standard or "per case"
    failed = []
    for path, label, text in ((args.json, "--json", lambda: json_text(results, standard)),
                              (args.csv, "--csv", lambda: csv_rows(results))):
        if path is not None:
            try:
                data = text().encode()
                replace_file(path, lambda f, data=data: f.write(data), signals, {},
                             label=label)
            except WriteError as exc:
                failed.append(exc)
            except MemoryError:
                failed.append(WriteError(f"{label}: cannot write {path}: not enough memory"))
    return failed


def exit_status(results, reports_failed=False):
    """0 every case passes; 1 a case fails or warns (a verdict, which
    outranks ERROR); 3 some case could not be judged, or a report could not
    be written: that outranks the verdict, since a script reading the
    report after a 1 would read a missing or stale one (main says on stderr
    that cases failed too)."""
    statuses = {status_of(r) for r in results}
    if reports_failed:
        return NOT_JUDGED
    return FAILED if statuses & {"FAIL", "WARNING"} else \
        NOT_JUDGED if "ERROR" in statuses else 0


def main(argv):
    """Entry point; ``argv`` excludes the ``compare`` word.  Returns the exit status."""
    p = _parser()
    args = p.parse_args(argv)  # exits with status 2 on usage errors
    _check_mode(p, args)
    with Signals() as signals:
        try:
            results = run(args)
            judged = [r for r in results if not isinstance(r, CaseError)]
            errors = len(results) - len(judged)
            standards = sorted({r.standard for r in judged}) or [args.standard or DEFAULT]
            what = "cases" if len(standards) == 1 else "results"
            print_line(f"{sum(r.passed for r in judged)} of {len(results)} {what} passed "
                       f"under {', '.join(standards)}"
                       + (f", {errors} ERROR (not judged)" if errors else ""))
        except (GoldenError, WriteError) as exc:
            return _error(str(exc))
        except MemoryError:
            return _error("not enough memory for these files")
        except KeyboardInterrupt:
            return _stopped("interrupted", signal.SIGINT)
        except Terminated as exc:
            return _stopped(f"terminated by {signal.Signals(exc.signum).name}", exc.signum)
        except Exception as exc:  # a case not foreseen above: still one line
            return _error(f"unexpected {type(exc).__name__}: {exc}")
        try:  # the cases ran: the reports are written whatever stdout did
            failed = write_reports(args, results, signals)
        except KeyboardInterrupt:
            return _stopped("interrupted", signal.SIGINT)
        except Terminated as exc:
            return _stopped(f"terminated by {signal.Signals(exc.signum).name}", exc.signum)
    for lost in failed:
        _error(str(lost))
    verdicts = [status_of(r) for r in results if status_of(r) in ("FAIL", "WARNING")]
    if failed and verdicts:  # the status is 3: say the verdict it does not
        print(f"{_prog()}: {verdicts.count('FAIL')} FAIL and {verdicts.count('WARNING')} "
              f"WARNING of {len(results)} results: the exit status is 3, not 1, because "
              f"a report was not written", file=sys.stderr)
    return exit_status(results, bool(failed))


def _stopped(why, signum):
    print(f"{_prog()}: {why}", file=sys.stderr)
    return 128 + int(signum)


def _error(message, status=2):
    print(f"{_prog()}: error: {' '.join(message.split())}", file=sys.stderr)
    return status
