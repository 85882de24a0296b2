"""The ``ttk-close`` standard: ops-nn's isclose_compare, as TTK's
``--compare close`` runs it."""
import numpy as np

from ._dtype_names import name_of
from ._standards_common import _apply, _count, _error, _score

# --- ops-nn isclose_compare: TTK --compare close ---------------------------------

def _close_limits(dtype, opts):
    tolerance = opts.tolerance or {}
    # The source tests str(npu_out.dtype) == "float32": complex64 gets 1e-3.
    default = 1e-4 if name_of(dtype) == "float32" else 1e-3
    lim = {"rtol": tolerance.get("rtol", default), "ptol": tolerance.get("ptol", default),
           "atol": tolerance.get("atol", 1e-8)}
    return _apply(lim, opts)


def _close_tally(a, g, third, lim):
    with np.errstate(all="ignore"):
        match = np.isclose(a, g, rtol=lim["rtol"], atol=lim["atol"], equal_nan=True)
    return {"matched": _count(match)}


def _close_verdict(t, n, lim):
    if not n:  # the source divides 0 by 0 (NaN, a FAIL); an empty output has no error
        return "pass", 0, ["empty output: judged as passing"]
    precision = t["matched"] / n
    return ("pass" if (1 - precision) <= lim["ptol"] else "fail"), n - t["matched"], []


def _close_measure(a, g, lim):
    err, abs_g = _error(a, g)
    return _score(err, lim["atol"] + lim["rtol"] * abs_g)
