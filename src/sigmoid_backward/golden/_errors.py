"""The errors the golden commands report in one line, and their exit codes."""


class GoldenError(ValueError):
    """A problem with the user's files or arguments: reported in one line.

    ``python -m sigmoid_backward golden`` exits 1 on it (with input files,
    as it always has, and on a failure to write a case set); ``compare``
    exits 2.  A ValueError, for callers of the Python API."""


class CaseFileError(GoldenError):
    """A case file that cannot be read, or that says something this operator
    cannot run (an unknown dtype, a bad range, over 8 dims, a missing
    column): exit 2."""
