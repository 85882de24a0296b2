"""Case files of CANN's test tools, read into :class:`Case` objects.

Three formats, told apart by their content:

- **ATK json**: a list of cases, each ``{"id", "aclnn_name", "inputs":
  [{"name": "gradOutput" | "output", "dtype", "shape", "range_values"}]}``;
  ``range_values`` is ``[lo, hi]`` or one special value (``"nan"``,
  ``"inf"``, ``"-inf"``).  A case is named ``<aclnn_name>_<id>``.  Its
  ``"standard": {"acc": NAME}`` is kept (``compare --manifest`` judges the
  case by it); a dense ``format``, ``output_shapes`` equal to the result's
  and empty ``attributes`` are accepted, and any other field (an input's
  ``value``, a private layout) refused, naming the case.
- **TTK kernel csv** (the kernel ``SigmoidGrad``): inputs in kernel order
  ``(y, dy)``, columns ``testcase_name``, ``input_dtypes``, ``input_shapes``,
  ``input_data_ranges`` and optionally ``output_dtypes``,
  ``precision_tolerances``, ``absolute_precision``.
- **TTK aclnn csv** (``aclnnSigmoidBackward``): every tensor of the call,
  ``gradOutput, output, gradInput``, in ``tensor_view_shapes`` and
  ``tensor_dtypes``; ``output_tensor_indexes`` says which is the output (by
  default the last).

TTK writes its cells as Python literals, ranges as ``(lo, hi)`` per input
(one range for all inputs if only one is given), ``(nan, nan)`` or
``(v, v)`` for one value; ``precision_tolerances`` as ``((rtol, ptol),)``
per output and ``absolute_precision`` as atol.  Anything this operator
cannot run is a :class:`CaseFileError`, in one line naming the case.

This module tells the formats apart; ``_casefile_atk`` and ``_casefile_ttk``
read them, and ``_casefile_checks`` checks what they read.
"""
import csv
import io
import json

from .._tools._paths import check_file
from ._casefile_atk import _atk_cases
from ._casefile_ttk import _csv_cases
from ._errors import CaseFileError, GoldenError
from ._files import read_small

CASE_FILE = "an ATK json or TTK csv case file"


def cases(path):
    """The cases of an ATK json, a TTK kernel csv or a TTK aclnn csv.

    Parameters
    ----------
    path : str or os.PathLike
        The case file; its format is told from its content.

    Returns
    -------
    list of Case
        In the file's order.

    Raises
    ------
    CaseFileError
        The file cannot be read, or a case is malformed: one line, naming it.
    """
    check_file(path, "--cases", CASE_FILE, CaseFileError)
    try:
        data = read_small(path, "--cases", CASE_FILE)
        # as open(path, encoding="utf-8-sig").read() reads: universal newlines
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig").read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseFileError(f"--cases: cannot read {path}: {exc}") from None
    except GoldenError as exc:  # read_small's refusals, as this module's error
        raise CaseFileError(str(exc)) from None
    if text.lstrip()[:1] in ("[", "{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseFileError(f"--cases: {path} is not valid JSON: {exc}") from None
        except RecursionError:  # nested deeper than Python's stack
            raise CaseFileError(f"--cases: {path}: JSON nested too deeply to be a case "
                                f"file") from None
        found = _atk_cases(path, data)
    else:
        try:
            found = _csv_cases(path, text)
        except csv.Error as exc:  # a field over csv.field_size_limit(), a stray NUL
            raise CaseFileError(f"--cases: {path} is not a readable csv: {exc}") from None
    names = [case.name for case in found]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise CaseFileError(f"--cases: {path}: two cases are named {dup}")
    return found
