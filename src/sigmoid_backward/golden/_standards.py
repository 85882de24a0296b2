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

This module is their registry (:data:`STANDARDS`, the aliases, the default)
and what a comparison tells them (:class:`Options`); each family's arithmetic
is in its own module: ``_standards_opsnn``, ``_standards_torch_npu``,
``_standards_opbase``, ``_standards_msprobe``, over ``_standards_common``.
"""
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._standards_msprobe import (
    _threshold_limits,
    _threshold_measure,
    _threshold_tally,
    _threshold_verdict,
    _tiers_limits,
    _tiers_measure,
    _tiers_tally,
    _tiers_verdict,
    _ulp_limits,
    _ulp_measure,
    _ulp_tally,
    _ulp_verdict,
)
from ._standards_opbase import (
    _mere_limits,
    _mere_measure,
    _mere_tally,
    _mere_verdict,
    _tol_limits,
    _tol_measure,
    _tol_tally,
    _tol_verdict,
)
from ._standards_opsnn import _close_limits, _close_measure, _close_tally, _close_verdict
from ._standards_torch_npu import _rtol_limits, _rtol_measure, _rtol_tally, _rtol_verdict

OPS_NN = "hicann/ops-nn"
OPS_NN_COMMIT = "e5c3fa93"
TORCH_NPU = "Ascend/pytorch"
TORCH_NPU_COMMIT = "9e73e708"
OPBASE = "hicann/opbase"
OPBASE_COMMIT = "aa3cd74b"
MSPROBE = "mindstudio-probe 26.2.0 (Ascend mstt, debug/accuracy_tools/msprobe)"
MSPROBE_COMMIT = "26.2.0"
MSPROBE_DIR = "msprobe/pytorch/api_accuracy_checker/"


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
