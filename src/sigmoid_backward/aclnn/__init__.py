"""CANN's two-phase ``aclnnSigmoidBackward`` API, on the CPU.

Code written against CANN runs here line by line and gets the same status
codes.  The C names are kept; a C out-parameter becomes a return value after
the status; a function returning a pointer returns the object or ``None``;
Python sequences carry their lengths, so the ``*Num`` arguments are gone::

    from sigmoid_backward.aclnn import *

    status, stream = aclrtCreateStream()
    g = aclCreateTensor([2, 2], ACL_FLOAT, [2, 1], 0, ACL_FORMAT_ND, [2, 2], g_buf)
    ...
    status, workspace_size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    workspace = bytearray(workspace_size) if workspace_size > 0 else None
    status = aclnnSigmoidBackward(workspace, workspace_size, executor, stream)
    status = aclrtSynchronizeStream(stream)

The arithmetic is the core library's kernels (``sigmoid_backward._kernel._kernels``)
and its dtype rules (``sigmoid_backward._kernel._dtypes``); this package only checks,
plans and schedules.  See ``example.py`` for the operator document's calling
example, docs/aclnn.md for the reference and docs/semantics.md for the
operator's checks and statuses.
"""
from ._constants import aclDataType, aclFormat, aclnnStatus
from ._errors import AclnnError, aclGetRecentErrMsg, check
from ._executor import (
                        aclDestroyAclOpExecutor,
                        aclnnSigmoidBackward,
                        aclnnSigmoidBackwardGetWorkspaceSize,
                        aclOpExecutor,
                        aclSetAclOpExecutorRepeatable,
)
from ._soc import aclrtGetSocName, set_soc_version
from ._stream import aclrtCreateStream, aclrtDestroyStream, aclrtStream, aclrtSynchronizeStream
from ._tensor import aclCreateTensor, aclDestroyTensor, aclTensor, tensor_from_array

# As in C, every constant is also a module-level name: aclnn.ACL_FLOAT.
# Type checkers cannot follow this; __init__.pyi declares them (its constant
# section is generated from the enums by tests/aclnn_stub.py).
globals().update(aclnnStatus.__members__)
globals().update(aclDataType.__members__)
globals().update(aclFormat.__members__)

__all__ = [
    "aclCreateTensor", "aclDestroyTensor", "tensor_from_array", "aclTensor",
    "aclnnSigmoidBackwardGetWorkspaceSize", "aclnnSigmoidBackward", "aclOpExecutor",
    "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
    "aclrtCreateStream", "aclrtSynchronizeStream", "aclrtDestroyStream", "aclrtStream",
    "aclrtGetSocName", "set_soc_version",
    "aclGetRecentErrMsg", "AclnnError", "check",
    "aclnnStatus", "aclDataType", "aclFormat",
    *aclnnStatus.__members__, *aclDataType.__members__, *aclFormat.__members__,
]
