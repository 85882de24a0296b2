"""aclnn with hostile inputs: objects whose buffer export fails or whose
memory is gone, and descriptors that lie, give a status and a message,
never a crash."""
import mmap
import sys
import threading

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from sigmoid_backward.aclnn import (
    ACL_DOUBLE,
    ACL_FLOAT,
    ACL_FORMAT_ND,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_SUCCESS,
    aclCreateTensor,
    aclDestroyTensor,
    aclGetRecentErrMsg,
    aclnnSigmoidBackward,
    aclnnSigmoidBackwardGetWorkspaceSize,
    aclrtCreateStream,
    aclrtDestroyStream,
    aclrtSynchronizeStream,
    check,
    tensor_from_array,
)

from aclnn_support import clean_aclnn_state, expected, make, run, sample  # noqa: F401 (autouse)
from helpers import WAIT, assert_same, zero_strided
from hostile import (
    ArrayInterfaceRaises,
    ArrayRaises,
    BufferRaises,
    DLPackRaises,
    closed_mmap,
    released_memoryview,
    released_pickle_buffer,
)

P1, P2 = aclnnSigmoidBackwardGetWorkspaceSize, aclnnSigmoidBackward


# --- hostile inputs ----------------------------------------------------------

@pytest.mark.parametrize("dims, stride, storage, words", [
    ([2 ** 32, 2 ** 32], [0, 0], [1], "element count of view_dims [4294967296, 4294967296]"),
    ([2 ** 31, 2 ** 31], [0, 0], [1], "byte size of view_dims"),
    ([4], [1], [2 ** 32, 2 ** 32], "element count of storage_dims"),
    ([4], [1], [2 ** 31, 2 ** 31], "byte size of storage_dims"),
    ([3, 2], [2 ** 62, 1], [6], "the last element the view reaches"),
    ([2 ** 64 - 1], [1], [4], "view_dims[0] = 18446744073709551615 overflows int64"),
])
def test_dims_whose_product_overflows_int64(dims, stride, storage, words):
    """Products are taken in Python integers and held to C's int64."""
    assert aclCreateTensor(dims, ACL_FLOAT, stride, 0, ACL_FORMAT_ND, storage,
                           bytearray(64)) is None
    message = aclGetRecentErrMsg()
    assert message.startswith("aclCreateTensor: ") and words in message, message


def test_huge_broadcasts_are_refused_or_planned_without_allocating():
    # Each input is a valid tensor; their broadcast has 2**64 elements.
    g = tensor_from_array(zero_strided((2 ** 32, 1), writeable=True))
    y = tensor_from_array(zero_strided((1, 2 ** 32), writeable=True))
    gi = tensor_from_array(zero_strided((2 ** 32, 1), writeable=True))
    assert P1(g, y, gi) == (ACLNN_ERR_PARAM_INVALID, 0, None)
    assert "broadcast to shape [4294967296, 4294967296]" in aclGetRecentErrMsg()
    # 2**60 elements fit in int64: phase 1 plans 2**63 + 63 bytes of staging,
    # and phase 2 refuses any smaller workspace before touching memory.
    storage = np.full(1, 7, np.float32)
    huge_out = as_strided(storage, shape=(2 ** 30, 2 ** 30), strides=(0, 0))
    g = tensor_from_array(zero_strided((2 ** 30, 1), writeable=True))
    y = tensor_from_array(zero_strided((1, 2 ** 30), writeable=True))
    status, size, executor = P1(g, y, tensor_from_array(huge_out))
    assert (status, size) == (ACLNN_SUCCESS, 2 ** 63 + 63)
    assert P2(bytearray(1 << 16), 1 << 16, executor, None) == ACLNN_ERR_PARAM_INVALID
    assert "smaller than the 9223372036854775871 bytes" in aclGetRecentErrMsg()
    assert P2(None, size, executor, None) == ACLNN_ERR_PARAM_INVALID
    assert "workspace is null" in aclGetRecentErrMsg()
    assert storage[0] == 7


@pytest.mark.parametrize("kwargs, words", [
    ({"stride": [-1]}, "stride[0] is negative (-1)"),
    ({"stride": [np.int64(-1)]}, "stride[0] is negative (-1)"),
    ({"offset": -1}, "offset is negative (-1)"),
    ({"dims": [-4]}, "view_dims[0] is negative (-4)"),
    ({"storage": [-4]}, "storage_dims[0] is negative (-4)"),
])
def test_negative_strides_and_offsets(kwargs, words):
    """C walks a view backwards with a negative stride; CANN's descriptors
    cannot, and aclCreateTensor says so."""
    args = {"dims": [4], "stride": [1], "offset": 3, "storage": [8], **kwargs}
    assert aclCreateTensor(args["dims"], ACL_FLOAT, args["stride"], args["offset"],
                           ACL_FORMAT_ND, args["storage"], bytearray(32)) is None
    assert aclGetRecentErrMsg() == f"aclCreateTensor: {words}"


@pytest.mark.parametrize("view", [np.arange(8.0)[::-1], np.arange(8.0).reshape(2, 4)[:, ::-2]],
                         ids=["reversed", "reversed-columns"])
def test_negative_strided_arrays(view):
    with pytest.raises(ValueError, match=r"^arr has strides .*non-negative multiples"):
        tensor_from_array(view)
    # What the message suggests gives the reference result.
    gi, buf = make(list(view.shape), ACL_DOUBLE)
    run(tensor_from_array(np.ascontiguousarray(view)), tensor_from_array(view.copy()), gi)
    assert_same(buf.reshape(view.shape), expected(view, view, ACL_DOUBLE))


NOT_A_BUFFER = "must export the buffer protocol (a NumPy array, bytearray, memoryview"
# What each hostile object gives, for an argument called NAME.
HOSTILE = [
    # Only the buffer protocol is read: the other protocols are never called.
    (ArrayInterfaceRaises, f"NAME {NOT_A_BUFFER}"),
    (ArrayRaises, f"NAME {NOT_A_BUFFER}"),
    (DLPackRaises, f"NAME {NOT_A_BUFFER}"),
    (BufferRaises, "NAME: cannot read the buffer of a BufferRaises: "
                   + ("export failed" if sys.version_info >= (3, 12) else "memoryview: ")),
    (released_memoryview, "NAME: cannot read the buffer of a memoryview: "
                          "operation forbidden on released memoryview object"),
    (released_pickle_buffer, "NAME: cannot read the buffer of a PickleBuffer: "
                             "operation forbidden on released PickleBuffer object"),
    (closed_mmap, "NAME: cannot read the buffer of a mmap: mmap closed or invalid"),
]


@pytest.mark.parametrize("make_hostile, words", HOSTILE,
                         ids=lambda h: getattr(h, "__name__", None))
def test_objects_whose_buffer_export_raises(make_hostile, words):
    assert aclCreateTensor([4], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [4], make_hostile()) is None
    message = aclGetRecentErrMsg()
    assert message.startswith("aclCreateTensor: " + words.replace("NAME", "tensor_data"))
    # As the workspace: a status, nothing written, the executor still usable.
    rng = np.random.default_rng(5)
    g_vals, y_vals = sample(np.float32, [4, 4], rng, "g"), sample(np.float32, [4], rng, "y")
    g, y = make([4, 4], ACL_FLOAT, g_vals)[0], make([4], ACL_FLOAT, y_vals)[0]
    gi, buf = make([4, 4], ACL_FLOAT)
    status, size, executor = P1(g, y, gi)
    assert status == ACLNN_SUCCESS and size > 0
    assert P2(make_hostile(), size, executor, None) == ACLNN_ERR_PARAM_INVALID
    message = aclGetRecentErrMsg()
    assert message.startswith("aclnnSigmoidBackward: " + words.replace("NAME", "workspace"))
    assert not buf.any()
    assert P2(bytearray(size), size, executor, None) == ACLNN_SUCCESS
    assert_same(buf.reshape(4, 4), expected(g_vals, y_vals, ACL_FLOAT))


def test_memoryview_released_after_creation():
    """The tensor holds its own export: the caller's view may be released."""
    rng = np.random.default_rng(6)
    g_vals, y_vals = sample(np.float32, [8], rng, "g"), sample(np.float32, [8], rng, "y")
    memory = bytearray(32)
    view = memoryview(memory)
    gi = aclCreateTensor([8], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [8], view)
    view.release()
    run(make([8], ACL_FLOAT, g_vals)[0], make([8], ACL_FLOAT, y_vals)[0], gi)
    assert_same(np.frombuffer(memory, np.float32), expected(g_vals, y_vals, ACL_FLOAT))


@pytest.mark.parametrize("where", ["default stream", "stream"])
def test_mmap_closed_and_bytearray_resized_after_creation(where):
    """Closing or resizing memory that a tensor, an executor or a queued
    launch uses raises BufferError, and the memory stays valid; once nothing
    uses it any more, both work."""
    rng = np.random.default_rng(7)
    g_vals, y_vals = sample(np.float32, [4, 4], rng, "g"), sample(np.float32, [1, 4], rng, "y")
    g_memory, gi_memory = bytearray(g_vals.tobytes()), mmap.mmap(-1, 64)
    g = aclCreateTensor([4, 4], ACL_FLOAT, [4, 1], 0, ACL_FORMAT_ND, [16], g_memory)
    gi = aclCreateTensor([4, 4], ACL_FLOAT, [4, 1], 0, ACL_FORMAT_ND, [16], gi_memory)
    y = make([1, 4], ACL_FLOAT, y_vals)[0]
    with pytest.raises(BufferError):
        g_memory.extend(b"1234")       # the tensor holds it
    status, size, executor = P1(g, y, gi)
    check(status)
    workspace = bytearray(size)
    for t in (g, gi):
        assert aclDestroyTensor(t) == ACLNN_SUCCESS
    with pytest.raises(BufferError):
        gi_memory.close()              # the executor holds it
    with pytest.raises(BufferError):
        g_memory.extend(b"1234")
    stream = aclrtCreateStream()[1] if where == "stream" else None
    gate = threading.Event()
    if stream is not None:
        assert stream._launch("hold", lambda: gate.wait(WAIT))  # keeps the launch queued
    assert P2(workspace, size, executor, stream) == ACLNN_SUCCESS
    if stream is not None:
        for resize in (gi_memory.close, lambda: g_memory.extend(b"1234"),
                       lambda: workspace.extend(b"1234")):
            with pytest.raises(BufferError):
                resize()               # the queued launch holds them
        gate.set()
        assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS
    assert_same(np.frombuffer(gi_memory, np.float32).reshape(4, 4),
                expected(g_vals, y_vals, ACL_FLOAT))
    # Run (and synchronized), its executor spent, its tensors destroyed:
    # nothing holds these buffers any more.
    g_memory.extend(b"1234")
    workspace.extend(b"1234")
    gi_memory.close()
    if stream is not None:
        assert aclrtDestroyStream(stream) == ACLNN_SUCCESS
