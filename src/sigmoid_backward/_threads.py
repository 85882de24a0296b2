"""Thread-count policy: how many OpenMP threads a call may use.

A call's ``num_threads=`` is used as given.  Otherwise the default applies:
:func:`set_num_threads`, else ``OMP_NUM_THREADS``, else the CPUs this process
may run on; and OpenMP's limit in the calling thread caps the default at call
time.  That limit is what ``threadpoolctl.threadpool_limits(n,
user_api="openmp")`` lowers, so threadpoolctl is honoured; an explicit
argument is not overridden by it, as in scikit-learn.  Every count is
capped at the CPUs this process may use: more threads than that never help,
and a huge count must not ask OpenMP for thousands of threads.  The count
never changes results, only speed.
"""
import os

from ._openmp import max_threads as _openmp_limit

_explicit = None


def _default_num_threads():
    env = os.environ.get("OMP_NUM_THREADS", "")
    # OMP_NUM_THREADS may be a nesting list such as "4,2": the first level
    # is ours.
    first = env.split(",")[0].strip()
    if first.isdigit() and int(first) > 0:
        return int(first)
    return _cpus()


def _cpus():
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check(n, name):
    if isinstance(n, bool) or not isinstance(n, int) and not hasattr(n, "__index__"):
        raise TypeError(f"{name} must be an integer >= 1, got {type(n).__name__}")
    n = int(n.__index__())
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    return n


def get_num_threads():
    """The default thread count: :func:`set_num_threads`, else
    ``OMP_NUM_THREADS``, else the CPUs this process may use.  A call without
    ``num_threads`` uses at most this many (see the module's docstring)."""
    return _default_num_threads() if _explicit is None else _explicit


def set_num_threads(n):
    """Set the default number of threads; ``None`` restores the default
    (``OMP_NUM_THREADS``, else the CPUs this process may use)."""
    global _explicit
    _explicit = None if n is None else _check(n, "n")


def resolve(num_threads):
    """Thread count for one call: ``num_threads`` when given, else the
    default capped by OpenMP's limit in the calling thread; either capped at
    the CPUs this process may use."""
    if num_threads is not None:
        return min(_check(num_threads, "num_threads"), _cpus())
    return max(1, min(get_num_threads(), _openmp_limit(), _cpus()))
