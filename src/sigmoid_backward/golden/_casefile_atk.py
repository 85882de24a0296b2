"""The ATK json case file: a list of cases, read into :class:`Case` objects
(``_casefile`` describes the format)."""
import dataclasses

from ._case_types import OPERATOR
from ._casefile_checks import _case, _check_names, _input, _shape
from ._errors import CaseFileError
from ._standards import ALIASES, ATK_ACC, STANDARDS, resolve

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
