"""Hardening of the aclnn path: fuzzing budget, streams and threads, leaks,
hostile inputs (Ctrl-C: test_aclnn_interrupts.py).

The descriptor fuzzing's strategies and properties are in aclnn_fuzzing.py,
which test_aclnn_fuzz.py runs with 300 examples per property in every run;
``python -m pytest --runslow`` (or ``-m slow``) adds a 10,000-example run of
each of the two properties here.
"""
import gc
import os
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sigmoid_backward.aclnn import (
    ACL_BF16,
    ACL_COMPLEX64,
    ACL_COMPLEX128,
    ACL_DOUBLE,
    ACL_FLOAT,
    ACL_FLOAT16,
    ACL_FORMAT_ND,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_SUCCESS,
    aclCreateTensor,
    aclDestroyAclOpExecutor,
    aclDestroyTensor,
    aclGetRecentErrMsg,
    aclnnSigmoidBackward,
    aclnnSigmoidBackwardGetWorkspaceSize,
    aclrtCreateStream,
    aclrtDestroyStream,
    aclrtSynchronizeStream,
    aclSetAclOpExecutorRepeatable,
    check,
)

import aclnn_fuzzing as fuzz
from aclnn_support import NP_OF, clean_aclnn_state, expected, gather, make, run, sample  # noqa: F401
from helpers import WAIT, assert_same, rss_bytes, run_threads
from hostile import (
    released_memoryview,
)

P1, P2 = aclnnSigmoidBackwardGetWorkspaceSize, aclnnSigmoidBackward


# --- fuzzing: the long budget --------------------------------------------------

SLOW = settings(fuzz.FUZZ, max_examples=10_000)


@pytest.mark.slow
@SLOW
@given(fuzz.descriptors())
def test_fuzz_create_tensor_10000_examples(case):
    fuzz.check_create_tensor(*case)


@pytest.mark.slow
@SLOW
@given(st.data())
def test_fuzz_both_phases_10000_examples(data):
    fuzz.check_both_phases(data.draw)


# --- concurrency: 4 streams, each fed by its own thread ----------------------

CHAIN = 30
ROWS, COLS = 64, 1024
# Per stream, the chain's dtype and its launches' layout.  Broadcast and
# strided launches stage through one workspace that all of that stream's
# launches share (they run one after another), so a launch run out of order
# or two at once would corrupt each other's staging.
STREAMS = [(ACL_FLOAT, "direct"), (ACL_FLOAT16, "broadcast y"), (ACL_DOUBLE, "strided"),
           (ACL_COMPLEX64, "broadcast y")]


def _chain(dtype, layout, rng):
    """CHAIN links: link i reads a[i] and y[i] and writes a[i + 1]."""
    shape = [ROWS, COLS]
    y_shape = [1, COLS] if layout == "broadcast y" else shape
    stride = [2 * COLS, 2] if layout == "strided" else [COLS, 1]
    a0 = sample(NP_OF[dtype], shape, rng, "g")
    # (1 - y) * y lies between -1.31 and -0.75: the values neither vanish nor blow up.
    ys = [rng.uniform(-0.75, -0.5, y_shape).astype(NP_OF[dtype]) for _ in range(CHAIN)]
    links = [make(shape, dtype, a0 if i == 0 else None, stride=stride, fill=np.nan)
             for i in range(CHAIN + 1)]
    return a0, ys, links, [make(y_shape, dtype, y)[0] for y in ys], stride


def test_4_streams_at_once_each_fed_by_its_own_thread():
    rng = np.random.default_rng(40)
    jobs = [_chain(dtype, layout, rng) for dtype, layout in STREAMS]
    start = threading.Barrier(len(jobs))
    workers = set()

    def feed(index):
        a0, ys, links, y_tensors, _ = jobs[index]
        status, stream = aclrtCreateStream()
        check(status)
        workers.add(stream._thread.ident)
        start.wait(WAIT)
        # Plan every link first (phase 1 reads no data), then queue them all
        # on one workspace, then synchronize once.
        plans = [P1(links[i][0], y_tensors[i], links[i + 1][0]) for i in range(CHAIN)]
        workspace = bytearray(max(size for _, size, _ in plans))
        for status, size, executor in plans:
            check(status)
            check(P2(workspace if size else None, size, executor, stream))
        check(aclrtSynchronizeStream(stream))
        check(aclrtDestroyStream(stream))

    assert run_threads(feed, len(jobs)) == []
    assert len(workers) == len(jobs)  # four streams, four workers
    for (dtype, _), (a0, ys, links, _, stride) in zip(STREAMS, jobs, strict=True):
        want = a0
        for i, y in enumerate(ys):
            want = expected(want, y, dtype)
            assert_same(gather(links[i + 1][1], [ROWS, COLS], stride, 0), want)
        assert np.isfinite(want).all() and np.median(abs(want)) > 0.1  # a meaningful chain


# --- concurrency: Python threads on the default stream -----------------------

SHAPE = [32, 256]
# name, gradOutput type, output type and dims, gradInput type, stride, offset
CASES = [
    ("direct", ACL_FLOAT, ACL_FLOAT, SHAPE, ACL_FLOAT, None, 0),
    ("float16 with a broadcast float32 row", ACL_FLOAT16, ACL_FLOAT, [1, 256], ACL_FLOAT,
     None, 0),
    ("float64 into a strided float32", ACL_DOUBLE, ACL_DOUBLE, SHAPE, ACL_FLOAT, [512, 2], 1),
    ("bfloat16", ACL_BF16, ACL_BF16, SHAPE, ACL_BF16, None, 0),
    ("complex128 in place", ACL_COMPLEX128, ACL_COMPLEX128, SHAPE, ACL_COMPLEX128, None, 0),
]


def test_python_threads_running_both_phases_on_the_default_stream():
    threads, calls = 6, 120
    rng = np.random.default_rng(41)
    values = [(sample(NP_OF[g_t], SHAPE, rng, "g"), sample(NP_OF[y_t], y_dims, rng, "y"))
              for _, g_t, y_t, y_dims, _, _, _ in CASES]
    wants = [expected(g, y, case[4]) for (g, y), case in zip(values, CASES, strict=True)]
    # The input tensors are shared by all threads (a descriptor is read-only),
    # except the in-place one's, which each thread makes over its own gradInput.
    shared = [(make(SHAPE, c[1], g)[0], make(c[3], c[2], y)[0])
              for c, (g, y) in zip(CASES, values, strict=True)]
    start = threading.Barrier(threads)

    def worker(index):
        outs = [make(SHAPE, c[4], stride=c[5], offset=c[6]) for c in CASES]
        repeatable = P1(*shared[0], outs[0][0])[2]
        check(aclSetAclOpExecutorRepeatable(repeatable))
        start.wait(WAIT)
        for i in range(calls):
            k = (index + i) % (len(CASES) + 2)
            if k == len(CASES):
                # A failing call: this thread's message, and only its own.
                bad = make([index + 1, 7], ACL_FLOAT)[0]
                assert P1(*shared[0], bad)[0] == ACLNN_ERR_PARAM_INVALID
                message = aclGetRecentErrMsg()
                assert f"(ACL_FLOAT, shape [{index + 1}, 7])" in message, message
                assert "\n" not in message, message
                continue
            if k == len(CASES) + 1:  # the repeatable executor, again
                k = 0
                outs[k][1][:] = 0
                check(P2(None, 0, repeatable, None))
            else:
                gi, buf = outs[k]
                g, y = shared[k]
                buf[:] = 0
                if CASES[k][0].endswith("in place"):
                    buf[:] = values[k][0].ravel()
                    g = gi
                run(g, y, gi)
            _, _, _, _, _, stride, offset = CASES[k]
            got = gather(outs[k][1], SHAPE, stride or [SHAPE[1], 1], offset)
            assert_same(got, wants[k])
        check(aclDestroyAclOpExecutor(repeatable))

    assert run_threads(worker, threads) == []


# --- leaks -------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_refcounts_and_memory_are_stable_over_100000_calls():
    g_buf = np.ones(4, np.float32)
    y_buf = np.full(4, 0.5, np.float32)
    row_buf = np.full(1, 0.5, np.float32)  # every call below gives 0.25
    gi_buf = np.empty(4, np.float32)

    def tensor(buf):
        return aclCreateTensor([buf.size], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [buf.size], buf)

    g, y, row, gi = (tensor(b) for b in (g_buf, y_buf, row_buf, gi_buf))
    wrong = aclCreateTensor([5], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [5], bytearray(20))
    workspace = bytearray(P1(g, row, gi)[1])  # the broadcast row is staged there
    assert len(workspace) > 0

    def both_phases(i):
        """The 100,000-call loop: direct, and staged through the workspace."""
        if i & 1:
            status, size, executor = P1(g, y, gi)
            status = P2(None, 0, executor, None)
        else:
            status, size, executor = P1(g, row, gi)
            status = P2(workspace, size, executor, None)
        assert status == ACLNN_SUCCESS

    def tensor_cycle():
        """Create the tensors, run, destroy them."""
        tensors = [tensor(b) for b in (g_buf, y_buf, gi_buf)]
        status, size, executor = P1(*tensors)
        assert P2(None, size, executor, None) == ACLNN_SUCCESS
        for t in tensors:
            assert aclDestroyTensor(t) == ACLNN_SUCCESS

    def executor_cycle():
        """A repeatable executor run twice and destroyed; one destroyed unrun."""
        executor = P1(g, row, gi)[2]
        assert aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS
        for _ in range(2):
            assert P2(workspace, len(workspace), executor, None) == ACLNN_SUCCESS
        assert aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS
        assert aclDestroyAclOpExecutor(P1(g, y, gi)[2]) == ACLNN_SUCCESS

    def error_cycle():
        """Failures: refused descriptors and buffers, phase 1, phase 2."""
        assert aclCreateTensor([4], ACL_FLOAT, [-1], 0, ACL_FORMAT_ND, [4], g_buf) is None
        assert aclCreateTensor([4], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [4],
                               released_memoryview()) is None
        assert P1(g, y, wrong)[0] == ACLNN_ERR_PARAM_INVALID
        assert P2(None, 0, None, None) == ACLNN_ERR_PARAM_NULLPTR
        assert aclGetRecentErrMsg().count("\n") == 3

    def stream_cycle():
        """A stream created, given launches, synchronized and destroyed."""
        status, stream = aclrtCreateStream()
        for _ in range(3):
            status, size, executor = P1(g, row, gi)
            assert P2(bytearray(size), size, executor, stream) == ACLNN_SUCCESS
        assert aclrtSynchronizeStream(stream) == ACLNN_SUCCESS
        assert aclrtDestroyStream(stream) == ACLNN_SUCCESS

    loops = [(both_phases, 100_000, True), (tensor_cycle, 5_000, False),
             (executor_cycle, 5_000, False), (error_cycle, 5_000, False),
             (stream_cycle, 200, False)]
    watched = (g_buf, y_buf, row_buf, gi_buf, workspace, g, y, row, gi, wrong)

    def measure():
        gc.collect()
        return ([sys.getrefcount(o) for o in watched], len(gc.get_objects()),
                sys.getallocatedblocks(), rss_bytes(), threading.active_count())

    for loop, count, indexed in loops:  # warm up caches and free lists
        for i in range(max(count // 50, 20)):
            loop(i) if indexed else loop()
    refs, objects, blocks, rss, threads = measure()
    for loop, count, indexed in loops:
        for i in range(count):
            loop(i) if indexed else loop()
    refs_after, objects_after, blocks_after, rss_after, threads_after = measure()
    assert refs_after == refs
    assert threads_after == threads  # every stream's worker is gone
    # One leaked object per call would be >= 200 objects (streams) and
    # >= 5,000 blocks (the other loops).
    assert objects_after - objects < 100
    assert blocks_after - blocks < 1_000
    assert rss_after - rss < 4 * 2**20
    assert_same(gi_buf, np.full(4, 0.25, np.float32))  # 1 * (1 - 0.5) * 0.5
