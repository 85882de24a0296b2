"""The TTK csv case files, kernel and aclnn, read row by row into
:class:`Case` objects (``_casefile`` describes the formats)."""
import ast
import csv
import io
import math

from ._case_types import OPERATOR
from ._casefile_checks import _case, _dtype, _input, _shape, check_tolerance
from ._errors import CaseFileError

KERNEL = "sigmoid_grad"


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
