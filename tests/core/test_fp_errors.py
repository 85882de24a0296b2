"""Floating-point errors: the kernels never report them (np.errstate has no
effect on the arithmetic), while NumPy's own casts in the same call still
do."""

import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward, ufunc

from dtypes_catalogue import ALL_DTYPES

# ---- floating-point errors ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_floating_point_errors_are_values_not_warnings(dtype):
    """np.errstate has no effect on the computation (overflow gives inf, or
    NaN in a format without inf, float8_e4m3fn; inf * 0 gives NaN), on
    every path and thread count."""
    has_inf = np.isinf(np.array([np.inf], np.float32).astype(dtype)
                       .astype(np.complex128 if dtype.kind == "c" else np.float64))[0]
    big = np.finfo(np.float64).max if dtype.itemsize >= 8 else 3e38
    with np.errstate(over="ignore"):  # 3e38 is inf in float16: fine
        g = np.array([big, np.inf, 1.0] * 50_000).astype(dtype)
        y = np.array([-3.0, 0.0, 0.5] * 50_000).astype(dtype)
    g2, y2 = np.repeat(g, 2)[::2], np.repeat(y, 2)[::2]   # the same values, strided
    with np.errstate(all="raise"):
        for threads in (1, 2):
            for result in (sigmoid_backward(g, y, num_threads=threads), ufunc(g, y),
                           sigmoid_backward(g2, y2, num_threads=threads)):
                assert (np.isinf(result[0]) if has_inf else np.isnan(result[0]))
                assert np.isnan(result[1])


def test_numpys_own_cast_errors_still_follow_errstate():
    """The kernels restore the flags they found, so a NumPy cast in the same
    call still reports its overflow, as it does for np.multiply."""
    g = np.array([1e300, 1.0])
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError, match="overflow"):
            np.multiply(g, 0.5, dtype=np.float32)
        with pytest.raises(FloatingPointError, match="overflow"):
            sigmoid_backward(g, 0.5, dtype=np.float32)
    with np.errstate(over="ignore"):
        assert np.isinf(sigmoid_backward(g, 0.5, dtype=np.float32)[0])
