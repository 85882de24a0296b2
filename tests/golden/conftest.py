"""``sigmoid_backward.golden`` and its commands (``golden``, ``compare``):
golden data for one case and for CANN's case files, the precision
standards, the functions TTK calls, the commands' path arguments and
atomic writes, and docs/golden.md's examples.  They draw dtypes from
``NPU_DTYPES`` (dtypes_catalogue.py): golden serves the NPU operator's
dtypes only.

Helpers only these tests use: golden_support.py, and the case files under
data/ (data/README.md)."""
