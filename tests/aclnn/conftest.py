"""The tests of ``sigmoid_backward.aclnn``, the CANN-like two-phase API:
descriptors, phase 1's checks and statuses, results bit for bit, streams,
workspaces, error messages, hostile inputs, fork and Ctrl-C, and the type
stub's generated section.  They draw dtypes from ``NPU_DTYPES``
(dtypes_catalogue.py): aclnn accepts the NPU operator's dtypes only.

Helpers only these tests use: aclnn_support.py (the oracle side),
aclnn_fuzzing.py (the descriptor fuzzing), aclnn_stub.py (the stub's
generated section)."""
import pytest


@pytest.fixture
def stream():
    """A new aclnn stream, destroyed after the test unless the test did."""
    from sigmoid_backward import aclnn
    status, s = aclnn.aclrtCreateStream()
    assert status == aclnn.ACLNN_SUCCESS
    yield s
    if not s.destroyed:
        aclnn.aclrtDestroyStream(s)
