"""The checks a case passes whatever its source (an ATK json, a TTK csv,
the Python API): its inputs' names, dtypes, shapes and ranges, its tolerance,
and the golden's dtype and shape that make it a :class:`Case`."""
import math

import numpy as np

from .._kernel import _dtypes
from .._numpy._ufunc import ufunc
from ._bits import _step, inner_bounds, real_part_dtype, rounded
from ._case_types import OPERATOR, ROLES, Case, Input
from ._dtype_names import choices, lookup, name_of
from ._errors import CaseFileError

MAX_DIMS = 8  # the operator's limit, checked on both inputs
SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


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
