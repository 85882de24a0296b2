"""Test-suite options.

Tests marked ``slow`` (the 10,000-example fuzzing budget) are skipped by
default so that ``python -m pytest`` stays quick; run them with
``python -m pytest --runslow`` or select them with ``python -m pytest -m slow``.
"""
import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run tests marked slow (long fuzzing budgets)")


def pytest_collection_modifyitems(config, items):
    markexpr = config.getoption("-m") or ""
    if config.getoption("--runslow") or ("slow" in markexpr and "not slow" not in markexpr):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow or -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# A build without OpenMP warns at import (sigmoid_backward/_show_config.py).
# The tests that run Python in a subprocess compare its output, so they do
# not see that warning; tests/test_show_config.py checks it, without this.
os.environ["PYTHONWARNINGS"] = ",".join(
    filter(None, [os.environ.get("PYTHONWARNINGS"),
                  "ignore:sigmoid_backward was built without OpenMP:RuntimeWarning"]))


@pytest.fixture
def stream():
    """A new aclnn stream, destroyed after the test unless the test did."""
    from sigmoid_backward import aclnn
    status, s = aclnn.aclrtCreateStream()
    assert status == aclnn.ACLNN_SUCCESS
    yield s
    if not s.destroyed:
        aclnn.aclrtDestroyStream(s)
