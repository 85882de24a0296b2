"""The operator document's calling example, written with this API.

It follows the C sample step by step: create a stream; create three 2x2
ACL_FLOAT tensors (contiguous strides [2, 1], offset 0, format ND) over
"device" memory holding gradOutput = 1, output = [1, 2, 3, 4] and
gradInput = 0; phase 1; a workspace if one is needed; phase 2 on the
stream; synchronize; copy gradInput back and print it; release everything.
``bytearray`` plays the device memory (aclrtMalloc + aclrtMemcpy), and
``check`` plays the sample's CHECK_RET.  Run it with
``python -m sigmoid_backward.aclnn.example`` (``python -m sigmoid_backward``
runs it too).
"""
import sys

import numpy as np

from . import (
    ACL_FLOAT,
    ACL_FORMAT_ND,
    aclCreateTensor,
    aclDestroyTensor,
    aclnnSigmoidBackward,
    aclnnSigmoidBackwardGetWorkspaceSize,
    aclrtCreateStream,
    aclrtDestroyStream,
    aclrtSynchronizeStream,
    check,
)


def _create_acl_tensor(host_data, shape, data_type):
    """The sample's CreateAclTensor: device memory, a copy, contiguous strides."""
    device_addr = bytearray(host_data.tobytes())
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    tensor = aclCreateTensor(shape, data_type, strides, 0, ACL_FORMAT_ND, shape, device_addr)
    if tensor is None:
        raise RuntimeError("aclCreateTensor failed")
    return device_addr, tensor


def main():
    """Run the example; print gradInput, ``[0.0, -2.0, -6.0, -12.0]``.

    Returns
    -------
    int
        0.  A failed call raises :class:`~sigmoid_backward.aclnn.AclnnError`.
    """
    status, stream = aclrtCreateStream()
    check(status)

    shape = [2, 2]
    grad_output_host = np.array([1, 1, 1, 1], np.float32)
    output_host = np.array([1, 2, 3, 4], np.float32)
    grad_input_host = np.zeros(4, np.float32)
    _, grad_output = _create_acl_tensor(grad_output_host, shape, ACL_FLOAT)
    _, output = _create_acl_tensor(output_host, shape, ACL_FLOAT)
    grad_input_addr, grad_input = _create_acl_tensor(grad_input_host, shape, ACL_FLOAT)

    status, workspace_size, executor = aclnnSigmoidBackwardGetWorkspaceSize(
        grad_output, output, grad_input)
    check(status)
    workspace = bytearray(workspace_size) if workspace_size > 0 else None
    check(aclnnSigmoidBackward(workspace, workspace_size, executor, stream))
    check(aclrtSynchronizeStream(stream))

    result = np.frombuffer(bytes(grad_input_addr), np.float32)  # aclrtMemcpy back
    print("aclnnSigmoidBackward example: gradInput =", result.tolist())

    for tensor in (grad_output, output, grad_input):
        check(aclDestroyTensor(tensor))
    check(aclrtDestroyStream(stream))
    return 0


if __name__ == "__main__":
    sys.exit(main())
