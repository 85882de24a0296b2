"""The msprobe-derived standards against msprobe itself: the owner's code is
the oracle.  mindstudio-probe (its accuracy checker's
``compare/compare.py``, ``compare/algorithm.py`` and
``precision_standard/``) and torch are test dependencies only; without them
these tests skip.

Each test runs msprobe's own function on the arrays msprobe would see (the
bench in raised precision, bfloat16 as float32) and ours on the device-dtype
arrays, and asks for the same verdict and metrics, on crafted arrays (the
boundaries, NaN, inf, a zero golden) and random ones.  CI's framework step
installs both, and fails these tests if either is missing there.
"""
import numpy as np
import pytest

from sigmoid_backward.golden import compare

from dtypes_catalogue import BFLOAT16
from helpers import import_framework

torch = import_framework("torch")
algorithm = import_framework("msprobe.pytorch.api_accuracy_checker.compare.algorithm")
from msprobe.core.common.const import CompareConst  # noqa: E402
from msprobe.pytorch.api_accuracy_checker.compare.compare import Comparator  # noqa: E402
from msprobe.pytorch.api_accuracy_checker.compare.compare_column import (  # noqa: E402
    CompareColumn,
)
from msprobe.pytorch.api_accuracy_checker.compare.compare_input import (  # noqa: E402
    CompareInput,
)
from msprobe.pytorch.api_accuracy_checker.precision_standard.absolute_threshold import (  # noqa: E402,E501
    AbsolutethdCompare,
)
from msprobe.pytorch.api_accuracy_checker.precision_standard.standard_config import (  # noqa: E402,E501
    StandardConfig,
)

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
TORCH = {F16: torch.float16, BFLOAT16: torch.bfloat16, F32: torch.float32}
RAISED = {F16: np.float32, BFLOAT16: np.float32, F32: np.float64}
RNG = np.random.default_rng(24)
STATUS = {CompareConst.PASS: "pass", CompareConst.WARNING: "warning",
          CompareConst.ERROR: "fail"}


def _msprobe_arrays(actual, golden):
    """(bench, device) as msprobe's _compare_torch_tensor hands them on: the
    bench computed in raised precision, bfloat16 tensors as float32."""
    bench = golden.astype(RAISED[golden.dtype])
    device = actual.astype(np.float32) if actual.dtype == BFLOAT16 else actual
    return bench, device


def _cases():
    """(dtype, actual, golden): crafted boundaries and random outputs."""
    out = []
    for dtype in (F16, BFLOAT16, F32):
        eps = float(np.finfo(dtype).eps)
        for n, k, scale in ((1000, 1, 1), (1000, 2, 2), (1000, 11, 10), (1000, 2, 1),
                            (5000, 40, 3), (100000, 20, 0.5)):
            golden = np.full(n, 1.0, dtype)
            actual = golden.copy()
            actual[:k] = np.float64(1.0) + scale * eps
            out.append((dtype, actual, golden))
        golden = RNG.uniform(-2, 2, 3000).astype(dtype)
        for share, factor in ((0.0005, 1.001), (0.003, 1.01), (0.02, 1.2), (0.5, 1.0001)):
            actual = golden.copy()
            pick = RNG.choice(golden.size, int(share * golden.size), replace=False)
            actual[pick] = (golden[pick].astype(np.float64) * factor).astype(dtype)
            out.append((dtype, actual, golden))
        special = golden.copy()
        special[:4] = [0.0, np.inf, -np.inf, np.nan]
        for i, v in enumerate([2.0**-12, np.inf, np.inf, np.nan]):
            actual = special.copy()
            actual[i] = v
            out.append((dtype, actual, special))
        zeros = np.zeros(1000, dtype)
        small = zeros.copy()
        small[:3] = 2.0**-12
        out.append((dtype, small, zeros))
        out.append((dtype, zeros.copy(), zeros))
    return out


CASES = _cases()
IDS = [f"{d.name}-{i}" for i, (d, _, _) in enumerate(CASES)]


def _comparator():
    c = Comparator.__new__(Comparator)
    c.registry = c._register_compare_func()
    return c


@pytest.mark.parametrize("dtype, actual, golden", CASES, ids=IDS)
def test_msprobe_tiers_agree_with_compare_float_tensor(dtype, actual, golden):
    """compare.py Comparator._compare_float_tensor: cosine, max abs error,
    then the per-dtype relative-error shares: the same status."""
    bench, device = _msprobe_arrays(actual, golden)
    status, column, _ = _comparator()._compare_float_tensor(
        "sigmoid_backward", bench, device, CompareColumn(),
        {"dtype": TORCH[dtype], "in_dtype": torch.float32})
    ours = compare(actual, golden, "msprobe-tiers")
    assert ours.status == STATUS[status], (ours.tallies, column.__dict__)


@pytest.mark.parametrize("dtype, actual, golden", CASES, ids=IDS)
def test_the_metrics_agree_with_msprobes_algorithm(dtype, actual, golden):
    """algorithm.py cosine_sim and get_rel_err_ratio (thousandth and
    five-thousandth) on the bench in the device's precision."""
    bench = golden.astype(np.float32) if dtype == BFLOAT16 else golden
    device = actual.astype(np.float32) if dtype == BFLOAT16 else actual
    ours = compare(actual, golden, "ttk-close")
    cos, _, _ = algorithm.cosine_sim(bench, device)
    if cos == CompareConst.SPACE:
        assert ours.cosine is None
    elif np.isnan(cos):
        assert ours.cosine == "nan"
    else:
        assert ours.cosine == pytest.approx(float(cos), abs=1e-12)
    _, with_eps = algorithm.get_abs_bench_with_eps(bench, TORCH[dtype])
    rel = algorithm.get_rel_err_origin(algorithm.get_abs_err(bench, device), with_eps)
    for attr, t in (("thousandth_ratio", 0.001), ("five_thousandth_ratio", 0.005)):
        assert getattr(ours, attr) == pytest.approx(algorithm.get_rel_err_ratio(rel, t)[0])


@pytest.mark.parametrize("dtype, actual, golden", CASES, ids=IDS)
def test_msprobe_threshold_agrees_with_absolute_threshold(dtype, actual, golden):
    """precision_standard/absolute_threshold.py (AbsolutethdCompare) with
    standard_config.py: pass when its three error ratios are 0."""
    bench, device = _msprobe_arrays(actual, golden)
    column = CompareColumn()
    AbsolutethdCompare(CompareInput(bench, device, column, TORCH[dtype])).compare()
    theirs = (column.inf_nan_error_ratio, column.rel_err_ratio, column.abs_err_ratio)
    ours = compare(actual, golden, "msprobe-threshold")
    assert ours.passed == (theirs == (0, 0, 0)), (theirs, ours.tallies)
    assert ours.limits["rtol"] == StandardConfig.get_rtol(TORCH[dtype])


@pytest.mark.parametrize("dtype, actual, golden", CASES, ids=IDS)
def test_msprobe_ulp_agrees_with_get_ulp_err(dtype, actual, golden):
    """algorithm.get_ulp_err and standard_config.get_ulp_threshold (the
    rule of ulp_compare.py without a second device)."""
    bench, device = _msprobe_arrays(actual, golden)
    with np.errstate(all="ignore"):
        err = algorithm.get_ulp_err(bench, device, TORCH[dtype])
    mean_limit, share_limit, _ = StandardConfig.get_ulp_threshold(TORCH[dtype])
    over = CompareConst.ULP_FLOAT32_THRESHOLD if dtype == F32 else \
        CompareConst.ULP_FLOAT16_THRESHOLD
    share = np.sum(err > over) / err.size
    passed = bool(share < share_limit or (mean_limit is not None and np.mean(err) < mean_limit))
    ours = compare(actual, golden, "msprobe-ulp")
    assert ours.passed == passed
    assert ours.mismatches == int(np.sum(err > over))


@pytest.mark.parametrize("dtype, actual, golden", CASES, ids=IDS)
def test_torch_npu_rtol_bfloat16_agrees_with_torch_allclose(dtype, actual, golden):
    """torch_npu/testing/testcase.py assertRtolEqual: both bfloat16, the
    verdict is torch.allclose(x, y, rtol=1e-3, atol=1e-3), x the CPU's
    (golden), y the NPU's; asked of torch itself, on every case's values
    rounded to bfloat16."""
    a, g = actual.astype(BFLOAT16), golden.astype(BFLOAT16)
    x = torch.from_numpy(g.view(np.int16).copy()).view(torch.bfloat16)
    y = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    assert compare(a, g, "torch-npu-rtol").passed == torch.allclose(x, y, rtol=1e-3, atol=1e-3)
    close = torch.isclose(x, y, rtol=1e-3, atol=1e-3).numpy()
    assert compare(a, g, "torch-npu-rtol").mismatches == int((~close).sum())


def test_torch_npu_rtol_bfloat16_rounding_on_the_boundary():
    """The same, element by element, on 200,000 values a few ulps apart over
    many magnitudes, where bfloat16's rounding of rtol * |y| and of atol +
    that decides."""
    g = (RNG.uniform(-1, 1, 200000) * np.exp2(RNG.integers(-14, 8, 200000))).astype(BFLOAT16)
    steps = RNG.integers(-3, 4, g.size).astype(np.int16)
    a = (g.view(np.int16) + steps).view(BFLOAT16)
    x = torch.from_numpy(g.view(np.int16).copy()).view(torch.bfloat16)
    y = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    close = torch.isclose(x, y, rtol=1e-3, atol=1e-3).numpy()
    assert 0 < close.sum() < close.size
    assert compare(a, g, "torch-npu-rtol").mismatches == int((~close).sum())
