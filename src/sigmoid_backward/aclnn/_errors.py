"""Error reporting: per-thread messages for aclGetRecentErrMsg, and the
Pythonic layer (:class:`AclnnError`, :func:`check`).

As in CANN, messages are kept per thread and pile up until they are read:
:func:`aclGetRecentErrMsg` returns them newest first and clears them, and a
successful call leaves them alone.
"""
import threading

from ._constants import aclnnStatus

_local = threading.local()


def record(message):
    """Add ``message`` to the calling thread's recent errors."""
    pending = getattr(_local, "messages", None)
    if pending is None:
        pending = _local.messages = []
    pending.append(message)


def fail(status, message):
    """Record ``message`` for the calling thread and return ``status``."""
    record(message)
    return aclnnStatus(status)


def aclGetRecentErrMsg():
    """Obtain and clear the calling thread's recent error messages.

    Returns
    -------
    str
        The messages of the failed calls made by this thread since the last
        read, newest first, one per line; ``""`` if there were none.
    """
    pending = getattr(_local, "messages", None)
    if not pending:
        return ""
    _local.messages = []
    return "\n".join(reversed(pending))


class AclnnError(RuntimeError):
    """A failed aclnn call, raised by :func:`check`.

    Attributes
    ----------
    status : aclnnStatus or int
        The status the call returned.
    message : str
        What :func:`aclGetRecentErrMsg` said about it.
    """

    def __init__(self, status, message=""):
        try:
            status = aclnnStatus(status)
            label = f"{status.name} ({int(status)})"
        except ValueError:
            label = str(status)
        super().__init__(f"{label}: {message}" if message else label)
        self.status = status
        self.message = message


def check(status):
    """Raise :class:`AclnnError` unless ``status`` is ACLNN_SUCCESS.

    The error carries the calling thread's recent messages (which this reads,
    and so clears).

    Parameters
    ----------
    status : int
        A status returned by an aclnn function.

    Raises
    ------
    AclnnError
        When ``status`` is not 0.
    TypeError
        When ``status`` is not an int, such as phase 1's whole result tuple.
    """
    if isinstance(status, bool) or not isinstance(status, int):
        raise TypeError(f"check() takes a status int, got {type(status).__name__}; "
                        "unpack first: status, size, executor = "
                        "aclnnSigmoidBackwardGetWorkspaceSize(...)")
    if status != aclnnStatus.ACLNN_SUCCESS:
        raise AclnnError(status, aclGetRecentErrMsg())
