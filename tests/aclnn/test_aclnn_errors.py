"""aclGetRecentErrMsg: per-thread messages, newest first, and bounded for a
caller that checks statuses but never reads the messages."""
import threading
import tracemalloc

import numpy as np

from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import (
    ACL_FLOAT,
    ACL_FORMAT_ND,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    _errors,
    aclGetRecentErrMsg,
    aclnnSigmoidBackwardGetWorkspaceSize,
)

from aclnn_support import clean_aclnn_state, raw  # noqa: F401 (autouse)

KEPT = _errors.MAX_MESSAGES


def test_fifty_thousand_unread_failures_leave_a_bounded_message():
    tracemalloc.start()
    try:
        for _ in range(1_000):  # warm up: the per-thread state exists
            aclnnSigmoidBackwardGetWorkspaceSize(None, None, None)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(50_000):
            status, _, _ = aclnnSigmoidBackwardGetWorkspaceSize(None, None, None)
            assert status == ACLNN_ERR_PARAM_NULLPTR
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown   # unbounded, it grew by megabytes
    lines = aclGetRecentErrMsg().splitlines()
    assert len(lines) == KEPT + 1
    assert all("check 1 (null tensor)" in line for line in lines[:-1])
    assert lines[-1] == (f"({51_000 - KEPT} older messages dropped: only the {KEPT} "
                         f"newest are kept)")
    assert aclGetRecentErrMsg() == ""          # read, and so cleared


def test_the_newest_are_kept_newest_first():
    for i in range(100):
        _errors.record(f"message {i}")
    lines = aclGetRecentErrMsg().splitlines()
    assert lines[:-1] == [f"message {i}" for i in range(99, 99 - KEPT, -1)]
    assert lines[-1].startswith(f"({100 - KEPT} older messages dropped")
    # Under the bound nothing is dropped, and no count is added.
    for i in range(3):
        _errors.record(f"again {i}")
    assert aclGetRecentErrMsg() == "again 2\nagain 1\nagain 0"


def test_a_huge_message_is_cut():
    dims = [1] * 20_000   # phase 1's message lists every dim of the shape
    many = aclnn.aclCreateTensor(dims, ACL_FLOAT, dims, 0, ACL_FORMAT_ND, [1],
                                 np.zeros(1, np.float32))
    assert many is not None, aclGetRecentErrMsg()
    status, _, _ = aclnnSigmoidBackwardGetWorkspaceSize(many, raw([1], ACL_FLOAT),
                                                         raw([1], ACL_FLOAT))
    assert status == ACLNN_ERR_PARAM_INVALID
    message = aclGetRecentErrMsg()
    assert message.startswith("aclnnSigmoidBackwardGetWorkspaceSize: check 3 (dims)")
    assert len(message) < _errors.MAX_MESSAGE_CHARS + 100
    assert message.endswith("more characters cut)")


def test_messages_are_per_thread():
    """Each thread reads its own failures, from a failing API call as from
    the recorder, and keeps only its newest KEPT."""
    _errors.record("main thread")
    assert aclnn.aclCreateTensor([1], aclnn.ACL_FLOAT, [], 0, 2, [1], bytearray(4)) is None
    seen = []

    def other():
        seen.append(aclGetRecentErrMsg())
        assert aclnn.aclCreateTensor([2], aclnn.ACL_FLOAT, [], 0, 2, [1], bytearray(4)) is None
        seen.append(aclGetRecentErrMsg())
        for _ in range(KEPT + 5):
            _errors.record("other thread")
        seen.append(len(aclGetRecentErrMsg().splitlines()))
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen[0] == "" and seen[2] == KEPT + 1          # a thread with no error yet
    assert "[2]" in seen[1] and "[1]" not in seen[1]
    mine = aclGetRecentErrMsg()
    assert "main thread" in mine and "[1]" in mine and "[2]" not in mine
