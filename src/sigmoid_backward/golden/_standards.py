"""The precision standards NPU operator tests judge an output by: their
rules and per-dtype numbers, carried over from the public sources named in
each (docs/golden.md has the table).

A standard gives its limits for a dtype, tallies a chunk (sums and counts;
keys starting with ``max_`` combine by maximum), and says from the totals
whether the case passes and how many elements are mismatches under it.  An
inf/NaN mismatch (see ``_metrics``) is a mismatch under every standard and
fails the case whatever the standard's own rule says.  Complex outputs use
the numbers of their parts' dtype, float64 those of float32 where a source
gives none.
"""
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._bits import real_part_dtype
from ._dtype_names import name_of


# One row per real dtype; float64 follows float32 where the source has no number.
def _table(f16, bf16, f32, f64=None):
    return {"float16": f16, "bfloat16": bf16, "float32": f32,
            "float64": f32 if f64 is None else f64}


def _pick(table, dtype):
    return table[name_of(real_part_dtype(dtype))]


@dataclass(frozen=True)
class Standard:
    name: str
    rule: str
    source: str
    limits: Any   # (dtype, tolerance or None) -> dict
    tally: Any    # (Chunk, limits) -> dict of sums, counts and max_ values
    verdict: Any  # (totals, numel, limits) -> (passed, mismatches)


def combine(totals, part):
    for key, value in part.items():
        if key.startswith("max_"):
            totals[key] = max(totals.get(key, 0), value)
        else:
            totals[key] = totals.get(key, 0) + value
    return totals


def _count(mask):
    return int(np.count_nonzero(mask))


# --- TTK --compare close ---------------------------------------------------------

def _close_limits(dtype, tolerance):
    tolerance = tolerance or {}
    default = 1e-4 if name_of(dtype) == "float32" else 1e-3
    return {"rtol": tolerance.get("rtol", default), "ptol": tolerance.get("ptol", default),
            "atol": tolerance.get("atol", 1e-8)}


def _close_tally(c, lim):
    return {"mismatches": _count(c.err > lim["atol"] + lim["rtol"] * c.abs_golden)}


def _close_verdict(t, n, lim):
    return (t["mismatches"] <= lim["ptol"] * n, t["mismatches"])


# --- torch_npu assertRtolEqual: double thousandth / ten-thousandth -----------------

_PREC = _table(1e-3, 0.004, 1e-4)
_TINY = _table(6e-8, 1e-9, 1e-9)


def _rtol_limits(dtype, tolerance):
    return {"prec": _pick(_PREC, dtype), "tiny": _pick(_TINY, dtype)}


def _rtol_tally(c, lim):
    denominator = np.maximum(c.abs_actual, c.abs_golden) + lim["tiny"]
    return {"abs_over": _count(c.err > lim["prec"]),
            "rel_over": _count(c.err / denominator > lim["prec"])}


def _rtol_verdict(t, n, lim):
    # Fails only when both counts exceed size * prec; the smaller is the
    # count that decides.
    wrong = min(t["abs_over"], t["rel_over"])
    return (wrong <= lim["prec"] * n, wrong)


# --- opbase: MERE / MARE ----------------------------------------------------------

_THRESHOLD = _table(2.0**-10, 2.0**-7, 2.0**-13)


def _mere_limits(dtype, tolerance):
    t = _pick(_THRESHOLD, dtype)
    return {"mere": t, "mare": 10 * t, "eps": 1e-7}


def _mere_tally(c, lim):
    rel = c.relative(lim["eps"])
    return {"sum_rel": float(rel.sum()), "max_rel": float(rel.max(initial=0.0)),
            "mismatches": _count(rel > lim["mere"])}


def _mere_verdict(t, n, lim):
    mere = t["sum_rel"] / n if n else 0.0
    return (mere < lim["mere"] and t["max_rel"] < lim["mare"], t["mismatches"])


# --- opbase: mixed tolerance --------------------------------------------------------

_MAX_ABS = _table(1e-1, 1e-1, 1e-2)


def _mixed_limits(dtype, tolerance):
    t = _pick(_THRESHOLD, dtype)
    return {"rtol": t, "atol": t, "matched_ratio": 0.99,
            "max_abs_error": _pick(_MAX_ABS, dtype), "max_ulp": 32}


def _mixed_tally(c, lim):
    return {"mismatches": _count(c.err > lim["atol"] + lim["rtol"] * c.abs_golden),
            "max_err": float(c.err.max(initial=0.0)), "max_ulp": int(c.ulp.max(initial=0))}


def _mixed_verdict(t, n, lim):
    matched = (n - t["mismatches"]) / n if n else 1.0
    bounded = t["max_err"] <= lim["max_abs_error"] or t["max_ulp"] <= lim["max_ulp"]
    return (matched >= lim["matched_ratio"] and bounded, t["mismatches"])


# --- msprobe: absolute threshold -----------------------------------------------------

_MS_RTOL = _table(2.0**-10, 2.0**-8, 2.0**-20)
_MS_SMALL = _table(2.0**-10, 2.0**-10, 2.0**-20)
_MS_SMALL_ATOL = _table(2.0**-16, 1e-16, 2.0**-30)
_MS_EPS = _table(2.0**-10, 2.0**-8, 2.0**-23, 2.0**-52)


def _threshold_limits(dtype, tolerance):
    return {"rtol": _pick(_MS_RTOL, dtype), "small_value": _pick(_MS_SMALL, dtype),
            "small_value_atol": _pick(_MS_SMALL_ATOL, dtype), "eps": _pick(_MS_EPS, dtype)}


def _threshold_tally(c, lim):
    small = c.regular & (c.abs_golden <= lim["small_value"])
    normal = c.regular & ~small
    rel_over = normal & (c.relative(lim["eps"]) > lim["rtol"])
    abs_over = small & (c.err > lim["small_value_atol"])
    return {"rel_over": _count(rel_over), "abs_over": _count(abs_over)}


def _threshold_verdict(t, n, lim):
    wrong = t["rel_over"] + t["abs_over"]
    return (wrong == 0, wrong)


# --- msprobe: ULP error ---------------------------------------------------------------

_MIN_EXPONENT = _table(-14, -126, -126, -1022)
_MANTISSA = _table(10, 7, 23, 52)
_ULP_THRESHOLD = _table(1, 1, 32)


def _ulp_limits(dtype, tolerance):
    wide = name_of(real_part_dtype(dtype)) in ("float32", "float64")
    return {"min_exponent": _pick(_MIN_EXPONENT, dtype), "mantissa": _pick(_MANTISSA, dtype),
            "ulp_error": _pick(_ULP_THRESHOLD, dtype),
            "proportion": 0.05 if wide else 0.001, "mean_ulp_error": 64 if wide else None}


def ulp_errors(c, lim):
    """msprobe's ULP error: ``|actual - golden| * 2**(mantissa - e)``, ``e``
    the golden's binary exponent (0 for a zero golden), at least the dtype's
    smallest normal exponent; per element, the larger of its parts'."""
    _, exponent = np.frexp(c.golden_parts)
    exponent = np.where(c.golden_parts == 0, 0, exponent - 1)
    exponent = np.maximum(exponent, lim["min_exponent"])
    err = np.abs(c.diff) * np.exp2((lim["mantissa"] - exponent).astype(np.float64))
    return err.max(axis=1)


def _ulp_tally(c, lim):
    err = ulp_errors(c, lim)
    return {"sum_ulp_error": float(err.sum()), "max_ulp_error": float(err.max(initial=0.0)),
            "mismatches": _count(err > lim["ulp_error"])}


def _ulp_verdict(t, n, lim):
    proportion = t["mismatches"] / n if n else 0.0
    passed = proportion < lim["proportion"]
    if lim["mean_ulp_error"] is not None and n:
        passed = passed or t["sum_ulp_error"] / n < lim["mean_ulp_error"]
    return (passed, t["mismatches"])


STANDARDS = {s.name: s for s in (
    Standard("ttk-close",
             "mismatch if |a - g| > atol + rtol * |g|; pass if mismatches <= ptol * numel",
             "hicann/ops-nn matmul/common/tests/st/arch35/matmul_golden_util.py "
             "(isclose_compare, reproducing TTK --compare close)",
             _close_limits, _close_tally, _close_verdict),
    Standard("double-thousandth",
             "count |a - g| > prec, and |a - g| / (max(|a|, |g|) + tiny) > prec; fail only "
             "if both counts exceed numel * prec",
             "Ascend/pytorch torch_npu/testing/testcase.py (assertRtolEqual)",
             _rtol_limits, _rtol_tally, _rtol_verdict),
    Standard("mere-mare",
             "rel = |a - g| / (|g| + 1e-7); pass if mean rel < T and max rel < 10 T",
             "hicann/opbase docs/zh/ops_precision_standard/experimental_standard.md",
             _mere_limits, _mere_tally, _mere_verdict),
    Standard("mixed-tolerance",
             "element passes if |a - g| <= atol + rtol * |g|; pass if >= 99% pass and the "
             "max abs error is within its limit (or within 32 ULP)",
             "hicann/opbase docs/zh/ops_precision_standard/mixed_tolerance_standard.md",
             _mixed_limits, _mixed_tally, _mixed_verdict),
    Standard("msprobe-threshold",
             "|g| <= small_value: |a - g| <= small_value_atol; otherwise "
             "|a - g| / (|g| + eps) <= rtol; pass if no element fails",
             "Ascend mstt debug/accuracy_tools/msprobe/pytorch/api_accuracy_checker/"
             "precision_standard (absolute_threshold.py, standard_config.py)",
             _threshold_limits, _threshold_tally, _threshold_verdict),
    Standard("ulp",
             "ULP error |a - g| * 2**(mantissa - exponent(g)); 16-bit: pass if the share "
             "over 1 is < 0.001; float32: pass if the mean < 64 or the share over 32 < 0.05",
             "Ascend mstt debug/accuracy_tools/msprobe/pytorch/api_accuracy_checker/"
             "precision_standard (ulp_compare.py, standard_config.py)",
             _ulp_limits, _ulp_tally, _ulp_verdict),
)}
DEFAULT = "ttk-close"
