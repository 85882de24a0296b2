"""Streams: synchronize waits for the launches made before it, and no
others, whatever other threads launch; the queue of a stream is bounded,
and a launch onto a full stream waits for room."""
import threading
import time

from sigmoid_backward.aclnn import (
    ACLNN_ERR_RUNTIME_ERROR,
    ACLNN_SUCCESS,
    _stream,
    aclGetRecentErrMsg,
    aclrtCreateStream,
    aclrtDestroyStream,
    aclrtSynchronizeStream,
)

from aclnn_support import STREAM_WAIT as WAIT
from aclnn_support import clean_aclnn_state, hold  # noqa: F401 (autouse)

# --- synchronize waits for the earlier launches only -------------------------

def _waiting_on(state, count):
    """Wait until ``count`` threads wait on the stream's condition (the
    worker is held, so they are synchronizes or blocked launches)."""
    for _ in range(WAIT * 1000):
        if len(state.cond._waiters) >= count:
            return
        time.sleep(0.001)
    raise AssertionError("nobody waits on the stream")


def test_synchronize_under_concurrent_launching_returns(stream):
    """Another thread keeps the queue full of launches: the synchronize
    returns once the launches made before it have run (waiting for an empty
    queue never returned)."""
    stop = threading.Event()
    launched = threading.Event()

    def keep_launching():
        while not stop.is_set():
            assert stream._launch("busy", lambda: time.sleep(0.0002))
            launched.set()
    launcher = threading.Thread(target=keep_launching)
    launcher.start()
    try:
        assert launched.wait(WAIT)
        mine = []
        assert stream._launch("mine", lambda: mine.append(1))
        done = []
        syncer = threading.Thread(target=lambda: done.append(aclrtSynchronizeStream(stream)))
        syncer.start()
        syncer.join(WAIT)
        assert done == [ACLNN_SUCCESS] and mine == [1]
        assert launcher.is_alive()          # still launching all along
    finally:
        stop.set()
        launcher.join(WAIT)


def test_synchronize_does_not_wait_for_later_launches(stream):
    """Deterministically: a launch made while a synchronize waits (here one
    that blocks) is not waited for."""
    gate, later_gate = hold(stream), threading.Event()
    ran = []
    assert stream._launch("before", lambda: ran.append("before"))
    result = []
    syncer = threading.Thread(target=lambda: result.append(aclrtSynchronizeStream(stream)))
    syncer.start()
    _waiting_on(stream._state, 1)
    assert stream._launch("later", lambda: (ran.append("later"), later_gate.wait(WAIT)))
    gate.set()
    syncer.join(WAIT)
    assert result == [ACLNN_SUCCESS] and ran[0] == "before"
    later_gate.set()
    assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS and ran == ["before", "later"]


def test_a_failure_is_reported_by_the_synchronize_that_waited_for_it(stream):
    """A failure, then a launch made while the synchronize waits: the
    synchronize reports the failure; the later launch either ran or was
    skipped, and then the next synchronize reports that skip."""
    gate = hold(stream)

    def fail():
        raise RuntimeError("device fault")
    assert stream._launch("failing", fail)
    assert stream._launch("skipped", lambda: None)
    result = []
    syncer = threading.Thread(target=lambda: result.append(
        (aclrtSynchronizeStream(stream), aclGetRecentErrMsg())))
    syncer.start()
    _waiting_on(stream._state, 1)
    ran = []
    assert stream._launch("later", lambda: ran.append(1))
    gate.set()
    syncer.join(WAIT)
    status, message = result[0]
    assert status == ACLNN_ERR_RUNTIME_ERROR
    assert "failing failed on the stream: RuntimeError: device fault" in message
    assert message.endswith("(1 later launch skipped)")
    status = aclrtSynchronizeStream(stream)
    if ran:
        assert status == ACLNN_SUCCESS
    else:
        assert status == ACLNN_ERR_RUNTIME_ERROR
        assert "1 launch skipped after an earlier failure: failing failed" in \
            aclGetRecentErrMsg()
    assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS


def test_skips_up_to_the_synchronize_are_counted_in_one_run(stream):
    gate = hold(stream)

    def fail():
        raise RuntimeError("device fault")
    assert stream._launch("failing", fail)
    for _ in range(5):
        assert stream._launch("skipped", lambda: None)
    gate.set()
    assert aclrtSynchronizeStream(stream) == ACLNN_ERR_RUNTIME_ERROR
    assert aclGetRecentErrMsg().endswith("device fault (5 later launches skipped)")
    assert stream._state.reports == [] and stream._state.failing is None


# --- the queue is bounded ----------------------------------------------------

def test_a_launch_onto_a_full_stream_blocks_until_there_is_room(stream, monkeypatch):
    monkeypatch.setattr(_stream, "MAX_QUEUED", 3)
    gate = hold(stream)
    ran = []
    for i in range(3):
        assert stream._launch("queued", lambda i=i: ran.append(i))
    returned = []
    blocked = threading.Thread(target=lambda: returned.append(
        stream._launch("blocked", lambda: ran.append(3))))
    blocked.start()
    _waiting_on(stream._state, 1)
    assert returned == [] and len(stream._state.tasks) == 3
    gate.set()
    blocked.join(WAIT)
    assert returned == [True]
    assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS and ran == [0, 1, 2, 3]


def test_destroy_releases_a_blocked_launch(monkeypatch):
    monkeypatch.setattr(_stream, "MAX_QUEUED", 1)
    status, s = aclrtCreateStream()
    gate = hold(s)
    assert s._launch("queued", lambda: None)
    returned = []
    blocked = threading.Thread(target=lambda: returned.append(s._launch("blocked", print)))
    blocked.start()
    _waiting_on(s._state, 1)
    threading.Timer(0.05, gate.set).start()
    assert aclrtDestroyStream(s) == ACLNN_SUCCESS
    blocked.join(WAIT)
    assert returned == [False]
