"""Test-suite options, for every folder of tests/.

The tests sit in one folder per subject, each with a conftest.py saying what
it tests and holding the fixtures only it uses: core/ (the kernels and the
compiled modules), numpy_contract/ (the ufunc and the function as NumPy
users meet them), frameworks/ (PyTorch, JAX), aclnn/, golden/ and
packaging/ (what ships and what it says).  Helpers shared across folders
(helpers.py, hostile.py, dtypes_catalogue.py) are here, on sys.path through
pyproject.toml's ``pythonpath``.

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
# not see that warning; tests/packaging/test_show_config.py checks it, without this.
os.environ["PYTHONWARNINGS"] = ",".join(
    filter(None, [os.environ.get("PYTHONWARNINGS"),
                  "ignore:sigmoid_backward was built without OpenMP:RuntimeWarning"]))
