"""The errors the golden commands report in one line, and their exit codes."""


class GoldenError(ValueError):
    """A problem with the user's files or arguments: reported in one line.

    Both commands exit 2 on it when it is found before anything is written;
    once a campaign runs, it makes that one case an ERROR (exit 3).  A
    ValueError, for callers of the Python API."""


class CaseFileError(GoldenError):
    """A case file that cannot be read, or that says something this operator
    cannot run (an unknown dtype, a bad range, over 8 dims, a missing
    column): exit 2."""
