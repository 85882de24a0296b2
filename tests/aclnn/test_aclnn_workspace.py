"""Workspace planning and checking, and the executor's life cycle."""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

from sigmoid_backward.aclnn import (
    ACL_DOUBLE,
    ACL_FLOAT,
    ACL_FLOAT16,
    ACL_FORMAT_ND,
    ACLNN_ERR_INNER_NULLPTR,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_SUCCESS,
    aclCreateTensor,
    aclDestroyAclOpExecutor,
    aclDestroyTensor,
    aclGetRecentErrMsg,
    aclnnSigmoidBackward,
    aclnnSigmoidBackwardGetWorkspaceSize,
    aclSetAclOpExecutorRepeatable,
)

from aclnn_support import clean_aclnn_state, expected, make, sample  # noqa: F401
from helpers import assert_same
from hostile import released_memoryview


def _round64(n):
    return -(-n // 64) * 64


def broadcast_call(rng=None):
    """[1,4,1,1] with [1,1,4,4] into [1,4,4,4]: both inputs are staged."""
    rng = rng or np.random.default_rng(0)
    g_vals = sample(np.float32, [1, 4, 1, 1], rng, "g")
    y_vals = sample(np.float32, [1, 1, 4, 4], rng, "y")
    g, g_buf = make([1, 4, 1, 1], ACL_FLOAT, g_vals)
    y, y_buf = make([1, 1, 4, 4], ACL_FLOAT, y_vals)
    gi, gi_buf = make([1, 4, 4, 4], ACL_FLOAT, fill=-1)
    return (g, y, gi), (g_buf, y_buf, gi_buf), expected(g_vals, y_vals, ACL_FLOAT)


# Planning: exact sizes --------------------------------------------------------

def test_common_case_needs_nothing():
    g, y, gi = (make([64, 3], ACL_FLOAT)[0] for _ in range(3))
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert (status, size) == (ACLNN_SUCCESS, 0)
    assert executor.workspace_size == 0
    # No workspace needed: None, or anything at all, is accepted.
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_SUCCESS


@pytest.mark.parametrize("case, regions, itemsize, n", [
    # both inputs broadcast; the kernel writes gradInput directly
    ("broadcast", 2, 4, 64),
    # float64 computed, float32 stored: one staging result
    ("f64->f32", 1, 8, 64),
    # a float16 input is widened to float32; gradInput direct
    ("f16+f32", 1, 4, 64),
    # a strided gradInput: its staging result is the kernel's own output
    ("strided-out", 1, 4, 64),
    # a strided gradInput and a cast input: the result goes over the staged input
    ("strided-out+cast", 1, 4, 64),
])
def test_exact_workspace(case, regions, itemsize, n):
    """Each staging array is one 64-byte-aligned region of n * itemsize bytes;
    63 more bytes let phase 2 align the first region at any address."""
    if case == "broadcast":
        (g, y, gi), _, _ = broadcast_call()
    elif case == "f64->f32":
        g, y = make([n], ACL_DOUBLE)[0], make([n], ACL_DOUBLE)[0]
        gi = make([n], ACL_FLOAT)[0]
    elif case == "f16+f32":
        g, y = make([n], ACL_FLOAT16)[0], make([n], ACL_FLOAT)[0]
        gi = make([n], ACL_FLOAT)[0]
    elif case == "strided-out":
        g, y = make([n], ACL_FLOAT)[0], make([n], ACL_FLOAT)[0]
        gi = make([n], ACL_FLOAT, stride=[2])[0]
    else:
        g, y = make([n], ACL_FLOAT16)[0], make([n], ACL_FLOAT)[0]
        gi = make([n], ACL_FLOAT, stride=[3])[0]
    status, size, _ = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert status == ACLNN_SUCCESS
    assert size == 63 + regions * _round64(n * itemsize)


@pytest.mark.parametrize("shift", range(0, 64, 7))
def test_exact_size_works_at_any_address(shift):
    (g, y, gi), (_, _, gi_buf), want = broadcast_call()
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    big = bytearray(size + 64)
    workspace = memoryview(big)[shift:shift + size]
    assert aclnnSigmoidBackward(workspace, size, executor, None) == ACLNN_SUCCESS
    assert_same(gi_buf.reshape(want.shape), want)


def test_phase2_allocates_no_scratch_of_that_size():
    """The staging arrays live in the caller's workspace."""
    rng = np.random.default_rng(1)
    g_vals = sample(np.float64, [512, 1], rng, "g")
    y_vals = sample(np.float64, [1, 512], rng, "y")
    g, y = make([512, 1], ACL_DOUBLE, g_vals)[0], make([1, 512], ACL_DOUBLE, y_vals)[0]
    gi, gi_buf = make([512, 512], ACL_FLOAT)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert size > 4 << 20
    workspace = np.empty(size, np.uint8)
    tracemalloc.start()
    try:
        assert aclnnSigmoidBackward(workspace, size, executor, None) == ACLNN_SUCCESS
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size // 8, (peak, size)
    assert_same(gi_buf.reshape(512, 512), expected(g_vals, y_vals, ACL_FLOAT))


# Checking: nothing is written on failure -----------------------------------

def _ro_bytes(n):
    return bytes(n)


@pytest.mark.parametrize("how", ["missing", "small-buffer", "small-size", "read-only",
                                 "read-only-ndarray", "not-a-buffer", "size-lies",
                                 "overlaps-gradInput", "bad-size-type", "negative-size"])
def test_bad_workspace_writes_nothing(how):
    (g, y, gi), (g_buf, y_buf, gi_buf), want = broadcast_call()
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert status == ACLNN_SUCCESS and size > 0
    sentinel = bytearray(b"\xa5" * (size + 64))
    ws, ws_size = memoryview(sentinel), size
    if how == "missing":
        ws = None
    elif how == "small-buffer":
        ws, ws_size = memoryview(sentinel)[:size - 1], size - 1
    elif how == "small-size":
        ws_size = size - 1
    elif how == "read-only":
        ws = _ro_bytes(size)
    elif how == "read-only-ndarray":
        ws = np.zeros(size, np.uint8)
        ws.flags.writeable = False
    elif how == "not-a-buffer":
        ws = [0] * size
    elif how == "size-lies":
        ws = memoryview(sentinel)[:size]
        ws_size = size + 1
    elif how == "overlaps-gradInput":
        ws = gi_buf
        ws_size = size
    elif how == "bad-size-type":
        ws_size = float(size)
    else:
        ws_size = -1
    before = [b.copy() for b in (g_buf, y_buf, gi_buf)]
    status = aclnnSigmoidBackward(ws, ws_size, executor, None)
    assert status == ACLNN_ERR_PARAM_INVALID
    assert "aclnnSigmoidBackward" in aclGetRecentErrMsg()
    assert sentinel == bytearray(b"\xa5" * (size + 64))
    for b, old in zip((g_buf, y_buf, gi_buf), before, strict=True):
        assert np.array_equal(b, old)
    # Nothing ran, so the single-use executor is still good.
    assert aclnnSigmoidBackward(bytearray(size), size, executor, None) == ACLNN_SUCCESS
    assert_same(gi_buf.reshape(want.shape), want)


def test_failing_workspace_export_is_named():
    """A released memoryview (or a closed mmap) as the workspace: a status and
    a message naming the workspace, and the executor stays usable."""
    (g, y, gi), (g_buf, y_buf, gi_buf), want = broadcast_call()
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    released = released_memoryview()
    assert aclnnSigmoidBackward(released, size, executor, None) == ACLNN_ERR_PARAM_INVALID
    assert aclGetRecentErrMsg() == ("aclnnSigmoidBackward: workspace: cannot read the buffer "
                                    "of a memoryview: operation forbidden on released "
                                    "memoryview object")
    assert np.all(gi_buf == -1)
    assert aclnnSigmoidBackward(bytearray(size), size, executor, None) == ACLNN_SUCCESS
    assert_same(gi_buf.reshape(want.shape), want)


def test_null_executor():
    assert aclnnSigmoidBackward(None, 0, None, None) == ACLNN_ERR_PARAM_NULLPTR
    assert "executor is null" in aclGetRecentErrMsg()
    assert aclnnSigmoidBackward(None, 0, "executor", None) == ACLNN_ERR_PARAM_INVALID


# Executors --------------------------------------------------------------------

def test_single_use():
    rng = np.random.default_rng(2)
    g_vals, y_vals = sample(np.float32, [5], rng, "g"), sample(np.float32, [5], rng, "y")
    g, g_buf = make([5], ACL_FLOAT, g_vals)
    y = make([5], ACL_FLOAT, y_vals)[0]
    gi, gi_buf = make([5], ACL_FLOAT)
    status, _, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_SUCCESS
    first = gi_buf.copy()
    g_buf[:] = 42
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_ERR_PARAM_INVALID
    assert "single use" in aclGetRecentErrMsg()
    assert np.array_equal(gi_buf, first)   # the second run wrote nothing
    # It released itself: it cannot be made repeatable or destroyed any more.
    assert aclSetAclOpExecutorRepeatable(executor) == ACLNN_ERR_PARAM_INVALID
    assert aclDestroyAclOpExecutor(executor) == ACLNN_ERR_PARAM_INVALID
    assert "released" in aclGetRecentErrMsg()


def test_repeatable_rerun_reads_current_contents():
    rng = np.random.default_rng(3)
    (g, y, gi), (g_buf, y_buf, gi_buf), want = broadcast_call(rng)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS
    workspace = bytearray(size)
    for _ in range(3):
        g_buf[:] = sample(np.float32, g_buf.shape, rng, "g")
        y_buf[:] = sample(np.float32, y_buf.shape, rng, "y")
        assert aclnnSigmoidBackward(workspace, size, executor, None) == ACLNN_SUCCESS
        want = expected(g_buf.reshape(1, 4, 1, 1), y_buf.reshape(1, 1, 4, 4), ACL_FLOAT)
        assert_same(gi_buf.reshape(1, 4, 4, 4), want)
    assert aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS
    assert aclnnSigmoidBackward(workspace, size, executor, None) == ACLNN_ERR_PARAM_INVALID
    assert "destroyed" in aclGetRecentErrMsg()
    assert aclDestroyAclOpExecutor(executor) == ACLNN_ERR_PARAM_INVALID
    assert aclSetAclOpExecutorRepeatable(executor) == ACLNN_ERR_PARAM_INVALID


def test_null_executor_to_repeatable_and_destroy():
    assert aclSetAclOpExecutorRepeatable(None) == ACLNN_ERR_INNER_NULLPTR
    assert aclDestroyAclOpExecutor(None) == ACLNN_ERR_INNER_NULLPTR
    assert aclGetRecentErrMsg().count("null") == 2
    assert aclSetAclOpExecutorRepeatable(object()) == ACLNN_ERR_PARAM_INVALID
    assert aclDestroyAclOpExecutor(object()) == ACLNN_ERR_PARAM_INVALID


def test_destroy_unused_single_use_executor():
    g, y, gi = (make([3], ACL_FLOAT)[0] for _ in range(3))
    _, _, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_ERR_PARAM_INVALID


def test_executor_keeps_its_memory_alive():
    """Nothing the executor uses can be freed under it, even once the caller
    dropped the arrays and destroyed the tensors."""
    rng = np.random.default_rng(4)
    g_vals, y_vals = sample(np.float32, [6], rng, "g"), sample(np.float32, [6], rng, "y")
    g_buf, y_buf = g_vals.copy(), y_vals.copy()
    gi_buf = np.zeros(6, np.float32)
    result = gi_buf.ctypes.data
    tensors = [aclCreateTensor([6], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [6], b)
               for b in (g_buf, y_buf, gi_buf)]
    alive = [weakref.ref(b) for b in (g_buf, y_buf, gi_buf)]
    status, _, executor = aclnnSigmoidBackwardGetWorkspaceSize(*tensors)
    assert aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS
    for t in tensors:
        assert aclDestroyTensor(t) == ACLNN_SUCCESS
    keep_reading = gi_buf.view()   # our own way to read the result later
    del g_buf, y_buf, gi_buf, tensors
    gc.collect()
    assert all(ref() is not None for ref in alive)
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_SUCCESS
    assert keep_reading.ctypes.data == result
    assert_same(keep_reading, expected(g_vals, y_vals, ACL_FLOAT))
    assert aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS
    del executor, keep_reading
    gc.collect()
    assert all(ref() is None for ref in alive)


def test_bytearray_cannot_be_resized_under_a_tensor():
    mem = bytearray(16)
    t = aclCreateTensor([4], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [4], mem)
    with pytest.raises(BufferError):
        mem.extend(b"1234")
    assert aclDestroyTensor(t) == ACLNN_SUCCESS
    del t
    gc.collect()
    mem.extend(b"1234")   # released with the tensor
