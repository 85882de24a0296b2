"""CANN's constants: aclnnStatus codes, aclDataType and aclFormat
(docs/semantics.md, "Value tables").

The values are CANN's own, so that status codes compare equal to the ones
NPU code and golden tests expect.  The enums are IntEnums: every function
returns plain-comparable ints, and a value outside an enum can be told apart
from a known-but-unsupported one (ACL_INT8 is known; 5 is not).
"""
import enum

import ml_dtypes
import numpy as np

from .._kernel import _dtypes


class aclnnStatus(enum.IntEnum):
    """Status codes returned by every aclnn function (0 is success)."""
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
    """Element types of an aclTensor."""
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
    # CANN 8's one-byte floating types (acl_base.h), which the operator
    # refuses.  (Its 6- and 4-bit types, 38-41, are left out: how they pack
    # is not the host's to guess.)
    ACL_HIFLOAT8 = 34
    ACL_FLOAT8_E5M2 = 35
    ACL_FLOAT8_E4M3FN = 36
    ACL_FLOAT8_E8M0 = 37


class aclFormat(enum.IntEnum):
    """Memory formats of an aclTensor.  The operator ignores them."""
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


# Bits per element, for bounds checks.  ACL_STRING and ACL_DT_UNDEFINED have
# no fixed size (CANN's aclDataTypeSize gives 0): their tensors reach no
# bytes, and the operator rejects them before any element is read.
ELEMENT_BITS = {
    aclDataType.ACL_DT_UNDEFINED: 0,
    aclDataType.ACL_FLOAT: 32,
    aclDataType.ACL_FLOAT16: 16,
    aclDataType.ACL_INT8: 8,
    aclDataType.ACL_INT32: 32,
    aclDataType.ACL_UINT8: 8,
    aclDataType.ACL_INT16: 16,
    aclDataType.ACL_UINT16: 16,
    aclDataType.ACL_UINT32: 32,
    aclDataType.ACL_INT64: 64,
    aclDataType.ACL_UINT64: 64,
    aclDataType.ACL_DOUBLE: 64,
    aclDataType.ACL_BOOL: 8,
    aclDataType.ACL_STRING: 0,
    aclDataType.ACL_COMPLEX64: 64,
    aclDataType.ACL_COMPLEX128: 128,
    aclDataType.ACL_BF16: 16,
    aclDataType.ACL_INT4: 4,
    aclDataType.ACL_UINT1: 1,
    aclDataType.ACL_COMPLEX32: 32,
    aclDataType.ACL_HIFLOAT8: 8,
    aclDataType.ACL_FLOAT8_E5M2: 8,
    aclDataType.ACL_FLOAT8_E4M3FN: 8,
    aclDataType.ACL_FLOAT8_E8M0: 8,
}

# The operator's dtypes: the ones aclnnSigmoidBackward accepts (its
# documentation's list; bfloat16 only on the SoCs that have it, _soc.py), as
# the NumPy dtypes the kernels compute them in.  The operator's list, not
# the package's table: a dtype the CPU learns (float8) is not one the NPU
# operator accepts, and is refused as int8 is.
COMPUTE_DTYPES = {
    aclDataType.ACL_FLOAT16: _dtypes.BY_NAME["float16"],
    aclDataType.ACL_BF16: _dtypes.BY_NAME["bfloat16"],
    aclDataType.ACL_FLOAT: _dtypes.BY_NAME["float32"],
    aclDataType.ACL_DOUBLE: _dtypes.BY_NAME["float64"],
    aclDataType.ACL_COMPLEX64: _dtypes.BY_NAME["complex64"],
    aclDataType.ACL_COMPLEX128: _dtypes.BY_NAME["complex128"],
}

# Every aclDataType NumPy can hold, for tensor_from_array: native byte order.
NUMPY_TO_ACL = {
    **{dt: acl for acl, dt in COMPUTE_DTYPES.items()},
    np.dtype(np.int8): aclDataType.ACL_INT8,
    np.dtype(np.int16): aclDataType.ACL_INT16,
    np.dtype(np.int32): aclDataType.ACL_INT32,
    np.dtype(np.int64): aclDataType.ACL_INT64,
    np.dtype(np.uint8): aclDataType.ACL_UINT8,
    np.dtype(np.uint16): aclDataType.ACL_UINT16,
    np.dtype(np.uint32): aclDataType.ACL_UINT32,
    np.dtype(np.uint64): aclDataType.ACL_UINT64,
    np.dtype(np.bool_): aclDataType.ACL_BOOL,
    # ml_dtypes' FP8, which the CPU computes and the operator refuses (as int8).
    np.dtype(ml_dtypes.float8_e5m2): aclDataType.ACL_FLOAT8_E5M2,
    np.dtype(ml_dtypes.float8_e4m3fn): aclDataType.ACL_FLOAT8_E4M3FN,
}

ACL_OF_COMPUTE_DTYPE = {dt: acl for acl, dt in COMPUTE_DTYPES.items()}

# aclTensor dims, strides and offsets are C int64_t.
INT64_MAX = (1 << 63) - 1
