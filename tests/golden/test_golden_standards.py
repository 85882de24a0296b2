"""Each precision standard gives its source's verdict on crafted arrays: a
value on the boundary, just inside and just outside, one NaN, an inf, a zero
golden.  Each test's docstring names the source file (docs/golden.md gives
the commits); the numbers are worked out by hand from the source's code or
text, in the source's arithmetic.

Values are written as ``g + k ulps`` of the dtype at ``g`` (float16's ulp at
1 is 2**-10, bfloat16's 2**-7, float32's 2**-23), so every one is exact.
"""
import numpy as np
import pytest

from sigmoid_backward.golden import STANDARDS, compare

from dtypes_catalogue import BFLOAT16

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
ULP = {F16: 2.0**-10, BFLOAT16: 2.0**-7, F32: 2.0**-23}  # at 1.0


def _up(k, dtype, g=1.0):
    return g + k * ULP[dtype]


def _output(dtype, g, n, values):
    """A golden of ``n`` values ``g`` and an output whose first elements are
    ``values`` (each checked to be exact in ``dtype``)."""
    golden = np.full(n, g, dtype)
    actual = golden.copy()
    for i, v in enumerate(values):
        actual[i] = v
        assert np.isnan(v) or float(actual[i]) == v, f"{v} is not a {dtype} value"
    return actual, golden


def _status(standard, dtype, g, n, values, **kw):
    actual, golden = _output(dtype, g, n, values)
    return compare(actual, golden, standard, **kw).status


# --- ttk-close ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype, g, n, values, status", [
    # rtol = ptol = 1e-3 (float16, bfloat16), 1e-4 (float32); atol 1e-8
    (F16, 1.0, 1000, [_up(1, F16)] * 1000, "pass"),      # 9.8e-4 <= 1e-3 * 1: all close
    (F16, 1.0, 2000, [_up(2, F16)], "pass"),             # 1 - 1999/2000 = 5e-4 <= 1e-3
    # 1 of 1000: 1 - 999/1000 is 0.0010000000000000009 > 0.001 in float64
    (F16, 1.0, 1000, [_up(2, F16)], "fail"),
    (F16, 1.0, 2000, [np.nan], "pass"),                  # NaN on one side: one mismatch
    (F16, 1.0, 2000, [np.nan] * 3, "fail"),             # three are 1.5e-3 > ptol
    (F16, np.inf, 2000, [np.inf] * 2000, "pass"),        # equal infinities are close
    (F16, 0.0, 2000, [2.0**-24] * 3, "fail"),           # zero golden: atol 1e-8 only
    (F32, 1.0, 10000, [_up(838, F32)] * 10000, "pass"),  # 9.99e-5 <= 1e-4
    (F32, 1.0, 10000, [_up(839, F32)] * 2, "fail"),     # 1.00017e-4, 2 > 1e-4 * 1e4
    (BFLOAT16, 1.0, 2000, [_up(1, BFLOAT16)], "pass"),   # one of 2000 within ptol
    (BFLOAT16, 1.0, 2000, [_up(1, BFLOAT16)] * 3, "fail"),
])
def test_ttk_close(dtype, g, n, values, status):
    """hicann/ops-nn matmul/common/tests/st/arch35/matmul_golden_util.py
    (isclose_compare): np.isclose(npu, golden, rtol, atol, equal_nan=True),
    pass if (1 - matched / size) <= ptol."""
    assert _status("ttk-close", dtype, g, n, values) == status


def test_ttk_close_takes_the_csv_tolerance_and_the_command_line_override():
    """isclose_compare reads precision_tolerances and absolute_precision;
    --rtol/--atol/--ptol replace them, and the result says so."""
    actual, golden = _output(BFLOAT16, 1.0, 100, [_up(1, BFLOAT16)] * 100)
    tol = {"rtol": 2.0**-7, "ptol": 0.0, "atol": 0.0}
    assert compare(actual, golden, "ttk-close", tolerance=tol).passed
    # rtol 0.0078 passes where NumPy's isclose computes in bfloat16 (it rounds
    # to 2**-7 there), not where it computes in float64 (NumPy 2.0): asked of
    # the installed NumPy, which the source calls too; 0.007 fails in both.
    theirs = bool(np.isclose(actual, golden, rtol=0.0078, atol=0.0, equal_nan=True).all())
    assert compare(actual, golden, "ttk-close", tolerance=tol,
                   overrides={"rtol": 0.0078}).passed == theirs
    result = compare(actual, golden, "ttk-close", tolerance=tol, overrides={"rtol": 0.007})
    assert not result.passed and result.limits["overridden"] == ["rtol"]


# --- torch_npu assertRtolEqual ---------------------------------------------------------

@pytest.mark.parametrize("dtype, g, n, values, status", [
    # float16: prec16 1e-3 (as float16: 0.0010004), minimum16 6e-8
    (F16, 1.0, 1000, [_up(1, F16)] * 1000, "pass"),
    (F16, 1.0, 1000, [_up(2, F16)], "pass"),          # 1 over both ways: 1 > 1 is false
    (F16, 1.0, 1000, [_up(2, F16)] * 2, "fail"),     # 2 > 1000 * 1e-3 in both counts
    (F16, 4096.0, 1000, [4100.0] * 1000, "pass"),     # 4 off but 9.76e-4 relative
    (F16, 1.0, 1000, [np.nan], "fail"),              # NaN positions must match
    (F16, np.nan, 1000, [np.nan] * 1000, "pass"),     # NaN in both: difference set to 0
    # inf - inf is NaN: an equal infinity is over both ways; two of 1000 fail
    (F16, 1.0, 1000, [np.inf] * 2, "fail"),
    (F16, 0.0, 1000, [2.0**-10] * 2, "pass"),         # zero golden: 9.8e-4 <= prec
    (F32, 1.0, 10000, [_up(838, F32)] * 10000, "pass"),
    (F32, 1.0, 10000, [_up(839, F32)] * 2, "fail"),  # prec 1e-4, minimum 1e-9
    (F64, 1.0, 10000, [1 + 1e-4 + 1e-12] * 2, "pass"),  # 1.0000000001e-4 / 1.0001 <= prec
    (F64, 1.0, 10000, [1 + 2e-4] * 2, "fail"),
    # bfloat16: torch.allclose(golden, actual, rtol=1e-3, atol=1e-3), no equal_nan
    (BFLOAT16, 1.0, 1000, [_up(1, BFLOAT16)], "fail"),   # 2**-7 > 1e-3 + 1e-3 * 1.0078
    (BFLOAT16, 0.0, 1000, [2.0**-10], "pass"),            # 9.8e-4 <= atol 1e-3
    (BFLOAT16, 0.0, 1000, [2.0**-9], "fail"),
    (BFLOAT16, np.nan, 10, [np.nan] * 10, "fail"),       # any NaN fails
    (BFLOAT16, np.inf, 10, [np.inf] * 10, "pass"),        # equal: close
])
def test_torch_npu_assert_rtol_equal(dtype, g, n, values, status):
    """Ascend/pytorch torch_npu/testing/testcase.py (assertRtolEqual):
    bfloat16 by torch.allclose, the others by the two counts, computed in
    the dtype as NumPy does."""
    assert _status("torch-npu-rtol", dtype, g, n, values) == status
    assert _status("double-thousandth", dtype, g, n, values) == status  # the old name


# --- opbase experimental standard, tolerance form (zh) -------------------------------

@pytest.mark.parametrize("dtype, g, n, values, status", [
    # float16 rtol = atol = 2**-9: |a - g| <= 2**-9 + 2**-9 |g| is 4 ulps at 1
    (F16, 1.0, 100, [_up(4, F16)] * 100, "pass"),
    (F16, 1.0, 100, [_up(5, F16)], "pass"),            # 99 of 100 = 0.99 >= 0.99
    (F16, 1.0, 100, [_up(5, F16)] * 2, "fail"),       # 0.98
    (F16, 1.0, 1000, [1.125], "fail"),                # 0.125 > 0.1 and 128 ulps > 32
    (F16, 2048.0, 1000, [2048.0 + 64], "pass"),        # over 0.1 but 32 ulps
    (F16, 2048.0, 1000, [2048.0 + 66], "fail"),       # 33 ulps
    (F16, 0.0, 100, [2.0**-9], "pass"),                # zero golden: atol
    (F16, 1.0, 1000, [np.nan], "fail"),               # abs error NaN: over the limit
    (F16, np.inf, 100, [np.inf] * 100, "pass"),        # equal infinities: no error
    (BFLOAT16, 1.0, 100, [_up(4, BFLOAT16)] * 100, "pass"),   # 2**-6 + 2**-6 = 4 ulps
    (BFLOAT16, 1.0, 100, [_up(5, BFLOAT16)] * 2, "fail"),
    (BFLOAT16, 1.0, 1000, [1.5], "pass"),              # 0.5 <= bfloat16's limit 1e0
    (BFLOAT16, 1.0, 1000, [3.0], "fail"),             # 2.0 > 1e0 and 128 ulps > 32
    (F32, 1.0, 100, [_up(8192, F32)] * 100, "pass"),   # 2**-10 + 2**-16 at 1: 8704 ulps
    (F32, 1.0, 100, [_up(8705, F32)] * 2, "fail"),
    (F32, 1.0, 1000, [1.015625], "fail"),             # 0.0156 > 1e-2, far over 32 ulps
])
def test_opbase_tolerance(dtype, g, n, values, status):
    """hicann/opbase docs/zh/ops_precision_standard/experimental_standard.md
    (mixed tolerance): matched_ratio >= 0.99 and max_abs_error <= "1e-1 or
    32 * ULP" (float16; bfloat16 1e0, float32 1e-2)."""
    assert _status("opbase-tolerance", dtype, g, n, values) == status
    assert _status("mixed-tolerance", dtype, g, n, values) == status


# --- opbase experimental standard, MERE/MARE form (en) --------------------------------

@pytest.mark.parametrize("dtype, g, n, values, status", [
    (F16, 1.0, 1000, [_up(10, F16)], "pass"),      # MARE 10 T / (1 + 1e-7) < 10 T
    (F16, 1.0, 1000, [_up(11, F16)], "fail"),
    (F16, 1.0, 1000, [_up(1, F16)] * 1000, "pass"),  # MERE T / (1 + 1e-7) < T
    (F16, 1.0, 1000, [_up(1, F16)] * 999 + [_up(2, F16)], "fail"),
    (BFLOAT16, 1.0, 1000, [_up(10, BFLOAT16)], "pass"),
    (BFLOAT16, 1.0, 1000, [_up(11, BFLOAT16)], "fail"),
    (F32, 1.0, 1000, [_up(10240, F32)], "pass"),
    (F32, 1.0, 1000, [_up(10241, F32)], "fail"),
    (F16, 0.0, 1000, [2.0**-24], "fail"),         # zero golden: 5.96e-8 / 1e-7 > 10 T
    (F16, 1.0, 1000, [np.nan], "fail"),
    (F16, np.inf, 10, [np.inf] * 10, "pass"),      # equal infinities: no error
])
def test_opbase_mere_mare(dtype, g, n, values, status):
    """hicann/opbase docs/en/ops_precision_standard/experimental_standard.md:
    MERE < Threshold and MARE < 10 x Threshold, rel = |a - g| / (|g| + 1e-7)."""
    assert _status("opbase-mere-mare", dtype, g, n, values) == status
    assert _status("mere-mare", dtype, g, n, values) == status


# --- msprobe -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, g, n, values, status", [
    (F16, 1.0, 1000, [_up(1, F16)] * 1000, "pass"),   # max abs error 9.8e-4 < 0.001
    # 1.001 ulps off: rel 2**-9 / (1 + 2**-23) >= 1e-3 for 2 of 1000: not > 0.999
    (F16, 1.0, 1000, [_up(2, F16)] * 2, "warning"),
    (F16, 1.0, 1000, [_up(10, F16)] * 11, "warning"),  # rel 9.8e-3 < 1e-2
    (F16, 1.0, 1000, [_up(11, F16)] * 11, "fail"),   # rel 1.07e-2: 989/1000 not > 0.99
    (F16, 1.0, 1000, [np.nan], "warning"),            # cosine NaN passes; 999 below
    (F16, 0.0, 1000, [0.0] * 999 + [2.0**-9], "fail"),  # device not all zero, bench is
    (F32, 1.0, 1000, [1 + 2.0**-9], "fail"),         # 999/1000 is not > 1 - 0.001
    (F32, 100.0, 100000, [100 + 100 * 2.0**-12] * 20, "warning"),  # rel 2.4e-4
    (F32, 100.0, 100000, [100 + 100 * 2.0**-12] * 9, "pass"),  # 99991 > 0.9999 of 1e5
    (F32, 1.0, 1000, [1 + 2.0**-10] * 1000, "pass"),  # max abs error 9.8e-4 < 0.001
])
def test_msprobe_tiers(dtype, g, n, values, status):
    """msprobe pytorch/api_accuracy_checker/compare/compare.py
    (_compare_float_tensor) with algorithm.py: cosine, max abs error < 0.001,
    then the per-dtype shares of relative error below 1e-2/1e-3/1e-4."""
    assert _status("msprobe-tiers", dtype, g, n, values) == status


@pytest.mark.parametrize("dtype, g, values, status, benchmark", [
    (F16, 1.0, [_up(1, F16)], "pass", "raised"),      # 2**-10 / (1 + 2**-23) <= 2**-10
    (F16, 1.0, [_up(2, F16)], "fail", "raised"),
    (F16, 1.0, [_up(1, F16)], "pass", "same"),        # 2**-10 / (1 + 2**-10)
    (F16, 2.0**-10, [2.0**-10 + 2.0**-16], "pass", None),  # small value: atol 2**-16
    (F16, 2.0**-10, [2.0**-10 + 2.0**-16 + 2.0**-20], "fail", None),
    (BFLOAT16, 0.0, [2.0**-54], "pass", None),        # atol 1e-16
    (BFLOAT16, 0.0, [2.0**-53], "fail", None),
    (F32, 1.0, [_up(8, F32)], "pass", None),          # 2**-20 / (1 + eps) with float64 eps
    (F32, 1.0, [_up(9, F32)], "fail", None),
    (F16, 1.0, [np.nan], "fail", None),
    (F16, np.inf, [np.inf], "pass", None),            # clipped to the max: equal
    (F16, np.inf, [65504.0], "pass", None),           # clipped to the max: equal too
    (F16, np.inf, [-np.inf], "fail", None),
])
def test_msprobe_threshold(dtype, g, values, status, benchmark):
    """msprobe precision_standard/absolute_threshold.py with standard_config.py
    and algorithm.py (check_inf_nan_value, check_norm_value,
    check_small_value): every ratio must be 0."""
    assert _status("msprobe-threshold", dtype, g, 10, values, benchmark=benchmark) == status


@pytest.mark.parametrize("dtype, g, n, values, status", [
    (F16, 1.0, 2000, [_up(1, F16)] * 2000, "pass"),   # ULP error 1 is not over 1
    (F16, 1.0, 2000, [_up(2, F16)], "pass"),          # 1 of 2000 = 0.0005 < 0.001
    (F16, 1.0, 2000, [_up(2, F16)] * 2, "fail"),     # 0.001 is not < 0.001
    (BFLOAT16, 1.0, 2000, [_up(2, BFLOAT16)] * 2, "fail"),
    (F32, 1.0, 100, [_up(63, F32)] * 100, "pass"),    # mean 63 < 64
    (F32, 1.0, 100, [_up(64, F32)] * 100, "fail"),
    (F32, 1.0, 100, [_up(2000, F32)] * 4, "pass"),    # 4% over 32 < 5%
    (F32, 1.0, 100, [_up(2000, F32)] * 5, "fail"),
    (F16, 0.0, 2000, [2.0**-10] * 2, "pass"),         # zero golden: eb 0, 2**-10 * 2**10
    (F16, 0.0, 2000, [2.0**-9] * 2, "fail"),         # is 1; 2**-9 is 2
    (F16, 1.0, 2000, [np.nan] * 10, "pass"),          # NaN is not > 1: not counted
    (F16, 1.0, 2000, [np.inf] * 2, "fail"),
])
def test_msprobe_ulp(dtype, g, n, values, status):
    """msprobe precision_standard/ulp_compare.py with algorithm.get_ulp_err
    and standard_config.py (the thresholds)."""
    assert _status("msprobe-ulp", dtype, g, n, values) == status
    assert _status("ulp", dtype, g, n, values) == status


def test_msprobe_ulp_third_party_ratio():
    """ulp_compare.py's third way: the NPU's share over the GPU's (at least
    2**-11 for float16) below 1 passes; without a second device the note
    says the rule was not applied."""
    actual, golden = _output(F16, 1.0, 2000, [_up(2, F16)] * 4)
    alone = compare(actual, golden, "msprobe-ulp")
    assert alone.status == "fail" and "not applied" in alone.notes[-1]
    worse, _ = _output(F16, 1.0, 2000, [_up(2, F16)] * 6)
    assert compare(actual, golden, "msprobe-ulp", third_party=worse).status == "pass"
    assert compare(actual, golden, "msprobe-ulp", third_party=actual).status == "fail"


def test_every_standard_has_a_test_here():
    tested = {"ttk-close", "torch-npu-rtol", "opbase-tolerance", "opbase-mere-mare",
              "msprobe-tiers", "msprobe-threshold", "msprobe-ulp"}
    assert set(STANDARDS) == tested


def test_worst_is_ranked_by_the_standards_own_measure():
    """Under a relative measure, a small value far off outranks a large one
    slightly off in absolute terms; flat and N-d indices are both given."""
    golden = np.full((2, 3), 1000.0, np.float32)
    golden[1, 2] = 0.001
    actual = golden.copy()
    actual[0, 0] = 1001.0          # abs 1, rel 1e-3
    actual[1, 2] = 0.002           # abs 1e-3, rel 1
    by_rel = compare(actual, golden, "opbase-mere-mare", k=1).worst[0]
    assert (by_rel["index"], by_rel["flat_index"]) == ([1, 2], 5)
    by_close = compare(actual, golden, "ttk-close", k=1).worst[0]
    assert by_close["index"] == [1, 2]
    assert compare(actual, golden, "msprobe-ulp", k=1).worst[0]["index"] == [1, 2]


def test_all_standards_in_one_pass_and_the_histogram():
    golden = np.linspace(1, 2, 5000).astype(np.float16)
    actual = golden.copy()
    actual[:10] += np.float16(0.01)
    results = compare(actual, golden, "all", hist=True)
    assert [r.standard for r in results] == list(STANDARDS)
    for r in results:
        assert sum(r.hist.values()) == golden.size
        assert r.hist["0"] == golden.size - 10
        assert r.cosine is not None and 0.99 < r.cosine <= 1
        assert r.thousandth_ratio == r.five_thousandth_ratio == 0.998
