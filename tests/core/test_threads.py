"""Threads: the count policy, threadpoolctl, and results that never depend on it."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import sigmoid_backward as sb
from sigmoid_backward import reference, sigmoid_backward
from sigmoid_backward._kernel import _kernels, _threads

from dtypes_catalogue import ALL_DTYPES
from helpers import assert_same, random_array, usable_cpus

needs_openmp = pytest.mark.skipif(not sb.OPENMP_ENABLED, reason="built without OpenMP")
needs_two_cpus = pytest.mark.skipif(usable_cpus() < 2,
                                    reason="counts are capped at the CPUs this process may use")


@pytest.fixture
def restore_threads():
    yield
    sb.set_num_threads(None)


def _default_in_subprocess(env_value):
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if env_value is not None:
        env["OMP_NUM_THREADS"] = env_value
    code = "import sigmoid_backward as s; print(s.get_num_threads())"
    return int(subprocess.check_output([sys.executable, "-c", code], env=env, text=True))


@needs_openmp
def test_default_follows_omp_num_threads():
    assert _default_in_subprocess("3") == 3
    assert _default_in_subprocess("5,2") == 5


def _openmp_runtime():
    """'libgomp' (GCC's) or 'libomp' (LLVM's, clang's), as threadpoolctl sees it."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    prefixes = {info["prefix"] for info in threadpoolctl.threadpool_info()
                if info["user_api"] == "openmp"}
    return "libomp" if "libomp" in prefixes else "libgomp"


@needs_openmp
def test_default_is_the_cpus_this_process_may_use():
    assert _default_in_subprocess(None) == usable_cpus()
    if _openmp_runtime() == "libomp":
        # LLVM's libomp 14 reads past an invalid OMP_NUM_THREADS: it warns,
        # then takes an uninitialised count or aborts.  Not ours to fix.
        return
    assert _default_in_subprocess("garbage") == usable_cpus()


@pytest.mark.skipif(sb.OPENMP_ENABLED, reason="built with OpenMP")
def test_without_openmp_every_count_is_one(restore_threads):
    """A build without OpenMP runs single-threaded, whatever is asked."""
    assert _default_in_subprocess(None) == _default_in_subprocess("3") == 1
    assert _threads.resolve_threads(None) == _threads.resolve_threads(2) == \
        _threads.resolve_threads(10**6) == 1
    sb.set_num_threads(4)
    assert sb.get_num_threads() == 1
    g, y = np.ones(300_000, np.float32), np.full(300_000, 0.5, np.float32)
    assert (sigmoid_backward(g, y, num_threads=10**20) == 0.25).all()


def test_set_num_threads(restore_threads):
    # In a subprocess: OpenMP reads OMP_NUM_THREADS when the process starts,
    # and this test run's environment may have changed since (Dask's
    # workers set it to 1).
    code = ("import sigmoid_backward as s; s.set_num_threads(7); a = s.get_num_threads(); "
            "s.set_num_threads(None); print(a, s.get_num_threads())")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    seven, default = subprocess.check_output([sys.executable, "-c", code], env=env,
                                             text=True).split()
    expected = 7 if sb.OPENMP_ENABLED else 1
    assert (int(seven), int(default)) == (expected, _default_in_subprocess(None))
    for bad in [0, -2]:
        with pytest.raises(ValueError, match="n must be >= 1"):
            sb.set_num_threads(bad)
    for bad in [1.5, "2", True]:
        with pytest.raises(TypeError, match="n must be an integer"):
            sb.set_num_threads(bad)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_results_identical_for_every_thread_count(dtype):
    rng = np.random.default_rng(9)
    n = 300_001  # above the serial cutoff for every dtype, odd so parts are uneven
    g, y = random_array(rng, n, dtype), random_array(rng, n, dtype)
    results = [sigmoid_backward(g, y, num_threads=t) for t in (1, 2, 3)]
    for r in results[1:]:
        assert_same(r, results[0])
    assert_same(results[0], reference.sigmoid_backward(g, y))


@needs_openmp
@needs_two_cpus
def test_threadpoolctl_caps_the_default(restore_threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    assert any(info["user_api"] == "openmp" for info in threadpoolctl.threadpool_info())
    rng = np.random.default_rng(10)
    g, y = random_array(rng, 500_000, np.float32), random_array(rng, 500_000, np.float32)
    sb.set_num_threads(2)
    # A known baseline first: other libraries sharing the OpenMP runtime
    # (PyTorch, for one) may have lowered the limit in this thread.
    with threadpoolctl.threadpool_limits(2, user_api="openmp"):
        assert _threads.resolve_threads(None) == 2
        with threadpoolctl.threadpool_limits(1, user_api="openmp"):
            assert _threads.resolve_threads(None) == 1
            assert _threads.resolve_threads(2) == 2  # an explicit count is the caller's
            limited = sigmoid_backward(g, y)
        assert _threads.resolve_threads(None) == 2
        unlimited = sigmoid_backward(g, y)
    assert_same(limited, unlimited)


@needs_openmp
def test_counts_are_capped_at_the_cpus_this_process_may_use(restore_threads):
    cpus = usable_cpus()
    assert _threads.resolve_threads(10**6) == cpus
    sb.set_num_threads(10**6)
    assert _threads.resolve_threads(None) <= cpus
    g, y = np.ones(300_000, np.float32), np.full(300_000, 0.5, np.float32)
    assert (sigmoid_backward(g, y, num_threads=10**20) == 0.25).all()


@needs_openmp
@needs_two_cpus
def test_omp_num_threads_caps_an_explicit_default():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    code = ("import sigmoid_backward as s; from sigmoid_backward._kernel._threads import "
            "resolve_threads; s.set_num_threads(2); "
            "print(resolve_threads(None), resolve_threads(2))")
    assert subprocess.check_output([sys.executable, "-c", code], env=env, text=True).split() == \
        ["1", "2"]


def test_gil_is_released_while_computing():
    """Another Python thread keeps running during a long kernel call."""
    g = np.ones(20_000_000, np.float32)
    y = np.full(20_000_000, 0.5, np.float32)
    out = np.empty_like(g)
    inside = threading.Event()
    done = threading.Event()
    progress_inside = 0

    def compute():
        for _ in range(3):
            inside.set()
            sigmoid_backward(g, y, out=out, num_threads=1)
            inside.clear()
        done.set()

    worker = threading.Thread(target=compute)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        worker.start()
        while not done.is_set():
            if inside.is_set():
                progress_inside += 1
        worker.join()
    finally:
        sys.setswitchinterval(old)
    assert out[0] == 0.25
    # Holding the GIL for the whole call (3 x ~20 ms) would leave only the
    # few switch intervals around each call (~1,000 iterations each).
    assert progress_inside > 100_000


def test_kernel_guards_any_thread_count():
    from sigmoid_backward._kernel._kernels import compute_into
    g, y = np.ones(400_000, np.float32), np.full(400_000, 0.5, np.float32)
    out = np.empty_like(g)
    compute_into(g, y, out, 1 << 30)  # capped at the processors: no crash
    assert (out == 0.25).all()


@needs_openmp
@needs_two_cpus
def test_aclnn_stream_uses_the_launching_threads_limit(restore_threads, monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    sb.set_num_threads(2)
    from sigmoid_backward import aclnn
    from sigmoid_backward.aclnn import _plan
    seen = []
    real_apply = _plan.compute_into

    def recording_apply(g, y, out, nthreads):
        seen.append(nthreads)
        real_apply(g, y, out, nthreads)

    g = np.ones(1000, np.float32)
    tensors = [aclnn.tensor_from_array(a) for a in (g, g.copy(), np.empty_like(g))]
    monkeypatch.setattr(_plan, "compute_into", recording_apply)
    status, stream = aclnn.aclrtCreateStream()
    try:
        with threadpoolctl.threadpool_limits(2, user_api="openmp"):
            for limit in (1, 2):
                with threadpoolctl.threadpool_limits(limit, user_api="openmp"):
                    status, size, executor = aclnn.aclnnSigmoidBackwardGetWorkspaceSize(*tensors)
                    aclnn.check(status)
                    aclnn.check(aclnn.aclnnSigmoidBackward(None, 0, executor, stream))
                aclnn.check(aclnn.aclrtSynchronizeStream(stream))
    finally:
        aclnn.aclrtDestroyStream(stream)
    assert seen == [1, 2]


# ---- the load policy on the default count (_threads.h): its logic, not its timing ----

@pytest.fixture
def fresh_load_policy():
    from sigmoid_backward._kernel import _kernels
    was = _kernels.set_adaptive(True)
    _kernels.reset_load()
    yield _kernels
    _kernels.reset_load()
    _kernels.set_adaptive(was)


def _back_off(kernels, nthreads=2):
    """Tell the back-off of a lost call (far slower than one thread) that
    ends an hour from now, so that its back-off outlasts the test."""
    start = kernels.now_ns()
    end = start + 3600 * 10**9
    assert kernels.saved(nthreads, end - start, 1_000) < 0
    kernels.note_call(nthreads, start, end, 1_000)


@needs_openmp
def test_concurrent_callers_share_the_cpus(fresh_load_policy):
    kernels, cpus = fresh_load_policy, usable_cpus()
    ms = 1_000_000
    window = 20 * ms                      # _threads.h's SB_SHARE_NS
    t0 = kernels.now_ns()
    assert kernels.free_cpus() == cpus
    # A lone default call takes every CPU; a second one while it runs gets
    # what is free, at least its own thread.
    first = kernels.claim_threads(cpus, False, t0)
    second = kernels.claim_threads(cpus, False, t0)
    assert (first, second) == (cpus, 1)
    assert kernels.free_cpus() == cpus - first - second
    kernels.release_threads(first)
    kernels.release_threads(second)
    assert kernels.free_cpus() == cpus
    # Two calls overlapped: until the window closes, a default call alone
    # takes its half of the CPUs (the pool is full: only the share caps it),
    # and the next overlap re-opens the window.
    alone = kernels.claim_threads(cpus, False, t0 + ms)
    assert alone == max(1, cpus // 2)
    kernels.release_threads(alone)
    assert kernels.claim_threads(cpus, False, t0 + window - 1) == max(1, cpus // 2)
    kernels.release_threads(max(1, cpus // 2))
    later = kernels.claim_threads(cpus, False, t0 + window)
    assert later == cpus                  # the window is over: the team comes back
    kernels.release_threads(later)
    # N callers at once, each asking for every CPU: the first comes alone,
    # the others share; while any holds more than its own thread, all hold
    # at most the CPUs, and while the window is open no caller takes more
    # than CPUs / N.
    t1 = t0 + 1000 * ms
    n = cpus + 2
    taken = [kernels.claim_threads(cpus, False, t1) for _ in range(n)]
    assert taken[0] == cpus and all(t == 1 for t in taken[1:])
    for t in taken:
        kernels.release_threads(t)
    taken = [kernels.claim_threads(cpus, False, t1 + ms) for _ in range(n)]
    assert all(t == 1 for t in taken)     # CPUs / (CPUs + 2) rounds to own thread
    for t in taken:
        kernels.release_threads(t)
    # An explicit count takes all it asks, window or not; a default call
    # then gets its own thread.
    explicit = kernels.claim_threads(cpus, True, t1 + 2 * ms)
    assert explicit == cpus
    assert kernels.claim_threads(cpus, False, t1 + 2 * ms) == 1
    kernels.release_threads(1)
    kernels.release_threads(explicit)
    assert kernels.free_cpus() == cpus
    # Forgetting the load policy's state forgets the callers seen.
    kernels.reset_load()
    alone = kernels.claim_threads(cpus, False, t1 + 3 * ms)
    assert alone == cpus
    kernels.release_threads(alone)


@needs_openmp
def test_concurrent_calls_give_back_every_cpu(fresh_load_policy):
    kernels, cpus = fresh_load_policy, usable_cpus()
    g, y = np.ones(400_000, np.float32), np.full(400_000, 0.5, np.float32)
    counts, errors = [], []

    def caller(k):
        try:
            out = np.empty_like(g)
            for _ in range(20):
                sigmoid_backward(g, y, out=out, num_threads=k)
                counts.append(kernels.last_threads())
                assert (out == 0.25).all()
        except BaseException as exc:   # reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=caller, args=(k,)) for k in (None, None, 1, None)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(1 <= c <= cpus for c in counts)
    assert kernels.free_cpus() == cpus


@needs_openmp
def test_a_one_thread_default_leaves_the_pool_alone(fresh_load_policy, restore_threads):
    """With set_num_threads(1) every default call runs on its own thread
    alone, so a large one takes no token from the pool (a watcher never
    sees one missing), where a call with an explicit count of one does."""
    kernels, cpus = fresh_load_policy, usable_cpus()
    g, y = np.ones(2_000_000, np.float32), np.full(2_000_000, 0.5, np.float32)
    out = np.empty_like(g)

    def free_cpus_seen(**kwargs):
        seen, done = set(), threading.Event()

        def watch():
            while not done.is_set():
                seen.add(kernels.free_cpus())

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            for _ in range(30):
                sigmoid_backward(g, y, out=out, **kwargs)
                assert kernels.last_threads() == 1
        finally:
            done.set()
            watcher.join()
        return seen

    sb.set_num_threads(1)
    assert free_cpus_seen() == {cpus}
    assert cpus - 1 in free_cpus_seen(num_threads=1)
    assert (out == 0.25).all()


@needs_openmp
def test_a_process_starts_with_a_credit_of_1_ms():
    """So that its first team calls (the pool's threads created, the first
    page faults) do not back an idle process off, while a worker started on
    busy CPUs backs off after its first lost time slice."""
    code = "from sigmoid_backward._kernel import _kernels; print(_kernels.credit())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert int(out) == 1_000_000


def test_one_thread_alone_runs_at_the_fastest_threads_rate_when_it_ran():
    """The back-off's estimate of one thread's time: the whole call at the
    fastest thread's rate, by its CPU time where it was read (a team thread
    that another process's threads kept waiting is slower by the wall clock
    than a lone thread would be), by the wall clock where not."""
    alone = _kernels.alone_ns
    # By the wall clock: 1,000 elements in 10 us is the fastest rate.
    assert alone([10_000, 20_000], [-1, -1], [1_000, 1_000], 2_000) == 20_000
    assert alone([30_000, 20_000], [-1, -1], [3_000, 1_000], 4_000) == 40_000
    # Both threads waited half the time: by CPU time, a lone thread's rate.
    assert alone([20_000, 20_000], [10_000, 11_000], [1_000, 1_000], 2_000) == 20_000
    # CPU time is used only where it is below the wall clock's (it is read
    # around the whole share, claims included).
    assert alone([10_000, 20_000], [12_000, 20_000], [1_000, 1_000], 2_000) == 20_000
    # A thread that did nothing has no rate; a call that nobody did, no estimate.
    assert alone([0, 20_000], [-1, -1], [0, 1_000], 2_000) == 40_000
    assert alone([0], [-1], [0], 2_000) == -1
    with pytest.raises(ValueError, match="1 to 8 threads"):
        alone([1] * 9, [1] * 9, [1] * 9, 9)
    with pytest.raises(ValueError, match="1 to 8 threads"):
        alone([1, 2], [1], [1, 2], 2)


@needs_openmp
@needs_two_cpus
def test_back_off_spends_a_credit_then_halves_the_default_then_probes(fresh_load_policy):
    kernels = fresh_load_policy
    ms = 1_000_000
    start = kernels.now_ns()
    assert kernels.load_cap(start) >= 2**30      # no cap before any call
    # What a team saved: one thread would have taken threads x its fastest part.
    assert kernels.saved(2, 150_000, 100_000) == 50_000
    assert kernels.saved(4, 500_000, 100_000) == -100_000
    # The credit grows with what calls saved, up to 10 ms.
    for _ in range(300):
        kernels.note_call(2, start, start + 150_000, 100_000)   # saved 50 us each
    assert kernels.credit() == 10 * ms
    # A loss the credit covers changes nothing (a stall on an idle machine).
    kernels.note_call(4, start, start + 9 * ms + 400_000, 100_000)   # lost 9 ms
    assert kernels.credit() == 1 * ms
    assert kernels.load_cap(start + 9 * ms + 400_001) >= 2**30
    # One it does not: the count halves for 50x what the call wasted, here
    # 150 ms, but the first back-off since the credit was full lasts 50 ms
    # at most.
    end = start + 3 * ms + 400_000
    kernels.note_call(4, start, end, 100_000)                  # lost 3 ms: 4 -> 2
    assert kernels.credit() == 0
    assert kernels.load_cap(end + 50 * ms - 1) == 2
    assert kernels.load_cap(end + 50 * ms) >= 2**30            # over: the next call probes
    # A probe that wins starts a new credit; one that loses backs off again,
    # 50x what it wasted (3.5 ms; the second back-off may last 200 ms).
    probe = end + 50 * ms
    kernels.note_call(2, probe, probe + 150_000, 100_000)
    assert kernels.credit() == 50_000
    assert kernels.load_cap(probe + 150_001) >= 2**30
    kernels.note_call(2, probe, probe + 200_000 + 50_000 + 20_000, 100_000)   # lost 70 us
    assert kernels.credit() == 0
    assert kernels.load_cap(probe + 270_000 + 50 * 70_000 - 1) == 1
    assert kernels.load_cap(probe + 270_000 + 50 * 70_000) >= 2**30
    # The back-off lasts 1 ms at least, and 2 s at most.
    kernels.note_call(2, probe, probe + 200_001, 100_000)      # lost 1 ns
    assert kernels.load_cap(probe + 200_001 + ms - 1) == 1
    assert kernels.load_cap(probe + 200_001 + ms) >= 2**30
    kernels.note_call(2, probe, probe + 10**9, 100_000)        # lost ~1 s: the 4th, 3.2 s
    assert kernels.load_cap(probe + 10**9 + 2 * 10**9 - 1) == 1
    assert kernels.load_cap(probe + 10**9 + 2 * 10**9) >= 2**30
    kernels.reset_load()
    assert kernels.credit() == 0 and kernels.load_cap(probe) >= 2**30


@needs_openmp
@needs_two_cpus
def test_back_off_lengthens_4x_while_the_credit_stays_spent(fresh_load_policy):
    """One long stall (a first call's page faults) backs off 50 ms, not 2 s;
    losses that follow lengthen it 4x each, and a full credit forgets them."""
    kernels = fresh_load_policy
    ms, t = 1_000_000, kernels.now_ns()
    for period in (50 * ms, 200 * ms, 800 * ms, 2000 * ms, 2000 * ms):
        end = t + 40 * ms + 200_000
        kernels.note_call(2, t, end, 100_000)               # lost 40 ms: 50x is 2 s
        assert kernels.load_cap(end + period - 1) == 1
        assert kernels.load_cap(end + period) >= 2**30
        t = end + period
    for _ in range(200):                                      # the credit fills again
        kernels.note_call(2, t, t + 150_000, 100_000)
    assert kernels.credit() == 10 * ms
    end = t + 10 * ms + 40 * ms + 200_000
    kernels.note_call(2, t, end, 100_000)                     # spends it: 50 ms again
    assert kernels.load_cap(end + 50 * ms - 1) == 1
    assert kernels.load_cap(end + 50 * ms) >= 2**30


@needs_openmp
@needs_two_cpus
def test_back_off_changes_the_default_only(fresh_load_policy, restore_threads):
    kernels = fresh_load_policy
    g, y = np.ones(1_000_000, np.float32), np.full(1_000_000, 0.5, np.float32)
    out = np.empty_like(g)
    sigmoid_backward(g, y, out=out)
    assert kernels.last_threads() == 2
    _back_off(kernels)
    sigmoid_backward(g, y, out=out)
    assert kernels.last_threads() == 1
    sb.set_num_threads(2)                     # still the default: the policy applies
    sigmoid_backward(g, y, out=out)
    assert kernels.last_threads() == 1
    sigmoid_backward(g, y, out=out, num_threads=2)   # explicit: today's meaning
    assert kernels.last_threads() == 2
    kernels.set_adaptive(False)               # off: the default's full count again
    sigmoid_backward(g, y, out=out)
    assert kernels.last_threads() == 2
    # An explicit count is still capped by the size threshold.
    share = kernels.thresholds()["parallel_share_bytes"]
    small = np.ones(share // 4, np.float32)
    sigmoid_backward(small, small, num_threads=2)
    assert kernels.last_threads() == 1


@needs_openmp
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_results_identical_across_policies(dtype, fresh_load_policy):
    kernels = fresh_load_policy
    rng = np.random.default_rng(11)
    n = 300_001
    g, y = random_array(rng, 2 * n, dtype), random_array(rng, 2 * n, dtype)
    calls = {"contiguous": lambda: sigmoid_backward(g[:n], y[:n]),
             "strided": lambda: sigmoid_backward(g[::2], y[::2])}
    if np.dtype(dtype) == np.float32:
        calls["cast"] = lambda: sigmoid_backward(g[:n], y[:n], dtype=np.float64)
    for call in calls.values():
        results = []
        for adaptive, backed_off in ((False, False), (True, False), (True, True)):
            kernels.set_adaptive(adaptive)
            kernels.reset_load()
            if backed_off:
                _back_off(kernels)
            results.append(call())
        for r in results[1:]:
            assert_same(r, results[0])
