"""The float8 dtypes (the table's minifloats), exhaustively: every (g, y)
pair of codes, on every instruction set this CPU runs, bit for bit against
the reference (float32 from the exact upcast, rounded once as ml_dtypes'
astype rounds: nearest-even; overflow is NaN in float8_e4m3fn, which has no
inf, and inf in the IEEE formats).  NaN results too, sign included."""
import re

import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward, ufunc
from sigmoid_backward._kernel import _kernels

from dtypes_catalogue import ALL_DTYPES, BFLOAT16, FLOAT16, FLOAT32
from helpers import assert_same

FLOAT8 = [dt for dt in ALL_DTYPES if dt.itemsize == 1]


def every_pair(dt):
    codes = np.arange(256, dtype=np.uint8)
    return np.repeat(codes, 256).view(dt), np.tile(codes, 256).view(dt)


def same_bits(a, b):
    """Every code the same, but where both are NaN: a NaN's sign then is
    the float32 arithmetic's, and NumPy's own loops (the reference's) give
    the sign of either NaN operand depending on the array's length (NumPy
    2.0 did for these 65,536 pairs).  test_nan_results_carry_grad_outputs_sign
    checks the kernel's NaN signs directly."""
    assert a.dtype == b.dtype and a.shape == b.shape
    differ = a.view(np.uint8) != b.view(np.uint8)
    if a.dtype.itemsize == 1:
        differ &= ~(np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32)))
    bad = np.flatnonzero(differ)
    assert bad.size == 0, f"{bad.size} of {a.size} differ, first at {bad[:5]}"


@pytest.mark.parametrize("isa", _kernels.available_isas())
@pytest.mark.parametrize("dt", FLOAT8, ids=str)
def test_nan_results_carry_grad_outputs_sign(dt, isa):
    """Where grad_output is NaN, the result is the format's NaN with its
    sign, as g * (1 - y) * y computed in that order gives it (x86 and
    AArch64 return the first NaN operand), on every instruction set."""
    g, y = every_pair(dt)
    g_nan = np.isnan(g.astype(np.float32))
    with _kernels.settings(isa=isa):
        result = ufunc(g, y)
    assert np.isnan(result[g_nan].astype(np.float32)).all()
    assert (np.signbit(result[g_nan].astype(np.float32))
            == np.signbit(g[g_nan].astype(np.float32))).all()


def test_the_table_has_float8():
    assert {dt.name for dt in FLOAT8} >= {"float8_e4m3fn"}


@pytest.mark.parametrize("isa", _kernels.available_isas())
@pytest.mark.parametrize("dt", FLOAT8, ids=str)
def test_every_pair_on_every_isa(dt, isa):
    g, y = every_pair(dt)
    expected = reference.sigmoid_backward(g, y)
    with _kernels.settings(isa=isa):
        same_bits(ufunc(g, y), expected)
        # Odd lengths and offsets: the vector loops' tails.
        for n in (1, 7, 31, 65, 1000):
            same_bits(ufunc(g[3:3 + n], y[5:5 + n]),
                      reference.sigmoid_backward(g[3:3 + n], y[5:5 + n]))


def portable_codes(g, y):
    with _kernels.settings(isa="portable"):
        return ufunc(g, y).view(np.uint8)


@pytest.mark.parametrize("isa", _kernels.available_isas())
@pytest.mark.parametrize("dt", FLOAT8, ids=str)
def test_every_isa_gives_the_portable_loops_bits(dt, isa):
    """Bit for bit, NaN signs included (which same_bits leaves to the
    float32 arithmetic): the portable loops read the table the scalar loop
    made, and avx512vbmi computes every result (_loops_vbmi.h).  Odd lengths and
    offsets for the masked last block."""
    g, y = every_pair(dt)
    cases = [(g, y)] + [(g[3:3 + n], y[5:5 + n]) for n in (1, 7, 63, 64, 65, 1000)]
    expected = [portable_codes(a, b) for a, b in cases]
    with _kernels.settings(isa=isa):
        for (a, b), codes in zip(cases, expected, strict=True):
            np.testing.assert_array_equal(ufunc(a, b).view(np.uint8), codes)


@pytest.mark.parametrize("dt", FLOAT8, ids=str)
def test_threads_strides_and_out(dt):
    g, y = every_pair(dt)
    expected = reference.sigmoid_backward(g, y)
    out = np.empty_like(g)
    assert sigmoid_backward(g, y, out=out, num_threads=2) is out
    same_bits(out, expected)
    same_bits(ufunc(g[::3], y[::3]), expected[::3])          # strided: gathered
    same_bits(ufunc(g[:256], y[0]), reference.sigmoid_backward(g[:256], y[0]))   # broadcast


@pytest.mark.parametrize("dt", FLOAT8, ids=str)
@pytest.mark.parametrize("other", [FLOAT16, BFLOAT16, FLOAT32], ids=str)
def test_with_a_wider_dtype(dt, other):
    """Promotion follows ml_dtypes' rule where it has one (float8 with
    bfloat16 computes in bfloat16, the float8 input widened exactly)."""
    g, y = every_pair(dt)
    y_other = y.astype(np.float32).astype(other)
    expected = reference.sigmoid_backward(g, y_other)
    # (a NaN's sign when both inputs are NaN is the wider loop's, which
    # the suite leaves unspecified: helpers.assert_same)
    assert_same(ufunc(g, y_other), expected)


@pytest.mark.parametrize("dt", FLOAT8, ids=str)
@pytest.mark.parametrize("integer", [np.int8, np.uint8, np.int16], ids=str)
def test_integers_a_float8_result_cannot_hold_are_refused(dt, integer):
    """ml_dtypes promotes float8 with int8 to float8, which rounds 17 to 16:
    refused, naming both dtypes, where the result would be float8; int16
    promotes to float32, which holds it."""
    ints = np.arange(-5, 20).astype(integer)
    y = np.full(ints.shape, 0.5, dt)
    try:
        expected = reference.sigmoid_backward(ints, y)
    except TypeError:
        with pytest.raises(TypeError, match=re.escape(repr(np.dtype(integer))) + ".*"
                           + re.escape(repr(dt)) + ".*cannot hold"):
            ufunc(ints, y)
        return
    same_bits(ufunc(ints, y), expected)


@pytest.mark.parametrize("dt", FLOAT8, ids=str)
def test_bool_and_python_scalars_keep_float8(dt):
    y = np.linspace(0, 1, 9).astype(dt)
    for g in (np.ones(9, bool), True, 2, 0.5):
        same_bits(ufunc(g, y), reference.sigmoid_backward(g, y))
