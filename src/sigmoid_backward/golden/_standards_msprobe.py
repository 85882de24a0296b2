"""The msprobe standards: ``msprobe-tiers``, ``msprobe-threshold`` and
``msprobe-ulp`` (mindstudio-probe's api_accuracy_checker)."""
import numpy as np

from ._dtype_names import name_of
from ._standards_common import BFLOAT16, _apply, _count, _parts, _real, _table

RAISED = {"float16": np.float32, "bfloat16": np.float32, "float32": np.float64,
          "float64": np.float64}


# --- msprobe: the shared steps ----------------------------------------------------

def _benchmark(a, g, lim):
    """device and bench arrays as msprobe's compare sees them: bfloat16
    tensors go to NumPy as float32; the bench in raised precision (its
    benchmark runs the API upcast) unless --benchmark-precision same."""
    dev, bench = _parts(a), _parts(g)
    if lim["raised"]:
        bench = bench.astype(RAISED[name_of(bench.dtype)])
    if dev.dtype == BFLOAT16:
        dev = dev.astype(np.float32)
    if bench.dtype == BFLOAT16:
        bench = bench.astype(np.float32)
    return dev, bench


def _eps(lim, bench):
    # algorithm.get_abs_bench_with_eps: bfloat16's own eps, else the bench's.
    return 2.0**-8 if lim["device"] == "bfloat16" else np.finfo(bench.dtype).eps


def _raised(dtype, opts):
    return (opts.benchmark or "raised") == "raised"


# --- msprobe compare.py _compare_float_tensor: the per-dtype tiers ---------------

def _tiers_limits(dtype, opts):
    real = _real(dtype)
    short = real in ("float16", "bfloat16")
    return {"device": real, "raised": _raised(dtype, opts), "cosine": 0.99,
            "max_abs_error": 0.001,
            "error_below": 0.01 if short else 0.001,
            "pass_below": 0.001 if short else 0.0001}


_RATIOS = {"hundredth": 0.01, "thousandth": 0.001, "five_thousandth": 0.005,
           "ten_thousandth": 0.0001}


def _msprobe_relative(a, g, lim):
    dev, bench = _benchmark(a, g, lim)
    with np.errstate(all="ignore"):
        abs_err = np.abs(dev - bench)
        rel = np.abs(abs_err / (np.abs(bench) + _eps(lim, bench)))
    return dev, bench, abs_err, rel


def _tiers_tally(a, g, third, lim):
    dev, bench, abs_err, rel = _msprobe_relative(a, g, lim)
    t = {f"below_{k}": _count(rel < v) for k, v in _RATIOS.items()}
    finite = np.isfinite(abs_err)
    t["max_abs_err"] = float(abs_err.max()) if abs_err.size and finite.all() else (
        float("nan") if abs_err.size else 0.0)
    n64, b64 = dev.astype(np.float64), bench.astype(np.float64)
    t["nonfinite"] = _count(~(np.isfinite(n64) & np.isfinite(b64)))
    with np.errstate(all="ignore"):
        t.update(dot=float(np.dot(n64, b64)), dev_sq=float(np.dot(n64, n64)),
                 bench_sq=float(np.dot(b64, b64)),
                 max_dev=float(np.abs(n64).max(initial=0.0)),
                 max_bench=float(np.abs(b64).max(initial=0.0)), values=dev.size)
    return t


def cosine(t):
    """msprobe's cosine_sim from the tallies: (value or None, ok, message)."""
    tiny = np.finfo(float).eps
    if t["values"] == 1:
        return None, True, "scalar"
    if t["nonfinite"]:
        return float("nan"), True, "NaN or inf in the data"
    if t["max_dev"] <= tiny and t["max_bench"] <= tiny:
        return None, True, "all zero"
    if t["max_dev"] <= tiny or t["max_bench"] <= tiny:
        return None, False, "all zero on one side"
    cos = t["dot"] / (np.sqrt(t["dev_sq"]) * np.sqrt(t["bench_sq"]))
    cos = float(np.clip(cos, -1, 1))
    return cos, cos > 0.99, ""


def _ratio(t, key):
    size = t["values"]
    return t[f"below_{key}"] / size if size else 1


def _tiers_verdict(t, n, lim):
    size = t.get("values", 0)
    if not size:
        return "pass", 0, ["empty output: msprobe skips it"]
    wrong = size - t["below_" + ("thousandth" if lim["pass_below"] == 0.001
                                 else "ten_thousandth")]
    cos, ok, _ = cosine(t)
    if not ok:
        return "fail", wrong, [f"cosine similarity {cos} is not above 0.99"]
    if t["max_abs_err"] < lim["max_abs_error"]:
        return "pass", wrong, ["max abs error below 0.001"]
    if lim["error_below"] == 0.01:
        if not _ratio(t, "hundredth") > 1 - 0.01:
            return "fail", wrong, []
        return ("pass" if _ratio(t, "thousandth") > 1 - 0.001 else "warning"), wrong, []
    if not _ratio(t, "thousandth") > 1 - 0.001:
        return "fail", wrong, []
    if not _ratio(t, "ten_thousandth") > 1 - 0.0001:
        return "warning", wrong, []
    return "pass", wrong, []


def _tiers_measure(a, g, lim):
    rel = _msprobe_relative(a, g, lim)[3]
    return _flat_parts(np.where(np.isnan(rel), np.inf, rel).astype(np.float64), a)


def _flat_parts(per_part, a):
    """Per-part values back to one per element (the larger part's)."""
    return per_part.reshape(a.size, -1).max(axis=1) if a.dtype.kind == "c" else per_part


# --- msprobe absolute_threshold.py -------------------------------------------------

_MS_RTOL = _table(2.0**-10, 2.0**-8, 2.0**-20)
_MS_SMALL = _table(2.0**-10, 2.0**-10, 2.0**-20)
_MS_SMALL_ATOL = _table(2.0**-16, 1e-16, 2.0**-30)
_BF16_MAX = 3.3895313892515355e38  # CompareConst.BFLOAT16_MAX


def _threshold_limits(dtype, opts):
    real = _real(dtype)
    lim = {"device": real, "raised": _raised(dtype, opts), "rtol": _MS_RTOL[real],
           "small_value": _MS_SMALL[real], "atol": _MS_SMALL_ATOL[real]}
    return _apply(lim, opts, ("rtol", "atol"))


def _threshold_masks(a, g, lim):
    dev, bench = _benchmark(a, g, lim)
    with np.errstate(all="ignore"):
        abs_bench = np.abs(bench)
        with_eps = abs_bench + _eps(lim, bench)
        both_finite = np.isfinite(dev) & np.isfinite(bench.astype(dev.dtype))
        abs_err = np.abs(dev - bench)
        rel = abs_err / with_eps
        small = (abs_bench <= lim["small_value"]) & both_finite
        normal = both_finite & ~small
        # check_inf_nan_value: clipped to the device dtype's range
        top = _BF16_MAX if lim["device"] == "bfloat16" else float(np.finfo(dev.dtype).max)
        golden_clip = np.clip(bench.astype(dev.dtype), -top, top)
        clipped = np.abs(np.clip(dev, -top, top) - golden_clip) / with_eps
        inf_ok = (clipped <= lim["rtol"]) | (np.isnan(dev) & np.isnan(golden_clip))
    return {"inf_nan": ~both_finite, "inf_nan_err": ~inf_ok & ~both_finite,
            "normal": normal, "rel_err": (rel > lim["rtol"]) & normal, "rel": rel,
            "small": small, "abs_err": (abs_err > lim["atol"]) & small, "abs": abs_err}


def _threshold_tally(a, g, third, lim):
    m = _threshold_masks(a, g, lim)
    t = {k: _count(m[k]) for k in ("inf_nan", "inf_nan_err", "normal", "rel_err",
                                   "small", "abs_err")}
    t["values"] = m["rel"].size
    return t


def _threshold_verdict(t, n, lim):
    wrong = t["inf_nan_err"] + t["rel_err"] + t["abs_err"]
    return ("pass" if wrong == 0 else "fail"), wrong, []


def _threshold_measure(a, g, lim):
    m = _threshold_masks(a, g, lim)
    s = np.zeros(m["rel"].shape)
    s[m["normal"]] = m["rel"][m["normal"]] / lim["rtol"]
    s[m["small"]] = m["abs"][m["small"]] / lim["atol"]
    s[m["inf_nan_err"]] = np.inf
    return _flat_parts(np.nan_to_num(s, nan=np.inf, posinf=np.inf), a)


# --- msprobe ulp_compare.py, algorithm.get_ulp_err ----------------------------------

_MIN_EB = _table(-14, -126, -126, -1022)
_MBITS = _table(10, 7, 23, 52)
_MINIMUM_ERR = _table(2.0**-11, 2.0**-8, 2.0**-14)


def _ulp_limits(dtype, opts):
    real = _real(dtype)
    wide = real in ("float32", "float64")
    return {"device": real, "raised": _raised(dtype, opts), "min_eb": _MIN_EB[real],
            "mbits": _MBITS[real], "ulp_error": 32 if wide else 1,
            "proportion": 0.05 if wide else 0.001, "mean_ulp_error": 64 if wide else None,
            "proportion_ratio": 1, "minimum_err": _MINIMUM_ERR[real]}


def ulp_errors(a, g, lim):
    """algorithm.get_ulp_err: eb = max(floor(log2 |bench|), min_eb), 0 for a
    zero bench; |(dev - bench) * 2**(mbits - eb)| in float32 for 16-bit
    dtypes, float64 for float32 (and float64); per part."""
    dev, bench = _benchmark(a, g, lim)
    work = np.float64 if lim["device"] in ("float32", "float64") else np.float32
    with np.errstate(all="ignore"):
        abs_bench = np.abs(bench)
        eb = np.where(abs_bench == 0, 0, np.floor(np.log2(abs_bench)))
        eb = np.maximum(eb, lim["min_eb"])
        err = (dev.astype(work) - bench).astype(work) * np.exp2(-eb + lim["mbits"]).astype(work)
    return np.abs(err)


def _ulp_tally(a, g, third, lim):
    err = ulp_errors(a, g, lim)
    t = {"sum_ulp_error": float(err.sum(dtype=np.float64)),
         "max_ulp_error": float(err.max()) if err.size else 0.0,
         "over": _count(err > lim["ulp_error"]), "values": err.size}
    if third is not None:
        t["third_over"] = _count(ulp_errors(third, g, lim) > lim["ulp_error"])
    return t


def _ulp_verdict(t, n, lim):
    size = t.get("values", 0)
    if not size:
        return "pass", 0, ["empty output: msprobe skips it"]
    proportion = t["over"] / size
    notes = []
    if not np.isfinite(t["sum_ulp_error"]):
        notes.append("the mean ULP error is not finite (inf/NaN in the data): msprobe "
                     "then checks it against the GPU's, which is not applied here")
    if lim["mean_ulp_error"] is not None and t["sum_ulp_error"] / size < lim["mean_ulp_error"]:
        return "pass", t["over"], notes
    if proportion < lim["proportion"]:
        return "pass", t["over"], notes
    if "third_over" in t:
        third = t["third_over"] / size
        ratio = proportion / max(third, lim["minimum_err"])
        notes.append(f"NPU/third-party ULP error proportion ratio {ratio:.6g}")
        if ratio < lim["proportion_ratio"]:
            return "pass", t["over"], notes
    else:
        notes.append("the NPU/GPU proportion-ratio rule was not applied: no --third-party")
    return "fail", t["over"], notes


def _ulp_measure(a, g, lim):
    err = ulp_errors(a, g, lim)
    return _flat_parts(np.where(np.isnan(err), np.inf, err).astype(np.float64), a)
