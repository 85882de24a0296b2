"""aclrtStream: work queued in order and run by a worker thread of its own.

Phase 2 launched on a stream returns at once; the stream's worker runs the
launches one after another, in launch order, so a launch may read what an
earlier one on the same stream wrote.  The kernels release the GIL, so
streams run alongside Python and alongside each other.  ``stream=None`` is
the default stream: the work runs in the calling thread before phase 2
returns.  A queued launch keeps its plan, buffers and workspace exported and
alive until it has run, and not a moment longer: after
:func:`aclrtSynchronizeStream` the caller may resize, close or free them.

:func:`aclrtSynchronizeStream` waits for the launches queued before it was
called, and only for those (as CANN and CUDA do): another thread that keeps
launching onto the stream cannot keep it waiting.

At most :data:`MAX_QUEUED` launches wait on a stream; a launch onto a full
stream blocks until the worker has taken one, as a CUDA launch blocks on a
full launch queue.  Each queued launch holds its buffers and workspace, so an
unbounded queue would let a fast producer hold any amount of memory.

A launch that fails on the worker cannot return a status any more: the
stream keeps the failure, skips the launches queued after it (their inputs
may be garbage, as after a device fault), and reports it from the next
:func:`aclrtSynchronizeStream` that waits for it, which clears it.  A
launch skipped after that synchronize began (another thread's) is reported
by the following one.

A stream belongs to the process that created it.  After ``fork()`` the child
has no worker thread, so every use of an inherited stream in the child
(launch, synchronize, destroy) returns ACLNN_ERR_RUNTIME_ERROR at once: the
stream exists, but the runtime behind it does not in this process (CUDA
answers a context used across fork with an initialisation error, a runtime
error too).  Create a new stream in the child.
"""
import collections
import os
import threading
import weakref

from ._constants import aclnnStatus
from ._errors import fail

#: The most launches that wait on one stream; a launch onto a full stream
#: blocks until there is room.
MAX_QUEUED = 1024

# Bumped in the child after every os.fork(): a stream made under an older
# generation (or by another pid) was made in another process.
_generation = 0


def _forked():
    global _generation
    _generation += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


class _State:
    """What the worker shares with the stream object (not the object itself,
    so that a forgotten stream can be collected and its worker stopped)."""

    def __init__(self):
        self.pid = os.getpid()
        self.generation = _generation
        # Every `with` takes the lock itself, never the condition: a
        # Condition's __enter__ is Python code, and a Ctrl-C raised in it
        # after the lock was taken left the lock held with the block never
        # entered, so that the finalizer's _stop waited for it at exit,
        # forever (seen once in CI, under load).  A lock's own __enter__ is
        # C: the block is entered as the lock is taken.
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        # (seq, name, run), in launch order
        self.tasks: collections.deque[tuple[int, str, object]] = collections.deque()
        self.launched = 0      # sequence number of the latest launch
        self.finished = 0      # ... of the latest launch run or skipped
        self.failing = None    # (seq, message): the failure that makes the worker skip
        self.reports = []      # _Report, in sequence order: what synchronizes report
        self.destroyed = False
        self.stopping = False

    def foreign(self):
        """True in a process other than the one that made the stream (a
        fork() child): its worker thread and locks are not usable here."""
        return self.generation != _generation or self.pid != os.getpid()


class _Report:
    """Launches first..last that failed (one launch) or were skipped after
    the failure ``message``."""

    __slots__ = ("first", "last", "message", "skipped")

    def __init__(self, first, last, message, skipped):
        self.first, self.last, self.message, self.skipped = first, last, message, skipped


def _work(state):
    cond, lock = state.cond, state.lock
    while True:
        with lock:
            while not state.tasks and not state.stopping:
                cond.wait()
            if not state.tasks:            # stopping, and nothing left to run
                return
            seq, name, run = state.tasks.popleft()
            cond.notify_all()              # room for a blocked launch
            failing = state.failing
        error = None
        if failing is None:
            try:
                run()
            except BaseException as exc:   # never let the worker die
                error = f"{name} failed on the stream: {type(exc).__name__}: {exc}"
        # Let go of the launch (its plan, the buffers and the workspace)
        # before it counts as done: once aclrtSynchronizeStream returns,
        # the caller may close, resize or free them.
        run = None
        with lock:
            if error is not None:
                state.failing = (seq, error)
                state.reports.append(_Report(seq, seq, error, False))
            elif failing is not None:
                last = state.reports[-1] if state.reports else None
                if (last is not None and last.skipped and last.message is failing[1]
                        and last.last == seq - 1):
                    last.last = seq        # one more in a run of skipped launches
                else:
                    state.reports.append(_Report(seq, seq, failing[1], True))
            state.finished = seq
            cond.notify_all()


def _collect(state, upto):
    """Take (under the lock) the reports of the launches up to ``upto``, all
    run or skipped by now; their message, or None.  Reporting a failure ends
    the skipping it caused."""
    taken, rest = [], []
    for report in state.reports:
        if report.first > upto:
            rest.append(report)
        elif report.last > upto:           # a run of skips that straddles upto
            rest.append(_Report(upto + 1, report.last, report.message, True))
            taken.append(_Report(report.first, upto, report.message, True))
        else:
            taken.append(report)
    state.reports = rest
    if state.failing is not None and state.failing[0] <= upto:
        state.failing = None
    if not taken:
        return None
    failures = [r.message for r in taken if not r.skipped]
    skipped = sum(r.last - r.first + 1 for r in taken if r.skipped)
    if failures:
        message = failures[0]
        if len(failures) > 1:
            message += (f" (and {len(failures) - 1} more failed launch"
                        f"{'es' if len(failures) > 2 else ''})")
        if skipped:
            message += f" ({skipped} later launch{'es' if skipped > 1 else ''} skipped)"
        return message
    return (f"{skipped} launch{'es' if skipped > 1 else ''} skipped after an earlier "
            f"failure: {taken[0].message}")


def _stop(state):
    """Ask the worker to stop after the queued launches (the finalizer)."""
    if state.foreign():                    # no worker here, and the lock may be stuck
        return
    with state.lock:
        state.stopping = True
        state.cond.notify_all()


class aclrtStream:
    """An ordered queue of launches (create with aclrtCreateStream)."""

    __slots__ = ("_state", "_thread", "_finalizer", "__weakref__")

    def __init__(self):
        self._state = _State()
        self._thread = threading.Thread(target=_work, args=(self._state,),
                                        name="aclrtStream worker", daemon=True)
        self._thread.start()
        self._finalizer = weakref.finalize(self, _stop, self._state)

    def __repr__(self):
        if self._state.foreign():
            what = f" (created in process {self._state.pid})"
        else:
            what = " (destroyed)" if self._state.destroyed else ""
        return f"<aclrtStream{what} at {id(self):#x}>"

    @property
    def destroyed(self):
        return self._state.destroyed

    def _launch(self, name, run):
        """Queue ``run()``, waiting while the stream is full; False if the
        stream was destroyed or belongs to another process."""
        state = self._state
        if state.foreign():
            return False
        with state.lock:
            while len(state.tasks) >= MAX_QUEUED and not state.destroyed:
                state.cond.wait()
            if state.destroyed:
                return False
            state.launched += 1
            state.tasks.append((state.launched, name, run))
            state.cond.notify_all()
        return True

    def _synchronize(self):
        """Wait for the launches queued so far; the failure message of those
        launches (cleared), or None."""
        state = self._state
        with state.lock:
            upto = state.launched
            while state.finished < upto:
                state.cond.wait()
            return _collect(state, upto)


def aclrtCreateStream():
    """Create a stream.

    Returns
    -------
    (aclnnStatus, aclrtStream or None)
    """
    try:
        return aclnnStatus.ACLNN_SUCCESS, aclrtStream()
    except RuntimeError as exc:  # the OS refused a thread
        return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"aclrtCreateStream: {exc}"), None


def _foreign(stream, caller):
    return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR,
                f"{caller}: the stream was created in another process (pid "
                f"{stream._state.pid}; this is pid {os.getpid()}) and cannot be used "
                f"after fork(); create a stream in this process with aclrtCreateStream")


def _check_stream(stream, caller):
    """None if ``stream`` is a live stream of this process, else the failure
    status (its message recorded)."""
    if not isinstance(stream, aclrtStream):
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"{caller}: expected an aclrtStream, got {type(stream).__name__}")
    if stream.destroyed:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"{caller}: the stream was destroyed by aclrtDestroyStream")
    if stream._state.foreign():
        return _foreign(stream, caller)
    return None


def launch_failure(stream, caller):
    """The status of a launch that :meth:`aclrtStream._launch` refused."""
    return _check_stream(stream, caller) or fail(
        aclnnStatus.ACLNN_ERR_PARAM_INVALID,
        f"{caller}: the stream was destroyed by aclrtDestroyStream")


def aclrtSynchronizeStream(stream):
    """Wait until the launches made on ``stream`` before this call have run.

    Launches made meanwhile by other threads are not waited for.

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS; ACLNN_ERR_RUNTIME_ERROR if one of those launches
        failed on the stream (``aclGetRecentErrMsg`` says which and why), or
        if the stream was created in another process (before a fork());
        ACLNN_ERR_PARAM_INVALID for a destroyed stream or a non-stream.
        ``None``, the default stream, has nothing pending.
    """
    if stream is None:
        return aclnnStatus.ACLNN_SUCCESS
    bad = _check_stream(stream, "aclrtSynchronizeStream")
    if bad is not None:
        return bad
    error = stream._synchronize()
    if error is not None:
        return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"aclrtSynchronizeStream: {error}")
    return aclnnStatus.ACLNN_SUCCESS


def aclrtDestroyStream(stream):
    """Finish what is queued on ``stream``, then stop its worker.

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS; ACLNN_ERR_RUNTIME_ERROR if a queued launch failed and
        no synchronize reported it (the stream is destroyed all the same), or
        if the stream was created in another process (before a fork(); it
        is left alone); ACLNN_ERR_PARAM_NULLPTR for ``None`` (the default
        stream cannot be destroyed); ACLNN_ERR_PARAM_INVALID for a destroyed
        stream or a non-stream.
    """
    caller = "aclrtDestroyStream"
    if stream is None:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_NULLPTR,
                    f"{caller}: stream is null (None); the default stream cannot be destroyed")
    if not isinstance(stream, aclrtStream):
        return _check_stream(stream, caller)
    state = stream._state
    if state.foreign():
        return _foreign(stream, caller)
    with state.lock:  # check and set at once: two destroys race
        destroyed, state.destroyed = state.destroyed, True
        state.stopping = True            # after every launch already queued
        state.cond.notify_all()          # wakes the worker, and blocked launches
    if destroyed:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"{caller}: the stream was already destroyed")
    stream._finalizer.detach()
    stream._thread.join()
    with state.lock:
        error = _collect(state, state.launched)
    if error is not None:
        return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"{caller}: {error}")
    return aclnnStatus.ACLNN_SUCCESS
