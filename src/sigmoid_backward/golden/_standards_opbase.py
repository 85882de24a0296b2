"""The opbase standards: ``opbase-mere-mare`` and ``opbase-tolerance``
(experimental_standard.md, en and zh)."""
import numpy as np

from ._standards_common import _apply, _count, _error, _real, _score, _table

# --- opbase experimental_standard.md: MERE / MARE (en) --------------------------

_THRESHOLD = _table(2.0**-10, 2.0**-7, 2.0**-13)


def _mere_limits(dtype, opts):
    t = _THRESHOLD[_real(dtype)]
    return {"mere": t, "mare": 10 * t, "eps": 1e-7}


def _relative(a, g, eps):
    err, abs_g = _error(a, g)
    rel = _score(err, abs_g + eps)
    return rel


def _mere_tally(a, g, third, lim):
    rel = _relative(a, g, lim["eps"])
    return {"sum_rel": float(rel.sum()), "max_rel": float(rel.max(initial=0.0)),
            "over_threshold": _count(rel >= lim["mere"])}


def _mere_verdict(t, n, lim):
    mere = t["sum_rel"] / n if n else 0.0
    passed = mere < lim["mere"] and t["max_rel"] < lim["mare"]
    return ("pass" if passed else "fail"), t["over_threshold"], []


def _mere_measure(a, g, lim):
    return _relative(a, g, lim["eps"])


# --- opbase experimental_standard.md: mixed tolerance (zh) ----------------------

_TOL_RTOL = _table(2.0**-9, 2.0**-6, 2.0**-10)
_TOL_ATOL = _table(2.0**-9, 2.0**-6, 2.0**-16)
_TOL_LIMIT = _table(1e-1, 1e0, 1e-2)


def _tol_limits(dtype, opts):
    real = _real(dtype)
    lim = {"rtol": _TOL_RTOL[real], "atol": _TOL_ATOL[real], "matched_ratio": 0.99,
           "max_abs_error": _TOL_LIMIT[real], "max_ulp": 32}
    return _apply(lim, opts)


def _ulps(a, g):
    """How many representable values of the dtype lie between a and g (the
    larger part's, for complex); inf where not both finite and different."""
    from ._bits import parts, ulp_distance
    pa, pg = parts(a), parts(g)
    finite = np.isfinite(pa) & np.isfinite(pg)
    d = ulp_distance(np.where(finite, pa, 0).astype(pa.dtype),
                     np.where(finite, pg, 0).astype(pg.dtype)).astype(np.float64)
    d[~finite] = np.inf
    return d.max(axis=1)


def _tol_tally(a, g, third, lim):
    err, abs_g = _error(a, g)
    fails = err > lim["atol"] + lim["rtol"] * abs_g
    capped = err > lim["max_abs_error"]
    if capped.any():  # "1e-1 or 32 * ULP": an element within 32 ULP is within the limit
        where = np.flatnonzero(capped)
        capped_count = _count(_ulps(a[where], g[where]) > lim["max_ulp"])
    else:
        capped_count = 0
    return {"failed": _count(fails), "over_limit": capped_count,
            "max_abs_error": float(err.max(initial=0.0))}


def _tol_verdict(t, n, lim):
    matched = (n - t["failed"]) / n if n else 1.0
    passed = matched >= lim["matched_ratio"] and t["over_limit"] == 0
    return ("pass" if passed else "fail"), t["failed"], []


def _tol_measure(a, g, lim):
    err, abs_g = _error(a, g)
    return _score(err, lim["atol"] + lim["rtol"] * abs_g)
