"""Values: every dtype against the reference twin, bit for bit.

Special values, the portable and SIMD 16-bit conversions on sampled pairs,
and the accuracy claim against per-operation rounding (every 16-bit pattern
on every instruction set is test_kernel_paths.py's).
"""
import ml_dtypes
import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward
from sigmoid_backward._kernel._kernels import settings

from dtypes_catalogue import ALL_DTYPES, BFLOAT16
from helpers import assert_same, random_array, specials


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_special_values_every_pair(dtype):
    s = specials(dtype)
    g, y = np.meshgrid(s, s, indexing="ij")
    with np.errstate(all="ignore"):
        expected = reference.sigmoid_backward(g, y)
    assert_same(sigmoid_backward(g, y), expected, f"specials {dtype}")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 64, 1023, 1025, 70_001])
def test_random_values(dtype, n):
    rng = np.random.default_rng(n)
    g, y = random_array(rng, n, dtype), random_array(rng, n, dtype)
    assert_same(sigmoid_backward(g, y), reference.sigmoid_backward(g, y), f"n={n}")


def test_document_example():
    g = np.ones((2, 2), np.float32)
    y = np.array([[1, 2], [3, 4]], np.float32)
    result = sigmoid_backward(g, y)
    assert result.dtype == np.float32
    assert result.tolist() == [[0, -2], [-6, -12]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_real_order_of_operations(dtype):
    # (g * (1 - y)) * y differs in the last bit from g * ((1 - y) * y) for
    # some inputs: the result must follow the first, NumPy's left-to-right.
    rng = np.random.default_rng(3)
    g, y = rng.standard_normal(100_000).astype(dtype), rng.random(100_000).astype(dtype)
    result = sigmoid_backward(g, y)
    assert np.array_equal(result, g * (1 - y) * y)
    assert not np.array_equal(result, g * ((1 - y) * y))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_conjugates(dtype):
    g = np.array([1 + 0j], dtype)
    y = np.array([0.5 + 0.5j], dtype)
    # (1 - y) * y = (0.5 - 0.5j)(0.5 + 0.5j) = 0.5, real: conj changes nothing
    assert sigmoid_backward(g, y)[0] == 0.5
    y = np.array([2 + 1j], dtype)
    # (1 - y) * y = (-1 - 1j)(2 + 1j) = -1 - 3j; the conjugate is -1 + 3j
    assert sigmoid_backward(g, y)[0] == -1 + 3j
    np.testing.assert_allclose(sigmoid_backward(g * 1j, y), 1j * (-1 + 3j))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_close_to_numpy_expression(dtype):
    # NumPy's complex multiply may use FMA, so only closeness is asked here;
    # bit-exactness is against the reference's real arithmetic.
    rng = np.random.default_rng(5)
    g, y = random_array(rng, 10_000, dtype), random_array(rng, 10_000, dtype)
    rtol = 1e-5 if dtype == np.complex64 else 1e-13
    np.testing.assert_allclose(sigmoid_backward(g, y), g * np.conj((1 - y) * y),
                               rtol=rtol, atol=rtol * np.abs(g * y * y).max())


def _all_patterns(dtype):
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)




def _rounded_once(g, y, dtype):
    """The 16-bit oracle: compute in float32, round once through the 16-bit type."""
    with np.errstate(all="ignore"):
        g32, y32 = g.astype(np.float32), y.astype(np.float32)
        return (g32 * (1 - y32) * y32).astype(dtype)


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), BFLOAT16], ids=str)
def test_16bit_all_pairs_sampled_simd_matches_portable(dtype):
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 1 << 16, size=(2, 1 << 18), dtype=np.uint16)
    g, y = bits[0].view(dtype), bits[1].view(dtype)
    simd = sigmoid_backward(g, y)
    with settings(isa="portable"):
        portable = sigmoid_backward(g, y)
    assert_same(simd, portable)
    assert_same(simd, _rounded_once(g, y, dtype))


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), BFLOAT16], ids=str)
def test_16bit_specials(dtype):
    big = 65504.0 if dtype == np.float16 else float(ml_dtypes.finfo(BFLOAT16).max)
    tiny = float((np.finfo(np.float16) if dtype == np.float16
                  else ml_dtypes.finfo(BFLOAT16)).smallest_subnormal)
    g = np.array([np.nan, 1, big, -big, 8 * tiny, tiny, 1, 4], dtype)
    y = np.array([0.5, np.nan, -big, -big, 0.5, 0.5, 0.5, 0.5], dtype)
    r = sigmoid_backward(g, y)
    assert np.isnan(r[:2].astype(np.float32)).all()          # NaN stays NaN
    assert r[2] == -np.inf and r[3] == np.inf                # overflow: +-inf
    assert r[4] == 2 * tiny                                  # subnormal, exact
    assert r[5] == 0                                         # tiny / 4 rounds to 0
    assert r[6] == 0.25 and r[7] == 1
    assert_same(r, _rounded_once(g, y, dtype))


def test_float16_rounds_once_more_accurate_than_per_op_rounding():
    """PyTorch rounds float16 after every operation; one rounding is at
    least as accurate everywhere and strictly better somewhere."""
    y = _all_patterns(np.float16)
    y = y[np.isfinite(y)]
    g = np.full_like(y, 0.3)
    ours = sigmoid_backward(g, y)
    with np.errstate(all="ignore"):
        per_op = (g * (1 - y)) * y                       # NumPy float16: rounds each step
        exact = g.astype(np.float64) * (1 - y.astype(np.float64)) * y.astype(np.float64)
        err_ours = np.abs(ours.astype(np.float64) - exact)
        err_per_op = np.abs(per_op.astype(np.float64) - exact)
    finite = np.isfinite(exact) & np.isfinite(per_op) & np.isfinite(ours)
    assert (err_ours[finite] <= err_per_op[finite]).all()
    assert (err_ours[finite] < err_per_op[finite]).sum() > 1000


def test_float16_matches_torch_where_it_should():
    torch = pytest.importorskip("torch")
    y = _all_patterns(np.float16)
    g = np.full_like(y, 0.3)
    ours = sigmoid_backward(g, y)
    theirs = torch.ops.aten.sigmoid_backward(torch.from_numpy(g), torch.from_numpy(y)).numpy()
    # They differ (PyTorch rounds per operation) ...
    assert not np.array_equal(ours, theirs, equal_nan=True)
    # ... and float32 / float64 / complex are bit-identical to PyTorch.
    rng = np.random.default_rng(2)
    for dtype in [np.float32, np.float64, np.complex64, np.complex128]:
        g, y = random_array(rng, 10_000, dtype), random_array(rng, 10_000, dtype)
        expected = torch.ops.aten.sigmoid_backward(torch.from_numpy(g), torch.from_numpy(y))
        assert_same(sigmoid_backward(g, y), expected.numpy(), str(dtype))
