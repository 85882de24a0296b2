"""The precision standards NPU operator tests judge an output by, each as its
public source states it: rule, per-dtype numbers, arithmetic and inf/NaN
handling (docs/golden.md has the table, with each source's file and commit).

A standard gives its limits for a dtype, tallies a chunk of the two arrays
(counts and sums; keys starting with ``max_`` combine by maximum; ``values``
counts what it judged where that is not the elements: complex parts), says from
the totals its status (``"pass"``, ``"warning"`` where the source has that
tier, ``"fail"``) and how many elements are wrong under it, and measures
each element's error its own way (for ``--worst`` and ``--hist``).

Where a source computes in the dtype (NumPy's ``isclose``, torch_npu's
``assertRtolEqual``, msprobe), so does its standard here, so that a value on
a boundary gets the source's verdict.  Complex values: ``ttk-close`` calls
``isclose`` on them as its source does, opbase's formulas take the modulus,
and the rules whose sources know no complex judge the real and imaginary
parts as separate values.
"""
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._kernel import _dtypes
from ._bits import real_part_dtype
from ._dtype_names import name_of

OPS_NN = "hicann/ops-nn"
OPS_NN_COMMIT = "e5c3fa93"
TORCH_NPU = "Ascend/pytorch"
TORCH_NPU_COMMIT = "9e73e708"
OPBASE = "hicann/opbase"
OPBASE_COMMIT = "aa3cd74b"
MSPROBE = "mindstudio-probe 26.2.0 (Ascend mstt, debug/accuracy_tools/msprobe)"
MSPROBE_COMMIT = "26.2.0"
MSPROBE_DIR = "msprobe/pytorch/api_accuracy_checker/"

BFLOAT16 = _dtypes.BFLOAT16
RAISED = {"float16": np.float32, "bfloat16": np.float32, "float32": np.float64,
          "float64": np.float64}


def _table(f16, bf16, f32, f64=None):
    """One number per real dtype; float64 takes float32's where the source
    has none."""
    return {"float16": f16, "bfloat16": bf16, "float32": f32,
            "float64": f32 if f64 is None else f64}


def _real(dtype):
    return name_of(real_part_dtype(dtype))


@dataclass(frozen=True)
class Options:
    """What a comparison is told besides the arrays: the case file's
    ``tolerance`` (``ttk-close``), the user's ``overrides`` of rtol, atol and
    ptol, the ``benchmark`` precision (``"same"`` or ``"raised"``; None: the
    source's own), and whether a third-party output comes along."""
    tolerance: dict | None = None
    overrides: dict = field(default_factory=dict)
    benchmark: str | None = None
    third_party: bool = False


@dataclass(frozen=True)
class Standard:
    name: str
    aliases: tuple
    rule: str
    source: str
    numbers: str
    limits: Any   # (dtype, Options) -> dict
    tally: Any    # (actual, golden, third or None, limits) -> dict
    verdict: Any  # (totals, numel, limits) -> (status, mismatches, notes)
    measure: Any  # (actual, golden, limits) -> float64 error per element (0: none)
    tiers: bool = False


def combine(totals, part):
    for key, value in part.items():
        if key.startswith("max_"):
            old = totals.get(key, 0.0)
            totals[key] = value if np.isnan(value) or value > old else old
        else:
            totals[key] = totals.get(key, 0) + value
    return totals


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


# --- torch_npu testing/testcase.py assertRtolEqual -------------------------------

def _rtol_limits(dtype, opts):
    real = _real(dtype)
    if real == "bfloat16":  # torch.allclose(x, y, rtol=prec16, atol=prec16)
        lim = {"rtol": 1e-3, "atol": 1e-3}
    elif real == "float16":
        lim = {"prec": 1e-3, "minimum": 6e-8}
    else:
        lim = {"prec": 1e-4, "minimum": 10e-10}
    return _apply(lim, opts, ("rtol", "atol"))


def _bf16(x):
    return x.astype(np.float32).astype(BFLOAT16)


def _allclose_bf16(x, y, rtol, atol):
    """torch.isclose(x, y, rtol, atol) on bfloat16 tensors: each operation
    computed in float32 and rounded to bfloat16, as torch's CPU kernels do;
    NaN is never close (no equal_nan)."""
    fx, fy = x.astype(np.float32), y.astype(np.float32)
    with np.errstate(all="ignore"):
        allowed = _bf16(np.float32(atol) + np.abs(_bf16(np.float32(rtol) * fy)).astype(
            np.float32))
        actual = np.abs(_bf16(fx - fy))
        return (fx == fy) | (np.isfinite(actual) & (actual <= allowed))


def _rtol_tally(a, g, third, lim):
    x, y = _parts(g), _parts(a)   # assertRtolEqual(cpu_output, npu_output)
    if "rtol" in lim:
        return {"not_close": _count(~_allclose_bf16(x, y, lim["rtol"], lim["atol"]))}
    pre, minimum = lim["prec"], lim["minimum"]
    nan_x = np.isnan(x)
    with np.errstate(all="ignore"):
        diff = y - x
        diff[nan_x] = 0
        result = np.abs(diff)
        deno = np.maximum(np.abs(x), np.abs(y))
        atol_ok = np.less_equal(result, pre)
        rtol_ok = np.less_equal(result / np.add(deno, minimum), pre)
    return {"nan_misplaced": _count(nan_x != np.isnan(y)), "atol_over": _count(~atol_ok),
            "rtol_over": _count(~rtol_ok), "both_over": _count(~atol_ok & ~rtol_ok),
            "values": x.size}


def _rtol_verdict(t, n, lim):
    if "rtol" in lim:
        return ("pass" if t["not_close"] == 0 else "fail"), t["not_close"], []
    size, pre = t.get("values", 0), lim["prec"]
    failed = t["nan_misplaced"] > 0 or (t["rtol_over"] > size * pre
                                        and t["atol_over"] > size * pre)
    return ("fail" if failed else "pass"), t["both_over"] + t["nan_misplaced"], []


def _rtol_measure(a, g, lim):
    err, abs_g = _error(a, g)
    abs_a = np.abs(np.where(np.isfinite(_wide(a, a)[0]), _wide(a, a)[0], 0))
    if "rtol" in lim:  # allclose's bound, relative to the second argument (actual)
        return _score(err, lim["atol"] + lim["rtol"] * abs_a)
    # An element counts as wrong when over prec both ways: the smaller ratio.
    return np.minimum(_score(err, lim["prec"]),
                      _score(err, lim["prec"] * (np.maximum(abs_a, abs_g) + lim["minimum"])))


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


STANDARDS = {s.name: s for s in (
    Standard("ttk-close", (),
             "np.isclose(actual, golden, rtol, atol, equal_nan=True) in the dtype; pass if "
             "1 - matched / numel <= ptol (NaN on one side is one mismatch)",
             f"{OPS_NN} matmul/common/tests/st/arch35/matmul_golden_util.py "
             f"isclose_compare ({OPS_NN_COMMIT})",
             "rtol = ptol = 1e-4 (float32) or 1e-3 (others), atol 1e-8, or the csv's",
             _close_limits, _close_tally, _close_verdict, _close_measure),
    Standard("torch-npu-rtol", ("double-thousandth",),
             "bfloat16: torch.allclose(golden, actual, rtol=prec16, atol=prec16), any NaN "
             "fails; others: NaN positions must match, fail only if both counts of "
             "|d| > prec and |d| / (max(|a|, |g|) + minimum) > prec exceed numel * prec",
             f"{TORCH_NPU} torch_npu/testing/testcase.py assertRtolEqual "
             f"({TORCH_NPU_COMMIT})",
             "prec16 1e-3 (float16, bfloat16), minimum16 6e-8; prec 1e-4, minimum 1e-9",
             _rtol_limits, _rtol_tally, _rtol_verdict, _rtol_measure),
    Standard("opbase-tolerance", ("mixed-tolerance",),
             "element passes if |a - g| <= atol + rtol * |g|; pass if matched ratio >= 0.99 "
             "and no element is over the max abs error limit and 32 ULP",
             f"{OPBASE} docs/zh/ops_precision_standard/experimental_standard.md "
             f"({OPBASE_COMMIT})",
             "rtol/atol: float16 2^-9/2^-9, bfloat16 2^-6/2^-6, float32 2^-10/2^-16; "
             "limit 1e-1 / 1e0 / 1e-2",
             _tol_limits, _tol_tally, _tol_verdict, _tol_measure),
    Standard("opbase-mere-mare", ("mere-mare",),
             "rel = |a - g| / (|g| + 1e-7); pass if MERE < T and MARE < 10 T",
             f"{OPBASE} docs/en/ops_precision_standard/experimental_standard.md "
             f"({OPBASE_COMMIT})",
             "T: float16 2^-10, bfloat16 2^-7, float32 2^-13",
             _mere_limits, _mere_tally, _mere_verdict, _mere_measure),
    Standard("msprobe-tiers", (),
             "cosine <= 0.99: error; max abs error < 0.001: pass; 16-bit: share of "
             "rel < 1e-2 not > 1 - 1e-2: error, rel < 1e-3 > 1 - 1e-3: pass, else warning; "
             "32/64-bit: 1e-3 fails: error, 1e-4 fails: warning",
             f"{MSPROBE} {MSPROBE_DIR}compare/compare.py _compare_float_tensor, "
             f"compare/algorithm.py ({MSPROBE_COMMIT})",
             "rel = |a - b| / (|b| + eps), eps the bench dtype's (bfloat16 2^-8)",
             _tiers_limits, _tiers_tally, _tiers_verdict, _tiers_measure, tiers=True),
    Standard("msprobe-threshold", (),
             "|b| <= small: |a - b| <= small_atol; else |a - b| / (|b| + eps) <= rtol; "
             "inf/NaN clipped to the dtype's range must agree; pass if no element fails",
             f"{MSPROBE} {MSPROBE_DIR}precision_standard/absolute_threshold.py, "
             f"standard_config.py ({MSPROBE_COMMIT})",
             "rtol 2^-10 / 2^-8 / 2^-20, small 2^-10 / 2^-10 / 2^-20, "
             "small_atol 2^-16 / 1e-16 / 2^-30",
             _threshold_limits, _threshold_tally, _threshold_verdict, _threshold_measure),
    Standard("msprobe-ulp", ("ulp",),
             "ULP error |a - b| * 2^(mbits - max(floor(log2 |b|), min_eb)); float32: pass if "
             "mean < 64 or share over 32 < 0.05; 16-bit: share over 1 < 0.001; or the "
             "third-party share ratio < 1",
             f"{MSPROBE} {MSPROBE_DIR}precision_standard/ulp_compare.py, "
             f"compare/algorithm.py, standard_config.py ({MSPROBE_COMMIT})",
             "mbits 10 / 7 / 23, min_eb -14 / -126 / -126",
             _ulp_limits, _ulp_tally, _ulp_verdict, _ulp_measure),
)}
ALIASES = {alias: s.name for s in STANDARDS.values() for alias in s.aliases}
DEFAULT = "ttk-close"
# What an ATK case file's "standard": {"acc": ...} asks for: ATK's own
# comparator is not public; single_bm ("single benchmark") is the name of
# opbase's experimental standard's pass rule (单标杆比对).
ATK_ACC = {"single_bm": "opbase-tolerance"}


def resolve(name):
    """The standard's name for ``name`` or an alias; KeyError if neither."""
    name = ALIASES.get(name, name)
    STANDARDS[name]
    return name
