"""The function's arguments, as the ufunc takes them.

``sigmoid_backward.sigmoid_backward`` hands its inputs to the ufunc as they
are, so that NumPy treats every object exactly as ``np.multiply`` would
(``__array_wrap__``, ``__array_priority__``, overrides, the operand types
in its messages).  This module holds what the function adds:

- checks that run before the call and name the argument: a Python int
  beyond float64, and raw bytes (``bytes``, ``bytearray``, ``mmap``) whose
  buffer declares no element type;
- ``out=`` for any writable buffer-protocol object (``memoryview``,
  ``array.array``, a Cython typed memoryview, a PEP 688 ``__buffer__``
  object), through an ndarray view of its memory;
- after a failed call, the reason named: which argument NumPy could not make
  an array of, or, for a DLPack producer NumPy cannot read (a bfloat16 or
  grad-requiring PyTorch tensor), its import without a copy (_inputs.py) and
  the call again;
- complex results never cast to an ``out`` of ml_dtypes' types (bfloat16,
  float8; the ufunc cannot refuse that itself: NumPy picks a loop without
  looking at ``out``'s dtype, and ml_dtypes allows the cast under 'unsafe',
  and under 'same_kind' before 0.7).
"""
import mmap

import numpy as np

from .._kernel import _dtypes
from ._inputs import as_array

# Objects whose buffer is raw bytes: NumPy would read them as uint8 values.
_RAW_BYTES = (bytes, bytearray, mmap.mmap)


def _is_raw_bytes(x):
    if isinstance(x, _RAW_BYTES):
        return True
    if not isinstance(x, memoryview):
        return False
    try:
        return x.format in "Bbc" and isinstance(x.obj, _RAW_BYTES)
    except ValueError:   # released: NumPy's call says so, by name
        return False


def _refuse_raw_bytes(x, name):
    if _is_raw_bytes(x):
        raise TypeError(f"{name}: a {type(x).__name__} holds raw bytes, not numbers of a "
                        f"dtype; wrap it as np.frombuffer({name}, dtype=...)")


def check_input(x, name):
    """Refuse, naming ``name``, what NumPy would read wrongly or late."""
    if type(x) is int:
        try:
            float(x)
        except OverflowError:
            raise OverflowError(f"{name}: the Python int does not fit in float64 "
                                f"({x.bit_length()} bits)") from None
    else:
        _refuse_raw_bytes(x, name)


def _buffer_out(o):
    """One ``out`` as the ufunc takes it: ndarrays and objects NumPy
    dispatches (``__array_ufunc__``) as they are, a writable buffer as an
    ndarray over its memory."""
    if o is None or type(o) is np.ndarray or hasattr(type(o), "__array_ufunc__"):
        return o
    _refuse_raw_bytes(o, "out")
    try:
        view = memoryview(o)
    except TypeError:
        return o   # no buffer: the ufunc's (an input's override may take it)
    except Exception as exc:
        raise TypeError(f"out: cannot read the buffer of a {type(o).__name__}: {exc}") from exc
    if view.readonly:
        raise ValueError(f"out: the buffer of the {type(o).__name__} is read-only")
    try:
        return np.asarray(view)
    except Exception as exc:   # e.g. a format NumPy has no dtype for
        raise TypeError(f"out: cannot view the {type(o).__name__}'s buffer "
                        f"(format {view.format!r}) as an array: {exc}") from exc


def as_out(out):
    """``out`` (one object or a tuple) as the ufunc takes it."""
    if isinstance(out, tuple):
        outs = tuple(_buffer_out(o) for o in out)
        return out if all(a is b for a, b in zip(outs, out, strict=True)) else outs
    return _buffer_out(out)


def name_a_refused_out(error, out):
    """After a failed call: when the ufunc refused ``out`` for its type
    (neither an ndarray, nor a buffer, nor taken by an override), say so by
    name."""
    if out is not None and "return arrays must be of ArrayType" in str(error):
        raise TypeError(f"out: must be an ndarray or a writable buffer-protocol object, "
                        f"got {type(returned_out(out)).__name__}") from error


def returned_out(out):
    """What the function returns for a given ``out``: the object itself
    (a tuple's element), as the ufunc returns its out array."""
    return out[0] if isinstance(out, tuple) and len(out) == 1 else out


def _dtype_of(x):
    if type(x) in _dtypes.PYTHON_SCALARS:
        return np.dtype(bool) if type(x) is bool else type(x)
    dtype = getattr(x, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(x).dtype


def refuse_complex_into_foreign(ufunc, g, y, out, dtype):
    """A complex result never becomes an ``out`` of ml_dtypes' types
    (bfloat16, float8), whatever the casting rule (NumPy never casts complex
    to a real dtype under 'same_kind'; ml_dtypes would drop the imaginary
    part)."""
    outs = out if isinstance(out, tuple) else (out,)
    foreign = [o.dtype for o in outs if isinstance(o, np.ndarray) and o.dtype in _dtypes.FOREIGN]
    if not foreign:
        return
    try:
        compute = ufunc.resolve_dtypes(
            (_dtype_of(g), _dtype_of(y), None),
            signature=(None, None, None if dtype is None else np.dtype(dtype).type))[2]
    except Exception:
        return   # the ufunc call reports it
    if compute.kind == "c":
        raise TypeError(f"sigmoid_backward: the result is complex ({compute!r}), and a complex "
                        f"value is never cast to out's dtype, {foreign[0]!r}: compute "
                        f"in complex and take .real first")


def _needs_care(x):
    """Inputs the ufunc reads by NumPy's conversion (not arrays, scalars or
    overrides): where a failed call may come from."""
    return not (type(x) is np.ndarray or type(x) in _dtypes.PYTHON_SCALARS
                or hasattr(type(x), "__array_ufunc__"))


def after_failure(g, y):
    """The inputs to call the ufunc with again, after a failed call.

    Raises the reason, naming the argument, when NumPy cannot make an array
    of an input and neither can a DLPack import; returns the inputs with
    DLPack producers imported (bfloat16 tensors, say) when that reads one
    NumPy could not; else returns ``g`` and ``y`` themselves: the call's
    error stands (_named_errors.py tells it)."""
    again = []
    for x, name in ((g, "grad_output"), (y, "output")):
        if _needs_care(x):
            arr = as_array(x, name)   # raises the named reason
            again.append(arr if hasattr(type(x), "__dlpack__") else x)
        else:
            again.append(x)
    return again
