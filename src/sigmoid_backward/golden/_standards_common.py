"""What the precision standards share: per-dtype tables of their numbers,
the user's overrides, and the float64 error and score their measures use."""
import numpy as np

from .._kernel import _dtypes
from ._bits import real_part_dtype
from ._dtype_names import name_of

BFLOAT16 = _dtypes.BFLOAT16


def _table(f16, bf16, f32, f64=None):
    """One number per real dtype; float64 takes float32's where the source
    has none."""
    return {"float16": f16, "bfloat16": bf16, "float32": f32,
            "float64": f32 if f64 is None else f64}


def _real(dtype):
    return name_of(real_part_dtype(dtype))


def _count(mask):
    return int(np.count_nonzero(mask))


def _parts(arr):
    """A 1-d array's values as reals: complex as (real, imaginary) pairs."""
    return arr.view(real_part_dtype(arr.dtype)) if arr.dtype.kind == "c" else arr


def _apply(lim, opts, keys=("rtol", "atol", "ptol")):
    """The user's overrides of the numbers this standard has; which ones
    applied is kept in the limits, so that the report says so."""
    applied = {k: v for k, v in opts.overrides.items() if k in keys and k in lim}
    lim.update(applied)
    if applied:
        lim["overridden"] = sorted(applied)
    return lim


def _wide(a, g):
    """Both as float64 (complex128 for complex), for the measures."""
    kind = np.complex128 if a.dtype.kind == "c" else np.float64
    return a.astype(kind), g.astype(kind)


def _error(a, g):
    """``|a - g|`` in float64 with equal values (infinities too) and NaN
    against NaN at 0 and any other inf/NaN disagreement at inf: the error of
    the sources whose formulas do not say (opbase)."""
    a, g = _wide(a, g)
    with np.errstate(all="ignore"):
        err = np.abs(a - g)
    nan_a, nan_g = np.isnan(a), np.isnan(g)
    err[(a == g) | (nan_a & nan_g)] = 0.0
    err[np.isnan(err)] = np.inf
    return err, np.abs(np.where(np.isfinite(g), g, 0))


def _score(err, allowed):
    """err / allowed, 0 where err is 0, inf where allowed is 0 or err inf."""
    with np.errstate(all="ignore"):
        s = err / allowed
    s[err == 0] = 0.0
    s[np.isnan(s)] = np.inf
    return s
