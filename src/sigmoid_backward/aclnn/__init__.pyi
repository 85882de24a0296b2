# Type stubs for sigmoid_backward.aclnn (PEP 561; shipped with py.typed).
#
# The module defines its constants at run time from the enums in
# _constants.py (globals().update), which a type checker cannot follow; this
# stub declares them.  Everything between the "generated" markers below is
# generated from those enums: run `python tests/aclnn_stub.py` after
# changing an enum.  tests/test_aclnn_stub.py fails when the section and the
# enums differ, and runs mypy's stubtest against the module.
import enum
from collections.abc import Iterable
from typing import Any, Final, SupportsIndex

import numpy as np
from typing_extensions import Buffer

__all__ = [
    "aclCreateTensor", "aclDestroyTensor", "tensor_from_array", "aclTensor",
    "aclnnSigmoidBackwardGetWorkspaceSize", "aclnnSigmoidBackward", "aclOpExecutor",
    "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
    "aclrtCreateStream", "aclrtSynchronizeStream", "aclrtDestroyStream", "aclrtStream",
    "aclrtGetSocName", "set_soc_version",
    "aclGetRecentErrMsg", "AclnnError", "check",
    "aclnnStatus", "aclDataType", "aclFormat",
]

# Tensors ----------------------------------------------------------------------

class aclTensor:
    """A tensor descriptor over caller memory (create with aclCreateTensor)."""
    @property
    def view_dims(self) -> tuple[int, ...]: ...
    @property
    def data_type(self) -> aclDataType: ...
    @property
    def stride(self) -> tuple[int, ...]: ...
    @property
    def offset(self) -> int: ...
    @property
    def format(self) -> aclFormat | int: ...
    @property
    def storage_dims(self) -> tuple[int, ...]: ...
    @property
    def destroyed(self) -> bool: ...
    @property
    def writable(self) -> bool: ...
    def source_writable(self) -> bool: ...
    @property
    def size(self) -> int: ...
    def describe(self) -> str: ...

def aclCreateTensor(
    view_dims: Iterable[SupportsIndex],
    data_type: int,
    stride: Iterable[SupportsIndex],
    offset: SupportsIndex,
    format: int,
    storage_dims: Iterable[SupportsIndex],
    tensor_data: Buffer,
) -> aclTensor | None: ...
def aclDestroyTensor(tensor: aclTensor | None) -> aclnnStatus: ...
def tensor_from_array(arr: np.ndarray[Any, Any], format: int = ...) -> aclTensor: ...

# The two phases and executors -------------------------------------------------

class aclOpExecutor:
    """The plan of one operator call (made by phase 1, run by phase 2)."""
    @property
    def workspace_size(self) -> int: ...

def aclnnSigmoidBackwardGetWorkspaceSize(
    gradOutput: aclTensor | None,
    output: aclTensor | None,
    gradInput: aclTensor | None,
) -> tuple[aclnnStatus, int, aclOpExecutor | None]: ...
def aclnnSigmoidBackward(
    workspace: Buffer | None,
    workspace_size: SupportsIndex,
    executor: aclOpExecutor | None,
    stream: aclrtStream | None,
) -> aclnnStatus: ...
def aclSetAclOpExecutorRepeatable(executor: aclOpExecutor | None) -> aclnnStatus: ...
def aclDestroyAclOpExecutor(executor: aclOpExecutor | None) -> aclnnStatus: ...

# Streams ----------------------------------------------------------------------

class aclrtStream:
    """An ordered queue of launches (create with aclrtCreateStream)."""
    @property
    def destroyed(self) -> bool: ...

def aclrtCreateStream() -> tuple[aclnnStatus, aclrtStream | None]: ...
def aclrtSynchronizeStream(stream: aclrtStream | None) -> aclnnStatus: ...
def aclrtDestroyStream(stream: aclrtStream | None) -> aclnnStatus: ...

# SoC --------------------------------------------------------------------------

def aclrtGetSocName() -> str | None: ...
def set_soc_version(name: str | None) -> None: ...

# Errors -----------------------------------------------------------------------

def aclGetRecentErrMsg() -> str: ...

class AclnnError(RuntimeError):
    """A failed aclnn call, raised by check()."""
    status: aclnnStatus | int
    message: str
    def __init__(self, status: int, message: str = "") -> None: ...

def check(status: int) -> None: ...

# --- generated from the enums of _constants.py: do not edit by hand ----------
class aclnnStatus(enum.IntEnum):
    ACLNN_SUCCESS = 0
    ACLNN_ERR_PARAM_NULLPTR = 161001
    ACLNN_ERR_PARAM_INVALID = 161002
    ACLNN_ERR_RUNTIME_ERROR = 361001
    ACLNN_ERR_INNER = 561000
    ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001
    ACLNN_ERR_INNER_TILING_ERROR = 561002
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003
    ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101
    ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR = 561102
    ACLNN_ERR_INNER_NULLPTR = 561103
    ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE = 561104

class aclDataType(enum.IntEnum):
    ACL_DT_UNDEFINED = -1
    ACL_FLOAT = 0
    ACL_FLOAT16 = 1
    ACL_INT8 = 2
    ACL_INT32 = 3
    ACL_UINT8 = 4
    ACL_INT16 = 6
    ACL_UINT16 = 7
    ACL_UINT32 = 8
    ACL_INT64 = 9
    ACL_UINT64 = 10
    ACL_DOUBLE = 11
    ACL_BOOL = 12
    ACL_STRING = 13
    ACL_COMPLEX64 = 16
    ACL_COMPLEX128 = 17
    ACL_BF16 = 27
    ACL_INT4 = 29
    ACL_UINT1 = 30
    ACL_COMPLEX32 = 33
    ACL_HIFLOAT8 = 34
    ACL_FLOAT8_E5M2 = 35
    ACL_FLOAT8_E4M3FN = 36
    ACL_FLOAT8_E8M0 = 37

class aclFormat(enum.IntEnum):
    ACL_FORMAT_UNDEFINED = -1
    ACL_FORMAT_NCHW = 0
    ACL_FORMAT_NHWC = 1
    ACL_FORMAT_ND = 2
    ACL_FORMAT_NC1HWC0 = 3
    ACL_FORMAT_FRACTAL_Z = 4
    ACL_FORMAT_NC1HWC0_C04 = 12
    ACL_FORMAT_HWCN = 16
    ACL_FORMAT_NDHWC = 27
    ACL_FORMAT_FRACTAL_NZ = 29
    ACL_FORMAT_NCDHW = 30
    ACL_FORMAT_NDC1HWC0 = 32
    ACL_FRACTAL_Z_3D = 33
    ACL_FORMAT_NC = 35
    ACL_FORMAT_NCL = 47

# As in C, every constant is also a module-level name.
ACLNN_SUCCESS: Final = aclnnStatus.ACLNN_SUCCESS
ACLNN_ERR_PARAM_NULLPTR: Final = aclnnStatus.ACLNN_ERR_PARAM_NULLPTR
ACLNN_ERR_PARAM_INVALID: Final = aclnnStatus.ACLNN_ERR_PARAM_INVALID
ACLNN_ERR_RUNTIME_ERROR: Final = aclnnStatus.ACLNN_ERR_RUNTIME_ERROR
ACLNN_ERR_INNER: Final = aclnnStatus.ACLNN_ERR_INNER
ACLNN_ERR_INNER_INFERSHAPE_ERROR: Final = aclnnStatus.ACLNN_ERR_INNER_INFERSHAPE_ERROR
ACLNN_ERR_INNER_TILING_ERROR: Final = aclnnStatus.ACLNN_ERR_INNER_TILING_ERROR
ACLNN_ERR_INNER_FIND_KERNEL_ERROR: Final = aclnnStatus.ACLNN_ERR_INNER_FIND_KERNEL_ERROR
ACLNN_ERR_INNER_CREATE_EXECUTOR: Final = aclnnStatus.ACLNN_ERR_INNER_CREATE_EXECUTOR
ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR: Final = aclnnStatus.ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR
ACLNN_ERR_INNER_NULLPTR: Final = aclnnStatus.ACLNN_ERR_INNER_NULLPTR
ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE: Final = aclnnStatus.ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE
ACL_DT_UNDEFINED: Final = aclDataType.ACL_DT_UNDEFINED
ACL_FLOAT: Final = aclDataType.ACL_FLOAT
ACL_FLOAT16: Final = aclDataType.ACL_FLOAT16
ACL_INT8: Final = aclDataType.ACL_INT8
ACL_INT32: Final = aclDataType.ACL_INT32
ACL_UINT8: Final = aclDataType.ACL_UINT8
ACL_INT16: Final = aclDataType.ACL_INT16
ACL_UINT16: Final = aclDataType.ACL_UINT16
ACL_UINT32: Final = aclDataType.ACL_UINT32
ACL_INT64: Final = aclDataType.ACL_INT64
ACL_UINT64: Final = aclDataType.ACL_UINT64
ACL_DOUBLE: Final = aclDataType.ACL_DOUBLE
ACL_BOOL: Final = aclDataType.ACL_BOOL
ACL_STRING: Final = aclDataType.ACL_STRING
ACL_COMPLEX64: Final = aclDataType.ACL_COMPLEX64
ACL_COMPLEX128: Final = aclDataType.ACL_COMPLEX128
ACL_BF16: Final = aclDataType.ACL_BF16
ACL_INT4: Final = aclDataType.ACL_INT4
ACL_UINT1: Final = aclDataType.ACL_UINT1
ACL_COMPLEX32: Final = aclDataType.ACL_COMPLEX32
ACL_HIFLOAT8: Final = aclDataType.ACL_HIFLOAT8
ACL_FLOAT8_E5M2: Final = aclDataType.ACL_FLOAT8_E5M2
ACL_FLOAT8_E4M3FN: Final = aclDataType.ACL_FLOAT8_E4M3FN
ACL_FLOAT8_E8M0: Final = aclDataType.ACL_FLOAT8_E8M0
ACL_FORMAT_UNDEFINED: Final = aclFormat.ACL_FORMAT_UNDEFINED
ACL_FORMAT_NCHW: Final = aclFormat.ACL_FORMAT_NCHW
ACL_FORMAT_NHWC: Final = aclFormat.ACL_FORMAT_NHWC
ACL_FORMAT_ND: Final = aclFormat.ACL_FORMAT_ND
ACL_FORMAT_NC1HWC0: Final = aclFormat.ACL_FORMAT_NC1HWC0
ACL_FORMAT_FRACTAL_Z: Final = aclFormat.ACL_FORMAT_FRACTAL_Z
ACL_FORMAT_NC1HWC0_C04: Final = aclFormat.ACL_FORMAT_NC1HWC0_C04
ACL_FORMAT_HWCN: Final = aclFormat.ACL_FORMAT_HWCN
ACL_FORMAT_NDHWC: Final = aclFormat.ACL_FORMAT_NDHWC
ACL_FORMAT_FRACTAL_NZ: Final = aclFormat.ACL_FORMAT_FRACTAL_NZ
ACL_FORMAT_NCDHW: Final = aclFormat.ACL_FORMAT_NCDHW
ACL_FORMAT_NDC1HWC0: Final = aclFormat.ACL_FORMAT_NDC1HWC0
ACL_FRACTAL_Z_3D: Final = aclFormat.ACL_FRACTAL_Z_3D
ACL_FORMAT_NC: Final = aclFormat.ACL_FORMAT_NC
ACL_FORMAT_NCL: Final = aclFormat.ACL_FORMAT_NCL

__all__ += [
    "ACLNN_SUCCESS", "ACLNN_ERR_PARAM_NULLPTR", "ACLNN_ERR_PARAM_INVALID",
    "ACLNN_ERR_RUNTIME_ERROR", "ACLNN_ERR_INNER", "ACLNN_ERR_INNER_INFERSHAPE_ERROR",
    "ACLNN_ERR_INNER_TILING_ERROR", "ACLNN_ERR_INNER_FIND_KERNEL_ERROR",
    "ACLNN_ERR_INNER_CREATE_EXECUTOR", "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR",
    "ACLNN_ERR_INNER_NULLPTR", "ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE",
    "ACL_DT_UNDEFINED", "ACL_FLOAT", "ACL_FLOAT16", "ACL_INT8", "ACL_INT32",
    "ACL_UINT8", "ACL_INT16", "ACL_UINT16", "ACL_UINT32", "ACL_INT64", "ACL_UINT64",
    "ACL_DOUBLE", "ACL_BOOL", "ACL_STRING", "ACL_COMPLEX64", "ACL_COMPLEX128",
    "ACL_BF16", "ACL_INT4", "ACL_UINT1", "ACL_COMPLEX32", "ACL_HIFLOAT8",
    "ACL_FLOAT8_E5M2", "ACL_FLOAT8_E4M3FN", "ACL_FLOAT8_E8M0",
    "ACL_FORMAT_UNDEFINED", "ACL_FORMAT_NCHW", "ACL_FORMAT_NHWC", "ACL_FORMAT_ND",
    "ACL_FORMAT_NC1HWC0", "ACL_FORMAT_FRACTAL_Z", "ACL_FORMAT_NC1HWC0_C04",
    "ACL_FORMAT_HWCN", "ACL_FORMAT_NDHWC", "ACL_FORMAT_FRACTAL_NZ", "ACL_FORMAT_NCDHW",
    "ACL_FORMAT_NDC1HWC0", "ACL_FRACTAL_Z_3D", "ACL_FORMAT_NC", "ACL_FORMAT_NCL",
]
# --- end of the generated section ---------------------------------------------
