"""asv benchmarks of sigmoid_backward, one file per group of code paths.

Run from ``benchmarks/``: ``asv machine --yes`` once, then
``asv run --python=same --quick`` (the installed package) or ``asv run``
(builds wheels of the branch's commits with meson-python).
"""
