"""Streams: launches queue in order on a worker thread, overlap with Python
and with other streams, and report failures at synchronize.

``stream._launch(name, fn)`` (the hook phase 2 itself uses) queues a plain
function; the tests use it to hold a stream at a known point, so nothing
depends on timing.
"""
import gc
import mmap
import threading
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

from aclnn_support import STREAM_WAIT as WAIT
from aclnn_support import clean_aclnn_state, expected, hold, make, sample  # noqa: F401 (autouse)
from helpers import assert_same, run_threads


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
