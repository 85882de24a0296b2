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

The parser is in ``_cli_compare_parser``, the manifest's cases in
``_cli_compare_manifest``, the judging in ``_cli_compare_run`` and the
--json report's text in ``_cli_compare_report``; writing the reports and
the exit status stay here, beside :func:`main`.
"""
import signal
import sys

from ._args import print_line
from ._atomic_write import Signals, Terminated, WriteError, replace_file
from ._cli_compare_parser import _check_mode, _parser, _prog
from ._cli_compare_report import json_text, status_of
from ._cli_compare_run import CaseError, run
from ._compare import csv_rows
from ._errors import GoldenError
from ._standards import DEFAULT

FAILED, NOT_JUDGED = 1, 3  # exit statuses (2: usage, argparse's)


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
