"""The ``torch-npu-rtol`` standard: torch_npu's assertRtolEqual."""
import numpy as np

from ._standards_common import (
    BFLOAT16,
    _apply,
    _count,
    _error,
    _parts,
    _real,
    _score,
    _wide,
)

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
