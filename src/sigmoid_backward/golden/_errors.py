"""The errors the golden commands report in one line, and their exit codes."""


class GoldenError(ValueError):
    """A problem with the user's files or arguments: reported in one line.

    ``python -m sigmoid_backward golden`` exits 1 on it.  A ValueError, for
    callers of the Python API."""
