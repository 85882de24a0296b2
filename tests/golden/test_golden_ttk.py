"""The golden functions as TTK calls them: an operator's golden.py made of
one import, the kernel's (y, dy) order, bfloat16 as raw |V2 arrays."""
import importlib.util

import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward as sb
from sigmoid_backward.golden import __golden__, aclnn_sigmoid_backward_golden, sigmoid_grad_golden

from dtypes_catalogue import BFLOAT16, NPU_DTYPES, NPU_REAL_DTYPES
from golden_support import kernel_formula
from helpers import assert_same

RNG = np.random.default_rng(3)
GOLDEN_PY = """
from sigmoid_backward.golden import (
    __golden__, aclnn_sigmoid_backward_golden, sigmoid_grad_golden)
"""


def _inputs(dtype, n=1000):
    y = RNG.uniform(-1, 2, n)
    dy = RNG.uniform(-10, 10, n)
    if dtype.kind == "c":
        y, dy = y + 1j * RNG.uniform(-1, 1, n), dy + 1j * RNG.uniform(-1, 1, n)
    y, dy = y.astype(dtype), dy.astype(dtype)
    y[:4] = [np.nan, np.inf, -np.inf, 0]
    dy[4:6] = [np.nan, np.inf]
    return y, dy


def _as_ttk_does(tmp_path, kind, op, *args, **kwargs):
    """Import a golden.py of one import, find the function as TTK does, call it."""
    (tmp_path / "golden.py").write_text(GOLDEN_PY)
    spec = importlib.util.spec_from_file_location("golden_py", tmp_path / "golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, module.__golden__[kind][op])(*args, **kwargs)


@pytest.mark.parametrize("dtype", NPU_REAL_DTYPES, ids=str)
def test_the_kernel_golden_is_the_kernels_formula(tmp_path, dtype):
    y, dy = _inputs(dtype)
    result = _as_ttk_does(tmp_path, "kernel", "sigmoid_grad", y, dy, testcase_name="t",
                          input_dtypes=(dtype.name, dtype.name))
    assert_same(result, kernel_formula(y, dy, dtype))


@pytest.mark.parametrize("dtype", NPU_DTYPES, ids=str)
def test_the_aclnn_golden_is_the_function(tmp_path, dtype):
    g, y = _inputs(dtype)
    result = _as_ttk_does(tmp_path, "aclnn", "aclnnSigmoidBackward", g, y)
    assert_same(result, sb(g, y))


def test_the_mapping_names_the_functions():
    assert __golden__ == {"kernel": {"sigmoid_grad": "sigmoid_grad_golden"},
                          "aclnn": {"aclnnSigmoidBackward": "aclnn_sigmoid_backward_golden"}}


def test_raw_bfloat16_comes_back_raw():
    y, dy = _inputs(BFLOAT16)
    raw = sigmoid_grad_golden(y.view("V2"), dy.view("V2"))
    assert raw.dtype == np.dtype("V2")
    assert_same(raw.view(BFLOAT16), kernel_formula(y, dy, BFLOAT16))
    assert_same(sigmoid_grad_golden(y, dy.view("V2")).view(BFLOAT16), sb(dy, y))


def test_output_dtypes_casts_the_result():
    g, y = _inputs(np.dtype(np.float16))
    result = aclnn_sigmoid_backward_golden(g, y, output_dtypes=("float32",))
    assert_same(result, sb(g, y).astype(np.float32))
    assert sigmoid_grad_golden(y, g, output_dtypes="bf16").dtype == BFLOAT16


def test_a_complex_result_is_never_cast_to_a_real_output_dtype():
    from sigmoid_backward.golden._errors import GoldenError
    g = np.array([1 + 1j, 2j], np.complex64)
    with pytest.raises(GoldenError, match="complex is never cast to float32"):
        aclnn_sigmoid_backward_golden(g, g, output_dtypes=("float32",))
