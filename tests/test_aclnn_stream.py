"""Streams: launches queue in order on a worker thread, overlap with Python
and with other streams, and report failures at synchronize.

``stream._launch(name, fn)`` (the hook phase 2 itself uses) queues a plain
function; the tests use it to hold a stream at a known point, so nothing
depends on timing.
"""
import gc
import mmap
import threading
import time
import weakref

import numpy as np
import pytest

from sigmoid_backward.aclnn import (
    ACL_DOUBLE,
    ACL_FLOAT,
    ACL_FORMAT_ND,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_ERR_RUNTIME_ERROR,
    ACLNN_SUCCESS,
    _plan,
    _stream,
    aclCreateTensor,
    aclDestroyTensor,
    aclGetRecentErrMsg,
    aclnnSigmoidBackward,
    aclnnSigmoidBackwardGetWorkspaceSize,
    aclrtCreateStream,
    aclrtDestroyStream,
    aclrtSynchronizeStream,
    check,
)

from aclnn_support import clean_aclnn_state, expected, make, sample  # noqa: F401
from helpers import assert_same, run_threads

WAIT = 30  # seconds: a bound for a hung test, never reached when all is well



@pytest.fixture
def stream():
    status, s = aclrtCreateStream()
    assert status == ACLNN_SUCCESS
    yield s
    if not s.destroyed:
        aclrtDestroyStream(s)


def hold(stream):
    """Block ``stream`` until the returned event is set."""
    gate, started = threading.Event(), threading.Event()

    def blocked():
        started.set()
        assert gate.wait(WAIT)
    assert stream._launch("hold", blocked)
    assert started.wait(WAIT)
    return gate


def launch(g_vals, y_vals, stream, gi_type=ACL_FLOAT):
    """Phase 1 and a phase-2 launch; returns the gradInput buffer."""
    g = make(g_vals.shape, ACL_FLOAT, g_vals)[0]
    y = make(y_vals.shape, ACL_FLOAT, y_vals)[0]
    gi, buf = make(np.broadcast_shapes(g_vals.shape, y_vals.shape), gi_type)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    check(status)
    check(aclnnSigmoidBackward(bytearray(size) if size else None, size, executor, stream))
    return buf


def test_lifecycle():
    status, s = aclrtCreateStream()
    assert status == ACLNN_SUCCESS and not s.destroyed
    assert aclrtSynchronizeStream(s) == ACLNN_SUCCESS
    assert aclrtDestroyStream(s) == ACLNN_SUCCESS
    assert not s._thread.is_alive()
    assert aclrtDestroyStream(s) == ACLNN_ERR_PARAM_INVALID
    assert aclrtSynchronizeStream(s) == ACLNN_ERR_PARAM_INVALID
    assert "destroyed" in aclGetRecentErrMsg()
    assert aclrtSynchronizeStream(None) == ACLNN_SUCCESS     # the default stream
    assert aclrtDestroyStream(None) == ACLNN_ERR_PARAM_NULLPTR
    assert aclrtSynchronizeStream("stream") == ACLNN_ERR_PARAM_INVALID
    assert aclrtDestroyStream(42) == ACLNN_ERR_PARAM_INVALID


@pytest.fixture
def kernel_threads(monkeypatch):
    """The thread of every kernel call the plan makes, in order."""
    threads = []
    real_apply = _plan.compute_into

    def spy(*args):
        threads.append(threading.get_ident())
        return real_apply(*args)
    monkeypatch.setattr(_plan, "compute_into", spy)
    return threads


def test_launch_is_asynchronous_and_runs_on_the_worker(stream, kernel_threads):
    rng = np.random.default_rng(0)
    g_vals, y_vals = sample(np.float32, [16], rng, "g"), sample(np.float32, [16], rng, "y")
    gate = hold(stream)
    buf = launch(g_vals, y_vals, stream)
    assert np.all(buf == 0)            # queued behind the hold: not run yet
    gate.set()
    assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS
    assert_same(buf, expected(g_vals, y_vals, ACL_FLOAT))
    assert kernel_threads == [stream._thread.ident] != [threading.get_ident()]


def test_default_stream_is_synchronous(kernel_threads):
    rng = np.random.default_rng(1)
    g_vals, y_vals = sample(np.float32, [4], rng, "g"), sample(np.float32, [4], rng, "y")
    buf = launch(g_vals, y_vals, None)
    assert_same(buf, expected(g_vals, y_vals, ACL_FLOAT))   # before any synchronize
    assert kernel_threads == [threading.get_ident()]


def test_launch_order(stream):
    """Launches writing the same gradInput: the last launched wins."""
    rng = np.random.default_rng(2)
    gi, buf = make([32], ACL_FLOAT)
    gate = hold(stream)
    inputs = []
    for _ in range(5):
        g_vals, y_vals = sample(np.float32, [32], rng, "g"), sample(np.float32, [32], rng, "y")
        g, y = make([32], ACL_FLOAT, g_vals)[0], make([32], ACL_FLOAT, y_vals)[0]
        status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
        check(aclnnSigmoidBackward(None, 0, executor, stream))
        inputs.append((g_vals, y_vals))
    order = []
    assert stream._launch("record", lambda: order.append(buf.copy()))
    gate.set()
    check(aclrtSynchronizeStream(stream))
    assert_same(buf, expected(*inputs[-1], ACL_FLOAT))
    assert_same(order[0], buf)


def test_chain(stream):
    """op2 reads op1's gradInput as its gradOutput, queued without a sync."""
    rng = np.random.default_rng(3)
    g_vals = sample(np.float64, [4, 4], rng, "g")
    y1, y2 = sample(np.float64, [4, 4], rng, "y"), sample(np.float64, [1, 4], rng, "y")
    g = make([4, 4], ACL_DOUBLE, g_vals)[0]
    t1 = make([4, 4], ACL_DOUBLE, y1)[0]
    t2 = make([1, 4], ACL_DOUBLE, y2)[0]
    mid, _ = make([4, 4], ACL_DOUBLE)
    out, out_buf = make([4, 4], ACL_FLOAT)
    gate = hold(stream)
    for a, b, c in ((g, t1, mid), (mid, t2, out)):
        status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(a, b, c)
        check(status)
        check(aclnnSigmoidBackward(bytearray(size) if size else None, size, executor, stream))
    gate.set()
    check(aclrtSynchronizeStream(stream))
    first = expected(g_vals, y1, ACL_DOUBLE)
    assert_same(out_buf.reshape(4, 4), expected(first, y2, ACL_FLOAT))


def test_streams_overlap(stream):
    """A held stream blocks neither Python nor another stream."""
    rng = np.random.default_rng(4)
    status, other = aclrtCreateStream()
    try:
        gate = hold(stream)
        g1, y1 = sample(np.float32, [8], rng, "g"), sample(np.float32, [8], rng, "y")
        g2, y2 = sample(np.float32, [8], rng, "g"), sample(np.float32, [8], rng, "y")
        held = launch(g1, y1, stream)
        free = launch(g2, y2, other)
        assert aclrtSynchronizeStream(other) == ACLNN_SUCCESS
        assert_same(free, expected(g2, y2, ACL_FLOAT))
        assert np.all(held == 0)        # still waiting on its own stream
        gate.set()
        assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS
        assert_same(held, expected(g1, y1, ACL_FLOAT))
    finally:
        aclrtDestroyStream(other)


def test_concurrent_launchers(stream):
    """Threads launching onto one stream at once: every launch runs."""
    rng = np.random.default_rng(5)
    cases = [(sample(np.float32, [64], rng, "g"), sample(np.float32, [64], rng, "y"))
             for _ in range(8)]
    results = [None] * len(cases)

    def worker(i):
        results[i] = launch(*cases[i], stream)
    assert run_threads(worker, len(cases), timeout=WAIT) == []
    check(aclrtSynchronizeStream(stream))
    for (g, y), buf in zip(cases, results, strict=True):
        assert_same(buf, expected(g, y, ACL_FLOAT))


def test_async_failure_reported_by_synchronize(stream, monkeypatch):
    rng = np.random.default_rng(6)
    g_vals, y_vals = sample(np.float32, [4], rng, "g"), sample(np.float32, [4], rng, "y")
    real_apply = _plan.compute_into
    calls = []

    def faulty(*args):
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError("device fault")
        return real_apply(*args)
    monkeypatch.setattr(_plan, "compute_into", faulty)
    gate = hold(stream)
    launch(g_vals, y_vals, stream)                # fails on the worker
    skipped = launch(g_vals, y_vals, stream)      # skipped after the failure
    assert aclGetRecentErrMsg() == ""             # the launches themselves succeeded
    gate.set()
    assert aclrtSynchronizeStream(stream) == ACLNN_ERR_RUNTIME_ERROR
    message = aclGetRecentErrMsg()
    assert "device fault" in message and "1 later launch skipped" in message
    assert np.all(skipped == 0) and len(calls) == 1
    # Reported once; the stream works again.
    assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS
    buf = launch(g_vals, y_vals, stream)
    check(aclrtSynchronizeStream(stream))
    assert_same(buf, expected(g_vals, y_vals, ACL_FLOAT))


def test_unreported_failure_reported_by_destroy(monkeypatch):
    def faulty(*args):
        raise RuntimeError("late fault")
    monkeypatch.setattr(_plan, "compute_into", faulty)
    status, s = aclrtCreateStream()
    launch(np.ones(2, np.float32), np.ones(2, np.float32), s)
    assert aclrtDestroyStream(s) == ACLNN_ERR_RUNTIME_ERROR
    assert "late fault" in aclGetRecentErrMsg()


def test_failure_on_the_default_stream(monkeypatch):
    def faulty(*args):
        raise RuntimeError("sync fault")
    monkeypatch.setattr(_plan, "compute_into", faulty)
    g, y, gi = (make([3], ACL_FLOAT)[0] for _ in range(3))
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_ERR_RUNTIME_ERROR
    assert "sync fault" in aclGetRecentErrMsg()


def test_launch_on_destroyed_stream_keeps_the_executor():
    status, s = aclrtCreateStream()
    assert aclrtDestroyStream(s) == ACLNN_SUCCESS
    rng = np.random.default_rng(7)
    g_vals, y_vals = sample(np.float32, [3], rng, "g"), sample(np.float32, [3], rng, "y")
    g, y = make([3], ACL_FLOAT, g_vals)[0], make([3], ACL_FLOAT, y_vals)[0]
    gi, buf = make([3], ACL_FLOAT)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    assert aclnnSigmoidBackward(None, 0, executor, s) == ACLNN_ERR_PARAM_INVALID
    assert "destroyed" in aclGetRecentErrMsg()
    assert np.all(buf == 0)
    assert aclnnSigmoidBackward(None, 0, executor, None) == ACLNN_SUCCESS
    assert_same(buf, expected(g_vals, y_vals, ACL_FLOAT))
    assert aclnnSigmoidBackward(None, 0, executor, "stream") == ACLNN_ERR_PARAM_INVALID


def test_destroy_waits_for_queued_work(stream):
    rng = np.random.default_rng(8)
    g_vals, y_vals = sample(np.float32, [8], rng, "g"), sample(np.float32, [8], rng, "y")
    gate = hold(stream)
    buf = launch(g_vals, y_vals, stream)
    threading.Timer(0.05, gate.set).start()
    assert aclrtDestroyStream(stream) == ACLNN_SUCCESS
    assert_same(buf, expected(g_vals, y_vals, ACL_FLOAT))


def test_synchronize_releases_what_the_launch_held(stream):
    """After a synchronize the stream keeps nothing of a finished launch: the
    workspace can be resized, an mmap gradInput closed, the buffers freed."""
    rng = np.random.default_rng(9)
    g_vals, y_vals = sample(np.float32, [4, 4], rng, "g"), sample(np.float32, [1, 4], rng, "y")
    g, g_buf = make([4, 4], ACL_FLOAT, g_vals)
    y = make([1, 4], ACL_FLOAT, y_vals)[0]
    memory = mmap.mmap(-1, 64)
    gi = aclCreateTensor([4, 4], ACL_FLOAT, [4, 1], 0, ACL_FORMAT_ND, [16], memory)
    status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    workspace = bytearray(size)
    check(aclnnSigmoidBackward(workspace, size, executor, stream))
    for t in (g, y, gi):
        check(aclDestroyTensor(t))
    alive = weakref.ref(g_buf)
    del g, y, gi, executor, g_buf
    check(aclrtSynchronizeStream(stream))
    assert_same(np.frombuffer(memory, np.float32).reshape(4, 4),
                expected(g_vals, y_vals, ACL_FLOAT))
    workspace.extend(b"more")      # BufferError while anything still exports it
    memory.close()
    gc.collect()
    assert alive() is None


def test_forgotten_stream_stops_its_worker():
    status, s = aclrtCreateStream()
    thread = s._thread
    del s
    gc.collect()
    thread.join(WAIT)
    assert not thread.is_alive()


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
