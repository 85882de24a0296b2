"""Error messages: each names the argument and its dtype (as NumPy prints
it, ``dtype('<U1')``) or shape, says at least what NumPy says of the same
call, and keeps no format directive on any Python (``PyUnicode_FromFormat``
reads ``%.*s`` only from Python 3.12: before, it printed it as it is).

Every format call site of ``_promotion.h``, ``_arguments.py`` and
``_named_errors.py`` has a case in CASES: a test reads those sources, when
the source tree is here, and holds each site's template to the cases'
messages, so a message added without a case fails it.
"""
import array
import ast
import ctypes
import pathlib
import re

import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward, ufunc
from sigmoid_backward._kernel import _kernels

from dtypes_catalogue import BFLOAT16, by_name

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "sigmoid_backward"
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
STRINGS = np.array(["a", "b"])
# Every dtype the package computes, as the message lists them: in the order
# of the C table (_dtypes.h) it is made from.
SUPPORTED = ", ".join(name for name, _ in _kernels.DTYPE_TABLE)


def _class_of(dtype):
    """What the ufunc's promoter, which sees DType classes, shows of a
    dtype: the dtype, or a parametric DType's class (its dtypes differ in
    size or unit)."""
    return repr(type(dtype)) if type(dtype)._parametric else repr(dtype)


def _released():
    view = memoryview(array.array("d", [0.0] * 2))
    view.release()
    return view


# case: (call, exception type, what the message names).  Each call is made
# by the function or by the ufunc, as its id says.
CASES = {
    # _promotion.h: the promoter's refusals.
    "function: grad_output of an unsupported dtype": (
        lambda: sigmoid_backward(STRINGS, np.ones(2)), TypeError,
        ["grad_output's dtype", repr(STRINGS.dtype), SUPPORTED]),
    "function: output of an unsupported dtype": (
        lambda: sigmoid_backward(np.ones(2), np.ones(2, np.longdouble)), TypeError,
        ["output's dtype", repr(np.dtype(np.longdouble))]),
    "ufunc: grad_output of an unsupported parametric dtype": (
        lambda: ufunc(STRINGS, np.ones(2)), TypeError,
        ["grad_output's dtype", _class_of(STRINGS.dtype)]),
    "ufunc: output of an unsupported dtype": (
        lambda: ufunc(np.ones(2), np.ones(2, object)), TypeError,
        ["output's dtype", repr(np.dtype(object))]),
    "function: dtype= unsupported": (
        lambda: sigmoid_backward(np.ones(2), np.ones(2), dtype=np.int32), TypeError,
        ["dtype=" + repr(np.dtype(np.int32)), SUPPORTED]),
    "ufunc: dtype= unsupported": (
        lambda: ufunc(np.ones(2), np.ones(2), dtype="U"), TypeError,
        ["dtype=" + repr(np.dtype("U"))]),
    "function: a complex input with dtype=bfloat16": (
        lambda: sigmoid_backward(np.ones(2), np.ones(2, C64), dtype=BFLOAT16), TypeError,
        ["output's dtype", repr(C64), "dtype=" + repr(BFLOAT16)]),
    "ufunc: a Python complex with dtype=bfloat16": (
        lambda: ufunc(1j, np.ones(2), dtype=BFLOAT16), TypeError,
        ["grad_output's dtype", repr(C128), "dtype=" + repr(BFLOAT16)]),
    "ufunc: an integer a narrow result cannot hold": (
        lambda: ufunc(np.ones(2, np.int8), np.ones(2, by_name("float8_e4m3fn"))), TypeError,
        ["grad_output's dtype", repr(np.dtype(np.int8)), "output's",
         repr(by_name("float8_e4m3fn")), "cannot hold every"]),
    # _arguments.py: the function's own checks.
    "raw bytes": (
        lambda: sigmoid_backward(np.ones(2), bytearray(16)), TypeError,
        ["output", "bytearray", "np.frombuffer(output, dtype=...)"]),
    "a Python int beyond float64": (
        lambda: sigmoid_backward(2**1100, 1.0), OverflowError,
        ["grad_output", "float64", "1101 bits"]),
    "out whose buffer cannot be read": (
        lambda: sigmoid_backward(np.ones(2), np.ones(2), out=_released()), TypeError,
        ["out", "memoryview", "released"]),
    "out whose buffer is read-only": (
        lambda: sigmoid_backward(np.ones(2), np.ones(2),
                                 out=memoryview(array.array("d", [0.0] * 2)).toreadonly()),
        ValueError, ["out", "memoryview", "read-only"]),
    "out whose buffer NumPy cannot view": (
        lambda: sigmoid_backward(np.ones(2), np.ones(2),
                                 out=(ctypes.POINTER(ctypes.c_int) * 2)()),
        TypeError, ["out", "'&<i'"]),
    "out of no array type": (
        lambda: sigmoid_backward(np.ones(2), np.ones(2), out=[0.0, 0.0]), TypeError,
        ["out", "list"]),
    "a complex result into a bfloat16 out": (
        lambda: sigmoid_backward(np.ones(2, C64), np.ones(2), out=np.zeros(2, BFLOAT16)), TypeError,
        ["out's dtype", repr(BFLOAT16), repr(C128)]),
    # _named_errors.py: NumPy's errors, told with the arguments' names.
    "casting='no' refusing a loop of two dtypes": (
        lambda: sigmoid_backward(np.ones(2, F32), np.ones(2, F64), casting="no"), TypeError,
        [f"grad_output from {F32!r}", f"to {F64!r}", "casting rule 'no'"]),
    "shapes that do not broadcast": (
        lambda: sigmoid_backward(np.ones((2, 3)), np.ones(4)), ValueError,
        ["grad_output of shape (2,3)", "output of shape (4,)"]),
    "an out that does not broadcast": (
        lambda: sigmoid_backward(np.ones((2, 3)), np.ones(3), out=np.zeros(4)), ValueError,
        ["grad_output of shape (2,3)", "output of shape (3,)", "out of shape (4,)"]),
    "an out the inputs do not broadcast to": (
        lambda: sigmoid_backward(np.ones((2, 3)), np.ones(3), out=np.zeros(3)), ValueError,
        ["non-broadcastable out of shape (3,)", "grad_output of shape (2,3)",
         "output of shape (3,)", "to (2,3)"]),
}


def _message(case):
    call, error, _ = CASES[case]
    with pytest.raises(error) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize("case", CASES)
def test_each_message_names_the_argument_and_has_no_format_directive(case):
    message = _message(case)
    assert "%" not in message
    for named in CASES[case][2]:
        assert named in message


# ---- every format call site has a case ------------------------------------------

# PyUnicode_FromFormat's directives in a C format string.
_C_DIRECTIVE = re.compile(r"%(?:[-0-9.*]*[zl]*[sUVSRAdiuxcp%])")
_C_CALL = re.compile(r"\b(PyErr_Format|PyUnicode_FromFormat)\s*\(")
_C_LITERALS = re.compile(r'\s*((?:"(?:[^"\\]|\\.)*"\s*)+)')


def _template(parts):
    """A regex for the messages of a format: its parts, each literal text or
    None for a field."""
    return re.compile("".join(".+?" if p is None else re.escape(p) for p in parts), re.DOTALL)


def _c_sites(text):
    sites = []
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)   # comments may name the calls
    assert len(re.findall(r"Format", text)) == len(_C_CALL.findall(text)), "a call unread"
    for call in _C_CALL.finditer(text):
        # PyErr_Format(exception, "format" "format", ...); PyUnicode_FromFormat("format", ...)
        rest = text[call.end():]
        if call.group(1) == "PyErr_Format":
            rest = rest[rest.index(",") + 1:]
        literals = _C_LITERALS.match(rest)
        assert literals, f"a {call.group(1)} whose format is not a string literal"
        fmt = "".join(ast.literal_eval(lit) for lit in re.findall(r'"(?:[^"\\]|\\.)*"',
                                                                  literals.group(1)))
        literal = _C_DIRECTIVE.split(fmt)
        sites.append(_template([p for lit in literal for p in (None, lit)][1:]))
    return sites


def _python_sites(text):
    """Each exception made with an f-string message; any other non-constant
    message fails, as a site this cannot read."""
    sites = []
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id.endswith("Error") and node.args):
            continue
        message = node.args[0]
        if isinstance(message, ast.JoinedStr):
            sites.append(_template([v.value if isinstance(v, ast.Constant) else None
                                    for v in message.values]))
        else:
            assert isinstance(message, ast.Constant), ast.unparse(node)
    return sites


FILES = {"_promotion.h": _c_sites, "_arguments.py": _python_sites,
         "_named_errors.py": _python_sites}


def test_every_format_call_site_has_a_case():
    if not (SRC / "_promotion.h").exists():
        pytest.skip(f"needs the source tree ({SRC}) to read the call sites")
    sites = {}
    for name, read in FILES.items():
        text = (SRC / name).read_text()
        found = read(text)
        sites.update({(name, i): t for i, t in enumerate(found)})
    covered = set()
    for case in CASES:
        message = _message(case)
        matches = [site for site, t in sites.items() if t.fullmatch(message)]
        assert len(matches) == 1, (case, message, matches)
        covered.update(matches)
    assert covered == set(sites), f"format call sites without a case: {set(sites) - covered}"
    assert len(sites) == len(covered) <= len(CASES)


# ---- as precise as NumPy --------------------------------------------------------

NAMES = ("grad_output", "output")
_NUMPY_CAST = re.compile(r"input (\d) from (dtype\(.*?\)) to (dtype\(.*?\)) "
                         r"with casting rule '(\w+)'")


@pytest.mark.parametrize("casting", ["no", "equiv"])
@pytest.mark.parametrize("g, y", [(F32, F64), (F64, F32), (F16, F32), (C64, F64), (F32, C64)],
                         ids=str)
def test_casting_below_safe_names_what_numpy_names(g, y, casting):
    """np.multiply names the input it would cast, from which dtype to which
    under which rule: so do we, by the input's name."""
    a, b = np.ones(3, g), np.ones(3, y)
    with pytest.raises(TypeError) as theirs:
        np.multiply(a, b, casting=casting)
    index, source, target, rule = _NUMPY_CAST.search(str(theirs.value)).groups()
    out = np.full(3, 7.0, np.result_type(g, y))
    with pytest.raises(TypeError) as ours:
        sigmoid_backward(a, b, out=out, casting=casting)
    message = str(ours.value)
    assert f"{NAMES[int(index)]} from {source}" in message
    assert f"to {target}" in message and f"casting rule '{rule}'" in message
    assert (out == 7).all()
    assert type(ours.value) is TypeError and isinstance(ours.value.__cause__, TypeError)


def test_casting_below_safe_names_both_narrow_inputs():
    with pytest.raises(TypeError, match=re.escape(
            f"cannot cast grad_output from {F16!r} and output from {BFLOAT16!r} to {F32!r} "
            f"with casting rule 'equiv'")):
        sigmoid_backward(np.ones(2, F16), np.ones(2, BFLOAT16), casting="equiv")


def _shapes(message):
    return re.findall(r"\([\d,]*\)", message)


BROADCASTS = {
    "inputs": ((2, 3), (4,), None, True),
    "inputs, 0-d": ((), (3,), None, np.ones((2, 2), bool)),
    "out": ((2, 3), (3,), (4,), True),
    "out too small": ((2, 3), (3,), (3,), True),
    "out too small along a 1": ((2, 1), (1,), (1, 3), True),
    "where": ((3,), (3,), (3,), np.ones(4, bool)),
    "where widens past out": ((3,), (3,), (3,), np.ones((2, 3), bool)),
}


@pytest.mark.parametrize("case", BROADCASTS)
def test_broadcast_errors_name_each_operand_and_numpys_shapes(case):
    gs, ys, outs, where = BROADCASTS[case]
    g, y = np.ones(gs), np.ones(ys)
    # out=None with where=: a new output, and no warning that it is meant.
    kwargs = {"out": None if outs is None else np.full(outs, 7.0)}
    if where is not True:
        kwargs["where"] = where
    with pytest.raises(ValueError) as theirs:
        np.multiply(g, y, **kwargs)
    with pytest.raises(ValueError) as ours:
        sigmoid_backward(g, y, **kwargs)
    message, numpys = str(ours.value), str(theirs.value)
    assert type(ours.value) is type(theirs.value)
    for shape in _shapes(numpys):   # NumPy's shapes, spelled as NumPy spells them
        assert shape in message
    named = [("grad_output", g.shape), ("output", y.shape)]
    named += [("out", outs)] if outs is not None else []
    named += [("where", np.shape(where))] if "where" in kwargs else []
    for name, shape in named:
        assert f"{name} of shape {_spelled(shape)}" in message
    if "non-broadcastable" in numpys:   # NumPy's own tests match it
        assert "non-broadcastable" in message
    if outs is not None:
        assert (kwargs["out"] == 7).all()


def _spelled(shape):
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


@pytest.mark.parametrize("bad", [
    STRINGS, np.array([b"xy"]), np.array([1], "datetime64[s]"), np.zeros(2, [("x", "f4")]),
    np.ones(2, object), np.ones(2, np.dtype(np.longdouble).newbyteorder())],
    ids=lambda a: str(a.dtype))
def test_dtype_errors_name_the_dtype_as_numpy_prints_it(bad):
    """NumPy names an operand's dtype by its repr (np.multiply: "... matching
    types (dtype('<U1'), dtype('float64'))"): so does the function, and the
    ufunc where the DType has one dtype; for the ufunc, the function's
    message is the ufunc's but for the dtype shown."""
    for i, args in enumerate([(bad, np.ones(2)), (np.ones(2), bad)]):
        with pytest.raises(TypeError) as ours:
            sigmoid_backward(*args)
        with pytest.raises(TypeError) as ufuncs:
            ufunc(*args)
        shown = _class_of(bad.dtype.newbyteorder("="))   # the DType has no byte order
        assert f"{NAMES[i]}'s dtype, {bad.dtype!r}, is not supported" in str(ours.value)
        assert str(ours.value) == str(ufuncs.value).replace(shown, repr(bad.dtype))
        assert type(ours.value) is type(ufuncs.value) is TypeError


def test_the_ufuncs_promoter_messages_need_no_function():
    # The same texts, from the promoter alone, for a dtype it knows whole.
    with pytest.raises(TypeError, match=re.escape(
            f"sigmoid_backward: grad_output's dtype, {np.dtype(object)!r}, is not supported; "
            f"supported are {SUPPORTED}, and bool or integer inputs (computed in float64)")):
        ufunc.reduce(np.ones(3, object))


def test_overrides_keep_their_own_errors():
    class Refuses:
        def __array_ufunc__(self, *args, **kwargs):
            raise ValueError("could not be broadcast, says the override")

    with pytest.raises(ValueError, match="^could not be broadcast, says the override$"):
        sigmoid_backward(Refuses(), np.ones(3))
