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
"""
import ast
import csv
import dataclasses
import io
import json
import math
from dataclasses import dataclass

import numpy as np

from .._kernel import _dtypes
from .._numpy._ufunc import ufunc
from .._tools._paths import check_file
from ._bits import _step, inner_bounds, number_json, real_part_dtype, rounded
from ._dtype_names import choices, lookup, name_of
from ._errors import CaseFileError, GoldenError
from ._files import read_small
from ._standards import ALIASES, ATK_ACC, STANDARDS, resolve

CASE_FILE = "an ATK json or TTK csv case file"

MAX_DIMS = 8  # the operator's limit, checked on both inputs
OPERATOR = "aclnnSigmoidBackward"
KERNEL = "sigmoid_grad"
SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
# What each input name is in sigmoid_backward(grad_output, output).
ROLES = {"gradOutput": "grad_output", "output": "output", "dy": "grad_output", "y": "output"}


@dataclass(frozen=True)
class Input:
    """One input of a case: ``range`` is ``(lo, hi)``, drawn uniformly (both
    parts for complex), or ``(v,)``, every value ``v`` (nan and inf too)."""
    name: str
    dtype: np.dtype
    shape: tuple
    range: tuple

    def as_json(self):
        values = [number_json(v) for v in self.range]
        return {"dtype": name_of(self.dtype), "shape": list(self.shape), "range": values}


@dataclass(frozen=True)
class Case:
    """A case: its inputs in the case file's order and names, the golden's
    dtype and shape, and the tolerance its file gives (None if none)."""
    name: str
    inputs: tuple
    dtype: np.dtype
    shape: tuple
    tolerance: dict | None = None
    standard: str | None = None

    def operand(self, role):
        """The index of the input playing ``role`` ("grad_output", "output")."""
        return next(i for i, inp in enumerate(self.inputs) if ROLES[inp.name] == role)

    @property
    def size(self):
        return math.prod(self.shape)


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


# --- ATK json -----------------------------------------------------------------

def _atk_cases(path, data):
    if not isinstance(data, list):
        raise CaseFileError(f"--cases: {path}: an ATK case file is a JSON list of cases")
    return [_atk_case(path, n, item) for n, item in enumerate(data)]


def _need(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise CaseFileError(f"--cases: {where}: missing {key!r}")
    return obj[key]


def _atk_case(path, n, item):
    where = f"{path}: case #{n}"
    api = _need(item, "aclnn_name", where)
    name = f"{api}_{_need(item, 'id', where)}"
    where = f"{path}: {name}"
    if api != OPERATOR:
        raise CaseFileError(f"--cases: {where}: a case of {api}, not {OPERATOR}")
    raw = _need(item, "inputs", where)
    if not isinstance(raw, list):
        raise CaseFileError(f"--cases: {where}: 'inputs' is not a list")
    for i in raw:
        _refuse_unsupported(i, INPUT_FIELDS, where)
    inputs = tuple(_input(_need(i, "name", where), _need(i, "dtype", where),
                          _need(i, "shape", where), _need(i, "range_values", where), where)
                   for i in raw)
    _check_names(inputs, ("gradOutput", "output"), where)
    _refuse_unsupported(item, CASE_FIELDS, where)
    case = _case(name, inputs, where)
    _check_output_shapes(item, case, where)
    return dataclasses.replace(case, standard=_atk_standard(item, where))


# What ATK case fields this operator honours.  Any other field is refused
# with its reason, so that a case is never run other than its file says.
CASE_FIELDS = {"id", "aclnn_name", "inputs", "standard", "output_shapes", "attributes"}
INPUT_FIELDS = {"name", "dtype", "shape", "range_values", "format"}
# Layouts that are only a naming of the same dense tensor: an elementwise
# operator computes the same values in each.  Private layouts (NC1HWC0,
# FRACTAL_NZ, ...) reorder the data and are refused.
PLAIN_FORMATS = {"ND", "NCHW", "NHWC", "NCDHW", "NDHWC", "NCL", "NLC", "HWCN"}


def _refuse_unsupported(obj, known, where):
    if not isinstance(obj, dict):
        return  # _need says what is missing
    for key in obj:
        if key == "value":
            raise CaseFileError(f"--cases: {where}: explicit input values ('value') not "
                                f"supported: inputs are drawn from range_values")
        if key not in known:
            raise CaseFileError(f"--cases: {where}: the field {key!r} is not supported "
                                f"by {OPERATOR}")
    fmt = obj.get("format")
    if fmt is not None and (not isinstance(fmt, str) or fmt.upper() not in PLAIN_FORMATS):
        raise CaseFileError(f"--cases: {where}: format {fmt!r} not supported: only dense "
                            f"layouts ({', '.join(sorted(PLAIN_FORMATS))}), in which an "
                            f"elementwise operator's values do not depend on the layout")
    attributes = obj.get("attributes")
    if attributes not in (None, [], {}):
        raise CaseFileError(f"--cases: {where}: attributes {attributes!r} not supported: "
                            f"{OPERATOR} has none")


def _check_output_shapes(item, case, where):
    shapes = item.get("output_shapes")
    if shapes is None:
        return
    if not (isinstance(shapes, list) and len(shapes) == 1
            and _shape(shapes[0], where) == tuple(case.shape)):
        raise CaseFileError(f"--cases: {where}: output_shapes {shapes!r} not supported: "
                            f"{OPERATOR} has one output, of the inputs' broadcast shape "
                            f"{list(case.shape)}")


def _atk_standard(item, where):
    """The standard an ATK case asks for (``"standard": {"acc": NAME}``):
    ATK's ``single_bm``, or a name of our standards; None if not given."""
    given = item.get("standard")
    if given is None:
        return None
    acc = given.get("acc") if isinstance(given, dict) else None
    if not isinstance(acc, str):
        raise CaseFileError(f"--cases: {where}: standard {given!r} is not "
                            f"{{\"acc\": NAME}}")
    try:
        resolve(ATK_ACC.get(acc, acc))
    except KeyError:
        raise CaseFileError(f"--cases: {where}: unknown standard {acc!r}; known: "
                            f"{', '.join([*ATK_ACC, *STANDARDS, *ALIASES])}") from None
    return acc


# --- TTK csv ------------------------------------------------------------------

def _literal(text, where, column):
    """A TTK cell: a Python literal in which nan, inf and None may appear bare."""
    def convert(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in ("nan", "inf", "None"):
            return {"nan": math.nan, "inf": math.inf, "None": None}[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = convert(node.operand)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(convert(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return {convert(k): convert(v) for k, v in zip(node.keys, node.values, strict=True)}
        raise ValueError(f"unexpected {ast.unparse(node)!r}")
    try:
        return convert(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        raise CaseFileError(f"--cases: {where}: column {column} is not a literal: "
                            f"{text!r} ({exc})") from None


def _csv_cases(path, text):
    rows = list(csv.DictReader(io.StringIO(text)))
    columns = set(rows[0]) if rows else set()
    if "tensor_dtypes" in columns or "api_name" in columns:
        make = _aclnn_row
    elif "input_dtypes" in columns or "op_name" in columns:
        make = _kernel_row
    else:
        raise CaseFileError(f"--cases: {path} is neither an ATK json nor a TTK csv (no "
                            f"input_dtypes or tensor_dtypes column in its first line)")
    return [make(path, f"{path}: row {n + 2}", row) for n, row in enumerate(rows)]


def _cell(row, column, where, required=True):
    """The text of a cell; a missing column is an error if ``required``, else ""."""
    value = row.get(column)
    if value is None and required:
        raise CaseFileError(f"--cases: {where}: missing column {column}")
    return value or ""


def _tolerance(row, where):
    """{"rtol", "ptol", "atol"} from precision_tolerances ((rtol, ptol) of
    the first output) and absolute_precision, as far as given; or None."""
    tolerance = {}
    precision = _cell(row, "precision_tolerances", where, required=False)
    if precision.strip():
        first = _literal(precision, where, "precision_tolerances")
        while isinstance(first, tuple) and first and isinstance(first[0], tuple):
            first = first[0]  # one pair per output, maybe nested once more
        if not (isinstance(first, tuple) and len(first) == 2):
            raise CaseFileError(f"--cases: {where}: precision_tolerances {precision!r} "
                                f"is not ((rtol, ptol),)")
        tolerance["rtol"], tolerance["ptol"] = (_number(v, where, "precision_tolerances")
                                                for v in first)
    absolute = _cell(row, "absolute_precision", where, required=False)
    if absolute.strip():
        tolerance["atol"] = _number(_literal(absolute, where, "absolute_precision"), where,
                                    "absolute_precision")
    return check_tolerance(tolerance, where) or None


def check_tolerance(tolerance, where, columns=True):
    """``tolerance`` ({"rtol", "ptol", "atol"}, each optional), refused unless
    each is a finite number >= 0 and ptol <= 1: a NaN would judge nothing.
    ``columns``: name the csv column each comes from in the message."""
    if tolerance is None:
        return None
    if not isinstance(tolerance, dict):
        raise CaseFileError(f"--cases: {where}: tolerance {tolerance!r} is not a dict of "
                            f"rtol, ptol, atol")
    column = {"rtol": "precision_tolerances", "ptol": "precision_tolerances",
              "atol": "absolute_precision"}
    for key, value in tolerance.items():
        if key not in column:
            raise CaseFileError(f"--cases: {where}: unknown tolerance {key!r}; expected rtol, "
                                f"ptol or atol")
        ok = isinstance(value, int | float | np.floating | np.integer) \
            and not isinstance(value, bool) and math.isfinite(value) and value >= 0
        if not ok or (key == "ptol" and value > 1):
            limits = "in [0, 1]" if key == "ptol" else "finite and >= 0"
            field = f"{column[key]}: {key}" if columns else key
            raise CaseFileError(f"--cases: {where}: {field} {value!r} is not {limits}")
    return tolerance


def _number(value, where, column):
    """``value`` as a float, or a CaseFileError naming the column."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise CaseFileError(f"--cases: {where}: {column} holds {value!r}, "
                            f"not a number") from None


def _tuple_cell(row, column, where):
    values = _literal(_cell(row, column, where), where, column)
    if not isinstance(values, tuple):
        raise CaseFileError(f"--cases: {where}: column {column} is not a tuple")
    return values


def _ranges(row, where, indexes):
    """The range of each input; ``indexes`` are the inputs' places among the
    cell's entries (one entry alone serves every input)."""
    ranges = _tuple_cell(row, "input_data_ranges", where)
    if len(ranges) == 1:
        return [ranges[0]] * len(indexes)
    if len(ranges) <= max(indexes):
        raise CaseFileError(f"--cases: {where}: input_data_ranges has {len(ranges)} "
                            f"entries for {len(indexes)} inputs")
    return [ranges[i] for i in indexes]


def _kernel_row(path, where, row):
    name = _cell(row, "testcase_name", where)
    where = f"{path}: {name}"
    op = row.get("op_name", KERNEL)
    if op.replace("_", "").lower() != KERNEL.replace("_", ""):
        raise CaseFileError(f"--cases: {where}: a case of {op}, not {KERNEL}")
    dtypes = _tuple_cell(row, "input_dtypes", where)
    shape_column = "input_ori_shapes" if "input_shapes" not in row and \
        "input_ori_shapes" in row else "input_shapes"
    shapes = _tuple_cell(row, shape_column, where)
    for column, cells in (("input_dtypes", dtypes), (shape_column, shapes)):
        if len(cells) != 2:
            raise CaseFileError(f"--cases: {where}: {KERNEL} has two inputs (y, dy), but "
                                f"{column} has {len(cells)} entries")
    ranges = _ranges(row, where, [0, 1])
    inputs = tuple(_input(n, d, s, r, where)
                   for n, d, s, r in zip(("y", "dy"), dtypes, shapes, ranges, strict=True))
    out = _cell(row, "output_dtypes", where, required=False)
    out_dtype = _dtype(_literal(out, where, "output_dtypes")[0], where) if out.strip() else None
    return _case(name, inputs, where, out_dtype, tolerance=_tolerance(row, where))


def _aclnn_row(path, where, row):
    name = _cell(row, "testcase_name", where)
    where = f"{path}: {name}"
    api = _cell(row, "api_name", where)
    if api != OPERATOR:
        raise CaseFileError(f"--cases: {where}: a case of {api}, not {OPERATOR}")
    dtypes = _tuple_cell(row, "tensor_dtypes", where)
    shapes = _tuple_cell(row, "tensor_view_shapes", where)
    for column, cells in (("tensor_dtypes", dtypes), ("tensor_view_shapes", shapes)):
        if len(cells) != 3:
            raise CaseFileError(f"--cases: {where}: {OPERATOR} has three tensors "
                                f"(gradOutput, output, gradInput), but {column} has "
                                f"{len(cells)} entries")
    outs = _cell(row, "output_tensor_indexes", where, required=False) or "(-1,)"
    out = _literal(outs, where, "output_tensor_indexes")
    if not (isinstance(out, tuple) and len(out) == 1 and out[0] in (2, -1)):
        raise CaseFileError(f"--cases: {where}: output_tensor_indexes {outs!r}: the "
                            f"output of {OPERATOR} is its third tensor, gradInput")
    ranges = _ranges(row, where, [0, 1])
    inputs = tuple(_input(n, d, s, r, where) for n, d, s, r in
                   zip(("gradOutput", "output"), dtypes[:2], shapes[:2], ranges, strict=True))
    case = _case(name, inputs, where, _dtype(dtypes[2], where), _tolerance(row, where))
    if tuple(case.shape) != _shape(shapes[2], where):
        raise CaseFileError(f"--cases: {where}: gradInput has shape {list(shapes[2])}, but "
                            f"the inputs broadcast to {list(case.shape)}")
    return case


# --- shared checks --------------------------------------------------------------

def _check_names(inputs, expected, where):
    names = tuple(sorted(inp.name for inp in inputs))
    if names != tuple(sorted(expected)):
        raise CaseFileError(f"--cases: {where}: inputs are {', '.join(names) or 'none'}; "
                            f"expected {' and '.join(expected)}")


def _dtype(text, where):
    try:
        return lookup(text)
    except KeyError:
        raise CaseFileError(f"--cases: {where}: unknown dtype {text!r}; choose one of "
                            f"{choices()}") from None


def _shape(value, where):
    if not isinstance(value, list | tuple) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value):
        raise CaseFileError(f"--cases: {where}: bad shape {value!r}: expected a list of "
                            f"integers >= 0")
    if len(value) > MAX_DIMS:
        raise CaseFileError(f"--cases: {where}: shape {list(value)} has {len(value)} dims; "
                            f"{OPERATOR} takes at most {MAX_DIMS}")
    if math.prod(value) > np.iinfo(np.intp).max:  # before NumPy wraps or refuses it
        raise CaseFileError(f"--cases: {where}: shape {list(value)} is too large "
                            f"({math.prod(value)} values)")
    return tuple(value)


def _within_float(v):
    """``v``, or an infinity for an int beyond float64 (compared exactly otherwise)."""
    try:
        float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf
    return v


def _range(value, dtype, where):
    """(lo, hi) or (v,), checked: numbers, lo <= hi, finite unless one value,
    and some value of the dtype inside."""
    items = value if isinstance(value, list | tuple) else (value,)
    numbers = []
    for v in items:
        if isinstance(v, str) and v.strip().lower() in SPECIAL:
            v = SPECIAL[v.strip().lower()]
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise CaseFileError(f"--cases: {where}: bad range {value!r}: expected [lo, hi] "
                                f"or one of \"nan\", \"inf\", \"-inf\"")
        numbers.append(_within_float(v))
    if len(numbers) == 2 and (numbers[0] == numbers[1] or all(map(math.isnan, numbers))):
        numbers = numbers[:1]  # (v, v) and (nan, nan): one value
    if len(numbers) == 1:
        return (float(numbers[0]),) if math.isnan(numbers[0]) else tuple(numbers)
    if len(numbers) != 2 or any(map(math.isnan, numbers)):
        raise CaseFileError(f"--cases: {where}: bad range {value!r}: expected [lo, hi] or "
                            f"one special value")
    lo, hi = numbers
    if not lo < hi:
        raise CaseFileError(f"--cases: {where}: bad range {value!r}: need lo < hi")
    # An infinite bound (ATK's ["-inf", "inf"]) stands for the dtype's
    # largest finite value: values are drawn over the whole finite range.
    largest = float(_step(rounded(math.inf, real_part_dtype(dtype)), real_part_dtype(dtype),
                          -1))
    lo = -largest if lo == -math.inf else lo
    hi = largest if hi == math.inf else hi
    if not lo < hi or not all(map(math.isfinite, (float(lo), float(hi)))):
        raise CaseFileError(f"--cases: {where}: bad range {value!r}: need lo < hi, "
                            f"finite or infinite")
    if inner_bounds(real_part_dtype(dtype), lo, hi) is None:
        raise CaseFileError(f"--cases: {where}: bad range {value!r}: no {name_of(dtype)} "
                            f"value lies in it")
    return (lo, hi)


def _input(name, dtype, shape, value_range, where):
    if name not in ROLES:
        raise CaseFileError(f"--cases: {where}: unknown input {name!r}")
    where = f"{where}: {name}"
    dtype = _dtype(dtype, where)
    return Input(name, dtype, _shape(shape, where), _range(value_range, dtype, where))


def checked_case(case):
    """A :class:`Case` from the Python API, checked as a case file's would be
    (its names, dtypes, shapes, ranges and tolerance), or a CaseFileError."""
    if not isinstance(case, Case):
        raise CaseFileError(f"--cases: {case!r} is not a Case")
    where = f"case {case.name!r}"
    if not isinstance(case.name, str) or not case.name:
        raise CaseFileError(f"--cases: {where}: name is not a non-empty string")
    if not isinstance(case.inputs, tuple | list) or not all(
            isinstance(i, Input) for i in case.inputs):
        raise CaseFileError(f"--cases: {where}: inputs are not Input objects")
    inputs = tuple(_input(i.name, _api_dtype(i.dtype, where), list(i.shape) if isinstance(
        i.shape, tuple | list) else i.shape, list(i.range), where) for i in case.inputs)
    names = sorted(ROLES[i.name] for i in inputs)
    if names != ["grad_output", "output"]:
        raise CaseFileError(f"--cases: {where}: inputs are "
                            f"{', '.join(i.name for i in inputs)}; expected a grad_output "
                            f"(gradOutput or dy) and an output (output or y)")
    built = _case(case.name, inputs, where, _api_dtype(case.dtype, where),
                  check_tolerance(case.tolerance, where))
    shape = _shape(list(case.shape) if isinstance(case.shape, tuple | list) else case.shape,
                   where)
    if shape != built.shape:
        raise CaseFileError(f"--cases: {where}: shape {list(shape)}, but the inputs "
                            f"broadcast to {list(built.shape)}")
    return built


def _api_dtype(dtype, where):
    try:
        return _dtype(name_of(np.dtype(dtype)), where)
    except TypeError:
        raise CaseFileError(f"--cases: {where}: unknown dtype {dtype!r}") from None


def _case(name, inputs, where, out_dtype=None, tolerance=None):
    """The case, with the golden's dtype (the inputs' promotion, cast to
    ``out_dtype`` if given) and shape (the inputs' broadcast)."""
    try:
        shape = np.broadcast_shapes(*(inp.shape for inp in inputs))
    except ValueError:
        raise CaseFileError(f"--cases: {where}: input shapes "
                            f"{' and '.join(str(list(i.shape)) for i in inputs)} do not "
                            f"broadcast") from None
    computed = ufunc.resolve_dtypes((*(inp.dtype for inp in inputs), None))[2]
    if out_dtype is not None and not _dtypes.castable(computed, out_dtype):
        raise CaseFileError(f"--cases: {where}: the result, {name_of(computed)}, cannot be "
                            f"cast to {name_of(out_dtype)}")
    return Case(name, inputs, out_dtype or computed, tuple(shape), tolerance)
