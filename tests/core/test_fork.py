"""fork(): GNU OpenMP keeps a pool of threads per thread that started a
parallel region, and a forked child inherits the pool's bookkeeping but not
its threads.  Whoever started a region in the parent (this package, another
extension, a library loaded with ctypes), the child must compute the right
values with its threads, not wait forever for the parent's.  Each case runs
in a subprocess with a timeout, so that a hang fails the test."""
import os
import shutil
import signal
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
    import os
    import multiprocessing as mp
    import numpy as np
    import sigmoid_backward as s

    g = np.ones(1_000_000, np.float32)
    y = np.full_like(g, 0.5)
    assert s.get_num_threads() >= 2

    def threads_now():
        return len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else -1
""")

STARTS_A_TEAM = "s.sigmoid_backward(g, y, num_threads=2)  # the parent's team exists now\n"

# A shared library with one OpenMP parallel region, which is not ours: it
# leaves a thread pool in the calling thread, as any OpenMP extension does.
FOREIGN_OPENMP = r"""
#include <omp.h>
int foreign_region(int n)
{
    int threads = 0;
    #pragma omp parallel num_threads(n)
    {
        #pragma omp atomic
        threads++;
    }
    return threads;
}
"""


def _run(code, timeout=120):
    # OpenMP's default, whatever the test run set (Dask's workers set 1).
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    # A session of its own, so that a hung child (forked by the script) is
    # killed with its parent.
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == 0, stderr
    return stdout.split()


CHILD_COMPUTES = textwrap.dedent("""
    def child_result():
        big = s.sigmoid_backward(g, y, num_threads=2)   # hung before
        strided = s.ufunc(g[::2], 0.5)
        return f"{big[-1]}/{strided[0]}/{s.get_num_threads() >= 2}"
""")


def test_multiprocessing_fork_pool_after_a_two_thread_call():
    code = PARENT + STARTS_A_TEAM + CHILD_COMPUTES + textwrap.dedent("""
        def child(_):
            return child_result()

        if __name__ == "__main__":
            with mp.get_context("fork").Pool(2) as pool:
                print(*pool.map(child, range(4)))
            print(s.get_num_threads())   # the parent keeps its threads
    """)
    *children, parent = _run(code)
    assert children == ["0.25/0.25/True"] * 4
    assert int(parent) >= 2


def test_os_fork_after_a_two_thread_call_keeps_the_childs_threads():
    # The child's call runs its team from a thread of its own: afterwards the
    # child has more threads than the one fork() left it.
    code = PARENT + STARTS_A_TEAM + CHILD_COMPUTES + textwrap.dedent("""
        pid = os.fork()
        if pid == 0:
            ok = child_result() == "0.25/0.25/True"
            more = threads_now() == -1 or threads_now() >= 3   # -1: no /proc to count
            os._exit(0 if ok and more else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    assert _run(code) == ["0"]


def test_grandchild_after_calls_in_parent_and_child():
    code = PARENT + STARTS_A_TEAM + CHILD_COMPUTES + textwrap.dedent("""
        pid = os.fork()
        if pid == 0:
            child_result()                    # the child's own team, on its helper
            grandchild = os.fork()
            if grandchild == 0:
                os._exit(0 if child_result() == "0.25/0.25/True" else 3)
            _, status = os.waitpid(grandchild, 0)
            os._exit(os.waitstatus_to_exitcode(status))
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    assert _run(code) == ["0"]


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="no C compiler to build the foreign OpenMP library")
def test_fork_after_another_librarys_parallel_region(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    source = tmp_path / "foreign.c"
    source.write_text(FOREIGN_OPENMP)
    library = tmp_path / "libforeign.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-fopenmp", "-o", str(library), str(source)],
                   check=True, capture_output=True)
    assert _fork_after(f"""
        import ctypes
        foreign = ctypes.CDLL({str(library)!r})
        assert foreign.foreign_region(2) == 2    # its pool lives in this thread now
    """) == ["0"]


def test_fork_after_the_bandwidth_floors_parallel_region():
    # The floor is a parallel region of another extension module.
    assert _fork_after("""
        from sigmoid_backward.bench._bandwidth_floor import bandwidth_floor
        bandwidth_floor(g, y, np.empty_like(g), 2)
    """) == ["0"]


def _fork_after(region):
    """Run ``region`` in a parent, fork, and compute in the child: its exit
    status, 0 when the child's results and thread count are right."""
    return _run(PARENT + CHILD_COMPUTES + textwrap.dedent(region) + textwrap.dedent("""
        pid = os.fork()
        if pid == 0:
            os._exit(0 if child_result() == "0.25/0.25/True" else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """), timeout=60)


def test_child_forked_before_any_parallel_call_keeps_its_threads():
    code = PARENT + CHILD_COMPUTES + textwrap.dedent("""
        s.sigmoid_backward(g[:100], y[:100])   # one thread: no team yet
        def child(_):
            return child_result()

        if __name__ == "__main__":
            with mp.get_context("fork").Pool(1) as pool:
                print(*pool.map(child, range(1)))
    """)
    assert _run(code) == ["0.25/0.25/True"]


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
