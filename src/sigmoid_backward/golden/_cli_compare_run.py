"""The ``compare`` command's judging: open one pair of files or a manifest's
cases, refuse report paths that name an input, judge each case and print its
lines; a case that cannot be judged is a :class:`CaseError`."""
import os
from dataclasses import dataclass

from ._args import print_line
from ._atomic_write import check_target
from ._cli_compare_manifest import (
    _case_name,
    _case_standard,
    _load_manifest,
    _manifest_files,
    _open_case,
)
from ._compare import CHUNK, compare_many
from ._dumps import open_output, read_map
from ._errors import GoldenError
from ._files import ArrayFile, is_npy
from ._standards import DEFAULT, Options


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
