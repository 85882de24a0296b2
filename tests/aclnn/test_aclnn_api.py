"""The module surface: C names and constants, per-thread error messages, the
Pythonic error layer, SoC selection, and the calling example."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import (
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_SUCCESS,
    AclnnError,
    aclGetRecentErrMsg,
    aclrtGetSocName,
    check,
    set_soc_version,
)

from aclnn_support import clean_aclnn_state, raw  # noqa: F401 (autouse)
from helpers import run_threads

ROOT = Path(__file__).resolve().parents[2]



# Names and constants ----------------------------------------------------------

C_NAMES = ["aclCreateTensor", "aclDestroyTensor", "aclnnSigmoidBackwardGetWorkspaceSize",
           "aclnnSigmoidBackward", "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
           "aclrtCreateStream", "aclrtSynchronizeStream", "aclrtDestroyStream",
           "aclrtGetSocName", "aclGetRecentErrMsg", "set_soc_version", "tensor_from_array",
           "AclnnError", "check", "aclDataType", "aclFormat", "aclnnStatus"]


@pytest.mark.parametrize("name", C_NAMES)
def test_c_names_exported(name):
    assert callable(getattr(aclnn, name)) and name in aclnn.__all__


# docs/semantics.md's tables, literally.
STATUS = {"ACLNN_SUCCESS": 0, "ACLNN_ERR_PARAM_NULLPTR": 161001,
          "ACLNN_ERR_PARAM_INVALID": 161002, "ACLNN_ERR_RUNTIME_ERROR": 361001,
          "ACLNN_ERR_INNER": 561000, "ACLNN_ERR_INNER_INFERSHAPE_ERROR": 561001,
          "ACLNN_ERR_INNER_TILING_ERROR": 561002, "ACLNN_ERR_INNER_FIND_KERNEL_ERROR": 561003,
          "ACLNN_ERR_INNER_CREATE_EXECUTOR": 561101,
          "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR": 561102, "ACLNN_ERR_INNER_NULLPTR": 561103,
          "ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE": 561104}
DTYPES = {"ACL_DT_UNDEFINED": -1, "ACL_FLOAT": 0, "ACL_FLOAT16": 1, "ACL_INT8": 2,
          "ACL_INT32": 3, "ACL_UINT8": 4, "ACL_INT16": 6, "ACL_UINT16": 7, "ACL_UINT32": 8,
          "ACL_INT64": 9, "ACL_UINT64": 10, "ACL_DOUBLE": 11, "ACL_BOOL": 12, "ACL_STRING": 13,
          "ACL_COMPLEX64": 16, "ACL_COMPLEX128": 17, "ACL_BF16": 27, "ACL_INT4": 29,
          "ACL_UINT1": 30, "ACL_COMPLEX32": 33, "ACL_HIFLOAT8": 34, "ACL_FLOAT8_E5M2": 35,
          "ACL_FLOAT8_E4M3FN": 36, "ACL_FLOAT8_E8M0": 37}
FORMATS = {"ACL_FORMAT_UNDEFINED": -1, "ACL_FORMAT_NCHW": 0, "ACL_FORMAT_NHWC": 1,
           "ACL_FORMAT_ND": 2, "ACL_FORMAT_NC1HWC0": 3, "ACL_FORMAT_FRACTAL_Z": 4,
           "ACL_FORMAT_NC1HWC0_C04": 12, "ACL_FORMAT_HWCN": 16, "ACL_FORMAT_NDHWC": 27,
           "ACL_FORMAT_FRACTAL_NZ": 29, "ACL_FORMAT_NCDHW": 30, "ACL_FORMAT_NDC1HWC0": 32,
           "ACL_FRACTAL_Z_3D": 33, "ACL_FORMAT_NC": 35, "ACL_FORMAT_NCL": 47}


@pytest.mark.parametrize("enum, table", [(aclnn.aclnnStatus, STATUS),
                                         (aclnn.aclDataType, DTYPES),
                                         (aclnn.aclFormat, FORMATS)])
def test_constants(enum, table):
    assert {m.name: m.value for m in enum} == table
    for name, value in table.items():
        assert getattr(aclnn, name) == value and getattr(aclnn, name) is enum[name]
        assert name in aclnn.__all__


def test_star_import():
    namespace = {}
    exec("from sigmoid_backward.aclnn import *", namespace)
    assert namespace["ACL_FLOAT"] == 0 and "aclnnSigmoidBackward" in namespace



def _fail_once(tag):
    assert aclnn.aclCreateTensor([tag], aclnn.ACL_FLOAT, [], 0, 2, [1], bytearray(4)) is None

def test_messages_under_concurrency():
    errors = []

    def worker(tag):
        for _ in range(50):
            _fail_once(tag)
            message = aclGetRecentErrMsg()
            if f"[{tag}]" not in message or message.count("aclCreateTensor") != 1:
                errors.append(message)
    assert run_threads(worker, 4, barrier=True) == []
    assert errors == []


def test_read_clears_and_stacks_newest_first():
    assert aclGetRecentErrMsg() == ""
    _fail_once(1)
    _fail_once(2)
    lines = aclGetRecentErrMsg().splitlines()
    assert "[2]" in lines[0] and "[1]" in lines[1]
    assert aclGetRecentErrMsg() == ""


def test_success_keeps_pending_messages():
    _fail_once(3)
    assert aclnn.aclCreateTensor([1], aclnn.ACL_FLOAT, [1], 0, 2, [1], bytearray(4)) is not None
    assert "[3]" in aclGetRecentErrMsg()


# AclnnError / check -------------------------------------------------------------

def test_check():
    assert check(ACLNN_SUCCESS) is None
    assert check(0) is None
    status, _, _ = aclnn.aclnnSigmoidBackwardGetWorkspaceSize(*(raw([2], aclnn.ACL_INT8),) * 3)
    with pytest.raises(AclnnError) as info:
        check(status)
    err = info.value
    assert err.status == ACLNN_ERR_PARAM_INVALID == 161002
    assert "check 2" in err.message and "ACL_INT8" in err.message
    assert str(err).startswith("ACLNN_ERR_PARAM_INVALID (161002): ")
    assert aclGetRecentErrMsg() == ""       # check read the message
    with pytest.raises(AclnnError, match="^12345$"):
        check(12345)                         # an unknown status, no message
    with pytest.raises(TypeError, match="unpack"):
        check((0, 0, None))
    assert issubclass(AclnnError, RuntimeError)


# SoC --------------------------------------------------------------------------

def test_soc_default_and_selection(monkeypatch):
    assert aclrtGetSocName() == "Ascend910B"
    for name in ("Ascend910", "Ascend310P", "Ascend910_93", "Ascend950", "Ascend910B"):
        set_soc_version(name)
        assert aclrtGetSocName() == name
    monkeypatch.setenv("SIGMOID_BACKWARD_SOC_VERSION", "Ascend310P")
    assert aclrtGetSocName() == "Ascend910B"          # set_soc_version wins
    set_soc_version(None)
    assert aclrtGetSocName() == "Ascend310P"          # then the environment
    monkeypatch.setenv("SIGMOID_BACKWARD_SOC_VERSION", "")
    assert aclrtGetSocName() == "Ascend910B"


def test_soc_unknown_names(monkeypatch):
    with pytest.raises(ValueError, match="Ascend999"):
        set_soc_version("Ascend999")
    with pytest.raises(TypeError):
        set_soc_version(910)
    assert aclrtGetSocName() == "Ascend910B"          # unchanged
    monkeypatch.setenv("SIGMOID_BACKWARD_SOC_VERSION", "ascend910b")
    assert aclrtGetSocName() is None
    assert "ascend910b" in aclGetRecentErrMsg()


def test_soc_from_environment_in_a_fresh_process():
    code = ("from sigmoid_backward import aclnn; import numpy as np, ml_dtypes\n"
            "t = aclnn.tensor_from_array(np.zeros(2, ml_dtypes.bfloat16))\n"
            "print(aclnn.aclrtGetSocName(), "
            "int(aclnn.aclnnSigmoidBackwardGetWorkspaceSize(t, t, t)[0]))")
    env = {**os.environ, "SIGMOID_BACKWARD_SOC_VERSION": "Ascend910"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["Ascend910", "161002"]


# The calling example --------------------------------------------------------------

def test_example_main(capsys):
    from sigmoid_backward.aclnn import example
    assert example.main() == 0
    assert capsys.readouterr().out == (
        "aclnnSigmoidBackward example: gradInput = [0.0, -2.0, -6.0, -12.0]\n")


def test_python_m_sigmoid_backward_runs_the_example():
    out = subprocess.run([sys.executable, "-m", "sigmoid_backward"], capture_output=True,
                         text=True, check=True).stdout
    assert "aclnnSigmoidBackward example: gradInput = [0.0, -2.0, -6.0, -12.0]" in out


def test_readme_example_runs(capsys):
    """The README's aclnn example runs and prints the document's result."""
    blocks = [block for block in re.findall(r"```python\n(.*?)```",
                                            (ROOT / "README.md").read_text(), re.S)
              if "aclnnSigmoidBackward(" in block]
    assert blocks, "no README python block uses aclnnSigmoidBackward"
    exec(compile(blocks[0], "README", "exec"), {})
    assert "[  0.  -2.  -6. -12.]" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_is_refused_as_int8_is(name):
    """The CPU computes in FP8; the NPU operator does not: a tensor over an
    FP8 array gets CANN's type and phase 1's refusal, with int8's status
    and message, naming the type."""
    import ml_dtypes

    from sigmoid_backward.aclnn import tensor_from_array
    arr = np.zeros(2, getattr(ml_dtypes, name))
    t = tensor_from_array(arr)
    acl_name = f"ACL_FLOAT8_{name.split('_')[1].upper()}"
    assert t.data_type == getattr(aclnn, acl_name)
    status, _, _ = aclnn.aclnnSigmoidBackwardGetWorkspaceSize(t, t, tensor_from_array(arr.copy()))
    message = aclGetRecentErrMsg()
    int8 = tensor_from_array(np.zeros(2, np.int8))
    int8_status, _, _ = aclnn.aclnnSigmoidBackwardGetWorkspaceSize(
        int8, int8, tensor_from_array(np.zeros(2, np.int8)))
    int8_message = aclGetRecentErrMsg()
    assert status == int8_status == ACLNN_ERR_PARAM_INVALID
    assert message == int8_message.replace("ACL_INT8", acl_name)
