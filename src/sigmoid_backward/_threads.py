"""Thread-count policy: how many OpenMP threads a call may use.

Order of precedence: the ``num_threads=`` argument of a call, then
:func:`set_num_threads`, then ``OMP_NUM_THREADS``, then the CPUs this process
may run on.  OpenMP's own limit caps the result at call time (it is what
``threadpoolctl.threadpool_limits(n, user_api="openmp")`` lowers).  The count
never changes results, only speed.
"""
import os

_explicit = None


def _default_num_threads():
    env = os.environ.get("OMP_NUM_THREADS", "")
    # OMP_NUM_THREADS may be a nesting list such as "4,2": the first level
    # is ours.
    first = env.split(",")[0].strip()
    if first.isdigit() and int(first) > 0:
        return int(first)
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
    """Number of threads a call uses when ``num_threads`` is not given."""
    return _default_num_threads() if _explicit is None else _explicit


def set_num_threads(n):
    """Set the default number of threads; ``None`` restores the default
    (``OMP_NUM_THREADS``, else the CPUs this process may use)."""
    global _explicit
    _explicit = None if n is None else _check(n, "n")


def resolve(num_threads):
    """Thread count for one call."""
    return get_num_threads() if num_threads is None else _check(num_threads, "num_threads")
