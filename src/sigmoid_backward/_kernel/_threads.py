"""Thread-count policy: how many OpenMP threads a call may use.

This is its Python API: it checks arguments, and reads and sets the state,
which lives in C (_threads.h) because the ufunc's inner loop reads it
without the GIL.

The policy is stated once for users, in docs/usage.md ("Threads and
``fork()``"), and once for the code, in _threads.h: which count a call
uses, the cap at the CPUs this process may use, and the helper thread
after ``fork()``.  The functions' docstrings below are their ``help()``.
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
    # Larger counts are capped at the CPUs anyway (_threads.h); C needs an int.
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
    """Thread count for one call made in this thread asking for
    ``num_threads`` (None: the default), as _threads.h resolves it."""
    requested = 0 if num_threads is None else check(num_threads, "num_threads")
    return _kernels.resolve_threads(requested)
