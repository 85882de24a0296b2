"""fork(): GNU OpenMP's threads do not survive it, so a child forked after a
multi-threaded call runs on one thread (and computes the right values)
instead of waiting forever for its parent's threads.  Each case runs in a
subprocess with a timeout, so that a hang fails the test."""
import os
import subprocess
import sys
import textwrap

import pytest

import sigmoid_backward as sb

from helpers import usable_cpus

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform"),
    pytest.mark.skipif(not sb.OPENMP_ENABLED, reason="built without OpenMP: nothing to hang"),
    pytest.mark.skipif(usable_cpus() < 2, reason="one CPU: no OpenMP team"),
]

PARENT = textwrap.dedent("""
    import multiprocessing as mp
    import numpy as np
    import sigmoid_backward as s

    g = np.ones(1_000_000, np.float32)
    y = np.full_like(g, 0.5)
    assert s.get_num_threads() >= 2
""")

STARTS_A_TEAM = "s.sigmoid_backward(g, y, num_threads=2)  # the parent's team exists now\n"


def _run(code, timeout=120):
    # OpenMP's default, whatever the test run set (Dask's workers set 1).
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_multiprocessing_fork_pool_after_a_two_thread_call():
    code = PARENT + STARTS_A_TEAM + textwrap.dedent("""
        def child(_):
            big = s.sigmoid_backward(g, y, num_threads=2)   # hung before
            strided = s.ufunc(g[::2], 0.5)
            return f"{big[-1]}/{strided[0]}/{s.get_num_threads()}"

        if __name__ == "__main__":
            with mp.get_context("fork").Pool(2) as pool:
                print(*pool.map(child, range(4)))
            print(s.get_num_threads())   # the parent keeps its threads
    """)
    *children, parent = _run(code)
    assert children == ["0.25/0.25/1"] * 4
    assert int(parent) >= 2


def test_os_fork_after_a_two_thread_call():
    code = PARENT + STARTS_A_TEAM + textwrap.dedent("""
        import os
        pid = os.fork()
        if pid == 0:
            r = s.sigmoid_backward(g, y, num_threads=2)
            os._exit(0 if r[0] == 0.25 and s.get_num_threads() == 1 else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    assert _run(code) == ["0"]


def test_child_forked_before_any_parallel_call_keeps_its_threads():
    code = PARENT + textwrap.dedent("""
        s.sigmoid_backward(g[:100], y[:100])   # one thread: no team yet
        def child(_):
            r = s.sigmoid_backward(g, y, num_threads=2)
            return f"{r[0]}/{s.get_num_threads()}"

        if __name__ == "__main__":
            with mp.get_context("fork").Pool(1) as pool:
                print(*pool.map(child, range(1)))
    """)
    result, threads = _run(code)[0].split("/")
    assert result == "0.25" and int(threads) >= 2


def test_dask_processes_scheduler_with_fork():
    pytest.importorskip("dask.array")
    code = PARENT + STARTS_A_TEAM + textwrap.dedent("""
        import dask
        import dask.array as da

        if __name__ == "__main__":
            lazy = s.sigmoid_backward(da.from_array(g, chunks=250_000), 0.5)
            with dask.config.set({"multiprocessing.context": "fork"}):
                result = lazy.compute(scheduler="processes", num_workers=2)
            print(bool((result == 0.25).all()))
    """)
    assert _run(code) == ["True"]
