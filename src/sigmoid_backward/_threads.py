"""Thread-count policy: how many OpenMP threads a call may use.

A call's ``num_threads=`` is used as given.  Otherwise the default applies:
:func:`set_num_threads`, else OpenMP's limit in the calling thread, which is
``OMP_NUM_THREADS`` when the process started, else the CPUs this process may
use, and which ``threadpoolctl.threadpool_limits(n, user_api="openmp")``
lowers; OpenMP's limit also caps a default set with :func:`set_num_threads`.
An explicit argument is not overridden by it, as in scikit-learn.  Every
count is capped at the CPUs this process may use: more threads than that
never help, and a huge count must not ask OpenMP for thousands of threads.
A call wakes no more threads than its output pays for (at least
``parallel_share_bytes`` of it each, _thresholds.py), so small arrays run
on one thread.  The count never changes results, only speed.

A build without OpenMP runs on one thread whatever is asked.  A child
process made by ``fork()`` keeps its threads: GNU OpenMP's threads do not
survive the fork, so the thread that forked starts its teams from a helper
thread made in the child (_threads.h), whoever ran OpenMP in the parent.

The state lives in C (_threads.h), where the ufunc's inner loop reads it
without the GIL; this module validates arguments and documents it.
"""
import operator

from . import _kernels


def check(n, name):
    """``n`` as an int >= 1, or a TypeError/ValueError naming ``name``."""
    if isinstance(n, bool):
        raise TypeError(f"{name} must be an integer >= 1, got bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name} must be an integer >= 1, got {type(n).__name__}") from None
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    # Larger counts are capped at the CPUs anyway; C needs an int.
    return min(n, _kernels.MAX_THREADS)


def get_num_threads():
    """The default thread count: :func:`set_num_threads`, else OpenMP's limit
    in the calling thread (``OMP_NUM_THREADS``, threadpoolctl), else the CPUs
    this process may use; 1 in a build without OpenMP.  A call without
    ``num_threads`` uses at most this many, and at most the CPUs."""
    return _kernels.default_threads()


def set_num_threads(n):
    """Set the default number of threads; ``None`` restores the default
    (OpenMP's limit: ``OMP_NUM_THREADS``, else the CPUs this process may
    use)."""
    _kernels.set_default_threads(0 if n is None else check(n, "n"))


def resolve_threads(num_threads):
    """Thread count for one call made in this thread: ``num_threads`` when
    given, else the default capped by OpenMP's limit in the calling thread;
    either capped at the CPUs this process may use."""
    requested = 0 if num_threads is None else check(num_threads, "num_threads")
    return _kernels.resolve_threads(requested)
