"""A failed call's error, told with the names of the function's arguments.

The ufunc knows its operands by position only, and its promoter knows only
their DTypes, so three of its errors say less than the function can:

- the promoter names a parametric DType by its class
  (``numpy.dtypes.StrDType``): the function names the operand's dtype as
  NumPy prints it (``dtype('<U1')``), in the promoter's own words
  (``_ufunc.refuse``);
- casting='no' or 'equiv' refuses a loop of two input dtypes as a whole
  (NumPy: "The ufunc implementation ... is not possible under the casting
  rule 'no'"): the function says which input would be cast, from which
  dtype to which, as ``np.multiply`` does ("Cannot cast ufunc 'multiply'
  input 0 from dtype('float32') to dtype('float64') with casting rule
  'no'");
- NumPy's broadcast errors list shapes without saying whose: the function
  names each operand with its shape.

The told error is of the same type, with NumPy's as its cause; any other
error is raised as it is.  An argument that overrides ``__array_ufunc__``
(Dask, xarray) took the call: its errors are its own, and left alone.
"""
import numpy as np

from .._kernel import _dtypes
from ._ufunc import refuse, ufunc

_NDARRAY_UFUNC = np.ndarray.__array_ufunc__
# Casting rules below 'safe': they refuse a loop of two input dtypes, which
# widens one input to the compute dtype in its kernel (_ufunc.pyx).
_BELOW_SAFE = ("no", "equiv")


def told(error, g, y, options):
    """The exception to raise for ``error``, raised by ``ufunc(g, y,
    **options)``: a new one naming the arguments, or ``error`` itself."""
    if _overridden(g, y, *_outs(options)):
        return error
    if type(error) is TypeError:
        named = _dtype_refused(error, g, y, options) or _loop_refused(error, g, y, options)
    elif type(error) is ValueError:
        named = _shapes_refused(error, g, y, options)
    else:
        named = None
    if named is None:
        return error
    named.__cause__ = error   # as `raise named from error`
    named.__suppress_context__ = True
    return named


def _overridden(*operands):
    return any(getattr(type(x), "__array_ufunc__", _NDARRAY_UFUNC) is not _NDARRAY_UFUNC
               for x in operands)


def _outs(options):
    out = options.get("out")
    return tuple(o for o in (out if isinstance(out, tuple) else (out,)) if o is not None)


def _dtype_of(x):
    """The dtype NumPy makes of an input (a Python scalar's default one)."""
    if type(x) in _dtypes.PYTHON_SCALARS:
        return np.dtype(type(x))
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return np.asarray(x).dtype


def _dtype_refused(error, g, y, options):
    """The promoter's refusal, naming the operands' dtypes."""
    if not str(error).startswith("sigmoid_backward: "):   # the promoter's words
        return None
    dtype = options.get("dtype")
    try:
        dtypes = (_dtype_of(g), _dtype_of(y), None if dtype is None else np.dtype(dtype))
    except Exception:
        return None
    try:
        refuse(*dtypes)
    except TypeError as refusal:
        return refusal
    return None   # not these dtypes': say what NumPy said


def _loop_refused(error, g, y, options):
    """A casting rule below 'safe' that refused a loop of two input dtypes:
    which inputs it would cast, from which dtype to which."""
    casting = options.get("casting", "same_kind")
    if (casting not in _BELOW_SAFE or options.get("dtype") is not None
            or f"casting rule {casting!r}" not in str(error)
            or type(g) in _dtypes.PYTHON_SCALARS or type(y) in _dtypes.PYTHON_SCALARS):
        return None   # a weak scalar never makes a loop of two dtypes
    try:
        inputs = (("grad_output", _dtype_of(g)), ("output", _dtype_of(y)))
        loop = ufunc.resolve_dtypes((inputs[0][1], inputs[1][1], None))
    except Exception:
        return None
    compute = loop[2]
    widened = [(name, dt) for name, dt in inputs if type(dt) is not type(compute)]
    if not widened:
        return None   # a loop of one dtype: NumPy named the cast it refused
    casts = " and ".join(f"{name} from {dt!r}" for name, dt in widened)
    return TypeError(f"sigmoid_backward: cannot cast {casts} to {compute!r} "
                     f"with casting rule {casting!r}")


def _spelled(shape):
    """A shape as NumPy's messages spell it: (2,3), (4,), ()."""
    return f"({','.join(map(str, shape))}{',' if len(shape) == 1 else ''})"


def _listed(operands):
    """'grad_output of shape (2,3), output of shape (4,) and out of shape (4,)'."""
    parts = [f"{name} of shape {_spelled(shape)}" for name, shape in operands]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _shapes_refused(error, g, y, options):
    """Shapes that do not broadcast together, or an ``out`` they do not
    broadcast to, each operand named with its shape."""
    if "broadcast" not in str(error):   # not NumPy's broadcast errors
        return None
    try:
        inputs = [("grad_output", np.shape(g)), ("output", np.shape(y))]
        where = options.get("where", True)
        if where is not True:
            inputs.append(("where", np.shape(where)))
        outs = [("out", np.shape(o)) for o in _outs(options)]
    except Exception:
        return None
    try:
        shape = np.broadcast_shapes(*(s for _, s in inputs + outs))
    except ValueError:
        return ValueError(f"sigmoid_backward: {_listed(inputs + outs)} could not be "
                          f"broadcast together")
    for name, out_shape in outs:
        if out_shape != shape:   # an output is never broadcast
            return ValueError(
                f"sigmoid_backward: non-broadcastable {name} of shape {_spelled(out_shape)}: "
                f"{_listed(inputs)} do not broadcast to it (with it, to {_spelled(shape)})")
    return None
