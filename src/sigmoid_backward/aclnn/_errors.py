"""Error reporting: per-thread messages for aclGetRecentErrMsg, and the
Pythonic layer (:class:`AclnnError`, :func:`check`).

As in CANN, messages are kept per thread until they are read:
:func:`aclGetRecentErrMsg` returns them newest first and clears them, and a
successful call leaves them alone.  A thread that checks statuses but never
reads messages must not grow without bound, so each thread keeps only its
:data:`MAX_MESSAGES` newest messages, each cut to :data:`MAX_MESSAGE_CHARS`
characters, and counts the older ones it dropped.
"""
import collections
import threading

from ._constants import aclnnStatus

#: How many unread messages a thread keeps (the newest ones).
MAX_MESSAGES = 32
#: The longest message kept, in characters (a message about a tensor with
#: thousands of dims is cut here).
MAX_MESSAGE_CHARS = 4096

_local = threading.local()


def _cut(message):
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    cut = len(message) - MAX_MESSAGE_CHARS
    return f"{message[:MAX_MESSAGE_CHARS]}... ({cut} more characters cut)"


def record(message):
    """Add ``message`` to the calling thread's recent errors (keeping the
    :data:`MAX_MESSAGES` newest)."""
    pending = getattr(_local, "messages", None)
    if pending is None:
        pending = _local.messages = collections.deque(maxlen=MAX_MESSAGES)
        _local.dropped = 0
    if len(pending) == MAX_MESSAGES:
        _local.dropped += 1
    pending.append(_cut(str(message)))


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
        read, newest first, one per line; ``""`` if there were none.  At most
        :data:`MAX_MESSAGES` are kept: when older ones were dropped, a last
        line says how many.
    """
    pending = getattr(_local, "messages", None)
    if not pending:
        return ""
    dropped = _local.dropped
    _local.messages, _local.dropped = None, 0
    lines = list(reversed(pending))
    if dropped:
        lines.append(f"({dropped} older message{'s' if dropped > 1 else ''} dropped: "
                     f"only the {MAX_MESSAGES} newest are kept)")
    return "\n".join(lines)


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
