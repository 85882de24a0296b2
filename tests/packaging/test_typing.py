"""The installed type stubs (py.typed, *.pyi): mypy accepts typed use of the
public API and rejects misuse.  Skipped when mypy is not installed."""
import importlib.resources
import os
import re
import subprocess
import sys

import pytest

from helpers import installed_stubs

pytest.importorskip("mypy")

GOOD = """\
from typing import Any

import numpy as np
import numpy.typing as npt

import sigmoid_backward
from sigmoid_backward import (OPENMP_ENABLED, __version__, get_num_threads, reference,
                              set_num_threads, sigmoid_backward as sb)

g: npt.NDArray[np.float32] = np.ones(3, np.float32)
out: npt.NDArray[np.float32] = np.empty(3, np.float32)
same: npt.NDArray[np.float32] = sb(g, g, out=out)
same_tuple: npt.NDArray[np.float32] = sb(g, 0.5, (out,))
anything: Any = sb([1.0, 2.0], 0.5, dtype="float32", num_threads=2)
from_scalars: Any = sigmoid_backward.sigmoid_backward(1.0, 0.5, dtype=np.float64)
ref: npt.NDArray[Any] = reference.sigmoid_backward(g, [0.5, 0.25, 1.0], dtype=np.float32)
threads: int = get_num_threads()
set_num_threads(2)
set_num_threads(None)
has_openmp: bool = OPENMP_ENABLED
version: str = __version__
names: list[str] = sigmoid_backward.__all__


class Producer:  # any DLPack producer is accepted
    def __dlpack__(self, *, stream: int | None = None) -> object:
        return object()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


from_dlpack: Any = sb(Producer(), g)
"""

# The aclnn API as C code ported line by line uses it: the constants that
# aclnn/__init__.py defines at run time, tensors, both phases, a repeatable
# executor, streams, the SoC and the error layer.  It also runs (see
# test_aclnn_snippet_runs), so the snippet is real code.
ACLNN_GOOD = """\
import numpy as np

from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import (ACL_BF16, ACL_FLOAT, ACL_FORMAT_ND, ACLNN_ERR_PARAM_INVALID,
                                    ACLNN_SUCCESS, AclnnError, aclCreateTensor, aclDataType,
                                    aclDestroyAclOpExecutor, aclDestroyTensor, aclFormat,
                                    aclGetRecentErrMsg, aclnnSigmoidBackward,
                                    aclnnSigmoidBackwardGetWorkspaceSize, aclnnStatus,
                                    aclOpExecutor, aclrtCreateStream, aclrtDestroyStream,
                                    aclrtGetSocName, aclrtStream, aclrtSynchronizeStream,
                                    aclSetAclOpExecutorRepeatable, aclTensor, check,
                                    set_soc_version, tensor_from_array)


def create_tensor(values: list[float]) -> tuple[bytearray, aclTensor]:
    memory = bytearray(np.array(values, np.float32).tobytes())
    tensor = aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, ACL_FORMAT_ND, [2, 2], memory)
    assert tensor is not None, aclGetRecentErrMsg()
    return memory, tensor


_, g = create_tensor([1, 1, 1, 1])
_, y = create_tensor([1, 2, 3, 4])
gi_memory, gi = create_tensor([0, 0, 0, 0])
# --- end of the set-up ---
status, stream = aclrtCreateStream()
check(status)
maybe_stream: aclrtStream | None = stream
status, workspace_size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
check(status)
assert executor is not None
planned: int = executor.workspace_size
check(aclSetAclOpExecutorRepeatable(executor))
workspace = bytearray(workspace_size) if workspace_size > 0 else None
check(aclnnSigmoidBackward(workspace, workspace_size, executor, stream))
check(aclrtSynchronizeStream(stream))
check(aclnnSigmoidBackward(workspace, workspace_size, executor, None))
check(aclDestroyAclOpExecutor(executor))
result: list[float] = np.frombuffer(bytes(gi_memory), np.float32).tolist()
print(result)

array_tensor: aclTensor = tensor_from_array(np.zeros((3, 1), np.float32).T)
dims: tuple[int, ...] = array_tensor.view_dims
strides: tuple[int, ...] = array_tensor.stride
dtype: aclDataType = array_tensor.data_type
layout: aclFormat | int = array_tensor.format
bf16: aclDataType = ACL_BF16
set_soc_version("Ascend950")
soc: str | None = aclrtGetSocName()
set_soc_version(None)
ok: bool = status == ACLNN_SUCCESS
failed_c_style: bool = status != 0
not_nchw: bool = layout != aclnn.ACL_FORMAT_NCHW
code: int = ACLNN_ERR_PARAM_INVALID
statuses: list[aclnnStatus] = list(aclnnStatus)
try:
    check(aclnn.ACLNN_ERR_INNER_NULLPTR)
except AclnnError as exc:
    failed: aclnnStatus | int = exc.status
    message: str = exc.message
for tensor in (g, y, gi, array_tensor, None):
    check(aclDestroyTensor(tensor))
check(aclrtDestroyStream(stream))
pending: str = aclGetRecentErrMsg()
executors: list[aclOpExecutor] = []
"""

# ``import *`` gives every constant too.
ACLNN_STAR = """\
from sigmoid_backward.aclnn import *

float_type: aclDataType = ACL_FLOAT
status: aclnnStatus = ACLNN_ERR_PARAM_NULLPTR
check(ACLNN_SUCCESS)
"""

# Each line must be reported, and nothing else.
ACLNN_BAD = {
    "aclCreateTensor([4], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [4], 'text')": "incompatible type",
    "check(aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi))": "incompatible type",
    "aclnnSigmoidBackward(None, 0, g, None)": "incompatible type",
    "set_soc_version(950)": "incompatible type",
    "executor_size: int = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)[2]":
        "Incompatible types in assignment",
    "fmt: aclFormat = ACL_FLOAT": "Incompatible types in assignment",
    "aclnn.ACL_FLOAT17": "has no attribute",
}

# Each line must be reported, and nothing else.
BAD = {
    "sb(g)": "Too few arguments|No overload variant",
    "sb(g, g, num_threads='2')": "No overload variant",
    "sb(g, g, out=[0.0])": "No overload variant",
    "sb(grad_output=g, output=g)": "No overload variant|Unexpected keyword",
    "wrong: str = get_num_threads()": "Incompatible types in assignment",
    "set_num_threads('4')": "incompatible type",
    "flag: int = sigmoid_backward.OPENMP_ENABLED + ''": "Unsupported operand",
    "reference.sigmoid_backward(g, g, out=g)": "Unexpected keyword argument",
    "sigmoid_backward.does_not_exist": "has no attribute",
}


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    """Run mypy once on both snippets against the installed typing files."""
    root = tmp_path_factory.mktemp("typing")
    stubs = installed_stubs(root)
    (root / "good.py").write_text(GOOD)
    bad = GOOD.split("\n\nclass Producer")[0] + "\n" + "\n".join(BAD) + "\n"
    (root / "bad.py").write_text(bad)
    (root / "aclnn_good.py").write_text(ACLNN_GOOD)
    (root / "aclnn_star.py").write_text(ACLNN_STAR)
    aclnn_bad = (ACLNN_GOOD.split("# --- end of the set-up ---")[0]
                 + "\n".join(ACLNN_BAD) + "\n")
    (root / "aclnn_bad.py").write_text(aclnn_bad)
    env = dict(os.environ, MYPYPATH=str(stubs))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", os.devnull, "--hide-error-context", "--no-error-summary",
         "--show-error-codes", "good.py", "bad.py", "aclnn_good.py", "aclnn_star.py",
         "aclnn_bad.py"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ": error:" in ln]
    return root, {"bad.py": bad.splitlines(), "aclnn_bad.py": aclnn_bad.splitlines()}, lines, proc


def test_typed_use_is_clean(mypy_run):
    _, bad_files, lines, proc = mypy_run
    good = [ln for ln in lines if ln.split(":")[0] not in bad_files]
    assert good == [], proc.stdout + proc.stderr


@pytest.mark.parametrize("filename, bad", [("bad.py", BAD), ("aclnn_bad.py", ACLNN_BAD)])
def test_misuse_is_reported_line_by_line(mypy_run, filename, bad):
    _, bad_files, lines, proc = mypy_run
    errors = {}
    for ln in lines:
        if ln.startswith(f"{filename}:"):
            number = int(ln.split(":")[1])
            errors.setdefault(bad_files[filename][number - 1], []).append(ln)
    assert set(errors) == set(bad), proc.stdout
    for code, pattern in bad.items():
        assert any(re.search(pattern, ln) for ln in errors[code]), (code, errors[code])


def test_aclnn_snippet_runs(capsys):
    """The typed aclnn snippet is working code: it prints the example's result."""
    from sigmoid_backward import aclnn

    try:
        exec(compile(ACLNN_GOOD, "aclnn_good.py", "exec"), {})
    finally:
        aclnn.set_soc_version(None)
        aclnn.aclGetRecentErrMsg()
    assert capsys.readouterr().out == "[0.0, -2.0, -6.0, -12.0]\n"


def test_stubs_cover_the_public_api():
    import sigmoid_backward

    stub = (importlib.resources.files("sigmoid_backward") / "__init__.pyi").read_text()
    for name in sigmoid_backward.__all__:
        assert re.search(rf"^(def |from \. import ){name}\b|^{name}:|\b{name} as {name}\b",
                         stub, re.M), f"{name} missing from __init__.pyi"
    # The stub's __all__ is the module's.
    listed = re.search(r"__all__ = \[(.*?)\]", stub, re.S).group(1)
    assert re.findall(r'"(\w+)"', listed) == sigmoid_backward.__all__
