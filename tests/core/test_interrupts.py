"""Ctrl-C in the NumPy function: a KeyboardInterrupt lands between Python
operations, never inside a kernel call, so out never holds half a result;
on the fast path, through NumPy's buffered cast, and strided."""
import signal
import sys
import textwrap

import pytest

from helpers import interrupted

# --- interrupts ------------------------------------------------------------

CTRL_C = textwrap.dedent("""
    import sys
    import numpy as np
    from sigmoid_backward import sigmoid_backward

    g = np.ones(8_000_000, np.float32)
    y = np.full(g.shape, 0.5, np.float32)
    out = np.empty_like(g)
    print("ready", flush=True)
    try:
        while True:  # the kernel path, the buffered path, both with threads
            sigmoid_backward(g, y, out=out, num_threads=2)
            sigmoid_backward(g[::2], y[1::2].astype(np.float16), num_threads=2)
    except KeyboardInterrupt:
        if CATCH:
            small = sigmoid_backward(np.ones(3, np.float32), np.float32(0.5))
            assert small.tolist() == [0.25] * 3, small
            print("recovered", flush=True)
            sys.exit(0)
        raise
""")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("catch", [True, False], ids=["caught", "uncaught"])
def test_ctrl_c_during_a_long_computation(catch):
    returncode, stdout, stderr = interrupted(f"CATCH = {catch}\n" + CTRL_C)
    if catch:
        assert (returncode, stdout) == (0, "recovered\n"), stderr
    else:
        # CPython re-raises an uncaught KeyboardInterrupt as SIGINT: that,
        # after a normal traceback, is an orderly exit, not a crash.
        assert returncode in (-signal.SIGINT, 1), (returncode, stderr)
        assert stderr.rstrip().endswith("KeyboardInterrupt"), stderr


CTRL_C_OUT = textwrap.dedent("""
    import numpy as np
    from sigmoid_backward import sigmoid_backward

    g = np.ones(8_000_000, np.float32)
    y = np.full(g.shape, 0.5, np.float32)
    outs = {"kernel": np.empty_like(g),                     # the fast path
            "cast": np.empty(g.shape, np.float16),          # NumPy's buffered cast
            "strided": np.empty(2 * g.size, np.float32)[::2]}
    print("ready", flush=True)
    name = None
    try:
        while True:
            for name, out in outs.items():
                out[...] = 0
                sigmoid_backward(g, y, out=out, num_threads=2)
    except KeyboardInterrupt:
        out = outs[name]
        # Before the call began: all zeros; after it: the whole result.
        print("whole" if (out == 0).all() or (out == 0.25).all() else "partial", name)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_never_leaves_out_half_written():
    """A Ctrl-C takes effect between Python operations, never inside a call:
    out holds nothing of the interrupted call or all of it, on the fast
    path, through NumPy's buffered cast, and strided."""
    returncode, stdout, stderr = interrupted(CTRL_C_OUT)
    assert returncode == 0 and stdout.startswith("whole "), (stdout, stderr)
