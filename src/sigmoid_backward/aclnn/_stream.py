"""aclrtStream: work queued in order and run by a worker thread of its own.

Phase 2 launched on a stream returns at once; the stream's worker runs the
launches one after another, in launch order, so a launch may read what an
earlier one on the same stream wrote.  The kernels release the GIL, so
streams run alongside Python and alongside each other.  ``stream=None`` is
the default stream: the work runs in the calling thread before phase 2
returns.  A queued launch keeps its plan, buffers and workspace exported and
alive until it has run, and not a moment longer: after
:func:`aclrtSynchronizeStream` the caller may resize, close or free them.

A launch that fails on the worker cannot return a status any more: the
stream keeps the first failure, skips the launches queued after it (their
inputs may be garbage, as after a device fault), and reports it from the
next :func:`aclrtSynchronizeStream`, which clears it.
"""
import queue
import threading
import weakref

from ._constants import aclnnStatus
from ._errors import fail

_STOP = object()


class _State:
    """What the worker shares with the stream object (not the object itself,
    so that a forgotten stream can be collected and its worker stopped)."""

    def __init__(self):
        self.queue = queue.Queue()
        self.lock = threading.Lock()
        self.error = None       # message of the first failure since the last synchronize
        self.skipped = 0        # launches skipped after it
        self.destroyed = False


def _work(state):
    while True:
        task = state.queue.get()
        try:
            if task is _STOP:
                return
            name, run = task
            with state.lock:
                failed = state.error is not None
                if failed:
                    state.skipped += 1
            if failed:
                continue
            try:
                run()
            except Exception as exc:
                with state.lock:
                    state.error = f"{name} failed on the stream: {type(exc).__name__}: {exc}"
        finally:
            # Let go of the launch (its plan, the buffers and the workspace)
            # before it counts as done: once aclrtSynchronizeStream returns,
            # the caller may close, resize or free them.
            task = run = None
            state.queue.task_done()


class aclrtStream:
    """An ordered queue of launches (create with aclrtCreateStream)."""

    __slots__ = ("_state", "_thread", "_finalizer", "__weakref__")

    def __init__(self):
        self._state = _State()
        self._thread = threading.Thread(target=_work, args=(self._state,),
                                        name="aclrtStream worker", daemon=True)
        self._thread.start()
        self._finalizer = weakref.finalize(self, self._state.queue.put, _STOP)

    def __repr__(self):
        return f"<aclrtStream{' (destroyed)' if self._state.destroyed else ''} at {id(self):#x}>"

    @property
    def destroyed(self):
        return self._state.destroyed

    def _launch(self, name, run):
        """Queue ``run()``; False if the stream was destroyed meanwhile."""
        with self._state.lock:
            if self._state.destroyed:
                return False
            self._state.queue.put((name, run))
        return True

    def _drain(self):
        """Wait for every queued launch; the pending failure message, cleared."""
        self._state.queue.join()
        with self._state.lock:
            error, skipped = self._state.error, self._state.skipped
            self._state.error, self._state.skipped = None, 0
        if error is not None and skipped:
            error += f" ({skipped} later launch{'es' if skipped > 1 else ''} skipped)"
        return error


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


def _check_stream(stream, caller):
    """None if ``stream`` is a live stream, else the failure status."""
    if not isinstance(stream, aclrtStream):
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"{caller}: expected an aclrtStream, got {type(stream).__name__}")
    if stream.destroyed:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"{caller}: the stream was destroyed by aclrtDestroyStream")
    return None


def aclrtSynchronizeStream(stream):
    """Wait until everything launched on ``stream`` has run.

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS; ACLNN_ERR_RUNTIME_ERROR if a launch failed on the
        stream since the last synchronize (``aclGetRecentErrMsg`` says which
        and why); ACLNN_ERR_PARAM_INVALID for a destroyed stream or a
        non-stream.  ``None``, the default stream, has nothing pending.
    """
    if stream is None:
        return aclnnStatus.ACLNN_SUCCESS
    bad = _check_stream(stream, "aclrtSynchronizeStream")
    if bad is not None:
        return bad
    error = stream._drain()
    if error is not None:
        return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"aclrtSynchronizeStream: {error}")
    return aclnnStatus.ACLNN_SUCCESS


def aclrtDestroyStream(stream):
    """Finish what is queued on ``stream``, then stop its worker.

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS; ACLNN_ERR_RUNTIME_ERROR if a queued launch failed and
        no synchronize reported it (the stream is destroyed all the same);
        ACLNN_ERR_PARAM_NULLPTR for ``None`` (the default stream cannot be
        destroyed); ACLNN_ERR_PARAM_INVALID for a destroyed stream or a
        non-stream.
    """
    if stream is None:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_NULLPTR,
                    "aclrtDestroyStream: stream is null (None); the default stream "
                    "cannot be destroyed")
    if not isinstance(stream, aclrtStream):
        return _check_stream(stream, "aclrtDestroyStream")
    with stream._state.lock:  # check and set at once: two destroys race
        destroyed, stream._state.destroyed = stream._state.destroyed, True
    if destroyed:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    "aclrtDestroyStream: the stream was already destroyed")
    stream._finalizer()  # queues the stop after every pending launch
    stream._thread.join()
    error = stream._drain()
    if error is not None:
        return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"aclrtDestroyStream: {error}")
    return aclnnStatus.ACLNN_SUCCESS
