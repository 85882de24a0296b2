"""Phase 1's checks: one test per row of the status table in
docs/semantics.md, in order.

Each failure returns (status, 0, None) and leaves a message naming the check,
the tensor, its dtype and its shape.
"""
import numpy as np
import pytest

from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import (
    ACL_BF16,
    ACL_COMPLEX64,
    ACL_DOUBLE,
    ACL_FLOAT,
    ACL_FLOAT16,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_ERR_RUNTIME_ERROR,
    ACLNN_SUCCESS,
    aclGetRecentErrMsg,
    aclnnSigmoidBackward,
    aclnnSigmoidBackwardGetWorkspaceSize,
)

from aclnn_support import UNSUPPORTED, clean_aclnn_state, make, raw  # noqa: F401 (autouse)

NAMES = ["gradOutput", "output", "gradInput"]



def three(dims=(2, 2), types=(ACL_FLOAT, ACL_FLOAT, ACL_FLOAT)):
    return [raw(dims, t) for t in types]


def phase1_fails(args, status, *words):
    got, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(*args)
    assert (got, size, executor) == (status, 0, None)
    message = aclGetRecentErrMsg()
    for word in words:
        assert word in message, (word, message)
    return message


# Row 1: a null tensor -> 161001 ------------------------------------------------

@pytest.mark.parametrize("position", range(3))
def test_row1_null_tensor(position):
    args = three()
    args[position] = None
    phase1_fails(args, ACLNN_ERR_PARAM_NULLPTR, "check 1", NAMES[position], "null")


def test_row1_comes_first():
    # gradOutput has an unsupported dtype and the shapes disagree; a null
    # gradInput still wins.
    g = raw([3], aclnn.ACL_INT32)
    y = make([2], ACL_FLOAT)[0]
    phase1_fails([g, y, None], ACLNN_ERR_PARAM_NULLPTR, "gradInput")


@pytest.mark.parametrize("position", range(3))
def test_not_a_tensor_or_destroyed(position):
    args = three()
    args[position] = np.zeros((2, 2), np.float32)
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, NAMES[position], "ndarray")
    args = three()
    assert aclnn.aclDestroyTensor(args[position]) == ACLNN_SUCCESS
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, NAMES[position], "destroyed")


# Row 2: dtype outside the six; BF16 gradOutput without BF16 -> 161002 ---------

@pytest.mark.parametrize("position", range(3))
@pytest.mark.parametrize("bad", UNSUPPORTED, ids=lambda t: t.name)
def test_row2_unsupported_dtype(position, bad):
    types = [ACL_FLOAT] * 3
    types[position] = bad
    args = three(types=types)
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, "check 2", NAMES[position], bad.name,
                 "shape [2, 2]")


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend310P"])
def test_row2_bf16_grad_output_without_bf16(soc):
    aclnn.set_soc_version(soc)
    args = three(types=(ACL_BF16, ACL_BF16, ACL_BF16))
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, "check 2", "gradOutput", "ACL_BF16", soc)


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93", "Ascend950"])
def test_row2_bf16_grad_output_with_bf16(soc):
    """The products with BF16, the Ascend 950 family (regbase) included,
    take a BF16 gradOutput: phase 1 succeeds and plans no workspace."""
    aclnn.set_soc_version(soc)
    args = [make([2, 2], ACL_BF16)[0] for _ in range(3)]
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(*args)
    assert (status, size) == (ACLNN_SUCCESS, 0) and executor is not None
    assert aclGetRecentErrMsg() == ""


def test_row2_order_of_tensors():
    # gradOutput is checked before output, output before gradInput.
    args = three(types=(aclnn.ACL_INT8, aclnn.ACL_BOOL, aclnn.ACL_INT64))
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, "gradOutput", "ACL_INT8")
    args = three(types=(ACL_FLOAT, aclnn.ACL_BOOL, aclnn.ACL_INT64))
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, "output", "ACL_BOOL")


def test_row2_before_row3():
    g = raw([1] * 9, aclnn.ACL_UINT8)
    y = make([1] * 9, ACL_FLOAT)[0]
    gi = make([1] * 9, ACL_FLOAT)[0]
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "check 2")


# Row 3: more than 8 dims on gradOutput or output -> 161002 ---------------------

@pytest.mark.parametrize("position", range(2))
def test_row3_more_than_8_dims(position):
    dims = [[2, 2], [2, 2], [2, 2]]
    dims[position] = [1] * 7 + [2, 2]
    args = [make(d, ACL_FLOAT)[0] for d in dims]
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, "check 3", NAMES[position], "9 dims",
                 "ACL_FLOAT")


def test_row3_eight_dims_pass():
    dims = [1, 2, 1, 2, 1, 2, 1, 2]
    g, y, gi = (make(dims, ACL_FLOAT)[0] for _ in range(3))
    status, _, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert status == ACLNN_SUCCESS and executor is not None


def test_row3_before_row4():
    g = make([1] * 9, ACL_COMPLEX64)[0]
    y = make([1] * 9, ACL_FLOAT)[0]
    gi = make([1] * 9, ACL_FLOAT)[0]
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "check 3")


# Row 4: promoted dtype not castable to gradInput's -> 161002 -------------------

def test_row4_promotion_not_castable():
    args = three(types=(ACL_FLOAT, ACL_COMPLEX64, ACL_FLOAT))
    phase1_fails(args, ACLNN_ERR_PARAM_INVALID, "check 4", "ACL_COMPLEX64", "gradInput",
                 "ACL_FLOAT")


@pytest.mark.parametrize("types", [(ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT16),
                                   (ACL_DOUBLE, ACL_DOUBLE, ACL_FLOAT),
                                   (ACL_FLOAT, ACL_FLOAT, ACL_COMPLEX64)])
def test_row4_same_kind_casts_pass(types):
    status, _, executor = aclnnSigmoidBackwardGetWorkspaceSize(*three(types=types))
    assert status == ACLNN_SUCCESS and executor is not None


def test_row4_before_row5():
    g = make([3], ACL_COMPLEX64)[0]
    y = make([2], ACL_FLOAT)[0]
    gi = make([3], ACL_FLOAT)[0]
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "check 4")


# Row 5: shapes -> 161002 --------------------------------------------------------

def test_row5_not_broadcastable():
    g, y, gi = make([3], ACL_FLOAT)[0], make([2], ACL_FLOAT)[0], make([3], ACL_FLOAT)[0]
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "check 5", "shape [3]", "shape [2]",
                 "cannot be broadcast")


@pytest.mark.parametrize("gi_dims", [[4, 4], [1, 4, 4, 1], [4, 1], [2, 4, 4]])
def test_row5_broadcast_differs_from_grad_input(gi_dims):
    g, y = make([4, 1], ACL_FLOAT)[0], make([1, 4], ACL_FLOAT)[0]
    gi = make(gi_dims, ACL_FLOAT)[0]
    if gi_dims == [4, 4]:
        status, _, _ = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
        assert status == ACLNN_SUCCESS
    else:
        phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "check 5", "[4, 4]", "gradInput",
                     str(gi_dims))


def test_row5_read_only_grad_input():
    g, y = make([2, 2], ACL_FLOAT)[0], make([2, 2], ACL_FLOAT)[0]
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    gi = aclnn.aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, aclnn.ACL_FORMAT_ND, [4], frozen)
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "gradInput", "read-only")
    gi = aclnn.aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, aclnn.ACL_FORMAT_ND, [4],
                               bytes(16))
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "gradInput", "read-only")


@pytest.mark.parametrize("frozen", ["the array", "the array it views"])
def test_row5_grad_input_made_read_only_after_its_tensor(frozen):
    """Our view of the array's bytes keeps its own WRITEABLE flag: clearing
    the caller's after aclCreateTensor must still stop the write."""
    g, y = make([2, 2], ACL_FLOAT)[0], make([2, 2], ACL_FLOAT)[0]
    base = np.zeros(8, np.float32)
    arr = base[:4]
    gi = aclnn.aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, aclnn.ACL_FORMAT_ND, [4], arr)
    (arr if frozen == "the array" else base).flags.writeable = False
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "gradInput", "read-only")
    assert not base.any()


def test_grad_input_made_read_only_between_the_phases():
    g, y = make([2, 2], ACL_FLOAT)[0], make([2, 2], ACL_FLOAT)[0]
    arr = np.zeros(4, np.float32)
    gi = aclnn.aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, aclnn.ACL_FORMAT_ND, [4], arr)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert status == ACLNN_SUCCESS
    arr.flags.writeable = False
    workspace = np.empty(size, np.uint8) if size else None
    assert aclnnSigmoidBackward(workspace, size, executor, None) == ACLNN_ERR_PARAM_INVALID
    message = aclGetRecentErrMsg()  # read once: reading clears it
    assert "gradInput" in message and "read-only" in message, message
    assert not arr.any()
    arr.flags.writeable = True  # the executor stays usable, and now runs
    assert aclnnSigmoidBackward(workspace, size, executor, None) == ACLNN_SUCCESS


def test_read_only_inputs_pass():
    ro = bytes(np.ones(4, np.float32).tobytes())
    g = aclnn.aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, aclnn.ACL_FORMAT_ND, [4], ro)
    y = aclnn.aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, aclnn.ACL_FORMAT_ND, [4], ro)
    gi, buf = make([2, 2], ACL_FLOAT)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert (status, size) == (ACLNN_SUCCESS, 0)
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_SUCCESS
    assert buf.tolist() == [0.0] * 4   # 1 * (1 - 1) * 1


# Row 6: empty input -> success, workspace 0, nothing computed ------------------

@pytest.mark.parametrize("g_dims, y_dims", [([0], [0]), ([2, 0, 3], [2, 0, 3]),
                                            ([0], [1]), ([1, 3], [0, 3]), ([0, 1], [0, 5])])
def test_row6_empty(g_dims, y_dims):
    shape = list(np.broadcast_shapes(tuple(g_dims), tuple(y_dims)))
    g = make(g_dims, ACL_FLOAT, np.ones(g_dims))[0]
    y = make(y_dims, ACL_DOUBLE, np.ones(y_dims))[0]
    storage = np.full(8, 7, np.float32)
    gi = aclnn.aclCreateTensor(shape, ACL_FLOAT, [1] * len(shape), 0, aclnn.ACL_FORMAT_ND,
                               [8], storage)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert (status, size) == (ACLNN_SUCCESS, 0) and executor is not None
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_SUCCESS
    assert storage.tolist() == [7.0] * 8
    assert aclGetRecentErrMsg() == ""


def test_row6_after_row5():
    # Empty, but gradInput is read-only: the shape rules come first.
    g, y = make([0], ACL_FLOAT)[0], make([0], ACL_FLOAT)[0]
    gi = aclnn.aclCreateTensor([0], ACL_FLOAT, [1], 0, aclnn.ACL_FORMAT_ND, [0], b"")
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "read-only")
    gi = make([1], ACL_FLOAT)[0]
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "check 5")


# After planning: a workspace that a uint64 cannot hold -------------------------

def _zero_strided(dims, data_type, nbytes):
    t = aclnn.aclCreateTensor(dims, data_type, [0] * len(dims), 0, aclnn.ACL_FORMAT_ND, [1],
                              bytearray(nbytes))
    assert t is not None, aclGetRecentErrMsg()
    return t


def test_workspace_beyond_uint64():
    """A float16 gradInput of 2**60 elements (2**61 bytes: a valid tensor) fed
    by two staged inputs needs two staging regions of the compute dtype.  In
    float32 that is 2**63 + 63 bytes, a uint64; in float64 it is 2**64 + 63,
    which phase 1 must not return as C's ``uint64_t *workspaceSize``."""
    gi = _zero_strided([2 ** 30, 2 ** 30], ACL_FLOAT16, 2)
    g, y = (_zero_strided(d, ACL_FLOAT, 4) for d in ([2 ** 30, 1], [1, 2 ** 30]))
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert (status, size) == (ACLNN_SUCCESS, 2 ** 63 + 63)
    g, y = (_zero_strided(d, ACL_DOUBLE, 8) for d in ([2 ** 30, 1], [1, 2 ** 30]))
    phase1_fails([g, y, gi], ACLNN_ERR_PARAM_INVALID, "check 7 (workspace)",
                 "gradInput (ACL_FLOAT16, shape [1073741824, 1073741824])",
                 "computed in ACL_DOUBLE", f"{2 ** 64 + 63} bytes", "uint64")


def test_unknown_soc_in_environment(monkeypatch):
    monkeypatch.setenv("SIGMOID_BACKWARD_SOC_VERSION", "Ascend999")
    phase1_fails(three(), ACLNN_ERR_RUNTIME_ERROR, "Ascend999",
                 "SIGMOID_BACKWARD_SOC_VERSION")


def test_success_leaves_no_message():
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(*three())
    assert (status, size) == (ACLNN_SUCCESS, 0)
    assert aclGetRecentErrMsg() == ""
