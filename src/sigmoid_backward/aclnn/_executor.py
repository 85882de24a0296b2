"""The two-phase API: aclnnSigmoidBackwardGetWorkspaceSize (check and plan),
aclnnSigmoidBackward (run), and the executor's life cycle.

Phase 1 runs the operator's checks (docs/semantics.md) in the implementation's order, each failure
with its status and a message naming the check, the tensor, its dtype and
its shape:

1. a null tensor: ACLNN_ERR_PARAM_NULLPTR;
2. a dtype outside the six, or a BF16 gradOutput on a SoC without BF16;
3. gradOutput or output with more than 8 dims;
4. a promoted dtype that cannot be cast to gradInput's;
5. shapes that do not broadcast, or broadcast to other than gradInput's
   shape; a read-only gradInput;
6. an empty input: success, workspace 0, nothing to compute.

(2 to 5: ACLNN_ERR_PARAM_INVALID.)  Then it plans phase 2 (_plan.py), and

7. a plan whose workspace would not fit the C API's ``uint64_t`` workspace
   size is ACLNN_ERR_PARAM_INVALID too (only a gradInput of more than 2**60
   elements over zero strides, fed by staged inputs, gets there).

Phase 2 checks the executor and the workspace before it writes a byte, then
runs the plan on the default stream (synchronously) or queues it on a
stream.  Executors are single use, as in CANN, unless made repeatable.
"""
import functools
import operator
import threading

import numpy as np

from .._kernel import _dtypes, _threads
from .._numpy._ufunc import ufunc
from . import _buffer, _soc
from ._constants import ACL_OF_COMPUTE_DTYPE, COMPUTE_DTYPES, INT64_MAX, aclDataType, aclnnStatus
from ._errors import fail
from ._plan import Plan
from ._stream import aclrtStream, launch_failure
from ._tensor import aclTensor

MAX_DIMS = 8
UINT64_MAX = 2 * INT64_MAX + 1

_PHASE1 = "aclnnSigmoidBackwardGetWorkspaceSize"
_PHASE2 = "aclnnSigmoidBackward"
_SUPPORTED_NAMES = ", ".join(t.name for t in COMPUTE_DTYPES)

_READY, _RAN, _DESTROYED = "ready", "ran", "destroyed"


class aclOpExecutor:
    """The plan of one operator call (made by phase 1, run by phase 2).

    It holds its tensors and, through their element views, their buffers:
    nothing it uses can be freed under it, even if the tensors are destroyed.
    """

    __slots__ = ("_plan", "_tensors", "_workspace_size", "_repeatable", "_state",
                 "_lock", "__weakref__")

    def __init__(self, plan, tensors, workspace_size):
        self._plan = plan                  # None: nothing to compute (empty tensors)
        self._tensors = tensors
        self._workspace_size = workspace_size
        self._repeatable = False
        self._state = _READY
        self._lock = threading.Lock()

    def __repr__(self):
        kind = "repeatable" if self._repeatable else "single-use"
        return (f"<aclOpExecutor {kind}, {self._state}, workspace "
                f"{self._workspace_size} bytes at {id(self):#x}>")

    @property
    def workspace_size(self):
        """The workspace bytes phase 2 needs (what phase 1 returned)."""
        return self._workspace_size


def _describe(name, tensor):
    return f"{name} ({tensor.describe()})"


def _broadcast(a, b):
    """NumPy's broadcast of two shapes, or None.  Pure Python: no size limit."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    shape = []
    for x, y in zip(a, b, strict=True):
        if x != y and x != 1 and y != 1:
            return None
        shape.append(y if x == 1 else x)
    return tuple(shape)


def aclnnSigmoidBackwardGetWorkspaceSize(gradOutput, output, gradInput):
    """Phase 1: check the call and plan it.

    Parameters
    ----------
    gradOutput, output : aclTensor
        The inputs; they broadcast against each other (NumPy rules).
    gradInput : aclTensor
        The output, of the broadcast shape, on a writable buffer.

    Returns
    -------
    (aclnnStatus, int, aclOpExecutor or None)
        The status, the workspace bytes phase 2 needs (0 for contiguous
        tensors of one dtype and shape) and the executor; on failure
        ``(status, 0, None)``, with ``aclGetRecentErrMsg()`` naming the check
        that failed and the tensor, its dtype and its shape.
    """
    named = (("gradOutput", gradOutput), ("output", output), ("gradInput", gradInput))

    def invalid(check, message):
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"{_PHASE1}: check {check}: {message}"), 0, None

    # 1. null tensors; then objects that are no (live) tensor at all.
    for name, t in named:
        if t is None:
            return fail(aclnnStatus.ACLNN_ERR_PARAM_NULLPTR,
                        f"{_PHASE1}: check 1 (null tensor): {name} is null (None)"), 0, None
    for name, t in named:
        if not isinstance(t, aclTensor):
            return invalid("1 (tensor)", f"{name} must be an aclTensor made by "
                           f"aclCreateTensor, got {type(t).__name__}")
        if t.destroyed:
            return invalid("1 (tensor)", f"{name} was destroyed by aclDestroyTensor")

    # 2. dtypes, with BF16 on gradOutput gated by the SoC.
    try:
        soc = _soc.current()
    except ValueError as exc:
        return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"{_PHASE1}: {exc}"), 0, None
    for name, t in named:
        if t.data_type not in COMPUTE_DTYPES:
            return invalid("2 (dtype)", f"{_describe(name, t)} has an unsupported dtype; "
                           f"supported are {_SUPPORTED_NAMES}")
        if (name == "gradOutput" and t.data_type == aclDataType.ACL_BF16
                and not _soc.supports_bf16(soc)):
            with_bf16 = ", ".join(n for n, bf16 in _soc.SOCS.items() if bf16)
            return invalid("2 (dtype)", f"{_describe(name, t)}: SoC {soc} does not support "
                           f"ACL_BF16 ({with_bf16} do)")

    # 3. at most 8 dims on the inputs.
    for name, t in named[:2]:
        if len(t.view_dims) > MAX_DIMS:
            return invalid("3 (dims)", f"{_describe(name, t)} has {len(t.view_dims)} dims; "
                           f"at most {MAX_DIMS} are supported")

    # 4. the promoted dtype must cast to gradInput's.
    g_dt = COMPUTE_DTYPES[gradOutput.data_type]
    y_dt = COMPUTE_DTYPES[output.data_type]
    out_dt = COMPUTE_DTYPES[gradInput.data_type]
    dt = ufunc.resolve_dtypes((g_dt, y_dt, None))[2]   # the ufunc's promotion
    if not _dtypes.castable(dt, out_dt):
        return invalid("4 (promotion)", f"{_describe('gradOutput', gradOutput)} and "
                       f"{_describe('output', output)} promote to "
                       f"{ACL_OF_COMPUTE_DTYPE[dt].name}, which cannot be cast to "
                       f"{_describe('gradInput', gradInput)}")

    # 5. shapes; gradInput must take writes.
    shape = _broadcast(gradOutput.view_dims, output.view_dims)
    if shape is None:
        return invalid("5 (shape)", f"{_describe('gradOutput', gradOutput)} and "
                       f"{_describe('output', output)} cannot be broadcast together")
    if shape != gradInput.view_dims:
        return invalid("5 (shape)", f"gradOutput and output broadcast to shape "
                       f"{list(shape)}, but {_describe('gradInput', gradInput)} differs")
    if not gradInput.writable:
        return invalid("5 (writable gradInput)",
                       f"{_describe('gradInput', gradInput)} is backed by a read-only buffer")

    tensors = (gradOutput, output, gradInput)
    # 6. empty inputs: nothing to compute.
    if gradOutput.size == 0 or output.size == 0:
        return aclnnStatus.ACLNN_SUCCESS, 0, aclOpExecutor(None, tensors, 0)

    plan = Plan(gradOutput._elements(), output._elements(), gradInput._elements(), dt)
    if plan.workspace_size > UINT64_MAX:
        return invalid("7 (workspace)", f"{_describe('gradInput', gradInput)} computed in "
                       f"{ACL_OF_COMPUTE_DTYPE[dt].name} needs a workspace of "
                       f"{plan.workspace_size} bytes, more than a uint64 holds")
    return (aclnnStatus.ACLNN_SUCCESS, plan.workspace_size,
            aclOpExecutor(plan, tensors, plan.workspace_size))


def _workspace(workspace, workspace_size, plan, need):
    """The checked workspace as a uint8 array (None when ``plan`` needs
    none), or the failure status."""
    def invalid(message):
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID, f"{_PHASE2}: {message}")

    if need == 0:
        return None
    if workspace is None:
        return invalid(f"workspace is null (None), but phase 1 planned {need} bytes")
    if workspace_size < need:
        return invalid(f"workspace_size {workspace_size} is smaller than the {need} "
                       f"bytes phase 1 planned")
    try:
        data = _buffer.flat_bytes(workspace, "workspace")
    except (TypeError, ValueError) as exc:
        return invalid(str(exc))
    if not data.flags.writeable:
        return invalid(f"workspace ({type(workspace).__name__}) is read-only")
    if data.nbytes < workspace_size:
        return invalid(f"workspace holds {data.nbytes} bytes, but workspace_size says "
                       f"{workspace_size}")
    for name, arr in (("gradOutput", plan.g), ("output", plan.y), ("gradInput", plan.out)):
        if np.may_share_memory(data, arr):
            return invalid(f"workspace overlaps the memory of {name}")
    return data


def aclnnSigmoidBackward(workspace, workspace_size, executor, stream):
    """Phase 2: run the plan of ``executor``.

    Parameters
    ----------
    workspace : writable buffer-protocol object or None
        At least the bytes phase 1 planned; ``None`` when that was 0.  Its
        contents are scratch; it must not overlap the tensors.
    workspace_size : int
        Its size as phase 1 returned it.
    executor : aclOpExecutor
        From phase 1.  A single-use executor is spent by a successful launch.
    stream : aclrtStream or None
        ``None`` runs before returning; a stream queues the run (errors then
        come from aclrtSynchronizeStream).

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS; ACLNN_ERR_PARAM_NULLPTR for a null executor;
        ACLNN_ERR_PARAM_INVALID for a spent or destroyed executor, a bad
        stream, a gradInput made read-only since phase 1, or a workspace
        that is missing, read-only, too small or overlapping a tensor
        (nothing is written, and the executor stays usable);
        ACLNN_ERR_RUNTIME_ERROR if the computation failed, or for a stream
        created in another process (before a fork(); the executor stays
        usable).
    """
    def invalid(message):
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID, f"{_PHASE2}: {message}")

    if executor is None:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_NULLPTR, f"{_PHASE2}: executor is null (None)")
    if not isinstance(executor, aclOpExecutor):
        return invalid(f"executor must be an aclOpExecutor from {_PHASE1}, got "
                       f"{type(executor).__name__}")
    try:
        if isinstance(workspace_size, bool):
            raise TypeError
        workspace_size = operator.index(workspace_size)
    except TypeError:
        return invalid(f"workspace_size must be an integer, got {type(workspace_size).__name__}")
    if not 0 <= workspace_size <= UINT64_MAX:
        return invalid(f"workspace_size {workspace_size} is not a uint64")
    if stream is not None and not isinstance(stream, aclrtStream):
        return invalid(f"stream must be an aclrtStream or None, got {type(stream).__name__}")
    with executor._lock:
        if executor._state == _DESTROYED:
            return invalid("the executor was destroyed by aclDestroyAclOpExecutor")
        if executor._state == _RAN:
            return invalid("the executor already ran; executors are single use unless "
                           "aclSetAclOpExecutorRepeatable is called right after phase 1")
        ws = _workspace(workspace, workspace_size, executor._plan, executor._workspace_size)
        if isinstance(ws, aclnnStatus):
            return ws
        # gradInput's array may have been made read-only since phase 1 (seen
        # while its tensor lives: a destroyed one no longer holds the array).
        if executor._tensors is not None and not executor._tensors[2].source_writable():
            return invalid(f"gradInput ({executor._tensors[2].describe()}) was made "
                           f"read-only after phase 1")
        # The run holds the plan and the workspace, whatever happens to the
        # executor, the tensors or the caller's references meanwhile.  Its
        # thread count is the launching thread's (threadpoolctl limits are
        # per thread), not the stream worker's.
        run = functools.partial(_run, executor._plan, ws, _threads.resolve_threads(None))
        if stream is not None:
            if not stream._launch(_PHASE2, run):  # destroyed, or made before a fork()
                return launch_failure(stream, _PHASE2)
            _spend(executor)
            return aclnnStatus.ACLNN_SUCCESS
        _spend(executor)
    try:
        run()
    except Exception as exc:
        return fail(aclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"{_PHASE2}: {type(exc).__name__}: {exc}")
    return aclnnStatus.ACLNN_SUCCESS


def _run(plan, workspace, nthreads):
    if plan is not None:  # None: empty tensors, nothing to compute
        plan.run(workspace, nthreads)


def _spend(executor):
    """A single-use executor is released by its run, as in CANN."""
    if not executor._repeatable:
        executor._state = _RAN
        executor._plan = executor._tensors = None


def aclSetAclOpExecutorRepeatable(executor):
    """Make ``executor`` reusable: each run reads the tensors' current contents.

    Call it right after phase 1, before the first run; release the executor
    with :func:`aclDestroyAclOpExecutor`.

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS; ACLNN_ERR_INNER_NULLPTR for ``None``;
        ACLNN_ERR_PARAM_INVALID for a spent or destroyed executor or a
        non-executor.
    """
    def make_repeatable(e):
        e._repeatable = True

    return _on_ready_executor("aclSetAclOpExecutorRepeatable", executor, "run",
                              make_repeatable)


def aclDestroyAclOpExecutor(executor):
    """Release ``executor`` (a repeatable one, or one never run).

    Runs already queued on a stream are not affected: they hold what they use.

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS; ACLNN_ERR_INNER_NULLPTR for ``None``;
        ACLNN_ERR_PARAM_INVALID for an executor already released (destroyed,
        or single use and run) or a non-executor.
    """
    def destroy(e):
        e._state = _DESTROYED
        e._plan = e._tensors = None

    return _on_ready_executor("aclDestroyAclOpExecutor", executor,
                              "released by its single-use run", destroy)


def _on_ready_executor(name, executor, ran, action):
    """Apply ``action`` to an executor neither run (single use) nor
    destroyed, under its lock; else the failure status of ``name``.
    ``ran`` says what happened to an executor already run."""
    if executor is None:
        return fail(aclnnStatus.ACLNN_ERR_INNER_NULLPTR, f"{name}: executor is null (None)")
    if not isinstance(executor, aclOpExecutor):
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"{name}: expected an aclOpExecutor, got {type(executor).__name__}")
    with executor._lock:
        if executor._state != _READY:
            return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                        f"{name}: the executor was already "
                        f"{ran if executor._state == _RAN else 'destroyed'}")
        action(executor)
    return aclnnStatus.ACLNN_SUCCESS
