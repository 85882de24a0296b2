"""A stream inherited across fork() has no worker thread in the child: every
use of it there (launch, synchronize, destroy) must return an error status at
once, never hang.

Each scenario runs in a fresh interpreter (subprocess with a timeout), so a
regression shows as a timeout here, not as a hung test run, and forking
never touches pytest's own process.  The child reports what it saw as JSON
on stdout.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

TIMEOUT = 60  # seconds for the whole scenario; a hang fails here

# Shared by every scenario: a stream used in the parent (a real launch and a
# synchronize), then what the child does with it.
PRELUDE = textwrap.dedent("""
    import json, os, sys, threading
    import numpy as np
    from sigmoid_backward.aclnn import *

    def tensors(values):
        g = tensor_from_array(np.ones(4, np.float32))
        y = tensor_from_array(np.asarray(values, np.float32))
        out = np.zeros(4, np.float32)
        return g, y, tensor_from_array(out), out

    def phase1(values):
        g, y, gi, out = tensors(values)
        status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
        check(status)
        return executor, out

    status, stream = aclrtCreateStream()
    check(status)
    executor, out = phase1([1, 2, 3, 4])
    check(aclnnSigmoidBackward(None, 0, executor, stream))
    check(aclrtSynchronizeStream(stream))
    assert out.tolist() == [0.0, -2.0, -6.0, -12.0], out

    def use_in_child():
        import time
        seen = {}
        executor, out = phase1([1, 2, 3, 4])
        start = time.monotonic()
        seen["launch"] = int(aclnnSigmoidBackward(None, 0, executor, stream))
        seen["launch_msg"] = aclGetRecentErrMsg()
        seen["sync"] = int(aclrtSynchronizeStream(stream))
        seen["sync_msg"] = aclGetRecentErrMsg()
        seen["destroy"] = int(aclrtDestroyStream(stream))
        seen["destroy_msg"] = aclGetRecentErrMsg()
        seen["sync_again"] = int(aclrtSynchronizeStream(stream))
        seen["seconds"] = time.monotonic() - start
        aclGetRecentErrMsg()
        # The refused launch did not spend the executor: it runs on the
        # default stream, and a stream made in the child works.
        seen["default_stream"] = int(aclnnSigmoidBackward(None, 0, executor, None))
        seen["out"] = out.tolist()
        status, mine = aclrtCreateStream()
        executor, out = phase1([2, 2, 2, 2])
        seen["own_stream"] = [int(status), int(aclnnSigmoidBackward(None, 0, executor, mine)),
                              int(aclrtSynchronizeStream(mine)), int(aclrtDestroyStream(mine))]
        seen["own_out"] = out.tolist()
        return seen
""")

SCENARIOS = {
    # os.fork(); the child ends through the interpreter's normal exit, which
    # runs the inherited stream's finalizer too.
    "os.fork": """
        pid = os.fork()
        if pid == 0:
            print(json.dumps(use_in_child()), flush=True)
        else:
            _, wait_status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(wait_status) == 0, wait_status
            check(aclrtSynchronizeStream(stream))   # the parent's stream still works
            check(aclrtDestroyStream(stream))
    """,
    # multiprocessing's 'fork' context, the default on Linux before Python 3.14.
    "multiprocessing fork": """
        import multiprocessing
        if __name__ == "__main__":
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(1) as pool:
                print(json.dumps(pool.apply(use_in_child)), flush=True)
            check(aclrtDestroyStream(stream))
    """,
    # Forked while another thread holds the stream's lock and the worker is
    # busy: the child must not touch that lock, which no thread will ever
    # release there.
    "fork while the stream is busy": """
        gate, running, locked = threading.Event(), threading.Event(), threading.Event()
        assert stream._launch("busy", lambda: (running.set(), gate.wait(30)))
        assert running.wait(30)

        def hold_lock():
            with stream._state.cond:
                locked.set()
                gate.wait(30)
        holder = threading.Thread(target=hold_lock)
        holder.start()
        assert locked.wait(30)
        pid = os.fork()
        if pid == 0:
            print(json.dumps(use_in_child()), flush=True)
            os._exit(0)
        gate.set()
        holder.join()
        _, wait_status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(wait_status) == 0, wait_status
        check(aclrtDestroyStream(stream))
    """,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_inherited_stream_fails_at_once_in_the_child(scenario):
    script = PRELUDE + textwrap.dedent(SCENARIOS[scenario])
    env = dict(os.environ, PYTHONWARNINGS="ignore::DeprecationWarning")  # fork + threads
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    runtime_error = 361001  # ACLNN_ERR_RUNTIME_ERROR
    for call in ("launch", "sync", "destroy", "sync_again"):
        assert seen[call] == runtime_error, (call, seen)
    for call in ("launch", "sync", "destroy"):
        message = seen[f"{call}_msg"]
        assert "created in another process" in message, message
        assert "aclrtCreateStream" in message, message
    assert seen["launch_msg"].startswith("aclnnSigmoidBackward: ")
    assert seen["seconds"] < 5          # at once: no wait for a worker that is not there
    assert seen["default_stream"] == 0 and seen["out"] == [0.0, -2.0, -6.0, -12.0]
    assert seen["own_stream"] == [0, 0, 0, 0] and seen["own_out"] == [-2.0] * 4
