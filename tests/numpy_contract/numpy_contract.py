"""What the tests that run NumPy's own ufunc tests against ours share.

- ``numpy_test_module``: NumPy's test modules, which ship inside NumPy;
- ``BINARIES``: the ufunc and the function, as the binary under test;
- ``run_numpy_test``: one of NumPy's tests, its binary ufuncs re-pointed at ours;
- the folds: reductions, accumulations and reduceat as NumPy defines them
  for every binary ufunc, the ufunc applied step by step (here by the slow
  twin, ``sigmoid_backward.reference``).
"""
import importlib
import types
import warnings

import numpy as np
import pytest

import sigmoid_backward as sb
from sigmoid_backward import reference


def numpy_test_module(name):
    """``numpy._core.tests.<name>``, or a skip when NumPy was installed
    without its tests (some distributions split them off)."""
    try:
        with warnings.catch_warnings():   # its plugins' marks, its np.matrix parameters
            warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
            warnings.filterwarnings("ignore", "the matrix subclass", PendingDeprecationWarning)
            return importlib.import_module(f"numpy._core.tests.{name}")
    except ModuleNotFoundError:
        pytest.skip(f"NumPy {np.__version__} was installed without its tests "
                    f"(numpy/_core/tests/{name}.py)")


class TheFunction:
    """``sigmoid_backward.sigmoid_backward`` where a NumPy test wants a binary
    ufunc.  Calls go to the function.  The few attributes that NumPy's tests
    read to build their calls (``nin``, ``nout``, ``types``) are the ufunc's.
    The methods (``reduce``, ``at``, ...) are not the function's, so they are
    missing here, as on the function."""

    nin, nout, nargs = 2, 1, 3
    types = sb.ufunc.types
    __name__ = sb.sigmoid_backward.__name__

    def __call__(self, *args, **kwargs):
        return sb.sigmoid_backward(*args, **kwargs)

    def __repr__(self):
        return "<the function sigmoid_backward.sigmoid_backward>"


FUNCTION = TheFunction()
BINARIES = [pytest.param(sb.ufunc, id="ufunc"), pytest.param(FUNCTION, id="function")]
UFUNC_ONLY = [pytest.param(sb.ufunc, id="ufunc")]


class _Namespace(types.ModuleType):
    """A module that is ``real`` except for ``replaced``'s names."""

    def __init__(self, real, replaced):
        super().__init__(real.__name__, real.__doc__)
        self.__dict__.update(replaced)
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)


def run_numpy_test(monkeypatch, module_name, qualname, binary, names, **arguments):
    """Run NumPy's test ``qualname`` ("Class.test" or "test") of
    ``numpy._core.tests.<module_name>`` with ``arguments`` (its parameters),
    the binary ufuncs ``names`` (as in ``np.add``, ``ncu.add``) bound to
    ``binary`` in the module's ``np`` and ``ncu`` while it runs.  Warnings
    are errors, as NumPy's pytest.ini makes them for its tests.  Skips when
    the installed NumPy's tests have no such test."""
    module = numpy_test_module(module_name)
    owner = module
    *cls, name = qualname.split(".")
    if cls:
        owner = getattr(module, cls[0], None)
        owner = owner() if owner is not None else None
    test = getattr(owner, name, None)
    if test is None:
        pytest.skip(f"NumPy {np.__version__}'s {module_name}.py has no {qualname}")
    replaced = {name: binary for name in names}
    monkeypatch.setattr(module, "np", _Namespace(np, replaced))
    if hasattr(module, "ncu"):
        monkeypatch.setattr(module, "ncu", _Namespace(np._core.umath, replaced))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", "the matrix subclass", PendingDeprecationWarning)
        test(**arguments)


# ---- folds -------------------------------------------------------------------

def step(accumulated, x):
    """One step of a fold: the ufunc's value on one pair, in their dtype."""
    return reference.sigmoid_backward(accumulated, x, dtype=np.result_type(accumulated))


def fold(a, axis=0, initial=None, where=True, f=step):
    """``ufunc.reduce(a, axis, initial=initial, where=where)`` as NumPy
    defines it: a left fold, ``f(...f(f(a[0], a[1]), a[2])..., a[n-1])``, or
    ``f(...f(initial, a[0])..., a[n-1])`` over the elements ``where``
    selects (NumPy wants ``initial`` with ``where``: the ufunc has no
    identity).  ``f`` is the ufunc's step; another ufunc's tests the fold."""
    where = np.moveaxis(np.broadcast_to(where, np.shape(a)), axis, 0)
    a = np.moveaxis(np.asarray(a), axis, 0)
    if initial is None:
        accumulated, a, where = a[0], a[1:], where[1:]
    else:
        accumulated = np.full(a.shape[1:], initial, a.dtype)
    for row, selected in zip(a, where, strict=True):
        accumulated = np.where(selected, f(accumulated, row), accumulated)
    return accumulated


def accumulate(a, axis=0, f=step):
    """``ufunc.accumulate(a, axis)``: every prefix's fold."""
    a = np.moveaxis(np.asarray(a), axis, 0)
    out = a.copy()
    for i in range(1, len(a)):
        out[i] = f(out[i - 1], a[i])
    return np.moveaxis(out, 0, axis)


def reduceat(a, indices, axis=0, f=step):
    """``ufunc.reduceat(a, indices, axis)``: the fold of ``a[i:j]`` for each
    consecutive pair of indices (to the end for the last), or ``a[i]``
    alone where ``j <= i``."""
    a = np.moveaxis(np.asarray(a), axis, 0)
    ends = list(indices[1:]) + [len(a)]
    out = np.stack([fold(a[i:j], f=f) if i < j else a[i]
                    for i, j in zip(indices, ends, strict=True)])
    return np.moveaxis(out, 0, axis)
