"""Each precision standard on its boundary, just inside and just outside,
for float16, bfloat16 and float32, with values computed by hand.

Values are written as ``g + k ulps`` of the dtype at ``g`` (float16's ulp
at 1 is 2**-10, bfloat16's 2**-7, float32's 2**-23), so every one is exact.
Each row: standard, dtype, the golden value, the element count, the values
that replace the first elements of the golden for the output just inside
the standard and for the one just outside, and why.
"""
import numpy as np
import pytest

from sigmoid_backward.golden import compare

from dtypes_catalogue import BFLOAT16

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
ULP = {F16: 2.0**-10, BFLOAT16: 2.0**-7, F32: 2.0**-23}  # at 1.0


def _up(k, dtype, g=1.0):
    """g + k ulps of dtype (at 1.0 unless g says otherwise: pass a value)."""
    return g + k * ULP[dtype]


def _rows():
    h, b, f = F16, BFLOAT16, F32
    return [
        # --- ttk-close: |a - g| <= 1e-8 + rtol |g|, mismatches <= ptol * n
        ("ttk-close", h, 1.0, 1000, [_up(1, h)] * 1000, [_up(2, h)] * 2,
         "float16 rtol 1e-3: 1 ulp (9.8e-4) is close everywhere; 2 ulps twice is 2 > 1"),
        ("ttk-close", h, 1.0, 1000, [_up(2, h)], [_up(2, h)] * 2,
         "ptol 1e-3 of 1000: one mismatch passes, two fail"),
        ("ttk-close", b, 1.0, 1000, [_up(1, b)], [_up(1, b)] * 2,
         "bfloat16 rtol 1e-3 < one ulp (7.8e-3): one mismatch passes, two fail"),
        ("ttk-close", f, 1.0, 1000, [_up(838, f)] * 1000, [_up(839, f)] * 2,
         "float32 rtol 1e-4: 838 ulps = 9.99e-5 is close, 839 ulps = 1.00017e-4 is not"),
        # --- double-thousandth: fails when both counts exceed n * prec
        ("double-thousandth", h, 1.0, 1000, [_up(1, h)] * 1000, [_up(2, h)] * 2,
         "float16 prec 1e-3: 1 ulp is within; 2 ulps (1.95e-3) twice: both counts 2 > 1"),
        ("double-thousandth", h, 1.0, 1000, [_up(2, h)], [_up(2, h)] * 2,
         "one element over in both measures is allowed (n * prec = 1), two are not"),
        ("double-thousandth", h, 4096.0, 1000, [4100.0] * 1000, [4104.0] * 1000,
         "4100 vs 4096 is 4 > 1e-3 apart but 9.76e-4 relative: only one count exceeds"),
        ("double-thousandth", b, 1.0, 500, [1 - 2.0**-8] * 500, [_up(1, b)] * 3,
         "bfloat16 prec 0.004: 2**-8 = 0.0039 below 1 is within; 3 of 500 over (> 2)"),
        ("double-thousandth", b, 1.0, 500, [_up(1, b)] * 2, [_up(1, b)] * 3,
         "n * prec = 2 of 500: two wrong elements pass, three fail"),
        ("double-thousandth", f, 1.0, 10000, [_up(838, f)] * 10000, [_up(839, f)] * 2,
         "float32 prec 1e-4: 838 ulps within; 839 ulps is over in both measures"),
        # --- mere-mare: rel = |a - g| / (|g| + 1e-7); mean < T, max < 10 T
        ("mere-mare", h, 1.0, 1000, [_up(10, h)], [_up(11, h)],
         "float16 10 T = 10 ulps: 10 ulps / (1 + 1e-7) is just under, 11 ulps over"),
        ("mere-mare", h, 1.0, 1000, [_up(1, h)] * 1000, [_up(1, h)] * 999 + [_up(2, h)],
         "T = 1 ulp: every element 1 ulp off averages T / (1 + 1e-7) < T; one more ulp tips it"),
        ("mere-mare", b, 1.0, 1000, [_up(10, b)], [_up(11, b)],
         "bfloat16 T = 2**-7 = 1 ulp: max 10 ulps passes, 11 fails"),
        ("mere-mare", b, 1.0, 1000, [_up(1, b)] * 1000, [_up(1, b)] * 999 + [_up(2, b)],
         "bfloat16 mean at T / (1 + 1e-7) passes, one element more fails"),
        ("mere-mare", f, 1.0, 1000, [_up(10240, f)], [_up(10241, f)],
         "float32 T = 2**-13 = 1024 ulps: max 10240 ulps passes, 10241 fails"),
        ("mere-mare", f, 1.0, 1000, [_up(1024, f)] * 1000,
         [_up(1024, f)] * 999 + [_up(2048, f)],
         "float32 mean at T / (1 + 1e-7) passes, one element more fails"),
        # --- mixed-tolerance: |a - g| <= T + T |g| for 99%, max abs error bounded
        ("mixed-tolerance", h, 1.0, 100, [_up(2, h)] * 100, [_up(3, h)] * 2,
         "float16 T + T |g| = 2 ulps at 1: all within; 3 ulps on 2 of 100 is 98% < 99%"),
        ("mixed-tolerance", h, 1.0, 100, [_up(3, h)], [_up(3, h)] * 2,
         "one element of 100 outside is 99%, two are 98%"),
        ("mixed-tolerance", h, 1.0, 100, [1.0625], [1.125],
         "max abs error 0.0625 <= 0.1 passes; 0.125 (128 ulps) fails"),
        ("mixed-tolerance", h, 2048.0, 100, [2048.0 + 32 * 2], [2048.0 + 33 * 2],
         "64 off at 2048 is over 0.1 but 32 ulps (of 2): within; 33 ulps is not"),
        ("mixed-tolerance", b, 1.0, 100, [_up(2, b)] * 100, [_up(3, b)] * 2,
         "bfloat16 T = 2**-7: 2 ulps at 1 within, 3 ulps on 2 of 100 not"),
        ("mixed-tolerance", b, 1.0, 100, [_up(32, b)], [_up(33, b)],
         "1.25 is 0.25 > 0.1 off but 32 ulps: within; 33 ulps is not"),
        ("mixed-tolerance", f, 1.0, 100, [_up(2048, f)] * 100, [_up(2049, f)] * 2,
         "float32 T = 2**-13: T + T |g| = 2048 ulps at 1; 2049 ulps on 2 of 100 is 98%"),
        ("mixed-tolerance", f, 1.0, 100, [1 + 2.0**-7 + 2.0**-9], [1 + 2.0**-7 + 2.0**-8],
         "max abs error 0.00977 <= 0.01 passes; 0.0117 fails"),
        ("mixed-tolerance", f, 2.0**20, 100, [2.0**20 + 4], [2.0**20 + 4.125],
         "at 2**20 an ulp is 0.125: 4 off is 32 ulps (within), 4.125 is 33"),
        # --- msprobe-threshold: no element over, relative or (small values) absolute
        ("msprobe-threshold", h, 1.0, 10, [_up(1, h)], [_up(2, h)],
         "float16 rtol 2**-10: 2**-10 / (1 + eps 2**-10) is under, 2 ulps over"),
        ("msprobe-threshold", h, 2.0**-10, 10, [2.0**-10 + 2.0**-16],
         [2.0**-10 + 2.0**-16 + 2.0**-20],
         "small value (|g| <= 2**-10): atol 2**-16 exactly is within, one ulp more is not"),
        ("msprobe-threshold", b, 1.0, 10, [1 - 2.0**-8], [_up(1, b)],
         "bfloat16 rtol 2**-8: 2**-8 / (1 + 2**-8) is under, 2**-7 over"),
        ("msprobe-threshold", b, 0.0, 10, [2.0**-54], [2.0**-53],
         "bfloat16 small-value atol 1e-16: 2**-54 = 5.6e-17 within, 2**-53 = 1.1e-16 not"),
        ("msprobe-threshold", f, 1.0, 10, [_up(8, f)], [_up(9, f)],
         "float32 rtol 2**-20 = 8 ulps, over 1 + eps 2**-23: 8 under, 9 over"),
        ("msprobe-threshold", f, 2.0**-21, 10, [2.0**-21 + 2.0**-30],
         [2.0**-21 + 2.0**-30 + 2.0**-44],
         "small value: atol 2**-30 (16384 ulps at 2**-21) within, one ulp more not"),
        # --- ulp: msprobe's ULP error, share over 1 (16-bit) or 32 (float32)
        ("ulp", h, 1.0, 2000, [_up(1, h)] * 2000, [_up(2, h)] * 2,
         "float16 ULP error 1 is not over 1; 2 of 2000 over is a share of 0.001, not < 0.001"),
        ("ulp", h, 1.0, 2000, [_up(2, h)], [_up(2, h)] * 2,
         "one element over is a share of 0.0005 < 0.001"),
        ("ulp", b, 1.0, 2000, [_up(2, b)], [_up(2, b)] * 2,
         "bfloat16 alike, with 7 mantissa bits"),
        ("ulp", f, 1.0, 100, [_up(63, f)] * 100, [_up(64, f)] * 100,
         "float32: every element over 32, but a mean of 63 < 64 passes; 64 does not"),
        ("ulp", f, 1.0, 100, [_up(2000, f)] * 4, [_up(2000, f)] * 5,
         "float32 mean 80 >= 64, share over 32 of 4% < 5% passes; 5% fails"),
    ]


ROWS = _rows()


def _output(dtype, g, n, values):
    golden = np.full(n, g, dtype)
    actual = golden.copy()
    for i, v in enumerate(values):
        actual[i] = v
        assert float(actual[i]) == v, f"{v} is not a {dtype} value"
    return actual, golden


@pytest.mark.parametrize("standard, dtype, g, n, inside, outside, why", ROWS,
                         ids=[f"{r[0]}-{r[1].name}-{i}" for i, r in enumerate(ROWS)])
def test_just_inside_passes_and_just_outside_fails(standard, dtype, g, n, inside, outside,
                                                   why):
    actual, golden = _output(dtype, g, n, inside)
    result = compare(actual, golden, standard)
    assert result.passed, (why, result.line(), result.tallies)
    actual, golden = _output(dtype, g, n, outside)
    result = compare(actual, golden, standard)
    assert not result.passed, (why, result.line(), result.tallies)


def test_every_dtype_and_standard_has_a_boundary_row():
    covered = {(r[0], r[1]) for r in ROWS}
    from sigmoid_backward.golden import STANDARDS
    assert covered == {(s, d) for s in STANDARDS for d in (F16, BFLOAT16, F32)}


@pytest.mark.parametrize("tolerance, passed", [({"rtol": 2.0**-7, "ptol": 0.0, "atol": 0.0},
                                                True),
                                               ({"rtol": 0.0078, "ptol": 0.0, "atol": 0.0},
                                                False)])
def test_ttk_close_takes_the_case_files_tolerance(tolerance, passed):
    """A TTK csv's precision_tolerances and absolute_precision replace the
    defaults: bfloat16 one ulp above 1 (0.0078125) is within rtol 2**-7,
    not within 0.0078."""
    actual, golden = _output(BFLOAT16, 1.0, 100, [_up(1, BFLOAT16)] * 100)
    result = compare(actual, golden, "ttk-close", tolerance=tolerance)
    assert result.passed is passed
    assert result.limits == tolerance


def test_msprobe_ulp_error_of_a_zero_golden():
    """msprobe takes the exponent of a zero golden as 0: float16 2**-10
    there is ULP error 1 (within), 2**-9 is 2 (over)."""
    from sigmoid_backward.golden._metrics import Chunk
    from sigmoid_backward.golden._standards import STANDARDS, ulp_errors
    limits = STANDARDS["ulp"].limits(F16, None)
    chunk = Chunk(np.array([2.0**-10, 2.0**-9], F16), np.zeros(2, F16))
    assert ulp_errors(chunk, limits).tolist() == [1.0, 2.0]
